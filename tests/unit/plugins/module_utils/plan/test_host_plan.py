# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One plan per host from every role's typed inputs (plugins/module_utils/plan/host_plan.py),
the one branch rule (plugins/module_utils/plan/driver_branch.py) and the table of the branches
each source carries (plugins/module_utils/packages/driver_branches.py; cases in
data/driver_branches_cases.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.action.__private.role_inputs import load_spec
from ansible_collections.gpuops.dlserver.plugins.action.host_plan import public_roles
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import convert_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_branches
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan import driver_branch
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.host_plan import (
    PLAN_INPUTS,
    PUBLISHED,
    build_host_plan,
    same_inputs,
    plan_options,
)

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')


def _facts(name):
    with open(os.path.join(DATA, name)) as handle:
        return yaml.safe_load(handle)['facts']


def typed(values=None):
    """Every role's typed inputs, as the host_plan action converts them."""
    values = values or {}
    return dict((role, convert_inputs(load_spec(role), values, role + '_')) for role in public_roles())


def test_every_plan_input_is_a_declared_role_variable():
    for role, key in list(PLAN_INPUTS.values()) + list(PUBLISHED.values()):
        assert '%s_%s' % (role, key) in load_spec(role), '%s_%s is not in the argument spec' % (role, key)


def test_defaults_give_the_plan_defaults():
    options = plan_options(typed(), False)
    assert options['driver_force'] is False and options['kernel_modules'] == 'auto'
    assert options['driver_branch'] is None and options['driver_version'] is None
    assert options['mig'] == 'auto' and options['dcgm_profiling'] == 'auto'


def test_force_on_a_host_without_gpus_runs_every_driver_dependent_role():
    # the review's case: the container toolkit's own plan lacked the force flag and skipped itself
    plan = build_host_plan(_facts('plan_cpu_only.yml'), typed({'nvidia_driver_force': 'true'}), True)
    assert plan['driver']['required'] is True
    assert plan['roles']['nvidia_driver']['run'] is True
    assert plan['roles']['nvidia_container_toolkit']['run'] is True
    assert plan['options']['driver_force'] is True


def test_every_role_reads_the_same_options():
    values = {'nvidia_driver_mig_mode': 'enabled', 'dcgm_exporter_profiling': 'disabled',
              'nvidia_driver_branch': 'R580'}
    plan = build_host_plan(_facts('plan_dgx_a100.yml'), typed(values), False)
    assert plan['mig']['mode'] == 'enabled'
    assert plan['dcgm']['profiling']['value'] is False
    assert plan['driver']['branch']['value'] == 580
    assert plan['driver']['branch']['from'] == 'nvidia_driver_branch'


def test_published_addresses():
    values = {'node_exporter_listen_address': '10.0.0.5:9101', 'dcgm_exporter_listen_address': ':9500'}
    plan = build_host_plan(_facts('plan_dgx_a100.yml'), typed(values), False, scrape_address='gpu1.example')
    assert plan['exporters']['node_exporter']['listen_address'] == '10.0.0.5:9101'
    assert plan['exporters']['dcgm_exporter']['listen_address'] == ':9500'
    assert plan['host']['scrape_address'] == 'gpu1.example'


with open(os.path.join(DATA, 'driver_branches_cases.yml')) as _handle:
    BRANCH_CASES = yaml.safe_load(_handle)


@pytest.mark.parametrize('case', BRANCH_CASES['table'],
                         ids=lambda c: '%s %s %s' % (c['distribution'], c['major'], c['source']))
def test_the_table_of_driver_branches(case):
    found = driver_branches.source_branches(case['distribution'], case['major'], case['source'])
    assert found['value'] == case['value'], found
    assert case['reason_has'] in found['reason'], found
    assert driver_branches.default_branch(case['distribution'], case['major'], case['source']) == (
        case['value'][-1] if case['value'] else None)


@pytest.mark.parametrize('case', BRANCH_CASES['host_plan'], ids=lambda c: c['name'])
def test_the_plan_decides_the_branch_in_one_pass(case):
    facts = _facts(case['facts'])
    plan = build_host_plan(facts, typed(case.get('values')), False, case['platform'])
    branch = plan['driver']['branch']
    assert {'value': branch['value'], 'from': branch['from']} == case['expect'], branch['reason']
    for text in case.get('reason_has') or []:
        assert text in branch['reason'], (text, branch['reason'])
    assert [e['code'] for e in plan['errors']] == case['error_codes'], plan['errors']
    if 'warning_codes' in case:
        assert [w['code'] for w in plan['warnings']] == case['warning_codes'], plan['warnings']
    for text in case.get('error_has') or []:
        assert any(text in e['message'] for e in plan['errors']), (text, plan['errors'])
    # the plan records what it was made from
    platform = case['platform'] or {}
    assert plan['options']['distribution'] == platform.get('distribution')
    assert plan['options']['distribution_major'] == platform.get('major')


@pytest.mark.parametrize('kwargs, value, source', [
    ({'requested': 570, 'version_branch': 580, 'installed': 535}, 570, 'nvidia_driver_branch'),
    ({'version': '580.95.05', 'version_branch': 580, 'installed': 535}, 580, 'nvidia_driver_version'),
    ({'installed': 535, 'available': [580]}, 535, 'installed'),
    ({'installed': 535, 'upgrade': True, 'available': [535, 550, 580]}, 580, 'newest_supported'),
    ({'installed': 535, 'upgrade': True}, None, 'source'),
    ({'installed': 535, 'upgrade': True, 'available': [535, 580], 'available_reason': 'the table'}, 580,
     'newest_supported'),
    ({'available': [470, 535, 580], 'high': 535}, 535, 'newest_supported'),
    ({'available': [535, 550], 'low': 570}, None, 'none'),
    ({}, None, 'source'),
])
def test_branch_rule(kwargs, value, source):
    choice = driver_branch.choose(**kwargs)
    assert (choice['value'], choice['from']) == (value, source), choice['reason']
    assert choice['reason']


def test_the_plan_is_reused_for_the_same_inputs_only():
    facts = _facts('plan_dgx_a100.yml')
    plan = build_host_plan(facts, typed({'nvidia_driver_mig_mode': 'enabled'}), True)
    assert same_inputs(plan, typed({'nvidia_driver_mig_mode': 'enabled', 'python_stack_python': '3.12'}), True)
    assert not same_inputs(plan, typed({'nvidia_driver_mig_mode': 'enabled', 'nvidia_driver_branch': 570}), True)
    assert not same_inputs(plan, typed({'nvidia_driver_mig_mode': 'enabled'}), False)
    # the platform is an input of the plan: another one (a host re-imaged between plays) plans again
    debian = {'distribution': 'Debian', 'major': '12'}
    again = build_host_plan(facts, typed({'nvidia_driver_mig_mode': 'enabled'}), True, debian)
    assert same_inputs(again, typed({'nvidia_driver_mig_mode': 'enabled'}), True, debian)
    assert not same_inputs(again, typed({'nvidia_driver_mig_mode': 'enabled'}), True,
                           {'distribution': 'Debian', 'major': '13'})
    assert not same_inputs(again, typed({'nvidia_driver_mig_mode': 'enabled'}), True)
    assert not same_inputs(None, typed(), True)
