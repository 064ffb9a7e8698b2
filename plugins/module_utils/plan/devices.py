# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The device part of the plan: Fabric Manager and the NVLink subnet manager, IMEX,
persistence, MIG and DCGM profiling.

Pure functions, standard library only, Python 3.8+. Sources: docs/hardware-gating.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.capabilities import (
    ARCHITECTURES,
    PROFILING_MIN_ORDER,
    arch_list,
    entry,
    gpu_label,
    int_or_none,
    profiling_supported,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.driver import gpu_model_label
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.options import error

# NVLink subnet manager: fourth-generation NVSwitch systems (NVLink 5, HGX/DGX B200 and later).
NVLSM_MIN_NVSWITCH_GENERATION = 4
NVLSM_MIN_ORDER = ARCHITECTURES['blackwell']['order']


def nvswitch_generations(facts):
    gens = []
    for switch in facts.get('nvswitches') or []:
        if isinstance(switch, dict):
            gen = int_or_none(switch.get('generation'))
            if gen is not None:
                gens.append(gen)
    return gens


def decide_fabric(ctx, driver):
    facts = ctx['facts']
    evidence = ctx['fabric']
    nvswitches = evidence['nvswitches']
    mgmt = evidence['mgmt_nics']
    links = evidence['nvml_switch_links']
    load = driver['load_modules']['value']
    found = []
    if nvswitches:
        found.append('%d NVSwitch(es) on PCI' % nvswitches)
    if mgmt:
        found.append('%d NVLink switch-management function(s) (ConnectX-7 with SW_MNG in its VPD: %s)'
                     % (len(mgmt), ', '.join(mgmt)))
    if links:
        found.append('%d active NVLink(s) ending at a switch (NVML)' % links)
    unconfirmed = not found and evidence['baseboard_gpus'] and evidence['vpd_unreadable']
    if unconfirmed:
        found.append('%d GPU(s) that exist only on NVSwitch baseboards (%s), and the VPD of %d ConnectX-7 '
                     'function(s) could not be read to confirm the switch trays'
                     % (len(evidence['baseboard_gpus']), ', '.join(evidence['baseboard_gpus']),
                        len(evidence['vpd_unreadable'])))
        ctx['warnings'].append(entry(
            'nvlink5_unconfirmed',
            'NVLink 5 switch trays not confirmed: the ConnectX-7 VPD could not be read (run gpu_facts as root); '
            'Fabric Manager and NVLSM are planned because %s are NVSwitch-baseboard GPUs'
            % ', '.join(evidence['baseboard_gpus'])))
    elif not found and evidence['baseboard_gpus'] and ctx['gpu_count']:
        ctx['warnings'].append(entry(
            'nvswitch_baseboard_without_switch',
            'GPU(s) %s exist only on NVSwitch baseboards, but no NVSwitch, no switch-management function and '
            'no switch NVLink was found (GPUs passed through to a VM?): Fabric Manager is not planned'
            % ', '.join(evidence['baseboard_gpus'])))
    detected = {'nvswitches': nvswitches, 'mgmt_nics': mgmt, 'nvml_switch_links': links}
    if not found:
        fm = {'required': False, 'start': False, 'detected_by': [],
              'reason': 'no NVSwitch fabric: no NVSwitch on PCI, no NVLink switch-management function, no NVLink '
                        'to a switch; GPUs talk over PCIe or direct NVLink bridges'}
        nvlsm = {'required': False, 'start': False, 'mgmt_nics': [], 'reason': 'no NVSwitch fabric'}
        return fm, nvlsm
    if not driver['required']:
        ctx['warnings'].append(entry('nvswitch_without_gpus',
                                     'an NVSwitch fabric (%s) but no GPU: GPUs may have fallen off the bus'
                                     % '; '.join(found)))
        reason = 'NVSwitch fabric (%s) but no driver is installed on this host' % '; '.join(found)
        return ({'required': False, 'start': False, 'detected_by': found, 'reason': reason},
                {'required': False, 'start': False, 'mgmt_nics': mgmt, 'reason': reason})
    fm_reason = ('%s: Fabric Manager must configure the NVLink fabric before CUDA can use the GPUs (CUDA error '
                 '802 "system not yet initialized" otherwise); installed at exactly the driver version'
                 % '; '.join(found))
    start_note = '' if load else '; not started: the kernel module is not loaded here'
    fm = {'required': True, 'start': load, 'detected_by': found, 'reason': fm_reason + start_note}

    gens = nvswitch_generations(facts)
    new_archs = sorted(a for a in ctx['known_archs'] if ARCHITECTURES[a]['order'] >= NVLSM_MIN_ORDER)
    if mgmt or unconfirmed:
        required = True
        reason = ('NVLink 5 system: the NVSwitch trays are reached through ConnectX-7 switch-management '
                  'functions, which the NVLink subnet manager (NVLSM) programs; Fabric Manager needs it '
                  '(it needs the ib_umad kernel module and the InfiniBand diagnostics)')
    elif gens:
        required = max(gens) >= NVLSM_MIN_NVSWITCH_GENERATION
        if required:
            verdict = 'fourth-generation NVSwitches (NVLink 5) need the NVLink subnet manager next to Fabric Manager'
        else:
            verdict = 'before the fourth generation, Fabric Manager alone configures the fabric'
        reason = 'NVSwitch generation %d: %s' % (max(gens), verdict)
    elif new_archs:
        required = True
        reason = ('%s GPUs on NVSwitches: fourth-generation NVSwitch systems (HGX/DGX B200 and later) need the '
                  'NVLink subnet manager (NVLSM) next to Fabric Manager' % arch_list(new_archs))
    elif ctx['known_archs']:
        required = False
        reason = ('%s GPUs on NVSwitches: NVSwitch generations before the fourth (HGX A100/H100) need Fabric '
                  'Manager only' % arch_list(ctx['known_archs']))
    else:
        required = True
        reason = ('NVSwitches with GPUs of unknown architecture: the NVSwitch generation cannot be told, so '
                  'NVLSM is installed: without it a fourth-generation fabric never comes up, and on older '
                  'fabrics the Fabric Manager start script does not start it')
        ctx['warnings'].append(entry('nvswitch_generation_unknown',
                                     'NVSwitch generation unknown (GPU architecture unknown): NVLSM installed '
                                     'as a precaution'))
    nvlsm = {'required': required, 'start': required and load, 'mgmt_nics': mgmt,
             'reason': reason + (start_note if required else '')}
    del detected
    return fm, nvlsm


def decide_imex(ctx, driver):
    trays = [g for g in ctx['gpus'] if g.get('imex')]
    if not trays:
        return {'required': False, 'gpus': [],
                'reason': 'no Grace Blackwell NVL tray GPU (GB200, GB300): no multi-node NVLink domain to '
                          'export memory across'}
    labels = sorted(set(gpu_model_label(g) for g in trays))
    if not driver['required']:
        return {'required': False, 'gpus': [g.get('pci_bus_id') for g in trays],
                'reason': 'Grace Blackwell GPUs, but no driver is installed on this host'}
    return {'required': True, 'gpus': [g.get('pci_bus_id') for g in trays],
            'reason': ('%s: GB200/GB300 NVL trays share GPU memory across the rack\'s NVLink domain through the '
                       'IMEX daemon (nvidia-imex, same version as the driver); this collection does not install '
                       'it yet' % ', '.join(labels))}


def decide_persistence(ctx, driver):
    if not driver['required']:
        return {'enabled': False, 'start': False, 'reason': 'no driver is installed on this host'}
    if not ctx['options']['persistence']:
        return {'enabled': False, 'start': False,
                'reason': 'nvidia_driver_persistence is false: GPUs are torn down when the last client exits'}
    load = driver['load_modules']['value']
    reason = ('nvidia-persistenced keeps the GPUs initialised between jobs (no re-initialisation delay, '
              'settings such as power limits and MIG stay applied)')
    if not load:
        reason += '; enabled but not started: the kernel module is not loaded here'
    return {'enabled': True, 'start': load, 'reason': reason}


def decide_mig(ctx, driver):
    gpus = ctx['gpus']
    mode = ctx['options']['mig']
    capable = [g.get('pci_bus_id') for g in gpus if g.get('mig_capable') is True]
    unknown = [g.get('pci_bus_id') for g in gpus if g.get('mig_capable') is None]
    load = driver['load_modules']['value']
    if mode == 'auto':
        reason = ('nvidia_driver_mig_mode is auto: the MIG mode of %d capable GPU(s) is left as it is'
                  % len(capable)) if capable else 'no MIG-capable GPU; MIG mode is not touched'
        return {'capable_gpus': capable, 'mode': None, 'apply_to': [], 'apply': False, 'reason': reason}
    if not capable and mode == 'disabled':
        return {'capable_gpus': [], 'mode': None, 'apply_to': [], 'apply': False,
                'reason': 'nvidia_driver_mig_mode is disabled and no GPU is MIG-capable: nothing to disable'}
    if not capable:
        detail = ('no GPU of this host is MIG-capable (MIG: A100, A30, H100, H200, B200 class data-centre GPUs '
                  'and RTX PRO 6000/5000/4500 Blackwell)')
        if unknown:
            detail += '; MIG capability of %d GPU(s) is unknown until the driver answers' % len(unknown)
        ctx['errors'].append(error('mig_not_capable', 'mig',
                                   'MIG mode %s was asked for, but %s. Set nvidia_driver_mig_mode: auto for this '
                                   'host' % (mode, detail)))
        return {'capable_gpus': [], 'mode': mode, 'apply_to': [], 'apply': False,
                'reason': 'MIG %s asked for, but %s' % (mode, detail)}
    reason = 'MIG mode %s on %d MIG-capable GPU(s)' % (mode, len(capable))
    others = len(gpus) - len(capable)
    if others:
        reason += '; %d other GPU(s) are not MIG-capable and are left alone' % others
    if not load:
        reason += '; not applied now: the kernel module is not loaded here'
    return {'capable_gpus': capable, 'mode': mode, 'apply_to': capable, 'apply': load, 'reason': reason}


def decide_dcgm(ctx):
    gpus = ctx['gpus']
    mode = ctx['options']['dcgm_profiling']
    if gpus or ctx['gpu_count']:
        exporter = {'value': True, 'reason': 'NVIDIA GPU(s) present: DCGM exporter publishes their metrics'}
    else:
        exporter = {'value': False, 'reason': 'no NVIDIA GPU: nothing for DCGM to watch'}
    supported = [g.get('pci_bus_id') for g in gpus if profiling_supported(g)]
    lacking = [g for g in gpus if not profiling_supported(g)]
    why_not = []
    for gpu in lacking:
        info = ARCHITECTURES.get(gpu['architecture'])
        if info is None:
            why_not.append('%s: architecture unknown' % gpu_label(gpu))
        elif info['order'] < PROFILING_MIN_ORDER:
            why_not.append('%s: %s predates Volta' % (gpu_label(gpu), gpu['architecture']))
        elif gpu.get('datacenter') is None and gpu.get('segment') is None:
            why_not.append('%s: not known to be a data-centre or workstation GPU' % gpu_label(gpu))
        else:
            why_not.append('%s: a GeForce GPU, neither data-centre nor workstation' % gpu_label(gpu))
    rule = 'DCGM profiling (DCP) metrics exist on data-centre and workstation (RTX/Quadro) GPUs of Volta and newer'
    if mode == 'disabled':
        profiling = {'value': False, 'supported_gpus': supported,
                     'reason': 'dcgm_exporter_profiling is disabled'}
    elif not exporter['value']:
        if mode == 'enabled':
            ctx['errors'].append(error('profiling_not_supported', 'dcgm_profiling',
                                       'DCGM profiling was enabled, but this host has no NVIDIA GPU. Set '
                                       'dcgm_exporter_profiling: auto'))
        profiling = {'value': False, 'supported_gpus': [], 'reason': 'no NVIDIA GPU'}
    elif not supported:
        reason = '%s; none here (%s)' % (rule, '; '.join(why_not))
        if mode == 'enabled':
            ctx['errors'].append(error('profiling_not_supported', 'dcgm_profiling',
                                       'DCGM profiling was enabled, but no GPU of this host supports it (%s). '
                                       'Set dcgm_exporter_profiling: auto or disabled' % '; '.join(why_not)))
        profiling = {'value': False, 'supported_gpus': [], 'reason': reason}
    else:
        reason = '%s: %d of %d GPU(s) support them' % (rule, len(supported), len(gpus))
        if why_not:
            reason += ' (not: %s)' % '; '.join(why_not)
        profiling = {'value': True, 'supported_gpus': supported, 'reason': reason}
    return {'exporter': exporter, 'profiling': profiling}
