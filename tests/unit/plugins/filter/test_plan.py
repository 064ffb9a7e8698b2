# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the gpuops.dlserver.gpu_plan filter (plugins/filter/gpu_plan.py).

The rules themselves are tested table-driven in tests/unit/plugins/module_utils/plan/test_gpu_plan.py;
here: the filter's error handling, and the filter and its documentation through Ansible's own
loader (``ansible`` and ``ansible-doc`` in subprocesses).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import subprocess
import sys

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.gpu_plan import FilterModule

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
COLLECTIONS_PATH = os.path.join(REPO_ROOT, '.cache', 'collections')
DATA = os.path.join(REPO_ROOT, 'tests', 'unit', 'plugins', 'module_utils', 'data')


def _facts(name):
    with open(os.path.join(DATA, name)) as handle:
        return yaml.safe_load(handle)['facts']


def gpu_plan(*args, **kwargs):
    return FilterModule().filters()['gpu_plan'](*args, **kwargs)


def _tool(name):
    path = os.path.join(os.path.dirname(sys.executable), name)
    found = path if os.path.exists(path) else shutil.which(name)
    assert found, '%s is not installed next to %s nor on PATH' % (name, sys.executable)
    return found


def _ansible_env(tmp_path):
    env = dict(os.environ)
    env.update({
        'ANSIBLE_COLLECTIONS_PATH': COLLECTIONS_PATH,
        'ANSIBLE_CONFIG': str(tmp_path / 'ansible.cfg'),  # empty: no project or user settings
        'ANSIBLE_LOCAL_TEMP': str(tmp_path / 'tmp'),
        'ANSIBLE_HOME': str(tmp_path / 'home'),
        'ANSIBLE_STDOUT_CALLBACK': 'json',
        'ANSIBLE_LOAD_CALLBACK_PLUGINS': '1',
        'ANSIBLE_LOCALHOST_WARNING': '0',
        'ANSIBLE_INVENTORY_UNPARSED_WARNING': '0',
        'ANSIBLE_NOCOLOR': '1',
    })
    (tmp_path / 'ansible.cfg').write_text(u'')
    return env


def test_filter_is_registered():
    assert 'gpu_plan' in FilterModule().filters()


def test_plan_is_returned():
    plan = gpu_plan(_facts('plan_hgx_h100.yml'), {'driver_branch': 580})
    assert plan['ok'] is True
    assert plan['fabric_manager']['required'] is True
    assert plan['driver']['branch']['value'] == 580


def test_options_default_to_none():
    plan = gpu_plan(_facts('plan_cpu_only.yml'))
    assert plan['driver']['required'] is False


def test_conflict_fails_naming_the_variable():
    with pytest.raises(AnsibleFilterError) as exc:
        gpu_plan(_facts('plan_hgx_b200.yml'), {'kernel_modules': 'proprietary'})
    message = str(exc.value)
    assert 'nvidia_driver_kernel_modules' in message
    assert 'open or auto' in message


def test_every_conflict_is_in_the_message():
    with pytest.raises(AnsibleFilterError) as exc:
        gpu_plan(_facts('plan_v100.yml'), {'kernel_modules': 'open', 'driver_branch': 590, 'mig': 'enabled'})
    for variable in ('nvidia_driver_kernel_modules', 'nvidia_driver_branch', 'nvidia_driver_mig_mode'):
        assert variable in str(exc.value)


def test_not_strict_returns_the_errors():
    plan = gpu_plan(_facts('plan_hgx_b200.yml'), {'kernel_modules': 'proprietary', 'strict': False})
    assert plan['ok'] is False
    assert [e['variable'] for e in plan['errors']] == ['nvidia_driver_kernel_modules']


@pytest.mark.parametrize('options, text', [
    ({'mig': 'on'}, "(variable nvidia_driver_mig_mode) must be one of auto, enabled, disabled, got 'on'"),
    ({'kernel_module': 'open'}, 'unknown plan option(s) kernel_module'),
    ({'driver_branch': 'latest'}, 'nvidia_driver_branch'),
    ({'strict': 'sometimes'}, "'strict'"),
])
def test_bad_options_fail(options, text):
    with pytest.raises(AnsibleFilterError) as exc:
        gpu_plan(_facts('plan_cpu_only.yml'), options)
    assert text in str(exc.value)


def test_missing_facts_fail_with_the_fix():
    with pytest.raises(AnsibleFilterError, match='run gpuops.dlserver.gpu_facts'):
        gpu_plan(None)


def _run_debug(tmp_path, expression, facts, options):
    with open(str(tmp_path / 'vars.json'), 'w') as handle:
        json.dump({'probe': facts, 'opts': options}, handle)
    result = subprocess.run(
        [_tool('ansible'), 'localhost', '-m', 'ansible.builtin.debug', '-a', 'msg=' + expression,
         '-e', '@' + str(tmp_path / 'vars.json')],
        cwd=str(tmp_path), env=_ansible_env(tmp_path), capture_output=True, text=True, timeout=120, check=False)
    start = result.stdout.find('{')
    assert start >= 0, 'no JSON from ansible (rc %s): %s %s' % (result.returncode, result.stdout, result.stderr)
    return result.returncode, json.loads(result.stdout[start:])['plays'][0]['tasks'][0]['hosts']['localhost']


def test_through_ansible_loader(tmp_path):
    facts = _facts('plan_hgx_b200.yml')
    rc, host = _run_debug(tmp_path, '{{ probe | gpuops.dlserver.gpu_plan(opts) }}', facts, {'driver_branch': '580'})
    assert rc == 0, host
    plan = host['msg']
    assert plan['driver']['kernel_modules']['value'] == 'open'
    assert plan['driver']['branch']['value'] == 580
    assert plan['nvlink_subnet_manager']['required'] is True
    # NVLink 5: no PCI NVSwitch, the switch-management functions are what the role binds NVLSM to
    assert plan['host']['nvswitch_count'] == 0
    mgmt = ['0000:05:00.0', '0000:05:00.1', '0000:06:00.0', '0000:06:00.1']
    assert plan['nvlink_subnet_manager']['mgmt_nics'] == mgmt
    assert plan['imex'] == dict(plan['imex'], required=False, gpus=[])
    assert plan['roles']['gpu_validate']['run'] is True


def test_through_ansible_loader_conflict_fails(tmp_path):
    facts = _facts('plan_hgx_b200.yml')
    rc, host = _run_debug(tmp_path, '{{ probe | gpuops.dlserver.gpu_plan(opts) }}', facts,
                          {'kernel_modules': 'proprietary'})
    assert rc != 0
    assert host.get('failed') is True
    assert 'nvidia_driver_kernel_modules' in host['msg']


def test_ansible_doc_renders(tmp_path):
    result = subprocess.run([_tool('ansible-doc'), '-t', 'filter', 'gpuops.dlserver.gpu_plan'],
                            cwd=str(tmp_path), env=_ansible_env(tmp_path), capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    for text in ('gpuops.dlserver.gpu_plan', 'kernel_modules', 'driver_branch', 'nvlink_subnet_manager',
                 'imex', 'mgmt_nics', 'min_version', 'EXAMPLES', 'RETURN'):
        assert text in result.stdout, text
