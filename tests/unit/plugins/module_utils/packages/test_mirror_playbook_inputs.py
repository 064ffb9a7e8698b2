# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Table-driven tests of the mirror playbook's variable checks (plugins/module_utils/packages/mirror_inputs.py).

Cases live in data/mirror_inputs_cases.yml; {SUM} stands for sha256:<64 zeros>."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import mirror_inputs

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data', 'mirror_inputs_cases.yml')
SUM = 'sha256:' + '0' * 64


def expand(value):
    if isinstance(value, str):
        return value.replace('{SUM}', SUM)
    if isinstance(value, list):
        return [expand(v) for v in value]
    if isinstance(value, dict):
        return dict((k, expand(v)) for k, v in value.items())
    return value


with open(DATA) as _handle:
    CASES = expand(yaml.safe_load(_handle))


@pytest.mark.parametrize('case', CASES, ids=lambda c: c['name'])
def test_mirror_variables(case):
    found = mirror_inputs.problems('gpuops', case['inputs'], {'insecure_hosts': []})
    assert len(found) == len(case['problems']), found
    for got, want in zip(found, case['problems']):
        assert want in got, (want, got)


def test_every_kind_has_careless_values_and_a_class():
    kinds = set(kind for kind, _params in mirror_inputs.VARIABLES.values())
    assert kinds == set(mirror_inputs.CARELESS) == set(mirror_inputs.CLASS_OF_KIND) == set(mirror_inputs.KINDS)
    for name in mirror_inputs.PLAYBOOK_VARIABLES:
        assert name in mirror_inputs.VARIABLES


@pytest.mark.parametrize('name', sorted(mirror_inputs.VARIABLES))
def test_the_careless_values_come_out_as_listed(name):
    for value, expected, reason in mirror_inputs.CARELESS[mirror_inputs.VARIABLES[name][0]]:
        found = mirror_inputs.variable_problems(name, value, {})
        assert (found != []) == (expected == 'refused'), (name, value, reason, found)
        assert all(p.startswith(name) for p in found), found


def test_the_playbook_reads_every_variable():
    with open(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', '..', 'playbooks', 'mirror.yml')) as handle:
        text = handle.read()
    for name in mirror_inputs.VARIABLES:
        assert name in text, name
