# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the parse_nvidia_topo / render_nvidia_topo filters."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.parse_nvidia_topo import FilterModule as ParseFilter
from ansible_collections.gpuops.dlserver.plugins.filter.render_nvidia_topo import FilterModule as RenderFilter
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_topo import (
    TopoParseError,
    parse_nvidia_topo,
)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
H100_HGX = os.path.join(REPO, 'tests', 'fixtures', 'topo', 'h100-hgx-8gpu-8nic-sglang30401.txt')
MISSING_CELL = os.path.join(REPO, 'tests', 'fixtures', 'topo-synthetic', 'malformed-missing-cell.txt')
FILTERS = dict(ParseFilter().filters(), **RenderFilter().filters())


def _read(path):
    with open(path) as handle:
        return handle.read()


def test_filters_are_registered():
    # one filter per file, named as the file (Galaxy lists each file as a filter)
    assert list(ParseFilter().filters()) == ['parse_nvidia_topo']
    assert list(RenderFilter().filters()) == ['render_nvidia_topo']


def test_parse_filter_returns_the_parser_result():
    text = _read(H100_HGX)
    topo = FILTERS['parse_nvidia_topo'](text)
    assert topo == parse_nvidia_topo(text)
    assert topo['matrix']['GPU0']['GPU1'] == 'NV18'


def test_parse_filter_error_carries_the_parser_message():
    text = _read(MISSING_CELL)
    with pytest.raises(TopoParseError) as parser_error:
        parse_nvidia_topo(text)
    with pytest.raises(AnsibleFilterError) as filter_error:
        FILTERS['parse_nvidia_topo'](text)
    assert filter_error.value.message == str(parser_error.value)
    assert 'line 3:' in filter_error.value.message


@pytest.mark.parametrize('value', [None, 42, ['GPU0']])
def test_parse_filter_refuses_what_is_not_text(value):
    with pytest.raises(AnsibleFilterError, match='must be text'):
        FILTERS['parse_nvidia_topo'](value)


def test_render_filter_round_trips():
    topo = parse_nvidia_topo(_read(H100_HGX))
    text = FILTERS['render_nvidia_topo'](topo)
    assert FILTERS['parse_nvidia_topo'](text) == topo


@pytest.mark.parametrize('value', [{'gpus': []}, 'GPU0', None])
def test_render_filter_refuses_what_is_not_a_topology(value):
    with pytest.raises(AnsibleFilterError):
        FILTERS['render_nvidia_topo'](value)


def test_through_the_ansible_filter_loader(tmp_path):
    """One ad-hoc run: ansible resolves the FQCN and the result reaches a task intact."""
    ansible = os.path.join(os.path.dirname(sys.executable), 'ansible')
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': os.path.join(REPO, '.cache', 'collections'),
        'ANSIBLE_HOME': str(tmp_path),
        'ANSIBLE_LOCALHOST_WARNING': 'false',
        'ANSIBLE_INVENTORY_UNPARSED_WARNING': 'false',
        'ANSIBLE_NOCOLOR': '1',
        'ANSIBLE_STDOUT_CALLBACK': 'minimal',
    })
    expression = "{{ lookup('file', '%s') | gpuops.dlserver.parse_nvidia_topo | to_json }}" % H100_HGX
    result = subprocess.run(
        [ansible, 'localhost', '-c', 'local', '-m', 'ansible.builtin.debug', '-a', 'msg=' + expression],
        cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith('localhost | SUCCESS => '), result.stdout
    reply = json.loads(result.stdout.split('=>', 1)[1])
    assert json.loads(reply['msg']) == parse_nvidia_topo(_read(H100_HGX))
