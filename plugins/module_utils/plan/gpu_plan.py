# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hardware gating: turn ``ansible_facts.gpuops_gpu`` into the plan every role follows.

This is the ONE place where the collection decides, from what the probe saw, whether a
host needs the NVIDIA driver, which kernel-module flavour and branch, Fabric Manager, the
NVLink subnet manager, persistence, MIG, DCGM profiling and which roles run. The plan is
computed once per host and run (action ``gpuops.dlserver.host_plan``, from every role's typed
inputs, ``plan/host_plan.py``); roles read ``gpuops_plan`` and never re-derive a decision.

By concern: ``plan/options.py`` (the options), ``plan/driver.py`` and
``plan/driver_branch.py`` (driver, branch, flavour), ``plan/devices.py`` (fabric, IMEX,
persistence, MIG, DCGM), ``hardware/capabilities.py`` (the vendor facts the probe shares).

Pure functions, standard library only, Python 3.8+: a module may import this on a target.
The rules and their sources are in docs/hardware-gating.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.capabilities import (
    ARCHITECTURES,
    UNKNOWN_ARCH,
    count,
    entry,
    fabric_evidence,
    gpu_label,
    int_or_none,
    normalise_gpus,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.devices import (
    decide_dcgm,
    decide_fabric,
    decide_imex,
    decide_mig,
    decide_persistence,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan import adopt
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.driver import decide_driver
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.options import ROLES, validate_plan_options

PLAN_VERSION = 1


def _decide_roles(ctx, driver, dcgm, adopted):
    has_gpus = ctx['gpu_count'] > 0
    in_container = ctx['options']['in_container']
    driver_reason = driver['reason']
    group = 'decided by inventory group membership, not by hardware'
    if has_gpus and in_container and not ctx['driver_facts'].get('loaded'):
        validate = (False, 'GPUs present, but in a container without a loaded driver there is nothing to '
                           'measure')
    elif has_gpus:
        validate = (True, 'GPUs present: measure them against their published peak')
    else:
        validate = (False, 'no NVIDIA GPU to validate')
    gpu_stack_reason = ('driver installed: %s' % driver_reason) if driver['required'] else (
        'no driver: %s' % driver_reason)
    decisions = {
        'cuda_toolkit': _decide_cuda_toolkit(ctx['options'], driver, gpu_stack_reason),
        'os_tuning': (True, 'every host is tuned; GPU-specific settings follow this plan'),
        'nvidia_driver': (driver['required'], driver_reason),
        'nvidia_container_toolkit': (driver['required'], gpu_stack_reason),
        'python_stack': (True, 'every host gets the Python stacks (CPU wheels where there is no GPU)'),
        'node_exporter': (True, 'every host exports node metrics'),
        'dcgm_exporter': (dcgm['exporter']['value'], dcgm['exporter']['reason']),
        'prometheus': (True, group),
        'volcano': (True, group),
        'gpu_validate': validate,
    }
    for role, decision in adopted.items():
        # what someone else installed is left alone where the role would have run (plan/adopt.py)
        if decisions[role][0] and decision['action'] == 'leave':
            decisions[role] = (False, decision['reason'])
    return dict((name, {'run': decisions[name][0], 'reason': decisions[name][1]}) for name in ROLES)


def _decide_cuda_toolkit(options, driver, gpu_stack_reason):
    """CUDA toolkits where a driver goes, or on hosts without one when cuda_toolkit_without_gpu asks
    (login and build nodes compile CUDA code); only when cuda_toolkit_versions lists any."""
    if not options.get('cuda_versions'):
        return False, 'no toolkit requested: cuda_toolkit_versions is empty'
    if driver['required']:
        return True, gpu_stack_reason
    if options.get('cuda_without_gpu'):
        return True, 'cuda_toolkit_without_gpu is true: toolkits without a driver (%s)' % driver['reason']
    return False, '%s (set cuda_toolkit_without_gpu to install toolkits here)' % gpu_stack_reason


def _collect_warnings(ctx):
    facts, warnings = ctx['facts'], ctx['warnings']
    for gpu in ctx['gpus']:
        pcie = gpu.get('pcie') or {}
        if not isinstance(pcie, dict):
            continue
        cur_gen, max_gen = int_or_none(pcie.get('current_gen')), int_or_none(pcie.get('max_gen'))
        cur_w, max_w = int_or_none(pcie.get('current_width')), int_or_none(pcie.get('max_width'))
        degraded = pcie.get('degraded')
        if not isinstance(degraded, bool):
            degraded = bool((cur_w is not None and max_w is not None and cur_w < max_w)
                            or (cur_gen is not None and max_gen is not None and cur_gen < max_gen))
        if degraded:
            message = 'GPU %s PCIe link runs at Gen%s x%s, capable of Gen%s x%s' % (
                gpu_label(gpu), cur_gen if cur_gen is not None else '?', cur_w if cur_w is not None else '?',
                max_gen if max_gen is not None else '?', max_w if max_w is not None else '?')
            if cur_w is not None and max_w is not None and cur_w < max_w:
                message += ': a narrower link is a seating, riser or slot fault'
            else:
                message += ': a lower speed can be idle power saving, check it under load'
            warnings.append(entry('pcie_degraded', message, pci_bus_id=gpu.get('pci_bus_id')))
        if gpu['architecture'] == UNKNOWN_ARCH:
            warnings.append(entry('unknown_architecture',
                                  'GPU %s (device %s): architecture unknown, so the kernel-module flavour and the '
                                  'driver branch cannot be checked for it' % (
                                      gpu_label(gpu), gpu.get('pci_device_id') or '?'),
                                  pci_bus_id=gpu.get('pci_bus_id')))
    for item in facts.get('errors') or []:
        if isinstance(item, dict):
            bus = item.get('pci_bus_id')
            text = item.get('message') or item.get('error') or item.get('msg') or str(item)
            where = item.get('source') or item.get('depth')
            index = item.get('nvml_index')
            prefix = 'GPU %s: ' % bus if bus else ('NVML GPU index %s: ' % index if index is not None else '')
            message = '%sprobe error%s: %s' % (prefix, ' (%s)' % where if where else '', text)
            warnings.append(entry('probe_error', message, pci_bus_id=bus))
        else:
            warnings.append(entry('probe_error', 'probe error: %s' % item))
    driver = ctx['driver_facts']
    if driver.get('loaded') is True and facts.get('source') == 'pci':
        tried = facts.get('depths_tried')
        why = []
        for item in tried or ():
            if isinstance(item, dict):
                if not item.get('answered') and item.get('reason'):
                    why.append('%s: %s' % (item.get('depth'), item.get('reason')))
            else:
                why.append(str(item))
        tried_note = ' (%s)' % '; '.join(why) if why else ''
        warnings.append(entry('probe_shallow',
                              'the NVIDIA driver is loaded but only PCI sysfs answered%s: NVML details '
                              '(memory, ECC, MIG, topology) are missing; install nvidia-ml-py or nvidia-smi '
                              'on the host (gpuops_nvml_install: true)' % tried_note))
    listed = len(ctx['gpus'])
    if facts.get('gpus') is not None and listed != ctx['gpu_count']:
        warnings.append(entry('gpu_count_mismatch', 'gpu_count is %d but %d GPU(s) are listed'
                              % (ctx['gpu_count'], listed)))


def build_plan(facts, options=None):
    """Turn ``ansible_facts.gpuops_gpu`` (docs/architecture.md section 3) into the hardware plan.

    ``options`` is validated with validate_plan_options() (ValueError on bad input). Conflicts
    between the options and the hardware do not raise: they are listed in ``plan['errors']``
    (each naming the variable to change) and ``plan['ok']`` is false.
    """
    opts = validate_plan_options(options)
    if facts is None:
        raise ValueError('gpuops_gpu facts are missing: run gpuops.dlserver.gpu_facts on the host first')
    if not isinstance(facts, dict):
        raise ValueError('gpuops_gpu facts must be a dictionary, got %s' % type(facts).__name__)
    warnings, errors = [], []
    gpus = normalise_gpus(facts, warnings)
    driver_facts = facts.get('driver') if isinstance(facts.get('driver'), dict) else {}
    archs = set(g['architecture'] for g in gpus)
    known = set(a for a in archs if a in ARCHITECTURES)
    ctx = {
        'facts': facts, 'options': opts, 'gpus': gpus, 'warnings': warnings, 'errors': errors,
        'gpu_count': count(facts, 'gpu_count', len(gpus)),
        'nvswitch_count': count(facts, 'nvswitch_count', len(facts.get('nvswitches') or [])),
        'archs': archs, 'known_archs': known,
        'has_unknown': UNKNOWN_ARCH in archs,
        'unknown_count': sum(1 for g in gpus if g['architecture'] == UNKNOWN_ARCH),
        'driver_facts': driver_facts,
    }
    ctx['fabric'] = fabric_evidence(facts, gpus)
    _collect_warnings(ctx)
    try:
        adopt_driver = adopt.plan_driver(driver_facts, opts['driver_source'], opts['driver_adopt'])
    except adopt.AdoptError as exc:
        raise ValueError('gpuops_gpu.driver: %s' % exc)
    ctx['adopt_driver'] = adopt_driver
    try:
        adopt_toolkit = adopt.plan_component('nvidia_container_toolkit', facts.get('components'), opts['toolkit_adopt'])
        adopt_dcgm = adopt.plan_component('dcgm_exporter', facts.get('components'), opts['dcgm_adopt'])
    except adopt.AdoptError as exc:
        raise ValueError('gpuops_gpu.components: %s' % exc)
    driver = decide_driver(ctx)
    fabric_manager, nvlsm = decide_fabric(ctx, driver)
    dcgm = decide_dcgm(ctx)
    plan = {
        'plan_version': PLAN_VERSION,
        'host': {
            'gpu_count': ctx['gpu_count'],
            'nvswitch_count': ctx['nvswitch_count'],
            'nvswitch_mgmt_nic_count': len(ctx['fabric']['mgmt_nics']),
            'architectures': sorted(archs, key=lambda a: ARCHITECTURES.get(a, {'order': 999})['order']),
            'source': facts.get('source'),
            'in_container': opts['in_container'],
        },
        'driver': driver,
        'fabric_manager': fabric_manager,
        'nvlink_subnet_manager': nvlsm,
        'imex': decide_imex(ctx, driver),
        'persistence': decide_persistence(ctx, driver),
        'mig': decide_mig(ctx, driver),
        'dcgm': dcgm,
        'exporters': {
            'node_exporter': {'run': True, 'reason': 'every host exports node metrics'},
            'dcgm_exporter': {'run': dcgm['exporter']['value'], 'reason': dcgm['exporter']['reason']},
        },
        'sysctl': ({'live': False, 'reason': 'in a container the kernel is the host\'s: sysctl settings are '
                                             'written to /etc/sysctl.d but not applied live'}
                   if opts['in_container'] else
                   {'live': True, 'reason': 'sysctl settings are written and applied live'}),
        'adopt': {'nvidia_driver': adopt_driver, 'nvidia_container_toolkit': adopt_toolkit, 'dcgm_exporter': adopt_dcgm},
        'roles': _decide_roles(ctx, driver, dcgm, {'nvidia_driver': adopt_driver,
                                                   'nvidia_container_toolkit': adopt_toolkit,
                                                   'dcgm_exporter': adopt_dcgm}),
        'options': opts,
        'warnings': warnings,
        'errors': errors,
        'ok': not errors,
    }
    return plan


def format_plan_errors(plan):
    """One message for every error of a plan; each message names the variable to change."""
    return '; '.join('[%s] %s' % (e['option'], e['message']) for e in plan.get('errors') or [])
