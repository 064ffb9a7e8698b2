# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which DCGM packages dcgm_exporter installs in host mode (used by dcgm.decide; case table
tests/unit/plugins/module_utils/data/dcgm_cases.yml).

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# dcgm-exporter's README, "Profiling Metrics" (NVIDIA/dcgm-exporter README.md): "for Ampere and
# earlier generation GPUs, profiling metrics depend on the datacenter-gpu-manager-4-proprietary
# package". The probe's architectures of that generation and earlier that support profiling.
PROPRIETARY_PROFILING_ARCHITECTURES = ('volta', 'turing', 'ampere')


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
        return {'value': True, 'reason': 'DCGM profiling (DCP) metrics of Ampere and earlier GPUs need '
                                         'datacenter-gpu-manager-4-proprietary (dcgm-exporter README, Profiling '
                                         'Metrics): %s' % ', '.join('%s (%s)' % (g.get('pci_bus_id'), g.get('architecture'))
                                                                    for g in old)}
    return {'value': False, 'reason': 'the GPUs whose profiling metrics are exported are newer than Ampere: the '
                                      'open-source packages serve them'}


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
