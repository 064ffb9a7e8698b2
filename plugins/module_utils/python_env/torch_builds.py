# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which GPUs each PyTorch wheel build carries kernels for: (torch release, CUDA tag) -> the
compute capabilities of its TORCH_CUDA_ARCH_LIST, and whether a GPU runs that build.

Each PyTorch release builds each CUDA tag for its own list of architectures: Volta left cu128
in 2.7, came back in 2.8 and left again in 2.11; Blackwell (10.0, 12.0) is absent from cu126 and
every older tag; CUDA 13 builds start at Turing. A wheel without kernels for the GPU imports fine
and fails every kernel launch with "no kernel image is available for execution on the device".

``BUILDS`` is plain data (one dict per row, ``source`` and ``read`` on each) so that a generator can
list it. Capabilities are written as PyTorch writes them in its own tables (build_env_setup.py,
torch/cuda/__init__.py): ``50`` is 5.0, ``120`` is 12.0. ``sm``: the capabilities the wheel holds
machine code (SASS) for; ``ptx``: those it also holds PTX for (JIT-compiled on newer GPUs).
Linux x86_64 wheels only.

Pure functions, standard library only, Python 3.8+ (imported by the module python_stack_host).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

READ = '2026-12-07'
_CC = re.compile(r'(\d{1,2})\.(\d)')
BUILDS_SOURCE = ('the wheel builds\' architecture lists, python_env/torch_builds.py (TORCH_CUDA_ARCH_LIST per release '
                 'and tag; RELEASE.md "PyTorch CUDA Support Matrix")')
_BUILDER = ('pytorch/builder manywheel/build_cuda.sh, branch release/%s at %s '
            '(https://github.com/pytorch/builder/blob/%s/manywheel/build_cuda.sh): TORCH_CUDA_ARCH_LIST="%s" '
            'plus the per-CUDA case')
_MATRIX = ('pytorch/pytorch RELEASE.md, "PyTorch CUDA Support Matrix", "architectures supported for Linux x86 '
           'and Windows builds"')

_B20 = _BUILDER % ('2.0', '9f0fad92f342', '9f0fad92f342b146272d0f99d3969c2c148e80ba', '3.7;5.0;6.0;7.0')
_B21 = _BUILDER % ('2.1', '55d40b1b0637', '55d40b1b06379fddd0ba14744dc3fdd768530da6', '5.0;6.0;7.0;7.5;8.0;8.6')
_B22 = _BUILDER % ('2.2', 'af60d1144744', 'af60d11447443059c6c6c7590241a446a33db0f9', '5.0;6.0;7.0;7.5;8.0;8.6')
_B23 = _BUILDER % ('2.3', 'ba10bae9fe9b', 'ba10bae9fe9b93365412297d40bc9a3a3eae6155', '5.0;6.0;7.0;7.5;8.0;8.6')
_B24 = _BUILDER % ('2.4', '4ce1afeb2262', '4ce1afeb2262808c1e9707b93682ac66acf2db2a', '5.0;6.0;7.0;7.5;8.0;8.6')
_B25 = _BUILDER % ('2.5', 'aec5fb5de238', 'aec5fb5de2380a9084f4bb430eec4e576066a17c', '5.0;6.0;7.0;7.5;8.0;8.6')
_P26 = ('pytorch/pytorch .ci/manywheel/build_cuda.sh as cited for the 2.6 cycle (pull requests #140844 and #144436: '
        'base "5.0;6.0;7.0;7.5;8.0;8.6" plus 9.0 for 12.4/12.6 and "3.7;9.0" for 11.8, as in builder release/2.5)')
_P27 = ('pytorch/pytorch pull request #146265 ("Add libtorch nightly build for CUDA 12.8": sm50/sm60/sm70 removed from '
        'the CUDA 12.8 build) and #145792 (CUDA 12.8 x86 builds, 12.0 for Blackwell); issue #160269 (Volta came back '
        'to the 12.8/12.9 builds in 2.8, so 2.7 cu128 starts at Turing); cu118/cu126 as in 2.6')
_P28 = ('pytorch/pytorch .ci/manywheel/build_cuda.sh at 00c7a380b836 (cases 12.6, 12.8, 12.9 = the 2.8 tags): '
        '12.8 "7.0;7.5;8.0;8.6;9.0;10.0;12.0", 12.9 "7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX", 12.6 '
        '"5.0;6.0;7.0;7.5;8.0;8.6;9.0"; issue #160269: "Volta is still supported for both CUDA 12.8 and 12.9 builds"')
_M29 = (_MATRIX + ' "For Release 2.9 and 2.10" (added by pull request #164471, replaced for 2.11 by #175253): '
        '12.6.3 Maxwell(5.0)..Hopper(9.0); 12.8.1 Volta(7.0)..Blackwell(10.0, 12.0); 13.0.0 Turing(7.5)..'
        'Blackwell(10.0, 12.0+PTX)')
_M211 = (_MATRIX + ' "For Release 2.11" (pull request #175253; dev-discuss "Dropping Volta support from CUDA-12.8 '
         'binaries for release 2.11"): 12.8.1 Turing(7.5)..Blackwell(10.0, 12.0); 13.0.2 Turing(7.5)..Blackwell('
         '10.0, 12.0+PTX)')
_M212 = (_MATRIX + ' for release 2.12 (pull request #182849): 12.6.3 Maxwell(5.0)..Hopper(9.0); 13.0.2 and 13.2.1 '
         'Turing(7.5)..Blackwell(10.0, 12.0+PTX)')
_M214 = (_MATRIX + ' "For Release 2.12, 2.13 and 2.14" (pull request #197555: "Is 2.13 the same as 2.14?" - "yes its '
         'the same"); .ci/manywheel/build_env_setup.py TORCH_CUDA_ARCH_LIST_TABLE at 00505f2920c0: 12.6 x86_64 '
         '{50, 60, 70, 75, 80, 86, 90}, 13.0 and 13.2 x86_64 {75, 80, 86, 90, 100, 120}, _PTX_ARCHES {120}')

_K37 = (37, 50, 60, 70, 75, 80, 86)
_CU118 = (37, 50, 60, 70, 75, 80, 86, 90)
_CU12_OLD = (50, 60, 70, 75, 80, 86, 90)
_TURING_BLACKWELL = (75, 80, 86, 90, 100, 120)
_VOLTA_BLACKWELL = (70, 75, 80, 86, 90, 100, 120)


def _row(torch, tag, sm, source, ptx=(), unconfirmed=None):
    return {'torch': torch, 'tag': tag, 'sm': list(sm), 'ptx': list(ptx), 'source': source, 'read': READ,
            'unconfirmed': unconfirmed}


_U26 = 'the release/2.6 file itself was not read; the lists are the ones its pull requests quote'
_U27 = 'the release/2.7 file itself was not read; cu128 as its pull requests and issue #160269 say'

BUILDS = [
    _row('2.0', 'cu117', _K37, _B20), _row('2.0', 'cu118', _CU118, _B20),
    _row('2.1', 'cu118', _CU118, _B21), _row('2.1', 'cu121', _CU12_OLD, _B21),
    _row('2.2', 'cu118', _CU118, _B22), _row('2.2', 'cu121', _CU12_OLD, _B22),
    _row('2.3', 'cu118', _CU118, _B23), _row('2.3', 'cu121', _CU12_OLD, _B23),
    _row('2.4', 'cu118', _CU118, _B24), _row('2.4', 'cu121', _CU12_OLD, _B24), _row('2.4', 'cu124', _CU12_OLD, _B24),
    _row('2.5', 'cu118', _CU118, _B25), _row('2.5', 'cu121', _CU12_OLD, _B25), _row('2.5', 'cu124', _CU12_OLD, _B25),
    _row('2.6', 'cu118', _CU118, _P26, unconfirmed=_U26), _row('2.6', 'cu124', _CU12_OLD, _P26, unconfirmed=_U26),
    _row('2.6', 'cu126', _CU12_OLD, _P26, unconfirmed=_U26),
    _row('2.7', 'cu118', _CU118, _P27, unconfirmed=_U27), _row('2.7', 'cu126', _CU12_OLD, _P27, unconfirmed=_U27),
    _row('2.7', 'cu128', _TURING_BLACKWELL, _P27, unconfirmed=_U27),
    _row('2.8', 'cu126', _CU12_OLD, _P28), _row('2.8', 'cu128', _VOLTA_BLACKWELL, _P28),
    _row('2.8', 'cu129', _VOLTA_BLACKWELL, _P28, ptx=(120,)),
    _row('2.9', 'cu126', _CU12_OLD, _M29), _row('2.9', 'cu128', _VOLTA_BLACKWELL, _M29),
    _row('2.9', 'cu130', _TURING_BLACKWELL, _M29, ptx=(120,)),
    _row('2.10', 'cu126', _CU12_OLD, _M29), _row('2.10', 'cu128', _VOLTA_BLACKWELL, _M29),
    _row('2.10', 'cu130', _TURING_BLACKWELL, _M29, ptx=(120,)),
    _row('2.11', 'cu126', _CU12_OLD, _M211), _row('2.11', 'cu128', _TURING_BLACKWELL, _M211),
    _row('2.11', 'cu130', _TURING_BLACKWELL, _M211, ptx=(120,)),
    _row('2.12', 'cu126', _CU12_OLD, _M212), _row('2.12', 'cu130', _TURING_BLACKWELL, _M212, ptx=(120,)),
    _row('2.12', 'cu132', _TURING_BLACKWELL, _M212, ptx=(120,)),
    _row('2.13', 'cu126', _CU12_OLD, _M214), _row('2.13', 'cu130', _TURING_BLACKWELL, _M214, ptx=(120,)),
    _row('2.13', 'cu132', _TURING_BLACKWELL, _M214, ptx=(120,)),
    _row('2.14', 'cu126', _CU12_OLD, _M214), _row('2.14', 'cu130', _TURING_BLACKWELL, _M214, ptx=(120,)),
    _row('2.14', 'cu132', _TURING_BLACKWELL, _M214, ptx=(120,)),
]

# The compute capabilities an architecture name of the probe can stand for, where the probe
# has no compute capability (CUDA C++ Programming Guide, "Compute Capabilities"; the probe's own
# table, hardware/gpu_models.CC_ARCH_ROWS). A GPU known only by its architecture runs a build only
# when every capability of that architecture does. One row per architecture with its source and
# read date (plain data: docs/vendor-facts.md lists it).
_CC_GUIDE = ('CUDA C++ Programming Guide, "Compute Capabilities" (https://docs.nvidia.com/cuda/'
             'cuda-c-programming-guide/index.html#compute-capabilities)')


def _arch_row(arch, capabilities, note=''):
    row = {'architecture': arch, 'capabilities': list(capabilities), 'read': READ,
           'source': '%s: %s is compute capability %s%s' % (
               _CC_GUIDE, arch.capitalize(), ', '.join('%d.%d' % (c // 10, c % 10) for c in capabilities), note)}
    if arch != 'ada':  # the cuda-gpus page row quoted in the note names Ada; the Blackwell rows name products
        row['unconfirmed'] = 'the guide was not re-read on %s' % READ
    return row


ARCH_CAPABILITY_ROWS = (
    _arch_row('kepler', (30, 35, 37)),
    _arch_row('maxwell', (50, 52, 53), '; NVIDIA "Legacy CUDA GPU Compute Capability" (https://developer.nvidia.com/'
              'cuda-legacy-gpus) has rows 5.0, 5.2 and 5.3 (Jetson Nano)'),
    _arch_row('pascal', (60, 61, 62), '; the legacy page has rows 6.0, 6.1 and 6.2 (Jetson TX2)'),
    _arch_row('volta', (70, 72), '; the legacy page has rows 7.0 (NVIDIA V100) and 7.2 (Jetson AGX Xavier)'),
    _arch_row('turing', (75,)), _arch_row('ampere', (80, 86, 87)),
    _arch_row('ada', (89,), '; NVIDIA "CUDA GPU Compute Capability" (https://developer.nvidia.com/cuda-gpus): '
              '"8.9 | NVIDIA L4 NVIDIA L40 NVIDIA L40S | NVIDIA RTX 6000 Ada ..."'),
    _arch_row('hopper', (90,)),
    _arch_row('blackwell', (100, 103, 120, 121), '; NVIDIA "CUDA GPU Compute Capability" (https://developer.nvidia.com/'
              'cuda-gpus): "12.1 | NVIDIA GB10 (DGX Spark)", "12.0 | NVIDIA RTX PRO 6000 Blackwell Server Edition ...", '
              '"11.0 | Jetson T5000 Jetson T4000", "10.3 | NVIDIA GB300 NVIDIA B300", "10.0 | NVIDIA GB200 NVIDIA B200"; '
              '11.0 (Jetson Thor, an integrated GPU the PCI probe never '
              'finds) left out on purpose: no wheel build has kernels for it, so counting it would refuse every '
              'Blackwell GPU known only by its architecture'),
)
ARCH_CAPABILITIES = dict((row['architecture'], tuple(row['capabilities'])) for row in ARCH_CAPABILITY_ROWS)


def build(torch, tag):
    """The row of (torch 'X.Y' or (X, Y), tag); None when the table has none."""
    key = torch if isinstance(torch, str) else '%d.%d' % tuple(torch)
    for row in BUILDS:
        if row['torch'] == key and row['tag'] == tag:
            return row
    return None


def capability(text):
    """'8.9' -> 89, '12.0' -> 120; None for anything else (a full match: no blanks, no newline)."""
    match = _CC.fullmatch(text) if isinstance(text, str) else None
    return int(match.group(1)) * 10 + int(match.group(2)) if match else None


def runs(cc, row):
    """True when a GPU of compute capability ``cc`` (int, 89) runs the build ``row``: machine code
    of the same major version and a minor no newer than the GPU's (CUDA binary compatibility), or
    PTX of a capability no newer than the GPU's (JIT)."""
    return (any(sm // 10 == cc // 10 and sm <= cc for sm in row['sm'])
            or any(p <= cc for p in row['ptx']))


def gpu_view(gpu):
    """A probe GPU (dict) or an architecture name (str) -> {label, capabilities, known}."""
    if isinstance(gpu, dict):
        arch = gpu.get('architecture') or 'unknown'
        cc = capability(gpu.get('compute_capability'))
        where = gpu.get('pci_bus_id')
        name = gpu.get('name') or gpu.get('model_name')
    else:
        arch, cc, where, name = str(gpu or 'unknown'), None, None, None
    label = ' '.join(p for p in (name or arch, ('at %s' % where) if where else '',
                                 ('(compute capability %d.%d)' % (cc // 10, cc % 10)) if cc else
                                 ('(%s)' % arch if name else '')) if p)
    ccs = (cc,) if cc else ARCH_CAPABILITIES.get(arch, ())
    return {'label': label, 'capabilities': ccs, 'known': bool(ccs)}


def uncovered(gpus, row):
    """The labels of the GPUs (gpu_view dicts) that the build ``row`` has no kernels for."""
    return [g['label'] for g in gpus if g['known'] and not all(runs(cc, row) for cc in g['capabilities'])]


def arch_list(row):
    return ', '.join('%d.%d%s' % (cc // 10, cc % 10, '+PTX' if cc in row['ptx'] else '') for cc in row['sm'])
