# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which GPUs need DCGM's closed profiling module (datacenter-gpu-manager-4-proprietary).

SOURCE: NVML API Reference Guide, GPM Functions
(https://docs.nvidia.com/deploy/nvml-api/group__nvmlGpmFunctions.html), read 2026-12-07:
nvmlGpmSampleGet / nvmlGpmMetricsGet - "For Hopper or newer fully supported devices."
SOURCE: NVIDIA/dcgm-exporter README.md, "Profiling Metrics", read 2026-12-07: "for Ampere and
earlier generation GPUs, profiling metrics depend on the datacenter-gpu-manager-4-proprietary
package". DCGM serves DCP fields of every GPU without GPM through the closed module: Ada (L4, L40,
L40S: sm_89, no GPM) needs it too, which the old Volta/Turing/Ampere rule left out.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm_packages

NVML_GPM_LINE = 'For Hopper or newer fully supported devices.'


def _host(arch, bus='0000:17:00.0'):
    gpu = {'gpus': [{'pci_bus_id': bus, 'architecture': arch}]}
    profiling = {'value': True, 'reason': 'data-centre GPUs', 'supported_gpus': [bus]}
    return profiling, gpu


@pytest.mark.parametrize('arch, needed', [
    ('volta', True), ('turing', True), ('ampere', True),
    ('ada', True),  # the old rule said False: an L40S node exported no DCP field
    ('hopper', False), ('blackwell', False),
])
def test_closed_profiling_module_for_every_gpu_without_gpm(arch, needed):
    profiling, gpu = _host(arch)
    decision = dcgm_packages.decide_proprietary(False, profiling, gpu)
    assert decision['value'] is needed, decision['reason']
    if needed:
        assert '(%s)' % arch in decision['reason']
        assert 'without NVML GPM support' in decision['reason']
    else:
        assert 'Hopper or newer' in decision['reason']


def test_l40s_host_installs_the_proprietary_packages():
    profiling, gpu = _host('ada')
    proprietary = dcgm_packages.decide_proprietary(False, profiling, gpu)
    names = dcgm_packages.packages({}, {'value': '12'}, proprietary)
    assert 'datacenter-gpu-manager-4-proprietary' in names
    assert 'datacenter-gpu-manager-4-proprietary-cuda12' in names


def test_mixed_host_names_only_the_gpus_without_gpm():
    gpu = {'gpus': [{'pci_bus_id': '0000:17:00.0', 'architecture': 'hopper'},
                    {'pci_bus_id': '0000:31:00.0', 'architecture': 'ada'}]}
    profiling = {'value': True, 'reason': '', 'supported_gpus': ['0000:17:00.0', '0000:31:00.0']}
    decision = dcgm_packages.decide_proprietary(False, profiling, gpu)
    assert decision['value'] is True
    assert '0000:31:00.0 (ada)' in decision['reason'] and '0000:17:00.0' not in decision['reason']


def test_profiling_off_never_installs_it():
    profiling, gpu = _host('ada')
    profiling['value'] = False
    assert dcgm_packages.decide_proprietary(False, profiling, gpu)['value'] is False


def test_rows_are_plain_data_with_source_and_date():
    assert NVML_GPM_LINE in dcgm_packages.PROFILING_MODULE_SOURCES[0]['what']
    for row in dcgm_packages.PROFILING_MODULE:
        assert row['source'] and row['read'] == '2026-12-07'
        assert row['proprietary_module'] is (not row['gpm'])
    assert dcgm_packages.PROPRIETARY_PROFILING_ARCHITECTURES == ('volta', 'turing', 'ampere', 'ada')
