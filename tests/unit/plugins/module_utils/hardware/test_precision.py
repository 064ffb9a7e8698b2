# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The precision gpu_validate measures each GPU in: its native tensor-core precision, from the
compute capability, never from ``torch.cuda.is_bf16_supported()``.

SOURCE: PyTorch reference, torch.cuda.is_bf16_supported
(https://docs.pytorch.org/docs/stable/generated/torch.cuda.is_bf16_supported.html), read 2026-12-07:
"torch.cuda.is_bf16_supported(*including_emulation=True*)" - the default counts emulation.
SOURCE: PTX ISA, Half Precision Floating Point Instructions: fma, Target ISA Notes, read 2026-12-07
(as quoted in LLVM review D118977): "fma{.relu}.{bf16, bf16x2} require sm_80 or higher."
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import subprocess
import sys

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware import precision
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import measure, perf

# (GPU, PCI id, compute capability, matmul precision, ResNet-50 precision)
GPUS = [
    ('Tesla V100-SXM2-32GB', '0x1db5', '7.0', 'float16', 'float16'),   # published fp16 AMP figure
    ('Tesla T4', '0x1eb8', '7.5', 'float16', 'float16'),               # no figure: native fp16
    ('NVIDIA A100-SXM4-80GB', '0x20b2', '8.0', 'bfloat16', 'float16'),  # published fp16 AMP figure
    ('NVIDIA H100 80GB HBM3', '0x2330', '9.0', 'bfloat16', 'bfloat16'),  # no figure: native bf16
]


@pytest.mark.parametrize('name, pci, cc, local, resnet', GPUS, ids=[g[0] for g in GPUS])
def test_measure_dtypes_by_compute_capability(name, pci, cc, local, resnet):
    gpu = {'name': name, 'pci_device_id': pci, 'compute_capability': cc}
    assert perf.measure_dtypes(gpu) == {'local': local, 'resnet50': resnet}
    assert precision.native_precision(gpu)['value'] == local


@pytest.mark.parametrize('arch, value', [('volta', 'float16'), ('turing', 'float16'), ('ampere', 'bfloat16'),
                                         ('ada', 'bfloat16'), ('hopper', 'bfloat16'), ('blackwell', 'bfloat16'),
                                         ('unknown', None)])
def test_by_architecture_where_the_probe_has_no_capability(arch, value):
    assert precision.native_precision({'architecture': arch})['value'] == value
    if value is None:
        assert perf.measure_dtypes({'architecture': arch})['local'] == 'auto'


def test_capability_is_a_full_match():
    assert precision.capability_tuple('8.0') == (8, 0)
    for bad in ('8.0\n', ' 8.0', '8', '8.0.0', None, 8.0):
        assert precision.capability_tuple(bad) is None


def test_measure_repeats_the_same_rule():
    assert measure.NATIVE_BF16_FROM == precision.BF16_FROM
    for cc in ((7, 0), (7, 5), (8, 0), (8, 6), (9, 0), (12, 0)):
        assert measure.native_dtype(cc) == precision.native_precision({'compute_capability': '%d.%d' % cc})['value']


def test_rows_are_plain_data_with_source_and_date():
    for row in precision.NATIVE_PRECISION:
        assert row['source'] and row['read'] == '2026-12-07'
        assert (row['precision'] == 'bfloat16') is (row['min_capability'] >= precision.BF16_FROM)


class _Cuda(object):
    """torch.cuda as current PyTorch answers on a V100: bf16 "supported" by emulation."""

    def __init__(self, capability, emulation_arg=True):
        self.capability, self.emulation_arg = capability, emulation_arg

    def get_device_capability(self, index):
        return self.capability

    def is_bf16_supported(self, *args, **kwargs):
        if kwargs and not self.emulation_arg:
            raise TypeError("is_bf16_supported() got an unexpected keyword argument 'including_emulation'")
        if kwargs.get('including_emulation') is False:
            return self.capability >= (8, 0)
        return True


class _Torch(object):
    bfloat16, float16 = 'torch.bfloat16', 'torch.float16'

    def __init__(self, cuda):
        self.cuda = cuda


@pytest.mark.parametrize('cc, want', [((7, 0), 'float16'), ((7, 5), 'float16'), ((8, 0), 'bfloat16'),
                                      ((9, 0), 'bfloat16')])
def test_measure_auto_ignores_emulated_bf16(cc, want):
    dtype, facts = measure._precision(_Torch(_Cuda(cc)), 0, 'auto')
    assert facts['dtype'] == want and dtype == 'torch.' + want
    assert facts['dtype_from'] == 'compute capability' and facts['capability'] == '%d.%d' % cc
    assert facts['bf16_supported_api'] is True               # what the old code trusted
    assert facts['bf16_native_api'] is (cc >= (8, 0))         # the cross-check


def test_measure_takes_the_callers_precision_and_copes_with_an_older_torch():
    dtype, facts = measure._precision(_Torch(_Cuda((7, 0), emulation_arg=False)), 0, 'float16')
    assert dtype == 'torch.float16' and facts['dtype_from'] == 'caller' and facts['bf16_native_api'] is None


def test_measure_accepts_only_known_dtypes():
    args = measure.argv(sys.executable, 'local', gpu=0, dtype='float16')
    assert args[args.index('--dtype') + 1] == 'float16'
    bad = measure.argv(sys.executable, 'local', gpu=0, dtype='bfloat16\n')
    out = subprocess.run(bad, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    assert out.returncode == 2 and b"argument --dtype: invalid choice" in out.stderr
