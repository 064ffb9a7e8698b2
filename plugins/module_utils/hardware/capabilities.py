# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU capabilities: the ``capabilities`` block of the fact contract (docs/architecture.md section 3).

The probe (``probe/gpu_probe.py``) and the planner (``plan/``) both judge a GPU by these
rules: the architecture table, the per-GPU model row (``gpu_models``), the NVSwitch fabric
evidence. The probe imports this module, never the planner.

Pure functions, standard library only, Python 3.8+ (imported by modules on targets).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.gpu_models import describe_gpu

# ---------------------------------------------------------------------------------------
# Vendor facts, one row per GPU architecture, each with its source and the date it was read
# (docs/vendor-facts.md lists them; the sources in full: docs/hardware-gating.md).
#   order        generation order, for "Volta and newer" style rules
#   open         NVIDIA's open kernel modules drive it (Turing and newer: they need the GSP)
#   proprietary  the proprietary kernel modules drive it (not Blackwell: open only)
#   min_branch   first driver branch this collection accepts for it (None: no floor)
#   max_branch   last driver branch that supports it (None: still supported)
# ---------------------------------------------------------------------------------------
_INSTALL_GUIDE = ('NVIDIA Driver Installation Guide, "Kernel Modules" (https://docs.nvidia.com/datacenter/tesla/'
                  'driver-installation-guide/kernel-modules.html): open modules for Turing and newer, proprietary '
                  'required for Maxwell, Pascal, Volta')
_OPEN_ONLY = ('NVIDIA Technical Blog, "NVIDIA Transitions Fully Towards Open-Source GPU Kernel Modules" (July 2024): '
              '"Grace Hopper and Blackwell must use the open modules" (docs/hardware-gating.md [2])')
_LAST_580 = ('NVIDIA Unix driver deprecation schedule: "The release 580 series will be the last to support GPUs based '
             'on the Maxwell, Pascal, and Volta architectures" (docs/hardware-gating.md [5][6], reports of it)')
_POLICY_525 = 'min_branch 525: collection policy (the first production branch accepted), not a vendor fact'
_B200 = ('min_branch 570: NVIDIA GPU Operator platform support, "HGX B200 requires a driver container version of '
         '570.133.20 or later" (https://github.com/NVIDIA/cloud-native-docs/pull/184); R570 the first branch '
         'with RTX 50 support (docs/hardware-gating.md [8])')
_READ = '2026-12-01'   # the sources of docs/hardware-gating.md were read then (issue 18); not re-read since


def _arch(order, open_, proprietary, min_branch, max_branch, source, unconfirmed=None):
    row = {'order': order, 'open': open_, 'proprietary': proprietary, 'min_branch': min_branch,
           'max_branch': max_branch, 'source': source, 'read': _READ}
    if unconfirmed:
        row['unconfirmed'] = unconfirmed
    return row


ARCHITECTURES = {
    'kepler': dict(_arch(30, False, True, None, 470, _INSTALL_GUIDE + '; max_branch 470: NVIDIA\'s "Current graphics '
                         'driver releases" (https://forums.developer.nvidia.com/t/current-graphics-driver-releases/28500)'
                         ': "Legacy releases 470.239.06 (x86_64) - GKxxx "Kepler" GPUs"'), read='2026-12-07'),
    'maxwell': _arch(50, False, True, None, 580, _INSTALL_GUIDE + '; ' + _LAST_580,
                     'max_branch read in reports of NVIDIA\'s schedule, not in NVIDIA\'s own page'),
    'pascal': _arch(60, False, True, None, 580, _INSTALL_GUIDE + '; ' + _LAST_580,
                    'max_branch read in reports of NVIDIA\'s schedule, not in NVIDIA\'s own page'),
    'volta': _arch(70, False, True, None, 580, _INSTALL_GUIDE + '; ' + _LAST_580,
                   'max_branch read in reports of NVIDIA\'s schedule, not in NVIDIA\'s own page'),
    'turing': _arch(75, True, True, None, None, _INSTALL_GUIDE),
    'ampere': _arch(80, True, True, None, None, _INSTALL_GUIDE),
    'ada': _arch(89, True, True, 525, None, _INSTALL_GUIDE + '; ' + _POLICY_525),
    'hopper': _arch(90, True, True, 525, None, _INSTALL_GUIDE + '; ' + _POLICY_525),
    'blackwell': _arch(100, True, False, 570, None, _INSTALL_GUIDE + '; ' + _OPEN_ONLY + '; ' + _B200,
                       'open only: read in a reproduction of NVIDIA\'s blog post (docs/hardware-gating.md [2])'),
}
UNKNOWN_ARCH = 'unknown'

# DCGM profiling (DCP) metrics: data-centre GPUs, Volta and newer.
PROFILING_MIN_ORDER = ARCHITECTURES['volta']['order']


def int_or_none(value):
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value)
    try:
        return int(str(value).strip())
    except ValueError:
        try:
            return int(float(str(value).strip()))
        except ValueError:
            return None


def count(facts, key, fallback):
    value = facts.get(key)
    if value is None:
        return fallback
    number = int_or_none(value)
    if number is None or number < 0:
        raise ValueError('gpuops_gpu.%s must be a non-negative integer, got %r' % (key, value))
    return number


def gpu_label(gpu):
    name = gpu.get('name')
    bus = gpu.get('pci_bus_id') or '?'
    return '%s (%s)' % (bus, name) if name else bus


def normalise_gpus(facts, warnings):
    gpus = facts.get('gpus')
    if gpus is None:
        gpus = []
    if not isinstance(gpus, list):
        raise ValueError('gpuops_gpu.gpus must be a list, got %s' % type(gpus).__name__)
    result = []
    for index, gpu in enumerate(gpus):
        if not isinstance(gpu, dict):
            raise ValueError('gpuops_gpu.gpus[%d] must be a dictionary, got %s' % (index, type(gpu).__name__))
        arch = gpu.get('architecture')
        arch = str(arch).strip().lower() if arch is not None else UNKNOWN_ARCH
        if arch not in ARCHITECTURES and arch != UNKNOWN_ARCH:
            warnings.append(entry('architecture_unrecognised',
                                  'GPU %s reports architecture %r, which this plan does not know; '
                                  'treated as unknown' % (gpu_label(gpu), gpu.get('architecture')),
                                  pci_bus_id=gpu.get('pci_bus_id')))
            arch = UNKNOWN_ARCH
        item = dict(gpu)
        item['architecture'] = arch
        add_model(item)
        result.append(item)
    return result


def add_model(gpu):
    """Per-GPU vendor facts from the collection's table (gpu_models.KNOWN_GPUS), by device id.

    Keys the probe already put in the facts win; the table fills what older facts lack, so
    the plan and the probe judge a GPU by the same row.
    """
    model = describe_gpu(gpu.get('pci_device_id')) if gpu.get('pci_device_id') is not None else {}
    known = model.get('known', False)
    for key in ('segment', 'min_branch', 'min_version', 'imex', 'nvswitch_baseboard'):
        if gpu.get(key) is None:
            gpu[key] = model.get(key) if known else None
    if gpu.get('proprietary_supported') is None:
        gpu['proprietary_supported'] = model.get('proprietary_supported') if known else None
    if gpu.get('segment') is None and gpu.get('datacenter') is True:
        gpu['segment'] = 'datacenter'
    if gpu.get('model_name') is None:
        gpu['model_name'] = gpu.get('name') or (model.get('name') if known else None)
    gpu['id_generation'] = gpu.get('id_generation') or model.get('id_generation')
    # an unknown GPU whose id is Turing-or-newer (or that has no id at all) is treated as new silicon
    gpu['new_silicon'] = gpu['architecture'] == UNKNOWN_ARCH and gpu['id_generation'] != 'pre_turing'


def entry(code, message, **extra):
    item = {'code': code, 'message': message}
    for key, value in extra.items():
        if value is not None:
            item[key] = value
    return item


def arch_list(archs):
    return ', '.join(sorted(archs, key=lambda a: ARCHITECTURES.get(a, {'order': 999})['order']))


def profiling_supported(gpu):
    info = ARCHITECTURES.get(gpu['architecture'])
    return bool(info and info['order'] >= PROFILING_MIN_ORDER
                and (gpu.get('datacenter') is True or gpu.get('segment') == 'workstation'))


def open_capable(gpu):
    info = ARCHITECTURES.get(gpu['architecture'])
    if info is None:
        return gpu.get('new_silicon', False)
    return info['open']


def fabric_evidence(facts, gpus=None):
    """What says this host has an NVSwitch fabric, from every depth of the probe.

    ``nvswitches``: NVSwitch PCI functions (NVLink 3/4: HGX A100/H100);
    ``mgmt_nics``: bus ids of ConnectX-7 switch-management functions (VPD SW_MNG, NVLink 5:
    HGX/DGX B200, B300); ``nvml_switch_links``: active NVLinks whose remote device type is
    "switch"; ``vpd_unreadable``: ConnectX-7 functions whose VPD could not be read.
    """
    facts = facts or {}
    if gpus is None:
        gpus = normalise_gpus(facts, [])
    fabric = facts.get('nvlink_fabric') if isinstance(facts.get('nvlink_fabric'), dict) else {}
    mgmt = []
    for nic in facts.get('nvswitch_mgmt_nics') or []:
        bus = nic.get('pci_bus_id') if isinstance(nic, dict) else nic
        if bus:
            mgmt.append(bus)
    for nic in facts.get('nics') or []:
        if isinstance(nic, dict) and nic.get('nvlink_switch_mgmt') is True and nic.get('pci_bus_id') not in mgmt:
            mgmt.append(nic.get('pci_bus_id'))
    links = int_or_none(fabric.get('nvml_switch_links'))
    if links is None:
        counted = [1 for g in gpus for link in (g.get('nvlinks') or ())
                   if isinstance(link, dict) and link.get('active') and link.get('remote_type') == 'switch']
        links = len(counted) if counted else None
    return {
        'nvswitches': count(facts, 'nvswitch_count', len(facts.get('nvswitches') or [])),
        'mgmt_nics': sorted(mgmt),
        'nvml_switch_links': links or 0,
        'vpd_unreadable': list(fabric.get('vpd_unreadable') or []),
        'baseboard_gpus': [g.get('pci_bus_id') for g in gpus if g.get('nvswitch_baseboard')],
    }


def capabilities_from_facts(facts):
    """The contract's ``capabilities`` block, computed by the same rules as the plan.

    The probe may call this so that its summary and the plan never disagree.
    """
    gpus = normalise_gpus(facts or {}, [])
    evidence = fabric_evidence(facts, gpus)
    return {
        'fabric_manager_required': bool(gpus) and bool(
            evidence['nvswitches'] or evidence['mgmt_nics'] or evidence['nvml_switch_links']
            or (evidence['baseboard_gpus'] and evidence['vpd_unreadable'])),
        'open_kernel_modules_supported': bool(gpus) and all(open_capable(g) for g in gpus),
        'mig_capable': any(g.get('mig_capable') is True for g in gpus),
        'dcgm_profiling_supported': any(profiling_supported(g) for g in gpus),
    }
