# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The (torch release, CUDA tag) -> architectures table of python_env/torch_builds.py against the
text of PyTorch's own sources, and the rule that says whether a GPU runs a build.

SOURCE: pytorch/pytorch RELEASE.md, "PyTorch CUDA Support Matrix" (the rows quoted below from pull
requests #164471, #175253 and #182849, which wrote them), read 2026-12-07.
SOURCE: pytorch/builder manywheel/build_cuda.sh on branches release/2.0 .. release/2.5, read 2026-12-07.
SOURCE: pytorch/pytorch .ci/manywheel/build_env_setup.py TORCH_CUDA_ARCH_LIST_TABLE at 00505f2920c0,
read 2026-12-07.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import cuda_match as cm
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import torch_builds as tb

# Verbatim rows of RELEASE.md's "PyTorch CUDA Support Matrix" (Linux x86 and Windows builds).
MATRIX = {
    ('2.9', 'cu126'): '| 12.6.3 | Maxwell(5.0), Pascal(6.0), Volta(7.0), Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0) | |',
    ('2.9', 'cu128'): '| 12.8.1 | Volta(7.0), Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0), Blackwell(10.0, 12.0)  | |',
    ('2.9', 'cu130'): ('| 13.0.0 | Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0), Blackwell(10.0, 12.0+PTX) | +PTX '
                       'available on linux builds only |'),
    ('2.11', 'cu128'): '| 12.8.1 | Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0), Blackwell(10.0, 12.0)  | |',
    ('2.11', 'cu130'): ('| 13.0.2 | Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0), Blackwell(10.0, 12.0+PTX) | +PTX '
                        'available on linux builds only |'),
    ('2.12', 'cu126'): '| 12.6.3 | Maxwell(5.0), Pascal(6.0), Volta(7.0), Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0) | |',
    ('2.12', 'cu132'): ('| 13.2.1 | Turing(7.5), Ampere(8.0, 8.6), Hopper(9.0), Blackwell(10.0, 12.0+PTX) | +PTX '
                        'available on linux builds only |'),
}
# builder's manywheel/build_cuda.sh, release/2.5: the base list and the 12.4 case.
BUILDER_25 = ('TORCH_CUDA_ARCH_LIST="5.0;6.0;7.0;7.5;8.0;8.6"\n'
              'case ${CUDA_VERSION} in\n    12.4)\n        if [[ "$GPU_ARCH_TYPE" = "cuda-aarch64" ]]; then\n'
              '            TORCH_CUDA_ARCH_LIST="9.0"\n        else\n'
              '            TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};9.0"\n')
# build_env_setup.py at 00505f2920c0 (the 2.13/2.14 tags).
BUILD_ENV_SETUP = {'12.6': {50, 60, 70, 75, 80, 86, 90}, '13.0': {75, 80, 86, 90, 100, 120},
                   '13.2': {75, 80, 86, 90, 100, 120}}


def _matrix_ccs(row):
    ccs, ptx = [], []
    for group in re.findall(r'\(([^)]*)\)', row.split('|')[2]):
        for item in group.split(','):
            item = item.strip()
            cc = tb.capability(item.replace('+PTX', ''))
            ccs.append(cc)
            if item.endswith('+PTX'):
                ptx.append(cc)
    return sorted(ccs), ptx


@pytest.mark.parametrize('key', sorted(MATRIX), ids=lambda k: '%s-%s' % k)
def test_rows_match_release_md(key):
    ccs, ptx = _matrix_ccs(MATRIX[key])
    row = tb.build(key[0], key[1])
    assert sorted(row['sm']) == ccs and row['ptx'] == ptx


def test_builder_release_25_cu124():
    base = [tb.capability(x) for x in re.search(r'TORCH_CUDA_ARCH_LIST="([^"]+)"', BUILDER_25).group(1).split(';')]
    assert tb.build('2.5', 'cu124')['sm'] == base + [90]


@pytest.mark.parametrize('torch', ['2.13', '2.14'])
def test_current_rows_match_build_env_setup(torch):
    for cuda, ccs in BUILD_ENV_SETUP.items():
        row = tb.build(torch, 'cu' + cuda.replace('.', ''))
        assert set(row['sm']) == ccs
        assert row['ptx'] == ([120] if cuda.startswith('13') else [])


def test_every_shipped_tag_has_a_build_row_with_source_and_date():
    keys = set((r['torch'], r['tag']) for r in tb.BUILDS)
    assert len(keys) == len(tb.BUILDS)
    wanted = set(('%d.%d' % release, tag) for release, tags in cm.TORCH_CUDA_TAGS.items() for tag in tags)
    assert keys == wanted
    for row in tb.BUILDS:
        assert row['source'] and row['read'] == '2026-12-07'
        assert set(row) == {'torch', 'tag', 'sm', 'ptx', 'source', 'read', 'unconfirmed'}


def test_the_fifteen_tag_rows_stay():
    assert len(cm.TORCH_CUDA_TAGS) == 15
    assert cm.TORCH_CUDA_TAGS[(2, 11)] == ['cu126', 'cu128', 'cu130']


@pytest.mark.parametrize('cc, tag, torch, runs', [
    (70, 'cu128', '2.11', False),   # V100 on 2.11 cu128: "no kernel image is available"
    (70, 'cu128', '2.10', True),
    (70, 'cu128', '2.7', False),
    (89, 'cu128', '2.11', True),    # Ada runs the 8.6 machine code
    (90, 'cu126', '2.12', True),
    (100, 'cu126', '2.12', False),  # Blackwell is absent from every 12.6 build
    (103, 'cu130', '2.12', True),   # B300 runs 10.0 machine code
    (121, 'cu130', '2.9', True),    # GB10 runs 12.0 machine code
    (120, 'cu124', '2.6', False),
    (61, 'cu126', '2.14', True),    # Pascal 6.1 on 6.0
    (61, 'cu130', '2.14', False),
])
def test_runs(cc, tag, torch, runs):
    assert tb.runs(cc, tb.build(torch, tag)) is runs


def test_capability_parses_only_x_dot_y():
    assert tb.capability('8.9') == 89 and tb.capability('12.0') == 120
    for bad in (None, '', '8', '8.9.1', '8.9\n', 'x.y', '8.10'):
        assert tb.capability(bad) is None


def test_an_architecture_name_runs_a_build_only_when_all_its_capabilities_do():
    assert tb.uncovered([tb.gpu_view('blackwell')], tb.build('2.7', 'cu128')) == []
    assert tb.uncovered([tb.gpu_view('ampere')], tb.build('2.14', 'cu130')) == []
    assert tb.uncovered([tb.gpu_view('volta')], tb.build('2.14', 'cu130')) == ['volta']
    assert tb.uncovered([tb.gpu_view('unknown')], tb.build('2.14', 'cu130')) == []
