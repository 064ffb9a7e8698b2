# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adopt, don't disturb (plugins/module_utils/plan/adopt.py) and the plan's installed driver."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan import adopt
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.gpu_plan import build_plan

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')
with open(os.path.join(DATA, 'adopt_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)


@pytest.mark.parametrize('case', CASES['driver'], ids=[c['name'] for c in CASES['driver']])
def test_driver(case):
    result = adopt.driver(case['evidence'], case['source'], case['adopt'])
    assert result['action'] == case['expect']['action']
    assert result['owner'] == case['expect']['owner']
    for text in case['expect'].get('reason_has') or []:
        assert text in result['reason']


@pytest.mark.parametrize('case', CASES['installed'], ids=[c['name'] for c in CASES['installed']])
def test_installed_driver(case):
    assert adopt.installed_driver(case['packages'], case['loaded']) == case['expect']


@pytest.mark.parametrize('case', CASES['component'], ids=['%s-%s' % (c['role'], c['expect']) for c in CASES['component']])
def test_component(case):
    result = adopt.component(case['role'], 'it', case['installed'], case['marker'], case['adopt'])
    assert result['action'] == case['expect']
    if case['expect'] == 'leave':
        assert '%s_adopt: true' % case['role'] in result['reason']


@pytest.mark.parametrize('case', CASES['bad'], ids=[c['error'] for c in CASES['bad']])
def test_bad_input(case):
    with pytest.raises(adopt.AdoptError, match=case['error']):
        getattr(adopt, case['call'])(*case['args'])


def _facts(installed_packages=None, loaded=None):
    with open(os.path.join(DATA, 'plan_dgx_a100.yml')) as handle:
        facts = yaml.safe_load(handle)['facts']
    facts['driver'] = {'loaded': bool(loaded), 'version': loaded}
    if installed_packages is not None:
        facts['driver']['installed_packages'] = installed_packages
    return facts


def test_an_installed_driver_pending_its_reboot_keeps_its_branch():
    plan = build_plan(_facts({'nvidia-kernel-dkms': '570.195.03-1'}), {'in_container': True,
                                                                       'source_branches': [570, 580]})
    branch = plan['driver']['branch']
    assert branch['value'] == 570 and branch['from'] == 'installed'
    assert '570.195.03' in branch['reason']
    assert plan['driver']['installed'] == {'version': '570.195.03', 'branch': 570, 'loaded': False}


def test_without_an_installed_driver_the_newest_branch_is_taken():
    plan = build_plan(_facts({}), {'in_container': True, 'source_branches': [570, 580]})
    assert plan['driver']['branch']['value'] == 580 and plan['driver']['branch']['from'] == 'newest_supported'


def test_the_inventory_still_decides():
    plan = build_plan(_facts({'nvidia-kernel-dkms': '570.195.03-1'}), {'in_container': True, 'driver_upgrade': True,
                                                                       'source_branches': [570, 580]})
    assert plan['driver']['branch']['value'] == 580


def test_malformed_installed_packages_fail_naming_the_fact():
    with pytest.raises(ValueError, match='installed_packages'):
        build_plan(_facts(['nvidia-kernel-dkms']), {'in_container': True})


@pytest.mark.parametrize('case', CASES['plan'], ids=[c['name'] for c in CASES['plan']])
def test_plan_carries_the_decision(case):
    facts = _facts()
    facts['driver'] = case['facts']
    plan = build_plan(facts, {'in_container': True, 'driver_source': case['source'], 'driver_adopt': case['adopt'],
                              'source_branches': [535, 580]})
    decision = plan['adopt']['nvidia_driver']
    assert (decision['action'], decision['owner']) == (case['expect']['action'], case['expect']['owner'])
    assert plan['roles']['nvidia_driver']['run'] is case['expect']['run']
    if not case['expect']['run']:
        assert plan['roles']['nvidia_driver']['reason'] == decision['reason']
        assert 'nvidia_driver_adopt: true' in decision['reason']
    if 'branch' in case['expect']:
        assert plan['driver']['branch']['value'] == case['expect']['branch']


def test_bad_package_facts_fail_naming_the_fact():
    facts = _facts()
    facts['driver'] = {'loaded': False, 'installed_packages': {}, 'package_origins': ['x'],
                       'packages_read': {'answered': True}}
    with pytest.raises(ValueError, match='gpuops_gpu.driver'):
        build_plan(facts, {'in_container': True})


def test_a_bad_consent_value_is_refused():
    with pytest.raises(ValueError, match='nvidia_driver_adopt'):
        build_plan(_facts(), {'in_container': True, 'driver_adopt': 'maybe'})


def test_a_driver_left_alone_gives_no_branch_change_warning():
    facts = _facts(loaded='535.216.03')
    facts['driver'].update({'installed_packages': {}, 'package_origins': {}, 'runfile': True, 'marker': False,
                            'packages_read': {'answered': True, 'reason': None}})
    options = {'in_container': True, 'driver_branch': 580}
    left = build_plan(facts, options)
    assert left['adopt']['nvidia_driver']['action'] == 'leave'
    assert 'driver_branch_change' not in [w['code'] for w in left['warnings']]
    adopted = build_plan(facts, dict(options, driver_adopt=True))
    assert 'driver_branch_change' in [w['code'] for w in adopted['warnings']]


@pytest.mark.parametrize('case', CASES['toolkit'], ids=[c['name'] for c in CASES['toolkit']])
def test_plan_carries_the_toolkit_decision(case):
    facts = _facts()
    if case['components'] is not None:
        facts['components'] = case['components']
    plan = build_plan(facts, {'in_container': True, 'toolkit_adopt': case['adopt'], 'source_branches': [580]})
    decision = plan['adopt']['nvidia_container_toolkit']
    assert (decision['action'], decision['owner']) == (case['expect']['action'], case['expect']['owner'])
    assert plan['roles']['nvidia_container_toolkit']['run'] is case['expect']['run']
    if not case['expect']['run']:
        assert 'nvidia_container_toolkit_adopt: true' in plan['roles']['nvidia_container_toolkit']['reason']


def test_malformed_components_fail_naming_the_fact():
    facts = _facts()
    facts['components'] = {'nvidia_container_toolkit': 'yes'}
    with pytest.raises(ValueError, match='gpuops_gpu.components'):
        build_plan(facts, {'in_container': True})


@pytest.mark.parametrize('case', CASES['dcgm'], ids=[c['name'] for c in CASES['dcgm']])
def test_plan_carries_the_dcgm_decision(case):
    facts = _facts()
    facts['components'] = case['components']
    plan = build_plan(facts, {'in_container': True, 'dcgm_adopt': case['adopt'], 'source_branches': [580]})
    decision = plan['adopt']['dcgm_exporter']
    assert (decision['action'], decision['owner']) == (case['expect']['action'], case['expect']['owner'])
    assert plan['roles']['dcgm_exporter']['run'] is case['expect']['run']
    assert decision.get('units') == case['expect'].get('units')
    if not case['expect']['run']:
        assert 'dcgm_exporter_adopt: true' in plan['roles']['dcgm_exporter']['reason']
        assert plan['roles']['dcgm_exporter']['reason'] == decision['reason']
    # the other roles' decisions do not move
    assert plan['roles']['nvidia_container_toolkit']['run'] is True


@pytest.mark.parametrize('case', CASES['dcgm_bad'], ids=[c['error'] for c in CASES['dcgm_bad']])
def test_malformed_dcgm_components_fail_naming_the_fact(case):
    facts = _facts()
    facts['components'] = case['components']
    with pytest.raises(ValueError, match=case['error']):
        build_plan(facts, {'in_container': True})


def test_a_host_without_dcgm_gpus_keeps_its_reason_when_a_foreign_dcgm_is_there():
    facts = _facts()
    facts['components'] = {'dcgm_exporter': {'version': '1', 'origin': 'other', 'marker': False, 'units': []}}
    facts['gpu_count'], facts['gpus'] = 0, []
    plan = build_plan(facts, {'in_container': True})
    assert plan['adopt']['dcgm_exporter']['action'] == 'leave'
    assert not plan['roles']['dcgm_exporter']['run']
    assert 'dcgm_exporter_adopt' not in plan['roles']['dcgm_exporter']['reason']
