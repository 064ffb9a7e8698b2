# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Table-driven tests of the hardware plan (plugins/module_utils/plan/gpu_plan.py).

Cases live in data/plan_*.yml. A hardware file holds ``facts`` shaped like the fact contract
(docs/architecture.md section 3), the ``capabilities`` the same rules must give, and ``cases``, each with:

- ``options``: passed to build_plan();
- ``facts_update`` (optional): deep-merged onto the file's facts - dictionaries merge key by
  key, a ``null`` value removes the key, a list of dictionaries merges item by item and its
  length is the update's length;
- ``expect``: dotted path (list items by index) -> exact value;
- ``reason_contains``: dotted path -> substring of that string;
- ``warning_codes`` / ``error_codes``: the exact codes, in order;
- ``warning_contains`` / ``error_contains``: substrings found in some warning / error message.

plan_options.yml holds valid options with their normal form and invalid ones with the
substrings their ValueError must contain.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import glob
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.capabilities import (
    ARCHITECTURES,
    capabilities_from_facts,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.gpu_plan import build_plan, format_plan_errors
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.options import (
    ROLES,
    branch_of_version,
    parse_branch,
    validate_plan_options,
)

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')
HARDWARE_FILES = sorted(f for f in glob.glob(os.path.join(DATA, 'plan_*.yml'))
                        if os.path.basename(f) != 'plan_options.yml')


def _load(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def merge(base, update):
    if isinstance(base, dict) and isinstance(update, dict):
        result = dict(base)
        for key, value in update.items():
            if value is None:
                result.pop(key, None)
            else:
                result[key] = merge(base.get(key), value)
        return result
    if isinstance(base, list) and isinstance(update, list):
        return [merge(base[i], item) if i < len(base) else item for i, item in enumerate(update)]
    return copy.deepcopy(update)


def lookup(plan, path):
    node = plan
    for part in path.split('.'):
        if isinstance(node, list):
            node = node[int(part)]
        else:
            assert part in node, 'plan has no %r (looking up %s) in %r' % (part, path, sorted(node))
            node = node[part]
    return node


def _cases():
    params = []
    for path in HARDWARE_FILES:
        data = _load(path)
        for case in data['cases']:
            facts = merge(data['facts'], case.get('facts_update') or {})
            params.append(pytest.param(facts, case, id='%s: %s' % (os.path.basename(path)[5:-4], case['name'])))
    return params


def _files():
    return [pytest.param(_load(p), id=os.path.basename(p)) for p in HARDWARE_FILES]


def test_every_listed_fixture_has_a_file():
    names = set(os.path.basename(p) for p in HARDWARE_FILES)
    for wanted in ('plan_hgx_h100.yml', 'plan_dgx_a100.yml', 'plan_a100_pcie_x8.yml', 'plan_rtx4090.yml',
                   'plan_v100.yml', 'plan_k80.yml', 'plan_hgx_b200.yml', 'plan_unknown_arch.yml',
                   'plan_cpu_only.yml', 'plan_mixed.yml'):
        assert wanted in names


@pytest.mark.parametrize('facts, case', _cases())
def test_plan_cases(facts, case):
    before = copy.deepcopy(facts)
    plan = build_plan(facts, case.get('options'))
    assert facts == before, 'build_plan must not change its input'

    for path, value in (case.get('expect') or {}).items():
        assert lookup(plan, path) == value, '%s: got %r, want %r' % (path, lookup(plan, path), value)
    for path, text in (case.get('reason_contains') or {}).items():
        assert text in lookup(plan, path), '%s: %r not in %r' % (path, text, lookup(plan, path))

    if 'warning_codes' in case:
        assert [w['code'] for w in plan['warnings']] == case['warning_codes'], plan['warnings']
    if 'error_codes' in case:
        assert [e['code'] for e in plan['errors']] == case['error_codes'], plan['errors']
    for text in case.get('warning_contains') or []:
        assert any(text in w['message'] for w in plan['warnings']), (text, plan['warnings'])
    for text in case.get('error_contains') or []:
        assert any(text in e['message'] for e in plan['errors']), (text, plan['errors'])

    assert plan['ok'] is (not plan['errors'])


@pytest.mark.parametrize('facts, case', _cases())
def test_plan_invariants(facts, case):
    """Every decision has a reason; every role has an entry; errors name a variable."""
    plan = build_plan(facts, case.get('options'))
    assert sorted(plan['roles']) == sorted(ROLES)
    for name, entry in plan['roles'].items():
        assert isinstance(entry['run'], bool), name
        assert entry['reason'], name

    def walk(node, where):
        if isinstance(node, dict):
            if any(k in node for k in ('required', 'run', 'value', 'enabled', 'live', 'mode')) and where:
                assert isinstance(node.get('reason'), str) and node['reason'], 'no reason at %s' % where
            for key, value in node.items():
                if key not in ('options', 'warnings', 'errors', 'host', 'loaded'):
                    walk(value, where + '.' + key if where else key)
    walk(plan, '')

    for error in plan['errors']:
        assert set(error) == {'code', 'option', 'variable', 'message'}
        assert error['variable'] in error['message'], error
    for warning in plan['warnings']:
        assert warning['code'] and warning['message']
    # services never start where the driver does not load
    load = plan['driver']['load_modules']['value']
    for key in ('fabric_manager', 'nvlink_subnet_manager', 'persistence'):
        assert not plan[key]['start'] or (load and (plan[key].get('required') or plan[key].get('enabled')))
    assert not plan['mig']['apply'] or load
    assert plan['nvlink_subnet_manager']['required'] <= plan['fabric_manager']['required']
    assert plan['exporters']['dcgm_exporter']['run'] == plan['roles']['dcgm_exporter']['run']


@pytest.mark.parametrize('data', _files())
def test_capabilities_follow_the_same_rules(data):
    assert capabilities_from_facts(data['facts']) == data['capabilities']


def test_options_table():
    data = _load(os.path.join(DATA, 'plan_options.yml'))
    for case in data['valid']:
        assert validate_plan_options(case['options']) == case['normalised']
    for case in data['invalid']:
        with pytest.raises(ValueError) as exc:
            validate_plan_options(case['options'])
        for text in case['raises']:
            assert text in str(exc.value), (text, str(exc.value))


def test_bad_options_raise_from_build_plan():
    with pytest.raises(ValueError, match='nvidia_driver_kernel_modules'):
        build_plan({'gpu_count': 0}, {'kernel_modules': 'closed'})


@pytest.mark.parametrize('facts, text', [
    (None, 'run gpuops.dlserver.gpu_facts'),
    ([], 'must be a dictionary'),
    ({'gpus': 'GPU0'}, 'gpuops_gpu.gpus must be a list'),
    ({'gpus': ['GPU0']}, r'gpuops_gpu.gpus\[0\] must be a dictionary'),
    ({'gpu_count': 'eight'}, 'gpuops_gpu.gpu_count must be a non-negative integer'),
    ({'gpu_count': -1}, 'gpuops_gpu.gpu_count must be a non-negative integer'),
])
def test_malformed_facts(facts, text):
    with pytest.raises(ValueError, match=text):
        build_plan(facts)


def test_minimal_facts_default_counts_from_lists():
    plan = build_plan({'gpus': [{'pci_bus_id': '0000:01:00.0', 'architecture': 'Turing'}]})
    assert plan['host']['gpu_count'] == 1
    assert plan['host']['architectures'] == ['turing']
    assert plan['driver']['kernel_modules']['value'] == 'open'
    assert plan['warnings'] == []


# The parser is core/versions.driver_branch (its cases: data/driver_versions_cases.yml); the plan's
# option names the plan option and the variable.
@pytest.mark.parametrize('value, branch', [
    (580, 580), ('580', 580), ('R535', 535), ('r470', 470), (None, None),
])
def test_parse_branch(value, branch):
    assert parse_branch(value) == branch


@pytest.mark.parametrize('value', [False, 58, 10000, '580.95.05', 'latest', 5.8e2, ' r470 ', '580\n'])
def test_parse_branch_rejects(value):
    with pytest.raises(ValueError, match='nvidia_driver_branch'):
        parse_branch(value)


@pytest.mark.parametrize('version, branch', [
    ('580.95.05', 580), ('470.256.02', 470), ('1000.1', 1000), ('1:580.95.05-1', 580), (None, None), ('', None),
    ('N/A', None), ('580.95.05\n', None),
])
def test_branch_of_version_compares_numbers(version, branch):
    assert branch_of_version(version) == branch


def test_branch_limits_compare_as_numbers():
    # '1000' < '580' as strings; as numbers 1000 is newer than the last Volta branch
    plan = build_plan({'gpus': [{'architecture': 'volta', 'pci_bus_id': '0000:01:00.0'}]},
                      {'driver_branch': '1000'})
    assert [e['code'] for e in plan['errors']] == ['branch_too_new']
    plan = build_plan({'gpus': [{'architecture': 'blackwell', 'pci_bus_id': '0000:01:00.0'}]},
                      {'driver_branch': '1000'})
    assert plan['errors'] == []


def test_architecture_table_rules():
    assert [a for a, i in ARCHITECTURES.items() if not i['open']] == ['kepler', 'maxwell', 'pascal', 'volta']
    assert [a for a, i in ARCHITECTURES.items() if not i['proprietary']] == ['blackwell']
    assert ARCHITECTURES['kepler']['max_branch'] == 470
    assert all(ARCHITECTURES[a]['max_branch'] == 580 for a in ('maxwell', 'pascal', 'volta'))
    assert ARCHITECTURES['blackwell']['min_branch'] == 570


def test_format_plan_errors_names_each_variable():
    plan = build_plan({'gpus': [{'architecture': 'volta', 'pci_bus_id': '0000:01:00.0', 'mig_capable': False}]},
                      {'kernel_modules': 'open', 'mig': 'enabled', 'driver_branch': 590})
    text = format_plan_errors(plan)
    for variable in ('nvidia_driver_kernel_modules', 'nvidia_driver_mig_mode', 'nvidia_driver_branch'):
        assert variable in text
    assert format_plan_errors(build_plan({'gpus': []})) == ''
