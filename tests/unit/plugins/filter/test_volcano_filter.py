# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpuops.dlserver.__private.volcano_plan filter through Ansible itself: the role's typed inputs
(role_inputs), hostvars of probed inventory hosts, what k8s_info would return - and bad input
failing the play, naming the variable, before any task could apply anything."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.__private.volcano_plan import volcano_plan
from ansible_collections.gpuops.dlserver.plugins.filter.__private.volcano_smoke_result import volcano_smoke_result

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))
sys.path[0:0] = [os.path.join(REPO_ROOT, 'tests', 'render')]
import volcano_validate  # noqa: E402

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - gpuops.dlserver.__private.role_inputs:
        role: volcano
      register: result
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: >-
          {{ result.inputs | gpuops.dlserver.__private.volcano_plan(cluster_info, nodes, [], [], groups['gpu_nodes'], hostvars)
             | to_json }}
"""


@pytest.fixture(scope='module')
def probed():
    return volcano_validate.fixture_hosts()


def _run(tmp_path, probed, extra=None):
    inventory = {'all': {'hosts': {'localhost': {'ansible_connection': 'local',
                                                 'ansible_python_interpreter': sys.executable}},
                         'children': {'gpu_nodes': {'hosts': {
                             'gpu-a.example.internal': {'__common_probe': {'ansible_facts': {'gpuops_gpu': probed['hgx-h100-8gpu']['gpu']}}},
                             'cpu-b': {'__common_probe': {'ansible_facts': {'gpuops_gpu': probed['cpu-only']['gpu']}}}}}}}}
    (tmp_path / 'inv.yml').write_text(yaml.safe_dump(inventory))
    (tmp_path / 'play.yml').write_text(PLAYBOOK)
    variables = {
        'out': str(tmp_path / 'plan.json'),
        'cluster_info': {'version': {'server': {'kubernetes': {'gitVersion': 'v1.30.4', 'major': '1', 'minor': '30'}}}},
        'nodes': [{'metadata': {'name': 'gpu-a', 'labels': {'kubernetes.io/hostname': 'gpu-a'}},
                   'status': {'allocatable': {'nvidia.com/gpu': '8'}}},
                  {'metadata': {'name': 'cpu-b', 'labels': {}}, 'status': {'allocatable': {}}}],
    }
    variables.update(extra or {})
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO_ROOT, '.cache', 'collections'),
               ANSIBLE_HOST_KEY_CHECKING='false', ANSIBLE_NOCOLOR='1')
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i',
                           str(tmp_path / 'inv.yml'), str(tmp_path / 'play.yml'), '-e', json.dumps(variables)],
                          capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=300, check=False)
    return proc


def test_plan_through_ansible(tmp_path, probed):
    proc = _run(tmp_path, probed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = json.loads((tmp_path / 'plan.json').read_text())
    patches = dict((p['node'], p) for p in plan['labels']['patches'])
    assert patches['gpu-a']['labels']['dlserver.gpuops.io/gpu.product'] == 'NVIDIA-H100-80GB-HBM3'
    assert patches['cpu-b']['labels'] == {}
    assert plan['smoke']['job']['spec']['minAvailable'] == 4
    assert plan['compatibility']['ok'] is True


def test_bad_input_fails_the_play_naming_the_variables(tmp_path, probed):
    proc = _run(tmp_path, probed, {'volcano_queues': [{'name': 'a', 'weight': -1}],
                                   'volcano_scheduler_actions': ['enqueue', 'allocate', 'schedule']})
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0
    # refused by role_inputs' registry of input checks (core/input_checks.py) before the plan
    assert 'bad input, nothing was changed' in text
    assert 'volcano_queues[0].weight' in text and 'volcano_scheduler_actions[2]' in text
    assert not (tmp_path / 'plan.json').exists()


def test_unsupported_kubernetes_fails_naming_releases(tmp_path, probed):
    proc = _run(tmp_path, probed, {'cluster_info': {'version': {'server': {'kubernetes': {'gitVersion': 'v1.34.1'}}}}})
    assert proc.returncode != 0
    assert 'Volcano 1.13 does not support Kubernetes 1.34' in proc.stdout + proc.stderr


def test_filter_errors_are_filter_errors():
    with pytest.raises(AnsibleFilterError, match='volcano_version'):
        volcano_plan({'version': 'latest'}, {})


def test_smoke_result_reads_k8s_info_output():
    read = {'resources': [{'status': {'state': {'phase': 'Completed'}, 'succeeded': 4}}]}
    assert volcano_smoke_result(read, 4, 600)['passed'] is True
    assert volcano_smoke_result({'resources': []}, 4, 600)['passed'] is False
    assert volcano_smoke_result({}, 2, 30)['reason'].startswith('the job was still Unknown after 30 s')
