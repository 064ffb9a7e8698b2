# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU health checks of gpuops.dlserver.gpu_validate: pure functions over what the probe saw
(``gpuops_gpu``), the plan (``gpuops_plan``) and what the module read beside them (NVML error
counters, the kernel log since boot, the kernel module version, the Fabric Manager service).

Every check returns ``check(name, status, value, expected, reason, subject)``: ``status`` is
``pass``, ``warn``, ``fail`` or ``skip``, and a reason that is not ``pass`` names the likely
cause. Tested from ``tests/unit/plugins/module_utils/data/validate_health_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.versions import numeric_or_none
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.gpu_peaks import peak_for
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.xid import (
    RECOVERY_FAILING, VERDICT_TEXT, XID_TABLE, recovery_action)

STATUSES = ('pass', 'warn', 'fail', 'skip')

# XID meanings and the critical ones: validate/xid.py (the table, with its sources per row).

_XID_RE = re.compile(r'NVRM: Xid \(PCI:([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\): (\d+)([^\n]*)')

# Throttle reasons that must not be active at idle (NVML names, as the probe reports them).
IDLE_THROTTLE_BAD = ('hw_slowdown', 'hw_thermal_slowdown', 'sw_thermal_slowdown', 'hw_power_brake_slowdown')


def check(name, status, value=None, expected=None, reason='', subject='host'):
    if status not in STATUSES:
        raise ValueError('status %r not in %s' % (status, STATUSES))
    return {'check': name, 'status': status, 'value': value, 'expected': expected, 'reason': reason,
            'subject': subject}


def parse_xids(text):
    """XID events in kernel-log ``text``: [{'pci_bus_id', 'xid', 'meaning', 'cause', 'action',
    'verdict', 'critical'}]. ``action`` is the catalogue's immediate action (validate/xid.py);
    ``verdict`` what it asks (reset, reboot, application, none, unknown). An XID 154 line carries
    the driver's own verdict (``GPU recovery action changed from ... to 0x2 (Node Reboot
    Required)``): it is read from the line, with the driver's words in ``recovery``."""
    events = []
    for match in _XID_RE.finditer(text or ''):
        bus = match.group(1).lower()
        if len(bus) == 10:  # 0000:ca:00 without the function
            bus += '.0'
        number = int(match.group(2))
        row = XID_TABLE.get(number)
        if row is None:
            meaning, cause, action, verdict = 'XID %d' % number, "see NVIDIA's XID catalogue", None, 'unknown'
        else:
            meaning, cause, action, verdict = row['meaning'], row['cause'], row['action'], row['verdict']
        event = {'pci_bus_id': bus, 'xid': number, 'meaning': meaning, 'cause': cause, 'action': action,
                 'verdict': verdict, 'critical': verdict in ('reset', 'reboot')}
        if verdict == 'driver':
            recovery = recovery_action(match.group(3))
            event['recovery'] = recovery
            event['verdict'] = recovery['verdict'] if recovery else 'unknown'
            event['critical'] = event['verdict'] in RECOVERY_FAILING
            event['cause'] = ('the driver states: %s' % recovery['label'] if recovery
                              else 'the driver\'s recovery action could not be read from the line')
        events.append(event)
    return events


def _label(gpu):
    return 'GPU%s' % gpu.get('index', '?')


def check_driver(gpu_facts, kernel_module_version):
    """A host with GPUs needs a loaded driver, and NVML must answer with the kernel module's version."""
    driver = gpu_facts.get('driver') or {}
    if not gpu_facts.get('gpu_count'):
        return [check('driver', 'skip', reason='no NVIDIA GPU on PCI')]
    if not driver.get('loaded'):
        return [check('driver', 'fail', None, 'loaded',
                      'the NVIDIA kernel driver is not loaded: install it (gpuops.dlserver.nvidia_driver) '
                      'or load it (modprobe nvidia); nothing else about the GPUs can be checked')]
    out = []
    nvml_version = driver.get('version')
    if gpu_facts.get('source') not in ('nvml', 'nvidia-smi'):
        out.append(check('nvml', 'fail', gpu_facts.get('source'), 'nvml',
                         'the driver is loaded but neither NVML nor nvidia-smi answered (%s): a driver/library '
                         'version mismatch after an upgrade is the usual cause; reboot or reload the module'
                         % _depth_reasons(gpu_facts)))
    elif kernel_module_version and nvml_version and \
            numeric_or_none(kernel_module_version) != numeric_or_none(nvml_version):
        out.append(check('driver_versions', 'fail', nvml_version, kernel_module_version,
                         'NVML reports driver %s but the loaded kernel module is %s: the user-space libraries '
                         'were upgraded without a reboot; reboot the node' % (nvml_version, kernel_module_version)))
    else:
        out.append(check('driver_versions', 'pass', nvml_version, kernel_module_version or nvml_version))
    return out


def _depth_reasons(gpu_facts):
    tried = [t for t in gpu_facts.get('depths_tried') or [] if not t.get('answered')]
    return '; '.join('%s: %s' % (t.get('depth'), t.get('reason')) for t in tried) or 'no reason recorded'


def check_gpu_count(gpu_facts):
    """Every GPU on PCI must be visible to NVML (an entry without nvml_index fell off or is broken)."""
    gpus = gpu_facts.get('gpus') or []
    if not gpus or gpu_facts.get('source') != 'nvml':
        return [check('gpu_count', 'skip', len(gpus), None,
                      'no NVIDIA GPU on PCI' if not gpus else 'NVML did not answer: counts not compared')]
    seen = [g for g in gpus if g.get('nvml_index') is not None and not g.get('error')]
    missing = [g for g in gpus if g not in seen]
    if missing:
        return [check('gpu_count', 'fail', len(seen), len(gpus),
                      '%s on PCI but not usable through NVML (%s): the GPU fell off the bus or is lost; check the '
                      'kernel log for XID 79, reset or reseat it' % (
                          ', '.join('%s %s' % (_label(g), g.get('pci_bus_id')) for g in missing),
                          '; '.join(str(g.get('error') or 'not enumerated') for g in missing)))]
    return [check('gpu_count', 'pass', len(seen), len(gpus))]


def check_pcie(gpu):
    """Full width, and the generation the link and the model support (a lower current gen at idle warns)."""
    pcie = gpu.get('pcie') or {}
    cur_gen, max_gen = pcie.get('current_gen'), pcie.get('max_gen')
    cur_w, max_w = pcie.get('current_width'), pcie.get('max_width')
    label = _label(gpu)
    if None in (cur_gen, max_gen, cur_w, max_w):
        return check('pcie_link', 'skip', None, None, 'PCIe link not readable in sysfs', label)
    peak = peak_for(gpu.get('pci_device_id')) or {}
    want_gen = max(max_gen, peak.get('pcie_gen') or 0)
    value = 'Gen%d x%d' % (cur_gen, cur_w)
    expected = 'Gen%d x%d' % (want_gen, max_w)
    if cur_w < max_w:
        return check('pcie_link', 'fail', value, expected,
                     '%s PCIe %s, expected %s: reseat the GPU or check the riser/slot' % (label, value, expected),
                     label)
    if max_gen < want_gen:
        return check('pcie_link', 'warn', value, expected,
                     '%s links at most at Gen%d, the %s supports Gen%d: the slot or a riser is of an older '
                     'generation' % (label, max_gen, peak.get('model'), want_gen), label)
    if cur_gen < max_gen:
        return check('pcie_link', 'warn', value, expected,
                     '%s PCIe %s, expected %s: GPUs lower the link speed at idle; if it stays low under load, '
                     'check the slot and BIOS PCIe settings' % (label, value, expected), label)
    return check('pcie_link', 'pass', value, expected, '', label)


def check_memory_errors(gpu, counters, retired_page_limit):
    """ECC volatile uncorrectable, pending/failed row remaps, retired pages beyond the limit."""
    label = _label(gpu)
    counters = counters or {}
    out = []
    ecc = counters.get('ecc_volatile_uncorrected')
    if ecc is None:
        out.append(check('ecc_uncorrected', 'skip', None, 0,
                         'not reported (ECC off, GeForce, or NVML did not answer)', label))
    elif ecc > 0:
        out.append(check('ecc_uncorrected', 'fail', ecc, 0,
                         '%s has %d volatile uncorrectable ECC error(s) since the last reset: drain the node and '
                         'reset the GPU; replace it if they return' % (label, ecc), label))
    else:
        out.append(check('ecc_uncorrected', 'pass', 0, 0, '', label))
    pending, failed = counters.get('row_remap_pending'), counters.get('row_remap_failure')
    if pending is None and failed is None:
        out.append(check('row_remap', 'skip', None, 'none pending or failed',
                         'row remapping not reported (pre-Ampere GPUs retire pages instead)', label))
    elif failed:
        out.append(check('row_remap', 'fail', 'failure', 'none pending or failed',
                         '%s: a row remap failed: the GPU has run out of spare rows; replace it' % label, label))
    elif pending:
        out.append(check('row_remap', 'fail', 'pending', 'none pending or failed',
                         '%s: a row remap is pending: reset the GPU (or reboot) to apply it' % label, label))
    else:
        out.append(check('row_remap', 'pass', 'none', 'none pending or failed', '', label))
    retired = counters.get('retired_pages')
    if retired is None:
        out.append(check('retired_pages', 'skip', None, retired_page_limit,
                         'page retirement not reported (Ampere and newer remap rows instead)', label))
    elif retired > retired_page_limit or counters.get('retired_pages_pending'):
        out.append(check('retired_pages', 'fail', retired, retired_page_limit,
                         '%s has %s retired page(s)%s (limit %s): replace the GPU, or reset it to apply pending '
                         'retirements' % (label, retired, ', retirement pending' if counters.get(
                             'retired_pages_pending') else '', retired_page_limit), label))
    else:
        out.append(check('retired_pages', 'pass', retired, retired_page_limit, '', label))
    return out


def check_xids(events, gpus):
    """XIDs in the kernel log since boot: those whose catalogue action is a GPU reset or a node
    reboot fail naming it, and so does the driver's own verdict (XID 154, its latest line per GPU);
    the rest warn; each with its meaning."""
    if events is None:
        return [check('xid', 'skip', None, 'none', 'the kernel log could not be read')]
    if not events:
        return [check('xid', 'pass', 0, 'none')]
    labels = dict((g.get('pci_bus_id'), _label(g)) for g in gpus)
    out = []
    seen = set()
    for event in events:
        key = (event['pci_bus_id'], event['xid'])
        if key in seen:
            continue
        seen.add(key)
        same = [e for e in events if (e['pci_bus_id'], e['xid']) == key]
        if event['xid'] == 154:
            event = same[-1]  # the driver's latest verdict for this GPU
        subject = labels.get(event['pci_bus_id'], event['pci_bus_id'])
        if event.get('action') is None and 'recovery' not in event:
            action = 'not in the table'
        else:
            action = event.get('action')
        reason = '%s (%s): XID %d %s: %s (%s: %s)' % (
            subject, event['pci_bus_id'], event['xid'], event['meaning'], event['cause'],
            'driver verdict' if event['xid'] == 154 else 'catalogue action %s' % action,
            VERDICT_TEXT.get(event['verdict'], VERDICT_TEXT['unknown']))
        out.append(check('xid', 'fail' if event['critical'] else 'warn', 'XID %d x%d' % (event['xid'], len(same)),
                         'none', reason, subject))
    return out


def check_persistence(gpu, planned):
    label = _label(gpu)
    actual = gpu.get('persistence_mode')
    if planned is None or actual is None:
        return check('persistence', 'skip', actual, planned, 'persistence mode not reported or not planned', label)
    if bool(actual) != bool(planned):
        return check('persistence', 'fail', actual, planned,
                     '%s persistence mode is %s, the plan wants %s: start/enable nvidia-persistenced (or run '
                     'gpuops.dlserver.nvidia_driver)' % (label, 'on' if actual else 'off', 'on' if planned else 'off'),
                     label)
    return check('persistence', 'pass', actual, planned, '', label)


def check_fabric_manager(fm_plan, service_state, fm_version, driver_version):
    """Fabric Manager running (and of the driver's version) where the plan found an NVSwitch fabric."""
    if not (fm_plan or {}).get('required'):
        return [check('fabric_manager', 'skip', service_state, None, 'the plan found no NVSwitch fabric')]
    out = []
    if service_state != 'active':
        out.append(check('fabric_manager', 'fail', service_state, 'active',
                         'nvidia-fabricmanager is %s on an NVSwitch host: GPUs cannot use NVLink (CUDA init fails '
                         'with "system not yet initialized"); start it and check its journal' % service_state))
    else:
        out.append(check('fabric_manager', 'pass', service_state, 'active'))
    if fm_version and driver_version and numeric_or_none(fm_version) != numeric_or_none(driver_version):
        out.append(check('fabric_manager_version', 'fail', fm_version, driver_version,
                         'Fabric Manager %s does not match driver %s: install the Fabric Manager of the driver\'s '
                         'exact version' % (fm_version, driver_version)))
    elif fm_version and driver_version:
        out.append(check('fabric_manager_version', 'pass', fm_version, driver_version))
    return out


def check_nvlinks(gpu):
    label = _label(gpu)
    peak = peak_for(gpu.get('pci_device_id'))
    want = peak.get('nvlinks') if peak else None
    have = gpu.get('nvlink_active_count')
    if want is None or have is None:
        return check('nvlinks', 'skip', have, want,
                     'the model has no fixed NVLink count' if have is not None else 'NVLink state not reported',
                     label)
    if have < want:
        return check('nvlinks', 'fail', have, want,
                     '%s has %s of %s NVLinks up: reseat the GPU/baseboard, check the NVSwitch trays and '
                     'Fabric Manager' % (label, have, want), label)
    return check('nvlinks', 'pass', have, want, '', label)


def check_idle_throttle(gpu):
    label = _label(gpu)
    reasons = gpu.get('throttle_reasons')
    if reasons is None:
        return check('idle_throttle', 'skip', None, 'none', 'clock event reasons not reported', label)
    bad = [r for r in reasons if r in IDLE_THROTTLE_BAD]
    if bad:
        return check('idle_throttle', 'fail', ','.join(bad), 'none',
                     '%s is throttled at idle (%s): check cooling, fans and the power supply/brake cable'
                     % (label, ', '.join(bad)), label)
    return check('idle_throttle', 'pass', ','.join(reasons) or 'none', 'none', '', label)


def health(gpu_facts, plan, observed, retired_page_limit=0):
    """Every health check of a host. ``observed``: what the module read besides the facts:
    ``kernel_module_version``, ``counters`` (by PCI bus id), ``kernel_log`` (text or None),
    ``fabric_manager_state``, ``fabric_manager_version``."""
    gpu_facts = gpu_facts or {}
    plan = plan or {}
    gpus = gpu_facts.get('gpus') or []
    out = check_driver(gpu_facts, observed.get('kernel_module_version'))
    out.extend(check_gpu_count(gpu_facts))
    for gpu in gpus:
        out.append(check_pcie(gpu))
    if not gpus or not (gpu_facts.get('driver') or {}).get('loaded'):
        return out
    counters = observed.get('counters') or {}
    persistence = (plan.get('persistence') or {}).get('enabled')
    for gpu in gpus:
        out.extend(check_memory_errors(gpu, counters.get(gpu.get('pci_bus_id')), retired_page_limit))
        out.append(check_persistence(gpu, persistence))
        out.append(check_nvlinks(gpu))
        out.append(check_idle_throttle(gpu))
    log = observed.get('kernel_log')
    out.extend(check_xids(parse_xids(log) if log is not None else None, gpus))
    out.extend(check_fabric_manager(plan.get('fabric_manager'), observed.get('fabric_manager_state'),
                                    observed.get('fabric_manager_version'), (gpu_facts.get('driver') or {}).get(
                                        'version')))
    return out
