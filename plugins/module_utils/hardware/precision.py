# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which floating-point precision a GPU's tensor cores run natively, the precision gpu_validate
measures it in and judges it by (validate/perf.py, the peaks of hardware/gpu_peaks.py).

``torch.cuda.is_bf16_supported()`` is no answer: from PyTorch 2.3 on it counts emulation and says
True on Volta and Turing, whose tensor cores have no bfloat16 (the matmul then runs emulated, far
below any peak). The truth here is the compute capability (bfloat16 tensor cores from 8.0, Ampere,
on); PyTorch's ``is_bf16_supported(including_emulation=False)`` is only a cross-check where the
installed release has it (measure.py records both).

``NATIVE_PRECISION`` is plain data, one row per architecture with its source and the date read.
Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

READ = '2026-12-07'
# What was read (2026-12-07): the PTX ISA, "Half Precision Floating Point Instructions: fma",
# Target ISA Notes: "fma{.relu}.{bf16, bf16x2} require sm_80 or higher" (quoted in LLVM review
# D118977), and PyTorch's reference page "torch.cuda.is_bf16_supported(including_emulation=True)"
# (docs.pytorch.org, v2.14.0): the default counts emulation.
SOURCE = ('PTX ISA, Half Precision Floating Point Instructions (fma): "fma{.relu}.{bf16, bf16x2} require sm_80 or '
          'higher" (https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#half-precision-floating-point-'
          'instructions-fma); PyTorch reference, torch.cuda.is_bf16_supported(including_emulation=True)')


def _row(arch, min_cc, precision, tensor_cores):
    return {'architecture': arch, 'min_capability': min_cc, 'precision': precision, 'tensor_cores': tensor_cores,
            'source': SOURCE, 'read': READ}


# From ``min_capability`` on (major, minor) - the first capability of the architecture.
NATIVE_PRECISION = [
    _row('kepler', (3, 0), 'float16', False), _row('maxwell', (5, 0), 'float16', False),
    _row('pascal', (6, 0), 'float16', False), _row('volta', (7, 0), 'float16', True),
    _row('turing', (7, 5), 'float16', True), _row('ampere', (8, 0), 'bfloat16', True),
    _row('ada', (8, 9), 'bfloat16', True), _row('hopper', (9, 0), 'bfloat16', True),
    _row('blackwell', (10, 0), 'bfloat16', True),
]
# The first capability whose row is bfloat16 (the PTX ISA's sm_80, the source of every row); measure.py's
# NATIVE_BF16_FROM must say the same (a unit test checks).
BF16_FROM = min(row['min_capability'] for row in NATIVE_PRECISION if row['precision'] == 'bfloat16')
_CC = re.compile(r'(\d{1,2})\.(\d)')


def capability_tuple(text):
    """'8.0' -> (8, 0); None where the text is not MAJOR.MINOR (a full match)."""
    match = _CC.fullmatch(text) if isinstance(text, str) else None
    return (int(match.group(1)), int(match.group(2))) if match else None


def native_precision(gpu):
    """{value, reason}: ``bfloat16`` or ``float16`` for a probe GPU (``compute_capability``, else
    ``architecture``), None where neither is known (measure.py then reads the capability itself)."""
    gpu = gpu or {}
    cc = capability_tuple(gpu.get('compute_capability'))
    if cc is not None:
        value = 'bfloat16' if cc >= BF16_FROM else 'float16'
        why = ('compute capability %d.%d: bfloat16 tensor cores (8.0, Ampere, and newer)' % cc if value == 'bfloat16'
               else 'compute capability %d.%d: no bfloat16 tensor cores (they start at 8.0, Ampere); float16%s'
               % (cc + ('' if cc >= (7, 0) else ' (no tensor cores at all)',)))
        return {'value': value, 'reason': why}
    arch = gpu.get('architecture')
    for row in NATIVE_PRECISION:
        if row['architecture'] == arch:
            return {'value': row['precision'], 'reason': '%s (no compute capability in the facts): %s' % (
                arch, 'bfloat16 tensor cores' if row['precision'] == 'bfloat16' else 'no bfloat16 tensor cores; float16')}
    return {'value': None, 'reason': 'architecture %s and compute capability unknown: measure.py decides from the '
                                     'capability PyTorch reads' % (arch or 'unknown')}


def resnet50_precision(gpu, published):
    """{value, reason}: the autocast precision of the ResNet-50 run. NVIDIA's published figures are
    float16 AMP; where one exists and the GPU has tensor cores (every float16 figure is of one), the
    run matches it, so the verdict compares like with like. Elsewhere the GPU's native precision."""
    native = native_precision(gpu)
    if published and published.get('precision'):
        why = 'the published figure is %s (%s); the run matches it' % (published['precision'], published.get('what', ''))
        return {'value': published['precision'], 'reason': why}
    return native
