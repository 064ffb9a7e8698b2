# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' own settings checks that the read-only probe runs (plugins/module_utils/plan/settings_checks.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.settings_checks import (
    CHECKS,
    COVERS,
    role_settings,
    settings_report,
)

HERE = os.path.dirname(__file__)
DATA = os.path.join(os.path.dirname(HERE), 'data')
ROLES = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..', '..', 'roles'))
with open(os.path.join(DATA, 'settings_checks_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)['cases']


def _defaults(role):
    with open(os.path.join(ROLES, role, 'defaults', 'main.yml')) as handle:
        data = yaml.safe_load(handle) or {}
    prefix = role + '_'
    return dict((k[len(prefix):], v) for k, v in data.items() if k.startswith(prefix))


@pytest.mark.parametrize('case', CASES, ids=[c['name'] for c in CASES])
def test_role_settings(case):
    inputs = dict(_defaults(case['role'])) if case['defaults'] else {}
    inputs.update(case['inputs'])
    got = role_settings(case['role'], inputs, {'distribution': 'Debian', 'major': '12'})
    expect = case['expect']
    assert got['checked'] is expect['checked']
    if expect.get('no_problems'):
        assert got['problems'] == []
    for text in expect.get('problems_have') or []:
        assert any(text in p for p in got['problems']), (text, got['problems'])


def test_every_check_says_what_it_covers():
    assert sorted(CHECKS) == sorted(COVERS)


def test_settings_report_is_per_role_and_refuses_a_non_dict():
    report = settings_report({'node_exporter': {}, 'nvidia_container_toolkit': _defaults('nvidia_container_toolkit')})
    assert sorted(report) == ['node_exporter', 'nvidia_container_toolkit']
    assert report['nvidia_container_toolkit']['checked'] is True
    with pytest.raises(ValueError, match='inputs must be a dict'):
        settings_report(['nvidia_container_toolkit'])


def test_a_check_that_cannot_read_its_inputs_is_a_problem_not_a_traceback(monkeypatch):
    def broken(inputs, platform):
        raise TypeError('unhashable')
    monkeypatch.setitem(CHECKS, 'gpu_validate', broken)
    got = role_settings('gpu_validate', {}, None)
    assert got == {'checked': True, 'reason': COVERS['gpu_validate'],
                   'problems': ['the settings check of gpu_validate could not read its inputs: TypeError: unhashable']}
