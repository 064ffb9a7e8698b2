# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render every object the volcano role would apply and validate it (the `make test` stage).

- core objects (ConfigMap, PriorityClass, RuntimeClass, DaemonSet, Node label patches, and the
  smoke job's pod template as a Pod) against
  Kubernetes' OpenAPI schemas with the pinned kubernetes-validate package, for EACH Kubernetes
  version the pinned Volcano release supports and the package has schemas for;
- Volcano objects (Queue, Job) against the required fields and enums of the pinned release
  (plugins/module_utils/kubernetes/volcano.py: validate_volcano_object).

The inputs are the role's defaults plus a variant with every optional field used; the nodes
are every host fixture under tests/fixtures/hosts, probed as gpu_facts would probe them.
Exit status 1 when any object is invalid. Usage: python tests/render/volcano_validate.py
"""

from __future__ import absolute_import, division, print_function

import copy
import os
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path[0:0] = [os.path.join(REPO, '.cache', 'collections'), os.path.join(REPO, 'tests', 'unit'),
                 os.path.join(REPO, 'tests', 'fixtures')]

import kubernetes_validate  # noqa: E402  pylint: disable=wrong-import-position
from kubernetes_validate.utils import ValidationError  # noqa: E402

from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes import volcano  # noqa: E402

DEFAULTS = os.path.join(REPO, 'roles', 'volcano', 'defaults', 'main.yml')


def default_inputs():
    with open(DEFAULTS) as handle:
        data = yaml.safe_load(handle)
    return dict((k[len('volcano_'):], v) for k, v in data.items())


def rich_inputs():
    """Every optional field in use: capability with GPUs, hierarchy, guarantee, capacity plugin."""
    inputs = default_inputs()
    inputs['scheduler_actions'] = ['enqueue', 'allocate', 'preempt', 'reclaim', 'backfill']
    inputs['scheduler_tiers'] = [
        {'plugins': [{'name': 'priority'}, {'name': 'gang', 'enablePreemptable': False}, {'name': 'conformance'}]},
        {'plugins': [{'name': 'drf'}, {'name': 'predicates'}, {'name': 'capacity', 'enableHierarchy': True},
                     {'name': 'nodeorder'}, {'name': 'binpack', 'arguments': {'binpack.weight': 10}}]}]
    inputs['queues'] = [
        {'name': 'research', 'weight': 2, 'parent': 'root', 'deserved': {'nvidia.com/gpu': 16, 'cpu': '256'},
         'capability': {'nvidia.com/gpu': 32, 'memory': '2Ti'}},
        {'name': 'llm-training', 'weight': 4, 'parent': 'research', 'reclaimable': False, 'priority': 10,
         'guarantee': {'nvidia.com/gpu': 8}, 'capability': {'nvidia.com/gpu': 24, 'hugepages-1Gi': '64Gi'}},
    ]
    inputs['smoke_queue'] = 'llm-training'
    inputs['smoke_workers'] = 4
    inputs['device_plugin_runtime_class'] = ''
    return inputs


def fixture_hosts():
    """{host: {'gpu': gpuops_gpu, 'facts': {...}}} for every fixture host, probed like gpu_facts does."""
    import build_sysfs  # pylint: disable=import-outside-toplevel
    import fake_pynvml  # pylint: disable=import-outside-toplevel
    from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.gpu_probe import probe  # noqa
    hosts = {}
    saved = sys.modules.get('pynvml')
    base = tempfile.mkdtemp(prefix='volcano-fixtures-')
    try:
        for host in build_sysfs.host_names():
            root = os.path.join(base, host)
            build_sysfs.build(build_sysfs.load_spec(build_sysfs.host_dir(host)), root)
            has_nvml = os.path.exists(os.path.join(build_sysfs.host_dir(host), 'nvml.json'))
            sys.modules['pynvml'] = fake_pynvml.from_host(host) if has_nvml else None
            facts = probe(sysfs_root=root, procfs_root=os.path.join(root, 'proc'),
                          pci_ids_path=os.path.join(base, 'no-pci.ids'), get_bin_path=lambda name: None)
            hosts[host] = {'gpu': facts, 'facts': {'hostname': host}}
    finally:
        if saved is None:
            sys.modules.pop('pynvml', None)
        else:
            sys.modules['pynvml'] = saved
    return hosts


def fixture_cluster(kubernetes_version, hosts):
    nodes = [{'name': h, 'labels': {'kubernetes.io/hostname': h, 'nvidia.com/gpu.product': 'left-alone'},
              'allocatable': {'nvidia.com/gpu': str((hosts[h]['gpu'] or {}).get('gpu_count', 0))}} for h in sorted(hosts)]
    return {'version': 'v%s.4' % kubernetes_version, 'nodes': nodes, 'crds': [], 'device_plugin_daemonsets': [],
            'hosts': copy.deepcopy(hosts)}


def validate_core(obj, kubernetes_version):
    try:
        kubernetes_validate.validate(obj, kubernetes_version, strict=True)
    except ValidationError as exc:
        name = (obj.get('metadata') or {}).get('name')
        return ['%s %s (Kubernetes %s): %s' % (obj.get('kind'), name, kubernetes_version, str(exc).splitlines()[0])]
    return []


def kubernetes_versions(volcano_version=volcano.PINNED_VERSION):
    supported = volcano.COMPATIBILITY[volcano.minor(volcano_version)]
    return [v for v in supported if v in volcano.VALIDATED_KUBERNETES]


def validate_plan(plan, kubernetes_version, volcano_version=volcano.PINNED_VERSION):
    errors = []
    for obj in volcano.core_objects(plan) + volcano.pod_templates(plan):
        errors.extend(validate_core(obj, kubernetes_version + '.0'))
    for obj in volcano.volcano_objects(plan):
        errors.extend('%s %s: %s' % (obj['kind'], obj['metadata']['name'], e)
                      for e in volcano.validate_volcano_object(obj, volcano_version))
    return errors


def main():
    hosts = fixture_hosts()
    failures, checked = [], 0
    versions = kubernetes_versions()
    for name, inputs in (('defaults', default_inputs()), ('rich', rich_inputs())):
        for version in versions:
            plan = volcano.build_plan(inputs, fixture_cluster(version, hosts))
            errors = validate_plan(plan, version)
            checked += len(volcano.core_objects(plan) + volcano.pod_templates(plan) + volcano.volcano_objects(plan))
            failures.extend('%s inputs: %s' % (name, e) for e in errors)
    unvalidated = [v for v in volcano.COMPATIBILITY[volcano.minor(volcano.PINNED_VERSION)] if v not in versions]
    print('volcano %s: %d object renderings validated against Kubernetes %s (OpenAPI, kubernetes-validate %s)'
          % (volcano.PINNED_VERSION, checked, ', '.join(versions), kubernetes_validate.__version__))
    if unvalidated:
        print('supported by Volcano %s but without schemas in kubernetes-validate: Kubernetes %s'
              % (volcano.PINNED_VERSION, ', '.join(unvalidated)))
    for failure in failures:
        print('INVALID ' + failure)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
