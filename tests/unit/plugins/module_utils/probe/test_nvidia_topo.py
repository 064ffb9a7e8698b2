# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the ``nvidia-smi topo -m`` parser and renderer.

Real outputs live in tests/fixtures/topo/ (facts in data/topo_expected.yml), made-up
layouts and malformed inputs in tests/fixtures/topo-synthetic/ (data/topo_synthetic.yml,
data/topo_malformed.yml).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_topo import (
    TopoParseError,
    compress_cpu_list,
    expand_cpu_list,
    parse_nvidia_topo,
    render_nvidia_topo,
)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
REAL_DIR = os.path.join(REPO, 'tests', 'fixtures', 'topo')
SYNTHETIC_DIR = os.path.join(REPO, 'tests', 'fixtures', 'topo-synthetic')


def _load(name):
    with open(os.path.join(HERE, 'data', name)) as handle:
        return yaml.safe_load(handle)


def _read(directory, name):
    with open(os.path.join(directory, name), 'rb') as handle:
        return handle.read().decode('utf-8')


def _txt_files(directory, malformed):
    return sorted(name for name in os.listdir(directory)
                  if name.endswith('.txt') and name.startswith('malformed-') == malformed)


REAL = _load('topo_expected.yml')
SYNTHETIC = _load('topo_synthetic.yml')
MALFORMED = _load('topo_malformed.yml')
VALID_CASES = ([(REAL_DIR, name) for name in sorted(REAL)]
               + [(SYNTHETIC_DIR, name) for name in sorted(SYNTHETIC)])
VALID_IDS = [name for dummy, name in VALID_CASES]


def _expected(name):
    return REAL.get(name) or SYNTHETIC[name]


def test_every_fixture_has_an_entry():
    assert _txt_files(REAL_DIR, malformed=False) == sorted(REAL)
    assert _txt_files(REAL_DIR, malformed=True) == []
    assert _txt_files(SYNTHETIC_DIR, malformed=False) == sorted(SYNTHETIC)
    assert _txt_files(SYNTHETIC_DIR, malformed=True) == sorted(MALFORMED)


@pytest.mark.parametrize('directory, name', VALID_CASES, ids=VALID_IDS)
def test_facts_read_from_the_text(directory, name):
    expected = _expected(name)
    topo = parse_nvidia_topo(_read(directory, name))

    assert [gpu['name'] for gpu in topo['gpus']] == expected['gpus']
    assert [(nic['name'], nic['device']) for nic in topo['nics']] == list(expected['nics'].items())
    for row, column, code in expected['cells']:
        assert topo['matrix'][row][column] == code, (row, column)
    codes = set(code for row in topo['matrix'].values() for code in row.values())
    assert codes == set(expected['codes'])

    gpus = dict((gpu['name'], gpu) for gpu in topo['gpus'])
    for gpu in topo['gpus']:
        assert ('gpu_numa_id' in gpu) == expected['gpu_numa_id_column'], gpu['name']
    for gpu_name, facts in expected['affinity'].items():
        gpu = gpus[gpu_name]
        cpus = [cpu for first, last in facts['cpu'] for cpu in range(first, last + 1)]
        assert gpu['cpu_affinity'] == cpus, gpu_name
        assert gpu['numa_affinity'] == facts['numa'], gpu_name
        if 'gpu_numa_id' in facts:
            assert gpu['gpu_numa_id'] == facts['gpu_numa_id'], gpu_name


def test_every_real_output_names_its_source():
    """A real output keeps a SOURCE line (its first line) or is listed in SOURCES.md."""
    with open(os.path.join(REAL_DIR, 'SOURCES.md')) as handle:
        listed = handle.read()
    for name in sorted(REAL):
        first = _read(REAL_DIR, name).split('\n', 1)[0]
        if first.startswith('# SOURCE: '):
            assert first.split()[2] == REAL[name]['source'], name
            assert REAL[name]['source'].startswith('https://github.com/')
        else:
            assert '| {0} |'.format(name) in listed, name


def test_grace_numa_affinity_is_a_list_and_renders_back():
    """Issue 18: GB200 prints NUMA Affinity as a node list (0,3-9,11-17); the GPU NUMA ID stays an int."""
    text = _read(SYNTHETIC_DIR, 'gb200-4gpu-numa-node-lists.txt')
    topo = parse_nvidia_topo(text)
    gpu0 = topo['gpus'][0]
    assert gpu0['numa_affinity'] == [0] + list(range(3, 10)) + list(range(11, 18))
    assert gpu0['gpu_numa_id'] == 2
    assert '0,3-9,11-17' in render_nvidia_topo(topo)
    # a list of one node is that node
    one = text.replace('0,3-9,11-17', '0-0', 1)
    assert parse_nvidia_topo(one)['gpus'][0]['numa_affinity'] == 0


@pytest.mark.parametrize('directory, name', VALID_CASES, ids=VALID_IDS)
def test_shape_of_the_result(directory, name):
    topo = parse_nvidia_topo(_read(directory, name))
    assert sorted(topo) == ['gpus', 'matrix', 'nics']
    devices = [entry['name'] for entry in topo['gpus'] + topo['nics']]
    assert sorted(topo['matrix']) == sorted(devices)
    for row, cells in topo['matrix'].items():
        assert sorted(cells) == sorted(devices)
        assert cells[row] == 'X'
        assert [column for column, code in cells.items() if code == 'X'] == [row]
        assert all(re.match(r'^(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC|N/A)$', code) for code in cells.values())
    for gpu in topo['gpus']:
        assert set(gpu) - {'gpu_numa_id'} == {'name', 'cpu_affinity', 'numa_affinity'}
        assert gpu['cpu_affinity'] == sorted(set(gpu['cpu_affinity']))
        numa = gpu['numa_affinity']
        assert numa is None or isinstance(numa, int) or (
            isinstance(numa, list) and len(numa) > 1 and numa == sorted(set(numa)))
    for nic in topo['nics']:
        assert sorted(nic) == ['device', 'name']
    assert json.loads(json.dumps(topo)) == topo


def test_a100_affinity_ends_at_254():
    topo = parse_nvidia_topo(_read(REAL_DIR, 'a100-sxm4-8gpu-4nic-distserve3.txt'))
    gpu4 = topo['gpus'][4]
    assert gpu4['cpu_affinity'][-1] == 254
    assert len(gpu4['cpu_affinity']) == 64 + 63


def test_gpu0_alone_on_numa_1_in_the_mixed_box():
    topo = parse_nvidia_topo(_read(REAL_DIR, 'mixed-5gpu-pcie-club3090-46.txt'))
    by_node = {}
    for gpu in topo['gpus']:
        by_node.setdefault(gpu['numa_affinity'], []).append(gpu['name'])
    assert by_node == {1: ['GPU0'], 0: ['GPU1', 'GPU2', 'GPU3', 'GPU4']}


def test_numa_not_available_is_none():
    topo = parse_nvidia_topo(_read(REAL_DIR, 'gtx1080ti-2gpu-numa-na-xuesongtap.txt'))
    assert [gpu['numa_affinity'] for gpu in topo['gpus']] == [None, None]


@pytest.mark.parametrize('directory, name', VALID_CASES, ids=VALID_IDS)
def test_render_round_trips(directory, name):
    topo = parse_nvidia_topo(_read(directory, name))
    text = render_nvidia_topo(topo)
    assert text.endswith('\n')
    assert parse_nvidia_topo(text) == topo


def _variants(text):
    """The same output as a terminal copy, with CRLF, with trailing blanks, as bytes."""
    return {
        'expanded tabs': text.expandtabs(8),
        'crlf': text.replace('\n', '\r\n'),
        'trailing blanks': '\n'.join(line + '   ' for line in text.split('\n')),
        'bytes': text.encode('utf-8'),
    }


@pytest.mark.parametrize('directory, name', VALID_CASES, ids=VALID_IDS)
def test_layout_does_not_change_the_result(directory, name):
    text = _read(directory, name)
    topo = parse_nvidia_topo(text)
    for variant, other in _variants(text).items():
        assert parse_nvidia_topo(other) == topo, variant


def test_escape_bytes_and_their_lost_text_parse_alike():
    text = _read(REAL_DIR, 'h100-8gpu-nonic-gke-hypercomputer-lab04.txt')
    assert '\x1b[4m' in text
    topo = parse_nvidia_topo(text)
    assert parse_nvidia_topo(text.replace('\x1b', '')) == topo
    assert parse_nvidia_topo(text.replace('\x1b[4m', '').replace('\x1b[0m', '')) == topo


def test_rendered_table_is_aligned():
    topo = parse_nvidia_topo(_read(REAL_DIR, 'h100-hgx-8gpu-8nic-sglang30401.txt'))
    lines = render_nvidia_topo(topo).split('\n')
    header, rows = lines[0], lines[1:17]
    starts = [m.start() for m in re.finditer(r'GPU\d+|NIC\d+|CPU Affinity|NUMA Affinity|GPU NUMA ID', header)]
    assert len(starts) == 16 + 3
    for row in rows[:8]:
        assert [m.start() for m in re.finditer(r'\S+', row)][1:] == starts
    for row in rows[8:]:
        assert [m.start() for m in re.finditer(r'\S+', row)][1:] == starts[:16]
    assert '  NIC5: mlx5_5' in lines
    assert 'GPU0  X     NV18' in rows[0]


def test_render_leaves_out_an_empty_nic_legend():
    topo = parse_nvidia_topo(_read(REAL_DIR, 'rtx4090-8gpu-goallocator17.txt'))
    text = render_nvidia_topo(topo)
    assert 'NIC Legend' not in text
    assert 'GPU NUMA ID' in text
    assert 'GPU NUMA ID' not in render_nvidia_topo(
        parse_nvidia_topo(_read(REAL_DIR, 'gtx1080ti-2gpu-numa-na-xuesongtap.txt')))


@pytest.mark.parametrize('broken, missing', [
    ({'gpus': [], 'nics': []}, 'matrix'),
    ({'gpus': [{'name': 'GPU0'}], 'nics': [], 'matrix': {}}, 'GPU0'),
    ({'gpus': [{'name': 'GPU0'}, {'name': 'GPU1'}], 'nics': [],
      'matrix': {'GPU0': {'GPU0': 'X'}, 'GPU1': {'GPU0': 'SYS', 'GPU1': 'X'}}}, 'GPU1'),
])
def test_render_refuses_an_incomplete_topology(broken, missing):
    with pytest.raises(ValueError, match=missing):
        render_nvidia_topo(broken)


@pytest.mark.parametrize('name', sorted(MALFORMED))
def test_malformed_input_names_the_line(name):
    expected = MALFORMED[name]
    text = _read(SYNTHETIC_DIR, name)
    offending = text.split('\n')[expected['line'] - 1]
    with pytest.raises(TopoParseError) as caught:
        parse_nvidia_topo(text)
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.lineno == expected['line']
    assert error.line == offending
    message = str(error)
    assert 'line {0}:'.format(expected['line']) in message
    assert '"{0}"'.format(offending) in message
    assert expected['says'] in message


def test_no_header_in_a_long_text_names_the_first_line():
    with pytest.raises(TopoParseError) as caught:
        parse_nvidia_topo('\n\nNo devices were found\n')
    assert caught.value.lineno == 3
    assert 'No devices were found' in str(caught.value)


def test_not_text_is_refused():
    with pytest.raises(TypeError):
        parse_nvidia_topo(None)


@pytest.mark.parametrize('text, cpus', [
    ('0-47,96-143', list(range(48)) + list(range(96, 144))),
    ('64-127,192-254', list(range(64, 128)) + list(range(192, 255))),
    ('0,2,4,6,8,10', [0, 2, 4, 6, 8, 10]),
    ('5,1,3-4,4', [1, 3, 4, 5]),
    (' 7 ', [7]),
    ('N/A', []),
    ('', []),
    (None, []),
])
def test_expand_cpu_list(text, cpus):
    assert expand_cpu_list(text) == cpus


@pytest.mark.parametrize('text', ['a', '3-1', '1-', '-1', '1,,2', '0-47;96', '0-99999999999'])
def test_expand_cpu_list_refuses(text):
    with pytest.raises(ValueError):
        expand_cpu_list(text)


@pytest.mark.parametrize('cpus, text', [
    ([], ''),
    ([7], '7'),
    ([4, 5], '4-5'),
    ([5, 0, 1, 2, 2], '0-2,5'),
    (list(range(48)) + list(range(96, 144)), '0-47,96-143'),
    ([0, 2, 4, 6], '0,2,4,6'),
])
def test_compress_cpu_list(cpus, text):
    assert compress_cpu_list(cpus) == text
    assert expand_cpu_list(text) == sorted(set(cpus))


@pytest.mark.parametrize('cpus', [[-1], ['1'], [True], [1.0]])
def test_compress_cpu_list_refuses(cpus):
    with pytest.raises(ValueError):
        compress_cpu_list(cpus)
