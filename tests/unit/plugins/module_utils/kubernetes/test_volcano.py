# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the volcano role (plugins/module_utils/kubernetes/volcano.py), from data/volcano_*.yml,
and validation of every object it renders (tests/render/volcano_validate.py): core objects
against Kubernetes' OpenAPI schemas for each supported version, Volcano objects against the
pinned release's rules - with bad objects that must fail."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os
import sys

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes import volcano

HERE = os.path.dirname(os.path.dirname(__file__))
TESTS = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
sys.path[0:0] = [os.path.join(TESTS, 'render'), os.path.join(TESTS, 'fixtures')]
import build_sysfs  # noqa: E402
import volcano_validate  # noqa: E402


def _load(name):
    with open(os.path.join(HERE, 'data', name)) as handle:
        return yaml.safe_load(handle)


CASES = _load('volcano_cases.yml')
LABELS = _load('volcano_labels.yml')


def _ids(cases, key='name'):
    return [str(c.get(key, i)) for i, c in enumerate(cases)]


def _check_errors(errors, case):
    if case.get('ok'):
        assert errors == []
    else:
        assert errors, 'expected an error'
        for text in case['errors_contain']:
            assert any(text in e for e in errors), '%r not in %r' % (text, errors)


@pytest.mark.parametrize('case', CASES['compatibility'], ids=lambda c: '%s-on-%s' % (c['volcano'], c['kubernetes']))
def test_compatibility(case):
    result = volcano.check_compatibility(case['volcano'], case['kubernetes'])
    assert result['ok'] is case['ok']
    assert result['source'] == volcano.COMPATIBILITY_SOURCE
    if 'working' in case:
        assert result['working_volcano'] == case['working']
    for text in case.get('reason_contains', []):
        assert text in result['reason']


def test_compatibility_table_shape():
    for vmin, kubes in volcano.COMPATIBILITY.items():
        minors = [int(k.split('.')[1]) for k in kubes]
        assert minors == list(range(minors[0], minors[-1] + 1)), '%s: gaps in %s' % (vmin, kubes)
    assert volcano.minor(volcano.PINNED_VERSION) in volcano.SCHEDULER_VOCABULARY


@pytest.mark.parametrize('case', CASES['scheduler'], ids=_ids(CASES['scheduler']))
def test_scheduler_config(case):
    _check_errors(volcano.scheduler_config_errors(case['actions'], case['tiers'], volcano.PINNED_VERSION), case)


def test_scheduler_conf_is_stable_and_keeps_plugin_options():
    tiers = [{'plugins': [{'name': 'gang', 'enablePreemptable': False}, {'name': 'priority'}]}]
    one = volcano.render_scheduler_conf(['enqueue', 'allocate'], tiers)
    two = volcano.render_scheduler_conf(['enqueue', 'allocate'], copy.deepcopy(tiers))
    assert one == two and volcano.checksum(one) == volcano.checksum(two)
    conf = yaml.safe_load(one)
    assert conf == {'actions': 'enqueue, allocate', 'tiers': tiers}
    changed = volcano.render_scheduler_conf(['enqueue', 'allocate', 'backfill'], tiers)
    assert volcano.checksum(changed) != volcano.checksum(one)


def test_unknown_version_vocabulary_names_the_variable():
    with pytest.raises(volcano.VolcanoError, match='volcano_version 1.15.1'):
        volcano.scheduler_config_errors(['allocate'], [{'plugins': [{'name': 'gang'}]}], '1.15.1')


def test_every_compatible_release_has_its_scheduler_vocabulary():
    # what the role installs (COMPATIBILITY) is what it can check a scheduler configuration for
    assert set(volcano.SCHEDULER_VOCABULARY) == set(volcano.COMPATIBILITY)


@pytest.mark.parametrize('version, plugin, known', [
    ('1.8.3', 'capacity', False), ('1.9.0', 'capacity', True), ('1.11.2', 'network-topology-aware', False),
    ('1.12.4', 'network-topology-aware', True), ('1.12.4', 'resource-strategy-fit', False),
    ('1.13.0', 'resource-strategy-fit', True), ('1.6.0', 'cdp', False), ('1.7.0', 'cdp', True),
])
def test_a_plugin_is_checked_against_the_release_that_runs_it(version, plugin, known):
    errors = volcano.scheduler_config_errors(['allocate'], [{'plugins': [{'name': plugin}]}], version)
    assert (not errors) is known, errors
    if not known:
        assert any(plugin in e for e in errors), errors


@pytest.mark.parametrize('case', CASES['queues'], ids=_ids(CASES['queues']))
def test_queues(case):
    _check_errors(volcano.queue_errors(case['queues'], case.get('version', volcano.PINNED_VERSION)), case)


@pytest.mark.parametrize('case', CASES['priority_classes'], ids=_ids(CASES['priority_classes']))
def test_priority_classes(case):
    _check_errors(volcano.priority_class_errors(case['classes']), case)


@pytest.mark.parametrize('case', CASES['label_prefix'], ids=_ids(CASES['label_prefix'], 'prefix'))
def test_label_prefix(case):
    _check_errors(volcano.label_prefix_errors(case['prefix']), case)


@pytest.mark.parametrize('case', CASES['smoke'], ids=lambda c: 'req%d-alloc%s-probed%d' % (
    c['requested'], c['allocatable'], c['probed']))
def test_smoke_plan(case):
    nodes = [{'name': 'n%d' % i, 'allocatable': {'nvidia.com/gpu': str(g)}} for i, g in enumerate(case['allocatable'])]
    plan = volcano.smoke_plan(case['requested'], nodes, case['probed'])
    assert (plan['run'], plan['workers']) == (case['run'], case['workers'])
    assert bool(plan.get('error')) is bool(case.get('error'))
    assert case.get('reason_contains', '') in plan['reason']


@pytest.mark.parametrize('case', CASES['smoke_result'], ids=lambda c: str(((c['job'] or {}).get('status') or {})))
def test_smoke_result(case):
    result = volcano.smoke_result(case['job'], case['workers'], 600)
    assert result['passed'] is case['passed']
    assert case.get('reason_contains', '') in result['reason']


@pytest.mark.parametrize('case', CASES['operator'], ids=lambda c: str(sorted(c)))
def test_gpu_operator_detection(case):
    result = volcano.detect_gpu_operator(case.get('crds'), case.get('node_labels'), case.get('daemonsets'))
    assert result['present'] is case['present']
    assert case.get('reason_contains', '') in result['reason']


# --- labels from every host fixture ------------------------------------------------------------

@pytest.fixture(scope='module')
def probed():
    return volcano_validate.fixture_hosts()


def test_every_fixture_host_has_expected_labels():
    assert sorted(LABELS['hosts']) == sorted(build_sysfs.host_names())


@pytest.mark.parametrize('host', sorted(LABELS['hosts']))
def test_labels_at_nvml_depth(probed, host):
    labels, reason = volcano.node_labels(probed[host]['gpu'], LABELS['prefix'])
    expected = dict((LABELS['prefix'] + k, v) for k, v in LABELS['hosts'][host]['nvml'].items())
    assert labels == expected, reason
    for key, value in labels.items():
        assert key.startswith(LABELS['prefix']) and isinstance(value, str)
        assert volcano.LABEL_VALUE.match(value) and len(value) <= 63


@pytest.mark.parametrize('host', sorted(LABELS['hosts']))
def test_labels_at_pci_depth(host, tmp_path, monkeypatch):
    from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.gpu_probe import probe
    monkeypatch.setitem(sys.modules, 'pynvml', None)
    build_sysfs.build(build_sysfs.load_spec(build_sysfs.host_dir(host)), str(tmp_path / 'sys'))
    facts = probe(sysfs_root=str(tmp_path / 'sys'), procfs_root=str(tmp_path / 'proc'),
                  pci_ids_path=str(tmp_path / 'none'), get_bin_path=lambda name: None)
    labels, _reason = volcano.node_labels(facts, LABELS['prefix'])
    want = LABELS['hosts'][host]['pci']
    if not want:
        assert labels == {}
    for key, value in want.items():
        assert labels[LABELS['prefix'] + key] == value
    assert LABELS['prefix'] + 'gpu.compute-capability' not in labels


def test_label_patches_leave_other_tools_alone_and_remove_stale_labels(probed):
    prefix = LABELS['prefix']
    nodes = [
        {'name': 'gpu-1', 'labels': {'kubernetes.io/hostname': 'gpu-1', 'nvidia.com/gpu.product': 'GFD-value',
                                     prefix + 'gpu.count': '4', prefix + 'old-label': 'x'}},
        {'name': 'cpu-1', 'labels': {'kubernetes.io/hostname': 'cpu-1', prefix + 'gpu.present': 'true'}},
        {'name': 'other', 'labels': {}},
    ]
    hosts = {'gpu-1.example': {'gpu': probed['hgx-h100-8gpu']['gpu'], 'facts': {'hostname': 'gpu-1'}},
             'cpu-1': {'gpu': probed['cpu-only']['gpu'], 'facts': {}},
             'lost': {'gpu': probed['v100-2gpu']['gpu'], 'facts': {'hostname': 'lost'}}}
    result = volcano.label_patches(hosts, nodes, prefix)
    by_node = dict((p['node'], p) for p in result['patches'])
    assert result['unmatched'] == ['lost']
    assert by_node['gpu-1']['change'][prefix + 'gpu.count'] == '8'
    assert by_node['gpu-1']['change'][prefix + 'old-label'] is None
    assert not any(k.startswith('nvidia.com/') for p in result['patches'] for k in p['change'])
    assert by_node['cpu-1']['change'] == {prefix + 'gpu.present': None}
    # A second run against the labelled nodes changes nothing.
    nodes[0]['labels'] = dict((k, v) for k, v in nodes[0]['labels'].items() if not k.startswith(prefix))
    nodes[0]['labels'].update(by_node['gpu-1']['labels'])
    nodes[1]['labels'] = {'kubernetes.io/hostname': 'cpu-1'}
    again = volcano.label_patches(hosts, nodes, prefix)
    assert [p['change'] for p in again['patches']] == [{}, {}]


def test_explicit_node_names():
    nodes = [{'name': 'worker-07', 'labels': {}}]
    assert volcano.match_node('gpu-hgx-01', {}, nodes, {'gpu-hgx-01': 'worker-07'}) == 'worker-07'
    assert volcano.match_node('gpu-hgx-01', {}, nodes, {'gpu-hgx-01': 'missing'}) is None


# --- the whole plan, rendered and validated ---------------------------------------------------------

def _cluster(probed, version='1.30'):
    return volcano_validate.fixture_cluster(version, probed)


def test_the_registry_refuses_bad_input_naming_every_field_before_the_plan():
    # the role's preflight runs the registry of input checks (core/input_checks.py) before the
    # cluster is read; build_plan does not check the inputs again
    inputs = volcano_validate.default_inputs()
    inputs['scheduler_actions'] = ['enqueue', 'allocate', 'shedule']
    inputs['queues'] = [{'name': 'a', 'weight': -2, 'capability': {'nvidia.com/gpus': 1}}]
    text = '; '.join(input_checks.problems('volcano', inputs, 'main', {}))
    for field in ('volcano_scheduler_actions[2]', 'volcano_queues[0].weight', 'volcano_queues[0].capability'):
        assert field in text


def test_plan_refuses_unsupported_kubernetes_naming_working_versions(probed):
    with pytest.raises(volcano.VolcanoError, match=r'volcano_version: Volcano 1.13 does not support Kubernetes 1.34.*1.14'):
        volcano.build_plan(volcano_validate.default_inputs(), _cluster(probed, '1.34'))


def test_plan_device_plugin_left_to_gpu_operator(probed):
    cluster = _cluster(probed)
    cluster['crds'] = [volcano.GPU_OPERATOR_CRD]
    plan = volcano.build_plan(volcano_validate.default_inputs(), cluster)
    assert plan['device_plugin']['deploy'] is False and plan['device_plugin']['objects'] == []
    inputs = volcano_validate.default_inputs()
    inputs['device_plugin'] = 'always'
    assert volcano.build_plan(inputs, cluster)['device_plugin']['deploy'] is True


def test_plan_smoke_job_has_the_seeds_shape(probed):
    plan = volcano.build_plan(volcano_validate.default_inputs(), _cluster(probed))
    job = plan['smoke']['job']
    assert job['spec']['minAvailable'] == 4 and job['spec']['schedulerName'] == 'volcano'
    (task,) = job['spec']['tasks']
    assert task['replicas'] == 4
    assert task['template']['spec']['containers'][0]['resources']['limits'] == {'nvidia.com/gpu': 1}
    assert task['template']['spec']['runtimeClassName'] == 'nvidia'
    assert sorted(p['node'] for p in plan['labels']['patches']) == sorted(probed)
    assert [p['labels'] for p in plan['labels']['patches'] if p['node'] == 'cpu-only'] == [{}]


@pytest.mark.parametrize('version', volcano_validate.kubernetes_versions())
@pytest.mark.parametrize('variant', ['defaults', 'rich'])
def test_every_rendered_object_validates(probed, version, variant):
    inputs = volcano_validate.default_inputs() if variant == 'defaults' else volcano_validate.rich_inputs()
    plan = volcano.build_plan(inputs, _cluster(probed, version))
    kinds = sorted(set(o['kind'] for o in volcano.core_objects(plan) + volcano.volcano_objects(plan)))
    expected = ['ConfigMap', 'DaemonSet', 'Job', 'Node', 'PriorityClass', 'Queue']
    if variant == 'defaults':
        expected.append('RuntimeClass')
    assert kinds == sorted(expected)
    assert volcano_validate.validate_plan(plan, version) == []


def test_supported_versions_are_validated():
    assert volcano_validate.kubernetes_versions() == [
        v for v in volcano.COMPATIBILITY['1.13'] if v not in ('1.23', '1.24')]


BAD_CORE = [
    ('DaemonSet without a selector', lambda p: p['device_plugin']['objects'][-1]['spec'].pop('selector'),
     'selector'),
    ('misspelt pod field', lambda p: p['device_plugin']['objects'][-1]['spec']['template']['spec'].update(
        {'tolerationz': []}), 'tolerationz'),
    ('ConfigMap data not a string', lambda p: p['scheduler']['configmap']['data'].update({'x': 1}), 'string'),
    ('PriorityClass without value', lambda p: p['priority_classes'][0].pop('value'), 'value'),
    ('label value not a string', lambda p: p['labels']['patches'][0]['labels'].update({'a/b': 3}), 'string'),
    ('smoke pod restartPolicy not a string', lambda p: p['smoke']['job']['spec']['tasks'][0]['template']['spec'].update(
        {'restartPolicy': 0}), "0 is not of type 'string'"),
    ('smoke container without a name', lambda p: p['smoke']['job']['spec']['tasks'][0]['template']['spec'][
        'containers'][0].pop('name'), 'name'),
]


@pytest.mark.parametrize('name,mutate,needle', BAD_CORE, ids=[b[0] for b in BAD_CORE])
def test_bad_core_objects_fail_validation(probed, name, mutate, needle):
    plan = volcano.build_plan(volcano_validate.default_inputs(), _cluster(probed))
    mutate(plan)
    errors = volcano_validate.validate_plan(plan, '1.30')
    assert errors and any(needle in e for e in errors), errors


BAD_VOLCANO = [
    ('queue weight 0', lambda j, q: q['spec'].update({'weight': 0}), 'spec.weight'),
    ('queue unknown field', lambda j, q: q['spec'].update({'capacity': {}}), 'spec.capacity: not a Queue field'),
    ('queue quantity', lambda j, q: q['spec'].update({'capability': {'cpu': 'lots'}}), 'spec.capability.cpu'),
    ('job minAvailable over replicas', lambda j, q: j['spec'].update({'minAvailable': 5}), 'spec.minAvailable'),
    ('job without tasks', lambda j, q: j['spec'].update({'tasks': []}), 'spec.tasks'),
    ('job bad policy action', lambda j, q: j['spec']['policies'][0].update({'action': 'Reboot'}),
     "spec.policies[0].action: 'Reboot'"),
    ('job bad event', lambda j, q: j['spec']['tasks'][0]['policies'][0].update({'event': 'Done'}),
     "spec.tasks[0].policies[0].event: 'Done'"),
    ('job other scheduler', lambda j, q: j['spec'].update({'schedulerName': 'default-scheduler'}),
     'spec.schedulerName'),
    ('job duplicate task', lambda j, q: j['spec']['tasks'].append(copy.deepcopy(j['spec']['tasks'][0])),
     'is not unique'),
]


@pytest.mark.parametrize('name,mutate,needle', BAD_VOLCANO, ids=[b[0] for b in BAD_VOLCANO])
def test_bad_volcano_objects_fail_validation(probed, name, mutate, needle):
    plan = volcano.build_plan(volcano_validate.default_inputs(), _cluster(probed))
    mutate(plan['smoke']['job'], plan['queues'][0])
    errors = volcano_validate.validate_plan(plan, '1.30')
    assert errors and any(needle in e for e in errors), errors


def test_render_validate_script_passes():
    assert volcano_validate.main() == 0


def test_manifest_objects_leave_the_scheduler_configmap_to_the_role_once_it_exists():
    docs = [None, {'kind': 'Namespace', 'metadata': {'name': 'volcano-system'}},
            {'kind': 'ConfigMap', 'metadata': {'name': 'volcano-scheduler-configmap', 'namespace': 'volcano-system'}},
            {'kind': 'ConfigMap', 'metadata': {'name': 'volcano-admission-configmap', 'namespace': 'volcano-system'}}]
    first = volcano.manifest_objects(docs, 'volcano-system', False)
    assert [d['metadata']['name'] for d in first] == ['volcano-system', 'volcano-scheduler-configmap',
                                                      'volcano-admission-configmap']
    later = volcano.manifest_objects(docs, 'volcano-system', True)
    assert [d['metadata']['name'] for d in later] == ['volcano-system', 'volcano-admission-configmap']


# --- every input checked before anything is applied (issue 19) ---------------------------------------

@pytest.mark.parametrize('field, value, needle', [
    ('version', '1.13.0 --post-renderer /tmp/x', 'volcano_version'),
    ('version', '1.13.0\n', 'volcano_version'),
    ('version', '1.13.0;id', 'volcano_version'),
    ('version', '1.13', 'volcano_version'),
    ('version', 'v1.13.0', 'volcano_version'),
    ('device_plugin_namespace', 'Kube System', 'volcano_device_plugin_namespace'),
    ('device_plugin_namespace', 'kube-system\n', 'volcano_device_plugin_namespace'),
    ('device_plugin_namespace', '', 'volcano_device_plugin_namespace'),
    ('device_plugin_runtime_class', 'Nvidia Runtime', 'volcano_device_plugin_runtime_class'),
    ('device_plugin_runtime_class', 'nvidia\n', 'volcano_device_plugin_runtime_class'),
    ('device_plugin_image', 'nvcr.io/nvidia/k8s-device-plugin:v0.17.1 --privileged', 'volcano_device_plugin_image'),
    ('device_plugin_image', 'nvcr.io/nvidia/k8s-device-plugin:v0.17.1\n', 'volcano_device_plugin_image'),
    ('device_plugin_image', '', 'volcano_device_plugin_image'),
    ('smoke_image', 'cuda:12 && rm -rf /', 'volcano_smoke_image'),
    ('smoke_image', 'NVCR.io/Nvidia/CUDA', 'volcano_smoke_image'),
    ('wait_timeout', -5, 'volcano_wait_timeout'),
    ('wait_timeout', 0, 'volcano_wait_timeout'),
    ('smoke_timeout', -1, 'volcano_smoke_timeout'),
    ('smoke_name', 'Smoke Job', 'volcano_smoke_name'),
    ('smoke_namespace', 'default\n', 'volcano_smoke_namespace'),
    ('namespace', 'volcano-system\n', 'volcano_namespace'),
    ('chart_ref', 'volcano-sh/volcano --post-renderer /tmp/x', 'volcano_chart_ref'),
    ('chart_repo_url', 'https://charts.example\n', 'volcano_chart_repo_url'),
])
def test_every_input_is_checked_before_anything_is_applied(field, value, needle):
    inputs = volcano_validate.default_inputs()
    inputs[field] = value
    errors = volcano.input_errors(inputs)
    assert [e for e in errors if needle in e], errors


@pytest.mark.parametrize('field, value', [
    ('version', '1.13.0'),
    ('version', '1.13.1'),
    ('device_plugin_runtime_class', ''),
    ('device_plugin_image', 'registry.local:5000/nvidia/k8s-device-plugin:v0.17.1'),
    ('device_plugin_image', 'nvcr.io/nvidia/k8s-device-plugin@sha256:' + 'a' * 64),
    ('device_plugin_image', 'nvcr.io/nvidia/k8s-device-plugin:v0.17.1@sha256:' + '0' * 64),
    ('smoke_image', 'busybox'),
    ('smoke_timeout', 1),
])
def test_good_inputs_pass(field, value):
    inputs = volcano_validate.default_inputs()
    inputs[field] = value
    assert volcano.input_errors(inputs) == []


def test_the_defaults_pass():
    assert volcano.input_errors(volcano_validate.default_inputs()) == []


@pytest.mark.parametrize('doc, needle', [
    ({'kind': 'ConfigMap', 'metadata': 'volcano-scheduler-configmap'}, 'metadata is not a mapping'),
    ({'kind': 'ConfigMap', 'metadata': ['x']}, 'metadata is not a mapping'),
    ({'kind': ['ConfigMap'], 'metadata': {}}, 'kind is not a string'),
    ('just text', 'not a mapping'),
])
def test_a_malformed_manifest_is_the_roles_error(doc, needle):
    with pytest.raises(volcano.VolcanoError, match=r'volcano_manifest_src: document 2\b.*' + needle):
        volcano.manifest_objects([{'kind': 'Namespace', 'metadata': {'name': 'v'}}, doc], 'volcano-system', True)


def test_the_status_record_is_the_same_with_or_without_limit(probed):
    """Issue 34: a canary-then-rest workflow is never changed=0 when a status file records the hosts
    of the run. The record is the cluster's: labelled nodes after the run, warnings about the cluster."""
    cluster = _cluster(probed)
    whole = volcano.build_plan(volcano_validate.default_inputs(), cluster)
    labelled = whole['labels']['labelled_after']
    # the nodes as the whole run leaves them
    after = copy.deepcopy(cluster)
    by_node = dict((p['node'], p) for p in whole['labels']['patches'])
    for node in after['nodes']:
        for key, value in by_node.get(node['name'], {}).get('change', {}).items():
            if value is None:
                node['labels'].pop(key, None)
            else:
                node['labels'][key] = value
    # then a run limited to one host, and one with a host that matches no node
    one = dict(sorted(after['hosts'].items())[:1])
    limited = dict(after, hosts=dict(one, lost={'gpu': None, 'facts': {'hostname': 'lost'}}))
    plan = volcano.build_plan(volcano_validate.default_inputs(), limited)
    assert plan['labels']['labelled_after'] == labelled
    assert [p['node'] for p in plan['labels']['patches']] == sorted(one)
    assert any('inventory host lost matches no Kubernetes node' in w for w in plan['warnings'])
    assert plan['cluster_warnings'] == whole['cluster_warnings']
    assert not any('lost' in w for w in plan['cluster_warnings'])


def test_labelled_after_applies_the_patches():
    nodes = [{'name': 'a', 'labels': {'p/gpu.count': '4'}}, {'name': 'b', 'labels': {'other': 'x'}},
             {'name': 'c', 'labels': {}}]
    patches = [{'node': 'a', 'change': {'p/gpu.count': None}}, {'node': 'b', 'change': {'p/gpu.present': 'true'}}]
    assert volcano.labelled_after(nodes, patches, 'p/') == ['b']
    assert volcano.labelled_after(nodes, [], 'p/') == ['a']
