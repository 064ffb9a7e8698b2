# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The read-only fleet report of playbooks/probe.yml (plugins/module_utils/plan/probe_report.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.gpu_plan import build_plan
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.options import ROLES
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.probe_report import (
    ReportError,
    fleet_report,
    host_report,
    pending_reboots,
    release_failure,
)

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')
with open(os.path.join(DATA, 'probe_report_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)


def _plan(name, options):
    with open(os.path.join(DATA, name)) as handle:
        facts = yaml.safe_load(handle)['facts']
    return build_plan(facts, dict(options, in_container=True))


@pytest.mark.parametrize('case', CASES['cases'], ids=[c['name'] for c in CASES['cases']])
def test_host_report(case):
    report = host_report('h1', _plan(case['facts'], case['options']), case['resolved'], case.get('marker'))
    expect = case['expect']
    assert report['host'] == 'h1'
    assert sorted(report['roles']) == sorted(ROLES)
    assert report['changes'] == expect['changes']
    driver = report['roles']['nvidia_driver']
    for key, value in expect['driver_role'].items():
        assert driver[key] == value, key
    for text in expect.get('reason_has') or []:
        assert text in driver['reason']
    assert report['reboot']['roles'] == expect['would_reboot']
    assert report['reboot']['would_follow'] is bool(expect['would_reboot'])
    assert report['reboot']['pending'] == expect.get('pending', {})
    fleet = fleet_report({'h1': report}, ['h1'])
    if 'line' in expect:
        assert fleet['table'][0] == expect['line']
    for text in expect.get('line_has') or []:
        assert text in fleet['table'][0]
    if 'verdict' in expect:
        for key in ('inspected', 'would_change', 'would_fail'):
            assert report['verdict'][key] == expect['verdict'][key], key
        assert len(report['verdict']['unknown']) == expect['verdict']['unknown_count']
    for text in expect.get('fleet_verdict_has') or []:
        assert text in fleet['verdict'] and fleet['table'][-1] == fleet['verdict']
    # never "converged" nor "would change nothing" while a role is unknown
    if report['verdict']['unknown']:
        assert 'would change nothing' not in fleet['verdict'] and 'not known to be converged' in fleet['verdict']


@pytest.mark.parametrize('case', CASES['bad'], ids=[c['name'] for c in CASES['bad']])
def test_bad_input(case):
    with pytest.raises(ReportError, match=case['error']):
        host_report(case['host'], case['plan'], case['resolved'], case['marker'])


def test_roles_not_inspected_say_so():
    report = host_report('h1', _plan('plan_dgx_a100.yml', {}), None)
    assert report['roles']['os_tuning']['change'] is None
    assert 'not inspected' in report['roles']['os_tuning']['reason']
    assert 'os_tuning' in report['not_inspected']


def test_fleet_names_hosts_without_a_report():
    report = host_report('h1', _plan('plan_cpu_only.yml', {}), None)
    fleet = fleet_report({'h1': report, 'h2': None}, ['h1', 'h2'])
    assert fleet['missing'] == ['h2']
    assert list(fleet['hosts']) == ['h1']
    assert 'h2: NO REPORT (the host failed or was unreachable' in fleet['table'][-2]
    # per host: its verdict line, then one line per role
    assert len([line for line in fleet['table'] if line.startswith('  ')]) == len(ROLES) + 1
    assert fleet['verdict'].startswith('Verdict: 1 host(s) without a report (failed or unreachable: h2);')
    # a report published under another host's name is not taken for this host
    assert fleet_report({'h2': report}, ['h2'])['missing'] == ['h2']


def test_fleet_bad_input():
    with pytest.raises(ReportError, match='hosts must be a list'):
        fleet_report({}, 'h1')
    with pytest.raises(ReportError, match='reports must be a dict'):
        fleet_report(['h1'], ['h1'])


def test_marker_lines_need_the_full_shape():
    assert pending_reboots('nvidia_driver: x\nBAD LINE: y\n') == {'nvidia_driver': 'x'}
    assert pending_reboots('') == {}


def test_held_back_driver_security_updates_are_reported_with_what_takes_them():
    """Issue 34 item 6: the pin keeps Debian's 535.309.01-0+deb12u1 security update back."""
    resolved = dict(CASES['cases'][0]['resolved'], status={'security_updates_held_back': {
        'checked': True, 'take': 'set nvidia_driver_version=535.309.01 and run the rolling upgrade',
        'security': [{'name': 'nvidia-driver', 'installed': '535.261.03-1~deb12u1',
                      'available': '535.309.01-0+deb12u1', 'security': True}]}})
    report = host_report('h1', _plan('plan_dgx_a100.yml', {'driver_version': '580.95.05'}), resolved)
    assert report['security_updates_held_back']['checked'] is True
    table = fleet_report({'h1': report}, ['h1'])['table']
    assert table[1] == ('  driver security updates held back: nvidia-driver 535.261.03-1~deb12u1 -> '
                        '535.309.01-0+deb12u1; to take them: set nvidia_driver_version=535.309.01 and run the '
                        'rolling upgrade')
    # none held back, or the driver role not inspected: no line, and "not inspected" stays unknown
    quiet = host_report('h1', _plan('plan_dgx_a100.yml', {}), None)
    assert quiet['security_updates_held_back']['checked'] is None
    assert not any('held back' in line for line in fleet_report({'h1': quiet}, ['h1'])['table'])


def _all_known_report(host='h1'):
    """A CPU-only host whose roles are all either skipped by the plan or known (as if inspected)."""
    report = host_report(host, _plan('plan_cpu_only.yml', {}), None)
    for role in report['roles'].values():
        if role['run']:
            role.update(change=False, reboot=False, reason='no change')
    report.pop('verdict')
    return report


def test_the_verdict_says_nothing_would_change_only_when_every_role_is_known():
    fleet = fleet_report({'h1': _all_known_report()}, ['h1'])
    assert fleet['verdict'] == ('Verdict: every role the plan runs was inspected; a run would change nothing '
                                'on any host.')
    assert fleet['table'][1].startswith('  roles: ') and '0 unknown' in fleet['table'][1]


def test_a_role_whose_settings_fail_its_checks_is_predicted_to_fail():
    """Issue 34: the probe said converged; the real run then failed on a key over plain http."""
    problem = ('the repository key http://m.example/gpgkey comes over plain http: set '
               'nvidia_container_toolkit_keyring_checksum to its sha256 (or use https://)')
    settings = {'nvidia_container_toolkit': {'checked': True, 'problems': [problem], 'reason': 'key trust'},
                'os_tuning': {'checked': True, 'problems': [], 'reason': 'sysctl and paths'}}
    report = host_report('h1', _plan('plan_dgx_a100.yml', {}), None, None, settings)
    toolkit = report['roles']['nvidia_container_toolkit']
    assert toolkit['fails'] is True and toolkit['change'] is None
    assert toolkit['reason'] == 'a run would FAIL in this role: ' + problem
    assert report['verdict']['would_fail'] == ['nvidia_container_toolkit']
    assert 'nvidia_container_toolkit' not in report['verdict']['unknown']
    assert 'os_tuning' in report['verdict']['unknown']
    assert report['roles']['os_tuning']['reason'].endswith('its settings pass its checks (sysctl and paths)')
    fleet = fleet_report({'h1': report}, ['h1'])
    assert '  nvidia_container_toolkit   change: FAIL reboot: ?   a run would FAIL in this role: ' in '\n'.join(
        fleet['table'])
    assert 'would FAIL: nvidia_container_toolkit' in fleet['table'][1]
    assert fleet['would_fail'] == ['h1']
    assert fleet['verdict'].startswith('Verdict: a run would FAIL on 1 host(s) (h1); ')
    with pytest.raises(ReportError, match='settings'):
        host_report('h1', _plan('plan_dgx_a100.yml', {}), None, None, ['nvidia_container_toolkit'])


@pytest.mark.parametrize('case', CASES['node_exporter'], ids=[c['name'] for c in CASES['node_exporter']])
def test_node_exporter_is_inspected_from_its_own_decision(case):
    read = dict(case['read'], release_error=release_failure(case['read'].get('release_error')))
    report = host_report('h1', _plan('plan_cpu_only.yml', {}), None, None, None, read)
    row = report['roles']['node_exporter']
    assert row['change'] is case['expect']['change']
    assert row['reason'] == case['expect']['reason']
    assert bool(row.get('fails')) is bool(case['expect'].get('fails'))
    if case['expect']['change'] is not None:
        assert 'node_exporter' in report['verdict']['inspected']
    elif case['expect'].get('fails'):
        assert report['verdict']['would_fail'] == ['node_exporter']
    # not inspected (None): the role stays unknown
    unknown = host_report('h1', _plan('plan_cpu_only.yml', {}), None)['roles']['node_exporter']
    assert unknown['change'] is None and not unknown.get('fails')
