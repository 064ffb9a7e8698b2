# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which DCGM packages dcgm_exporter installs in host mode (used by dcgm.decide; case table
tests/unit/plugins/module_utils/data/dcgm_cases.yml).

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# Which GPUs DCGM serves profiling (DCP) fields for through its closed-source profiling module
# (datacenter-gpu-manager-4-proprietary): every GPU without NVML GPM support. NVML serves GPM
# ("GPU Performance Monitoring") on Hopper and newer only, so Volta, Turing, Ampere AND Ada need the
# closed module. dcgm-exporter's README says "Ampere and earlier generation GPUs", which leaves out
# Ada (sm_89: released beside Hopper, older than it, no GPM): an L4/L40/L40S node would export no
# profiling fields. One row per architecture of the probe; plain data a generator can list.
PROFILING_MODULE_SOURCES = (
    {'what': 'NVML GPM functions (nvmlGpmQueryDeviceSupport, nvmlGpmSampleGet, nvmlGpmMetricsGet): '
             '"For Hopper or newer fully supported devices."',
     'source': 'NVML API Reference Guide, GPM Functions '
               '(https://docs.nvidia.com/deploy/nvml-api/group__nvmlGpmFunctions.html)',
     'read': '2026-12-07'},
    {'what': '"for Ampere and earlier generation GPUs, profiling metrics depend on the '
             'datacenter-gpu-manager-4-proprietary package"',
     'source': 'NVIDIA/dcgm-exporter README.md, "Profiling Metrics"', 'read': '2026-12-07'},
)
PROFILING_MODULE = (
    {'architecture': 'volta', 'gpm': False, 'proprietary_module': True,
     'source': PROFILING_MODULE_SOURCES[0]['source'], 'read': '2026-12-07'},
    {'architecture': 'turing', 'gpm': False, 'proprietary_module': True,
     'source': PROFILING_MODULE_SOURCES[0]['source'], 'read': '2026-12-07'},
    {'architecture': 'ampere', 'gpm': False, 'proprietary_module': True,
     'source': PROFILING_MODULE_SOURCES[0]['source'], 'read': '2026-12-07'},
    {'architecture': 'ada', 'gpm': False, 'proprietary_module': True,
     'source': PROFILING_MODULE_SOURCES[0]['source'], 'read': '2026-12-07'},
    {'architecture': 'hopper', 'gpm': True, 'proprietary_module': False,
     'source': PROFILING_MODULE_SOURCES[0]['source'], 'read': '2026-12-07'},
    {'architecture': 'blackwell', 'gpm': True, 'proprietary_module': False,
     'source': PROFILING_MODULE_SOURCES[0]['source'], 'read': '2026-12-07'},
)
PROPRIETARY_PROFILING_ARCHITECTURES = tuple(r['architecture'] for r in PROFILING_MODULE if r['proprietary_module'])


def decide_proprietary(asked, profiling, gpu):
    """{value, reason}: whether NVIDIA's proprietary DCGM packages are installed.

    ``asked``: dcgm_exporter_dcgm_proprietary; ``profiling``: the plan's profiling decision
    (``supported_gpus``: PCI addresses); ``gpu``: the probe's facts (each GPU's architecture).
    """
    if asked:
        return {'value': True, 'reason': 'dcgm_exporter_dcgm_proprietary is true'}
    if not profiling.get('value'):
        return {'value': False, 'reason': 'DCGM profiling is off here (%s): the open-source packages export every '
                                          'other field' % profiling.get('reason')}
    supported = set(profiling.get('supported_gpus') or [])
    old = [g for g in (gpu or {}).get('gpus') or []
           if g.get('pci_bus_id') in supported and g.get('architecture') in PROPRIETARY_PROFILING_ARCHITECTURES]
    if old:
        return {'value': True, 'reason': 'DCGM profiling (DCP) metrics of GPUs without NVML GPM support (older '
                                         'than Hopper: Volta, Turing, Ampere and earlier, Ada) come from DCGM\'s '
                                         'closed profiling module, datacenter-gpu-manager-4-proprietary (NVML API '
                                         'Reference, GPM Functions: Hopper or newer; dcgm-exporter README, Profiling '
                                         'Metrics): %s' % ', '.join('%s (%s)' % (g.get('pci_bus_id'), g.get('architecture'))
                                                                    for g in old)}
    return {'value': False, 'reason': 'the GPUs whose profiling metrics are exported are Hopper or newer: NVML GPM '
                                      'serves them and the open-source packages suffice'}


def packages(inputs, cuda, proprietary):
    """The DCGM packages (pinned to dcgm_exporter_dcgm_version when set) and the exporter's."""
    names = ['datacenter-gpu-manager-4-core', 'datacenter-gpu-manager-4-cuda%s' % cuda['value']]
    if proprietary['value']:
        names += ['datacenter-gpu-manager-4-proprietary', 'datacenter-gpu-manager-4-proprietary-cuda%s'
                  % cuda['value']]
    version = inputs.get('dcgm_version') or ''
    pinned = ['%s=%s' % (n, version) if version else n for n in names]
    exporter = inputs.get('exporter_package') or ''
    if exporter:
        pinned.append(exporter)
    return pinned
