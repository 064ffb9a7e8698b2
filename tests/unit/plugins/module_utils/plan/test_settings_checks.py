# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The probe's settings report (plugins/module_utils/plan/settings_checks.py): what the registry of
input checks (core/input_checks.py) found in each role's converted inputs, reported per role."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import convert_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.settings_checks import (
    REASON,
    role_settings,
    settings_report,
)

HERE = os.path.dirname(__file__)
DATA = os.path.join(os.path.dirname(HERE), 'data')
ROLES = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..', '..', 'roles'))
with open(os.path.join(DATA, 'settings_checks_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)['cases']
CONTEXT = {'groups': {}, 'insecure_hosts': [], 'allow': {}, 'platform': {'distribution': 'Debian', 'major': '12'}}


def _converted(role, inputs):
    with open(os.path.join(ROLES, role, 'meta', 'argument_specs.yml')) as handle:
        spec = yaml.safe_load(handle)['argument_specs']['main']['options']
    return convert_inputs(spec, dict((role + '_' + k, v) for k, v in inputs.items()), role + '_')


@pytest.mark.parametrize('case', CASES, ids=[c['name'] for c in CASES])
def test_role_settings(case):
    role = case['role']
    inputs = _converted(role, case['inputs']) if case['defaults'] else case['inputs']
    got = settings_report({role: input_checks.problems(role, inputs, 'main', CONTEXT)})[role]
    expect = case['expect']
    assert got['checked'] is expect['checked']
    assert got['reason'] == REASON
    if expect.get('no_problems'):
        assert got['problems'] == []
    for text in expect.get('problems_have') or []:
        assert any(text in p for p in got['problems']), (text, got['problems'])


def test_settings_report_is_per_role_and_refuses_what_is_no_registry_result():
    report = settings_report({'node_exporter': [], 'nvidia_container_toolkit': ['nvidia_container_toolkit_x: bad']})
    assert sorted(report) == ['node_exporter', 'nvidia_container_toolkit']
    assert report['nvidia_container_toolkit'] == {'checked': True, 'problems': ['nvidia_container_toolkit_x: bad'],
                                                  'reason': REASON}
    with pytest.raises(ValueError, match='must be a dict'):
        settings_report(['nvidia_container_toolkit'])
    with pytest.raises(ValueError, match='must be a list of problems'):
        role_settings('nvidia_container_toolkit_x: bad')
