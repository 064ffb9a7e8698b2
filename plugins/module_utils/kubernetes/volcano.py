# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the volcano role: every object it applies, rendered and checked before any change.

Pure functions, no I/O. The role reads the cluster (version, nodes, what is installed) and
hands it to build_plan() with its typed inputs; the plan holds every object to apply, the
node label patches, the smoke job and the reasons, or the errors that stop the role before it
changes anything (each naming the role variable to change).

Sources of the tables below (checked when the pinned version changes):

- COMPATIBILITY: Volcano's README, section "Kubernetes compatibility", and its full history in
  docs/ (the "Kubernetes Compatibility Archive") of https://github.com/volcano-sh/volcano.
  Only exact compatibility (the table's check mark) counts as supported.
- SCHEDULER_VOCABULARY: the actions registered in pkg/scheduler/actions/factory.go and the
  plugins registered in pkg/scheduler/plugins/factory.go of the Volcano release (1.13).
- QUEUE_SCHEMA: config/crd/volcano/bases/scheduling.volcano.sh_queues.yaml (spec fields) and
  the queue admission webhook (weight a positive integer; a parent queue for hierarchy, which
  the capacity plugin honours from Volcano 1.11, "elastic hierarchical queues").
- JOB_SCHEMA: batch.volcano.sh/v1alpha1 Job (config/crd/volcano/bases/batch.volcano.sh_jobs.yaml)
  and the job admission webhook (tasks required, unique DNS-1123 task names, replicas >= 0,
  minAvailable <= the sum of replicas), the policy events and actions of
  pkg/apis/batch/v1alpha1 (Event, Action) and the job phases.
- The scheduler reads its configuration from the ConfigMap volcano-scheduler-configmap, key
  volcano-scheduler.conf, in the release's namespace (Helm chart volcano-sh/volcano and the
  release manifest installer/volcano-development.yaml); the Deployment is volcano-scheduler.
- Device plugin: NVIDIA k8s-device-plugin's static DaemonSet (nvidia-device-plugin.yml of
  NVIDIA/k8s-device-plugin): one container nvidia-device-plugin-ctr, hostPath
  /var/lib/kubelet/device-plugins, toleration nvidia.com/gpu:NoSchedule, priority class
  system-node-critical, capabilities dropped.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import hashlib
import json
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain

COMPATIBILITY_SOURCE = 'https://github.com/volcano-sh/volcano#kubernetes-compatibility'

# Volcano minor -> Kubernetes minors it is exactly compatible with (the table's check marks).
COMPATIBILITY = {
    '1.6': ('1.17', '1.18', '1.19', '1.20', '1.21', '1.22', '1.23', '1.24'),
    '1.7': ('1.19', '1.20', '1.21', '1.22', '1.23', '1.24', '1.25', '1.26', '1.27', '1.28'),
    '1.8': ('1.19', '1.20', '1.21', '1.22', '1.23', '1.24', '1.25', '1.26', '1.27', '1.28'),
    '1.9': ('1.21', '1.22', '1.23', '1.24', '1.25', '1.26', '1.27', '1.28', '1.29'),
    '1.10': ('1.21', '1.22', '1.23', '1.24', '1.25', '1.26', '1.27', '1.28', '1.29', '1.30'),
    '1.11': ('1.21', '1.22', '1.23', '1.24', '1.25', '1.26', '1.27', '1.28', '1.29', '1.30', '1.31'),
    '1.12': ('1.21', '1.22', '1.23', '1.24', '1.25', '1.26', '1.27', '1.28', '1.29', '1.30', '1.31',
             '1.32'),
    '1.13': ('1.23', '1.24', '1.25', '1.26', '1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'),
    '1.14': ('1.23', '1.24', '1.25', '1.26', '1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33',
             '1.34'),
}

# The Volcano release the role installs by default (chart version = app version).
PINNED_VERSION = '1.13.0'

# Kubernetes versions whose OpenAPI schemas the collection's tests validate every rendered
# core object against (kubernetes-validate, pinned in requirements/test.txt).
VALIDATED_KUBERNETES = ('1.25', '1.26', '1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33', '1.34')

SCHEDULER_VOCABULARY = {
    '1.13': {
        'actions': ('enqueue', 'allocate', 'backfill', 'preempt', 'reclaim', 'shuffle'),
        'plugins': ('binpack', 'capacity', 'cdp', 'conformance', 'deviceshare', 'drf', 'extender', 'gang',
                    'network-topology-aware', 'nodegroup', 'nodeorder', 'numa-aware', 'overcommit', 'pdb',
                    'predicates', 'priority', 'proportion', 'rescheduling', 'resource-strategy-fit',
                    'resourcequota', 'sla', 'task-topology', 'tdm', 'usage'),
    },
}

# Queue hierarchy (spec.parent, capacity plugin with enableHierarchy) from this Volcano minor.
HIERARCHY_MIN_VERSION = (1, 11)

SCHEDULER_CONFIGMAP = 'volcano-scheduler-configmap'
SCHEDULER_CONFIG_KEY = 'volcano-scheduler.conf'
SCHEDULER_DEPLOYMENT = 'volcano-scheduler'
CHECKSUM_ANNOTATION = 'checksum/scheduler-config'

# Resource names a queue capability may name: the core ones, hugepages, and extended resources
# of device plugins the collection knows (nvidia.com/gpu and the MIG/shared forms).
CORE_RESOURCES = ('cpu', 'memory', 'pods', 'ephemeral-storage')
RESOURCE_PATTERNS = (
    re.compile(r'^hugepages-[0-9]+(Ki|Mi|Gi)$'),
    re.compile(r'^nvidia\.com/gpu(\.shared)?$'),
    re.compile(r'^nvidia\.com/mig-[0-9]+g\.[0-9]+gb(\+me)?$'),
    re.compile(r'^volcano\.sh/vgpu-(number|memory|cores)$'),
)
QUANTITY = re.compile(r'^(\+)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)'
                      r'|(\.[0-9]+))))?$')
DNS1123_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
DNS1123_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')
LABEL_VALUE = re.compile(r'^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$')

# Label prefixes that belong to other tools: the role never writes under them.
FOREIGN_LABEL_PREFIXES = ('nvidia.com', 'feature.node.kubernetes.io', 'kubernetes.io', 'k8s.io',
                          'node.kubernetes.io', 'node-role.kubernetes.io', 'volcano.sh')

JOB_POLICY_EVENTS = ('*', 'PodFailed', 'PodEvicted', 'PodPending', 'PodRunning', 'Unknown', 'TaskCompleted',
                     'TaskFailed')
JOB_POLICY_ACTIONS = ('AbortJob', 'RestartJob', 'RestartTask', 'TerminateJob', 'CompleteJob', 'ResumeJob')
JOB_PHASES = ('Pending', 'Aborting', 'Aborted', 'Running', 'Restarting', 'Completing', 'Completed',
              'Terminating', 'Terminated', 'Failed')
JOB_DONE_PHASES = ('Completed', 'Failed', 'Aborted', 'Terminated')

GPU_OPERATOR_CRD = 'clusterpolicies.nvidia.com'
GPU_OPERATOR_NODE_LABEL = 'nvidia.com/gpu.deploy.device-plugin'


class VolcanoError(ValueError):
    """Bad input: ``errors`` lists one message per problem, each naming the variable."""

    def __init__(self, errors):
        self.errors = list(errors)
        super(VolcanoError, self).__init__('; '.join(self.errors))


# --- versions -------------------------------------------------------------------------------

def parse_version(text, what='version'):
    """'v1.30.4-eks-1' or '1.30' -> (1, 30, 4 or None). Raises ValueError naming ``what``."""
    match = re.match(r'^v?(\d+)\.(\d+)(?:\.(\d+))?', str(text or '').strip())
    if not match:
        raise ValueError('%s %r is not a version like 1.30 or v1.30.4' % (what, text))
    patch = int(match.group(3)) if match.group(3) is not None else None
    return int(match.group(1)), int(match.group(2)), patch


def minor(text, what='version'):
    major, min_, _patch = parse_version(text, what)
    return '%d.%d' % (major, min_)


def _sorted_minors(minors):
    return sorted(minors, key=lambda m: tuple(int(p) for p in m.split('.')))


def check_compatibility(volcano_version, kubernetes_version):
    """Is ``volcano_version`` exactly compatible with the cluster's ``kubernetes_version``?

    Returns {ok, reason, volcano, kubernetes, supported_kubernetes, working_volcano, validated,
    source}; ``working_volcano`` names the Volcano minors that support this cluster.
    """
    vmin = minor(volcano_version, 'volcano_version')
    kmin = minor(kubernetes_version, 'Kubernetes version')
    working = [v for v in _sorted_minors(COMPATIBILITY) if kmin in COMPATIBILITY[v]]
    result = {'volcano': vmin, 'kubernetes': kmin, 'source': COMPATIBILITY_SOURCE,
              'working_volcano': working, 'validated': kmin in VALIDATED_KUBERNETES,
              'supported_kubernetes': list(COMPATIBILITY.get(vmin, ()))}
    if vmin not in COMPATIBILITY:
        result.update(ok=False, reason='Volcano %s is not in the compatibility table (%s); known: %s. '
                      'Set volcano_version to one of them' % (vmin, COMPATIBILITY_SOURCE,
                                                              ', '.join(_sorted_minors(COMPATIBILITY))))
    elif kmin not in COMPATIBILITY[vmin]:
        hint = ('set volcano_version to a release of %s' % ', '.join(working)) if working else (
            'no Volcano release in the table supports Kubernetes %s' % kmin)
        result.update(ok=False, reason='Volcano %s does not support Kubernetes %s (it supports %s; %s): %s'
                      % (vmin, kmin, ', '.join(COMPATIBILITY[vmin]), COMPATIBILITY_SOURCE, hint))
    else:
        result.update(ok=True, reason='Volcano %s supports Kubernetes %s (%s)' % (vmin, kmin, COMPATIBILITY_SOURCE))
    return result


# --- scheduler configuration --------------------------------------------------------------------

def vocabulary(volcano_version):
    vmin = minor(volcano_version, 'volcano_version')
    if vmin not in SCHEDULER_VOCABULARY:
        raise VolcanoError(['volcano_version %s: the collection knows the scheduler actions and plugins of Volcano '
                            '%s only; set volcano_version to a %s.x release'
                            % (volcano_version, ', '.join(sorted(SCHEDULER_VOCABULARY)),
                               ' or '.join(sorted(SCHEDULER_VOCABULARY)))])
    return SCHEDULER_VOCABULARY[vmin]


def scheduler_config_errors(actions, tiers, volcano_version):
    vocab = vocabulary(volcano_version)
    errors = []
    if not isinstance(actions, list) or not actions:
        errors.append('volcano_scheduler_actions must be a non-empty list of actions (%s)'
                      % ', '.join(vocab['actions']))
        actions = []
    seen = set()
    for i, action in enumerate(actions):
        if action not in vocab['actions']:
            errors.append('volcano_scheduler_actions[%d]: unknown action %r; Volcano %s has %s'
                          % (i, action, minor(volcano_version), ', '.join(vocab['actions'])))
        elif action in seen:
            errors.append('volcano_scheduler_actions[%d]: action %r is listed twice' % (i, action))
        seen.add(action)
    if actions and 'allocate' not in actions:
        errors.append('volcano_scheduler_actions: without allocate no pod is ever placed; add allocate')
    if not isinstance(tiers, list) or not tiers:
        errors.append('volcano_scheduler_tiers must be a non-empty list of tiers, each {plugins: [{name: ...}]}')
        tiers = []
    names = set()
    for t, tier in enumerate(tiers):
        plugins = tier.get('plugins') if isinstance(tier, dict) else None
        if not isinstance(plugins, list) or not plugins:
            errors.append('volcano_scheduler_tiers[%d].plugins must be a non-empty list' % t)
            continue
        unknown_keys = sorted(set(tier) - {'plugins'})
        if unknown_keys:
            errors.append('volcano_scheduler_tiers[%d]: unknown keys %s (a tier has only plugins)' % (t, unknown_keys))
        for p, plugin in enumerate(plugins):
            where = 'volcano_scheduler_tiers[%d].plugins[%d]' % (t, p)
            if not isinstance(plugin, dict) or not isinstance(plugin.get('name'), str):
                errors.append('%s must be a dictionary with a name' % where)
                continue
            name = plugin['name']
            if name not in vocab['plugins']:
                errors.append('%s.name: unknown plugin %r; Volcano %s has %s'
                              % (where, name, minor(volcano_version), ', '.join(vocab['plugins'])))
            elif name in names:
                errors.append('%s.name: plugin %r is configured twice' % (where, name))
            names.add(name)
    if 'proportion' in names and 'capacity' in names:
        errors.append('volcano_scheduler_tiers: proportion and capacity both divide queue resources; keep one')
    return errors


def render_scheduler_conf(actions, tiers, configurations=None):
    """The text of volcano-scheduler.conf: stable (sorted keys), so equal input gives equal bytes."""
    conf = {'actions': ', '.join(actions), 'tiers': tiers}
    if configurations:
        conf['configurations'] = configurations
    # JSON is YAML; Volcano's loader (sigs.k8s.io/yaml) reads it. Sorted keys: one checksum per content.
    return json.dumps(conf, indent=2, sort_keys=True) + '\n'


def checksum(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


# --- queues and priority classes ------------------------------------------------------------------

def resource_name_ok(name):
    return name in CORE_RESOURCES or any(p.match(name) for p in RESOURCE_PATTERNS)


def _resource_list_errors(where, resources):
    errors = []
    if not isinstance(resources, dict):
        return ['%s must be a dictionary of resource name -> quantity' % where]
    for name, qty in resources.items():
        if not resource_name_ok(str(name)):
            errors.append('%s: unknown resource name %r (known: %s, hugepages-<size>, nvidia.com/gpu, '
                          'nvidia.com/gpu.shared, nvidia.com/mig-<g>g.<gb>gb)' % (where, name, ', '.join(CORE_RESOURCES)))
        if isinstance(qty, bool) or not QUANTITY.match(str(qty)):
            errors.append('%s.%s: %r is not a non-negative Kubernetes quantity (4, 500m, 64Gi)' % (where, name, qty))
    return errors


QUEUE_KEYS = ('name', 'weight', 'capability', 'deserved', 'guarantee', 'reclaimable', 'parent', 'priority')


def queue_errors(queues, volcano_version):
    errors = []
    if not isinstance(queues, list):
        return ['volcano_queues must be a list of queues']
    names = [q.get('name') for q in queues if isinstance(q, dict)]
    vtuple = parse_version(volcano_version, 'volcano_version')[:2]
    for i, queue in enumerate(queues):
        where = 'volcano_queues[%d]' % i
        if not isinstance(queue, dict):
            errors.append('%s must be a dictionary' % where)
            continue
        unknown = sorted(set(queue) - set(QUEUE_KEYS))
        if unknown:
            errors.append('%s: unknown keys %s (allowed: %s)' % (where, unknown, ', '.join(QUEUE_KEYS)))
        name = queue.get('name')
        if not isinstance(name, str) or not DNS1123_SUBDOMAIN.match(name) or len(name) > 253:
            errors.append('%s.name: %r is not a DNS-1123 name (lower case, digits, -)' % (where, name))
        elif names.count(name) > 1:
            errors.append('%s.name: queue %r is defined twice' % (where, name))
        weight = queue.get('weight', 1)
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1 or weight > 2147483647:
            errors.append('%s.weight: %r must be a positive integer (Volcano refuses weight <= 0)' % (where, weight))
        for key in ('capability', 'deserved'):
            if key in queue:
                errors.extend(_resource_list_errors('%s.%s' % (where, key), queue[key]))
        if 'guarantee' in queue:
            errors.extend(_resource_list_errors('%s.guarantee' % where, queue['guarantee']))
        if 'reclaimable' in queue and not isinstance(queue['reclaimable'], bool):
            errors.append('%s.reclaimable: %r must be true or false' % (where, queue['reclaimable']))
        if 'priority' in queue and (isinstance(queue['priority'], bool) or not isinstance(queue['priority'], int)):
            errors.append('%s.priority: %r must be an integer' % (where, queue['priority']))
        parent = queue.get('parent')
        if parent is not None:
            if vtuple < HIERARCHY_MIN_VERSION:
                errors.append('%s.parent: queue hierarchy needs Volcano %d.%d or later (volcano_version is %s)'
                              % ((where,) + HIERARCHY_MIN_VERSION + (volcano_version,)))
            elif parent != 'root' and parent not in names:
                errors.append('%s.parent: %r is neither root nor a queue of volcano_queues' % (where, parent))
            elif parent == name:
                errors.append('%s.parent: a queue cannot be its own parent' % where)
    return errors


PRIORITY_CLASS_KEYS = ('name', 'value', 'description', 'preemption_policy', 'global_default')


def priority_class_errors(classes):
    errors = []
    if not isinstance(classes, list):
        return ['volcano_priority_classes must be a list']
    names = [c.get('name') for c in classes if isinstance(c, dict)]
    defaults = 0
    for i, pc in enumerate(classes):
        where = 'volcano_priority_classes[%d]' % i
        if not isinstance(pc, dict):
            errors.append('%s must be a dictionary' % where)
            continue
        unknown = sorted(set(pc) - set(PRIORITY_CLASS_KEYS))
        if unknown:
            errors.append('%s: unknown keys %s (allowed: %s)' % (where, unknown, ', '.join(PRIORITY_CLASS_KEYS)))
        name = pc.get('name')
        if not isinstance(name, str) or not DNS1123_SUBDOMAIN.match(name) or name.startswith('system-'):
            errors.append('%s.name: %r must be a DNS-1123 name not starting with system- (reserved)' % (where, name))
        elif names.count(name) > 1:
            errors.append('%s.name: %r is defined twice' % (where, name))
        value = pc.get('value')
        if isinstance(value, bool) or not isinstance(value, int) or not -2147483648 <= value <= 1000000000:
            errors.append('%s.value: %r must be an integer up to 1000000000 (larger values are reserved for '
                          'system classes)' % (where, value))
        if pc.get('preemption_policy', 'PreemptLowerPriority') not in ('PreemptLowerPriority', 'Never'):
            errors.append('%s.preemption_policy: %r must be PreemptLowerPriority or Never'
                          % (where, pc.get('preemption_policy')))
        if pc.get('global_default'):
            defaults += 1
    if defaults > 1:
        errors.append('volcano_priority_classes: only one class may set global_default')
    return errors


def render_queue(queue):
    spec = {'weight': queue.get('weight', 1), 'reclaimable': queue.get('reclaimable', True)}
    for key in ('capability', 'deserved'):
        if queue.get(key):
            spec[key] = dict((str(k), str(v)) for k, v in queue[key].items())
    if queue.get('guarantee'):
        spec['guarantee'] = {'resource': dict((str(k), str(v)) for k, v in queue['guarantee'].items())}
    if queue.get('parent'):
        spec['parent'] = queue['parent']
    if 'priority' in queue:
        spec['priority'] = queue['priority']
    return {'apiVersion': 'scheduling.volcano.sh/v1beta1', 'kind': 'Queue',
            'metadata': {'name': queue['name'], 'labels': {'app.kubernetes.io/managed-by': 'gpuops.dlserver'}},
            'spec': spec}


def render_priority_class(pc):
    obj = {'apiVersion': 'scheduling.k8s.io/v1', 'kind': 'PriorityClass',
           'metadata': {'name': pc['name'], 'labels': {'app.kubernetes.io/managed-by': 'gpuops.dlserver'}},
           'value': pc['value'], 'globalDefault': bool(pc.get('global_default', False)),
           'preemptionPolicy': pc.get('preemption_policy', 'PreemptLowerPriority')}
    if pc.get('description'):
        obj['description'] = pc['description']
    return obj


# --- device plugin ----------------------------------------------------------------------------

def detect_gpu_operator(crds, node_labels, daemonsets):
    """Does NVIDIA's GPU Operator (or another device plugin) already advertise nvidia.com/gpu?

    ``crds``: names of the CustomResourceDefinitions found (the role asks for clusterpolicies.nvidia.com);
    ``node_labels``: list of label dicts of the cluster's nodes; ``daemonsets``: [{name, namespace,
    labels, managed}] of device-plugin DaemonSets found, ``managed`` true for the role's own.
    Returns {present, reason}.
    """
    if GPU_OPERATOR_CRD in (crds or []):
        return {'present': True, 'reason': 'the GPU Operator is installed (CRD %s): it deploys the device plugin'
                % GPU_OPERATOR_CRD}
    labelled = [labels for labels in (node_labels or []) if GPU_OPERATOR_NODE_LABEL in (labels or {})]
    if labelled:
        return {'present': True, 'reason': '%d node(s) carry %s: the GPU Operator manages the device plugin'
                % (len(labelled), GPU_OPERATOR_NODE_LABEL)}
    foreign = [d for d in (daemonsets or []) if not d.get('managed')]
    if foreign:
        return {'present': True, 'reason': 'a device plugin DaemonSet not deployed by this role runs already (%s)'
                % ', '.join('%s/%s' % (d.get('namespace'), d.get('name')) for d in foreign)}
    return {'present': False, 'reason': 'no GPU Operator and no other NVIDIA device plugin found'}


def render_device_plugin(image, namespace, runtime_class, label_prefix, name='nvidia-device-plugin-daemonset'):
    pod_spec = {
        'nodeSelector': {label_prefix + 'gpu.present': 'true'},
        'tolerations': [{'key': 'nvidia.com/gpu', 'operator': 'Exists', 'effect': 'NoSchedule'}],
        'priorityClassName': 'system-node-critical',
        'containers': [{
            'name': 'nvidia-device-plugin-ctr',
            'image': image,
            'env': [{'name': 'FAIL_ON_INIT_ERROR', 'value': 'false'}],
            'securityContext': {'allowPrivilegeEscalation': False, 'capabilities': {'drop': ['ALL']}},
            'volumeMounts': [{'name': 'device-plugin', 'mountPath': '/var/lib/kubelet/device-plugins'}],
        }],
        'volumes': [{'name': 'device-plugin', 'hostPath': {'path': '/var/lib/kubelet/device-plugins'}}],
    }
    if runtime_class:
        pod_spec['runtimeClassName'] = runtime_class
    labels = {'name': 'nvidia-device-plugin-ds', 'app.kubernetes.io/managed-by': 'gpuops.dlserver'}
    return {'apiVersion': 'apps/v1', 'kind': 'DaemonSet',
            'metadata': {'name': name, 'namespace': namespace, 'labels': labels},
            'spec': {'selector': {'matchLabels': {'name': 'nvidia-device-plugin-ds'}},
                     'updateStrategy': {'type': 'RollingUpdate'},
                     'template': {'metadata': {'labels': dict(labels)}, 'spec': pod_spec}}}


def render_runtime_class(name):
    """RuntimeClass ``name`` with handler ``name``: the runtime nvidia_container_toolkit adds to containerd/CRI-O."""
    return {'apiVersion': 'node.k8s.io/v1', 'kind': 'RuntimeClass',
            'metadata': {'name': name, 'labels': {'app.kubernetes.io/managed-by': 'gpuops.dlserver'}},
            'handler': name}


# --- node labels from the probe ---------------------------------------------------------------

def label_prefix_errors(prefix):
    if not isinstance(prefix, str) or not prefix.endswith('/'):
        return ['volcano_node_label_prefix %r must end with / (like dlserver.gpuops.io/)' % (prefix,)]
    domain = prefix[:-1]
    errors = []
    if not DNS1123_SUBDOMAIN.match(domain) or len(domain) > 253:
        errors.append('volcano_node_label_prefix %r: %r is not a DNS subdomain' % (prefix, domain))
    for foreign in FOREIGN_LABEL_PREFIXES:
        if domain == foreign or domain.endswith('.' + foreign):
            errors.append('volcano_node_label_prefix %r belongs to another tool (%s); choose your own domain'
                          % (prefix, foreign))
    return errors


def label_value(text):
    """A label value from free text, the way GPU Feature Discovery writes gpu.product: spaces -> '-'."""
    value = re.sub(r'[^A-Za-z0-9_.-]+', '-', str(text)).strip('-_.')
    return value[:63].rstrip('-_.')


def _one_or_mixed(values):
    values = [v for v in values if v not in (None, '')]
    if not values:
        return None
    return values[0] if len(set(values)) == 1 else 'mixed'


def node_labels(gpu_facts, prefix):
    """Labels (under ``prefix``) from one host's ``gpuops_gpu`` facts; {} for a host without GPUs.

    Returns (labels, reason). Values are strings, as Kubernetes wants them.
    """
    gpus = (gpu_facts or {}).get('gpus') or []
    if not gpus:
        return {}, 'no NVIDIA GPU on this host: no GPU labels'
    memory = []
    for gpu in gpus:
        if gpu.get('memory_total_mib'):
            memory.append(int(gpu['memory_total_mib']))
        elif gpu.get('memory_gb'):
            memory.append(int(gpu['memory_gb']) * 1024)
    nvswitch = bool(gpu_facts.get('nvswitch_count')) or any(g.get('nvswitch_baseboard') for g in gpus)
    nvlink = nvswitch or any((g.get('nvlink_active_count') or 0) > 0 for g in gpus)
    if not nvlink:
        matrix = ((gpu_facts.get('topology') or {}).get('matrix') or {})
        nvlink = any(str(code).startswith('NV') for row in matrix.values() for code in (row or {}).values())
    product = _one_or_mixed([g.get('name') or g.get('pci_name') for g in gpus])
    labels = {
        'gpu.present': 'true',
        'gpu.count': str(len(gpus)),
        'gpu.architecture': _one_or_mixed([g.get('architecture') for g in gpus]) or 'unknown',
        'gpu.product': label_value(product) if product else 'unknown',
        'nvlink': 'true' if nvlink else 'false',
        'nvswitch': 'true' if nvswitch else 'false',
        'mig.capable': 'true' if all(g.get('mig_capable') for g in gpus) else 'false',
        'probe.source': str(gpu_facts.get('source') or 'unknown'),
    }
    if memory:
        labels['gpu.memory-mib'] = str(min(memory))
    capability = _one_or_mixed([g.get('compute_capability') for g in gpus])
    if capability:
        labels['gpu.compute-capability'] = capability
    prefixed = dict((prefix + k, v) for k, v in labels.items())
    reason = '%d GPU(s) (%s, %s), probed at depth %s' % (len(gpus), labels['gpu.product'],
                                                         labels['gpu.architecture'], labels['probe.source'])
    return prefixed, reason


def match_node(host, host_facts, nodes, explicit):
    """The Kubernetes node name of inventory ``host``, or None. ``nodes``: [{name, labels}]."""
    if host in (explicit or {}):
        wanted = explicit[host]
        return wanted if any(n['name'] == wanted for n in nodes) else None
    candidates = [host, (host_facts or {}).get('fqdn'), (host_facts or {}).get('hostname'),
                  (host_facts or {}).get('nodename'), host.split('.')[0]]
    for candidate in [c for c in candidates if c]:
        for node in nodes:
            if node['name'] == candidate or (node.get('labels') or {}).get('kubernetes.io/hostname') == candidate:
                return node['name']
    return None


def label_patches(hosts, nodes, prefix, explicit=None):
    """Label patches for every node an inventory host maps to.

    ``hosts``: {inventory_hostname: {'gpu': gpuops_gpu or None, 'facts': {hostname, fqdn, nodename}}};
    ``nodes``: [{name, labels}] from the cluster. Labels under ``prefix`` that a node has but should
    not (a GPU removed, a CPU node) are removed (value null); labels of other prefixes are never in a
    patch. Returns {patches: [{node, host, labels, reason}], unmatched: [host], unprobed: [host]}.
    """
    patches, unmatched, unprobed = [], [], []
    for host in sorted(hosts):
        info = hosts[host] or {}
        node = match_node(host, info.get('facts'), nodes, explicit)
        if node is None:
            unmatched.append(host)
            continue
        if info.get('gpu') is None:
            unprobed.append(host)
            continue
        wanted, reason = node_labels(info['gpu'], prefix)
        current = next(n.get('labels') or {} for n in nodes if n['name'] == node)
        change = dict((k, v) for k, v in wanted.items() if current.get(k) != v)
        for key in current:
            if key.startswith(prefix) and key not in wanted:
                change[key] = None
        patches.append({'node': node, 'host': host, 'labels': wanted, 'change': change, 'reason': reason})
    return {'patches': patches, 'unmatched': unmatched, 'unprobed': unprobed}


def render_label_patch(patch):
    return {'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': patch['node'], 'labels': patch['change']}}


# --- smoke job --------------------------------------------------------------------------------

def allocatable_gpus(nodes):
    total = 0
    for node in nodes or []:
        raw = str((node.get('allocatable') or {}).get('nvidia.com/gpu', '0'))
        total += int(raw) if raw.isdigit() else 0
    return total


def smoke_plan(requested_workers, nodes, probed_gpus=0):
    """How many workers the gang smoke job has: {run, workers, reason}. 0 requested = auto (up to 4).

    GPUs count from what the nodes advertise (nvidia.com/gpu allocatable) or, before a device
    plugin deployed in this run has started, from the probe's GPU count of the labelled nodes.
    """
    advertised = allocatable_gpus(nodes)
    available = advertised or probed_gpus
    source = ('%d nvidia.com/gpu allocatable' % advertised) if advertised else (
        '%d GPU(s) probed on the labelled nodes, none advertised yet' % probed_gpus)
    if requested_workers == 0:
        workers = min(4, available)
        if workers == 0:
            return {'run': False, 'workers': 0,
                    'reason': 'no node advertises nvidia.com/gpu and no labelled node has a GPU: nothing to '
                              'gang-schedule'}
        return {'run': True, 'workers': workers, 'reason': "%s: a gang of %d (the seeds' shape is 4)"
                % (source, workers)}
    if requested_workers > available:
        return {'run': False, 'workers': requested_workers, 'error': True,
                'reason': 'volcano_smoke_workers is %d but the cluster has %s: the gang could never start; '
                          'lower volcano_smoke_workers or set it to 0 (auto)' % (requested_workers, source)}
    return {'run': True, 'workers': requested_workers, 'reason': '%d worker(s) requested, %s'
            % (requested_workers, source)}


def render_smoke_job(name, namespace, queue, workers, image, command, priority_class=None, runtime_class=None):
    """The seeds' job: minAvailable N, N worker replicas, one nvidia.com/gpu each."""
    pod = {'restartPolicy': 'Never',
           'tolerations': [{'key': 'nvidia.com/gpu', 'operator': 'Exists', 'effect': 'NoSchedule'}],
           'containers': [{'name': 'worker', 'image': image, 'command': list(command),
                           'resources': {'limits': {'nvidia.com/gpu': 1}}}]}
    if runtime_class:
        pod['runtimeClassName'] = runtime_class
    spec = {'schedulerName': 'volcano', 'queue': queue, 'minAvailable': workers, 'maxRetry': 1,
            'ttlSecondsAfterFinished': 600,
            'policies': [{'event': 'PodEvicted', 'action': 'RestartJob'}],
            'tasks': [{'name': 'worker', 'replicas': workers,
                       'policies': [{'event': 'TaskCompleted', 'action': 'CompleteJob'}],
                       'template': {'metadata': {'labels': {'app.kubernetes.io/managed-by': 'gpuops.dlserver'}},
                                    'spec': pod}}]}
    if priority_class:
        spec['priorityClassName'] = priority_class
    return {'apiVersion': 'batch.volcano.sh/v1alpha1', 'kind': 'Job',
            'metadata': {'name': name, 'namespace': namespace,
                         'labels': {'app.kubernetes.io/managed-by': 'gpuops.dlserver'}},
            'spec': spec}


def smoke_result(job, workers, timeout):
    """The facts the role returns from the job it read last: {passed, phase, reason, ...}."""
    status = (job or {}).get('status') or {}
    phase = (status.get('state') or {}).get('phase') or 'Unknown'
    counts = dict((k, int(status.get(k) or 0)) for k in ('pending', 'running', 'succeeded', 'failed'))
    passed = phase == 'Completed' and counts['succeeded'] >= workers
    if passed:
        reason = 'all %d worker(s) of the gang ran together and succeeded' % workers
    elif phase in JOB_DONE_PHASES:
        reason = 'the job ended %s (%d succeeded, %d failed of %d)' % (
            phase, counts['succeeded'], counts['failed'], workers)
    else:
        reason = ('the job was still %s after %d s (%d pending, %d running of %d): the gang could not be placed '
                  'together' % (phase, timeout, counts['pending'], counts['running'], workers))
    result = {'passed': passed, 'phase': phase, 'workers': workers, 'reason': reason}
    result.update(counts)
    return result


# --- validation of Volcano objects (the pinned version's required fields and enums) ----------------

def _qty_ok(value):
    return not isinstance(value, bool) and bool(QUANTITY.match(str(value)))


def validate_volcano_object(obj, volcano_version=PINNED_VERSION):
    """Errors of a Queue or Job against what the Volcano release's CRD and webhooks require."""
    vocabulary(volcano_version)
    errors = []
    kind = obj.get('kind')
    meta = obj.get('metadata') or {}
    if not isinstance(meta.get('name'), str) or not DNS1123_SUBDOMAIN.match(meta.get('name') or ''):
        errors.append('metadata.name: %r is not a DNS-1123 name' % meta.get('name'))
    spec = obj.get('spec')
    if not isinstance(spec, dict):
        return errors + ['spec: required']
    if kind == 'Queue':
        if obj.get('apiVersion') != 'scheduling.volcano.sh/v1beta1':
            errors.append('apiVersion: Queue is scheduling.volcano.sh/v1beta1')
        allowed = {'weight', 'capability', 'deserved', 'guarantee', 'reclaimable', 'parent', 'priority', 'affinity',
                   'extendClusters', 'type'}
        errors.extend('spec.%s: not a Queue field' % k for k in sorted(set(spec) - allowed))
        weight = spec.get('weight')
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
            errors.append('spec.weight: %r must be a positive integer' % weight)
        for key in ('capability', 'deserved'):
            for name, value in (spec.get(key) or {}).items():
                if not _qty_ok(value):
                    errors.append('spec.%s.%s: %r is not a quantity' % (key, name, value))
        for name, value in ((spec.get('guarantee') or {}).get('resource') or {}).items():
            if not _qty_ok(value):
                errors.append('spec.guarantee.resource.%s: %r is not a quantity' % (name, value))
        if 'reclaimable' in spec and not isinstance(spec['reclaimable'], bool):
            errors.append('spec.reclaimable: must be a boolean')
        if 'parent' in spec and parse_version(volcano_version)[:2] < HIERARCHY_MIN_VERSION:
            errors.append('spec.parent: needs Volcano 1.11 or later')
    elif kind == 'Job':
        if obj.get('apiVersion') != 'batch.volcano.sh/v1alpha1':
            errors.append('apiVersion: Job is batch.volcano.sh/v1alpha1')
        if not isinstance(meta.get('namespace'), str) or not DNS1123_LABEL.match(meta.get('namespace') or ''):
            errors.append('metadata.namespace: %r is not a namespace name' % meta.get('namespace'))
        tasks = spec.get('tasks')
        if not isinstance(tasks, list) or not tasks:
            errors.append('spec.tasks: required, at least one task')
            tasks = []
        total = 0
        names = []
        for i, task in enumerate(tasks):
            name = task.get('name')
            if not isinstance(name, str) or not DNS1123_LABEL.match(name):
                errors.append('spec.tasks[%d].name: %r is not a DNS-1123 label' % (i, name))
            elif name in names:
                errors.append('spec.tasks[%d].name: %r is not unique' % (i, name))
            names.append(name)
            replicas = task.get('replicas')
            if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
                errors.append('spec.tasks[%d].replicas: %r must be an integer >= 0' % (i, replicas))
            else:
                total += replicas
            template = task.get('template')
            if not isinstance(template, dict) or not (template.get('spec') or {}).get('containers'):
                errors.append('spec.tasks[%d].template.spec.containers: required' % i)
            errors.extend(_policy_errors('spec.tasks[%d].policies' % i, task.get('policies')))
        min_available = spec.get('minAvailable', total)
        if isinstance(min_available, bool) or not isinstance(min_available, int) or min_available < 0:
            errors.append('spec.minAvailable: %r must be an integer >= 0' % min_available)
        elif min_available > total:
            errors.append('spec.minAvailable: %d is more than the %d replicas of all tasks' % (min_available, total))
        if not isinstance(spec.get('queue', 'default'), str) or not spec.get('queue', 'default'):
            errors.append('spec.queue: must name a queue')
        if spec.get('schedulerName', 'volcano') != 'volcano':
            errors.append('spec.schedulerName: %r - a Volcano Job is gang-scheduled only by volcano'
                          % spec.get('schedulerName'))
        errors.extend(_policy_errors('spec.policies', spec.get('policies')))
    else:
        errors.append('kind: %r is not a Volcano kind the collection renders (Queue, Job)' % kind)
    return errors


def _policy_errors(where, policies):
    errors = []
    for i, policy in enumerate(policies or []):
        if policy.get('event') is not None and policy['event'] not in JOB_POLICY_EVENTS:
            errors.append('%s[%d].event: %r is not one of %s' % (where, i, policy['event'], ', '.join(JOB_POLICY_EVENTS)))
        if policy.get('action') not in JOB_POLICY_ACTIONS:
            errors.append('%s[%d].action: %r is not one of %s' % (where, i, policy.get('action'),
                                                                  ', '.join(JOB_POLICY_ACTIONS)))
    return errors


# --- the whole plan -------------------------------------------------------------------------

INSTALL_METHODS = ('helm', 'manifest')


def input_errors(inputs):
    """Every problem with the role's typed inputs, before the cluster is read."""
    errors = []
    try:
        vocabulary(inputs['version'])
    except VolcanoError as exc:
        return list(exc.errors)
    except ValueError as exc:
        return ['volcano_version: %s' % exc]
    errors.extend(scheduler_config_errors(inputs['scheduler_actions'], inputs['scheduler_tiers'], inputs['version']))
    errors.extend(queue_errors(inputs['queues'], inputs['version']))
    errors.extend(priority_class_errors(inputs['priority_classes']))
    errors.extend(label_prefix_errors(inputs['node_label_prefix']))
    if not DNS1123_LABEL.match(inputs['namespace'] or ''):
        errors.append('volcano_namespace %r is not a namespace name' % inputs['namespace'])
    if inputs['install_method'] == 'manifest':
        src = inputs['manifest_src']
        if not src:
            errors.append('volcano_manifest_src: set the release manifest URL or file for volcano_install_method: '
                          'manifest')
        elif src.startswith(('http://', 'https://')) and not inputs['manifest_checksum']:
            errors.append('volcano_manifest_checksum: a manifest downloaded from %s needs its checksum '
                          '(sha256:<hex>)' % src)
    queue_names = [q.get('name') for q in inputs['queues'] if isinstance(q, dict)] + ['default']
    if inputs['smoke_job'] and inputs['smoke_queue'] not in queue_names:
        errors.append('volcano_smoke_queue %r is neither default nor a queue of volcano_queues' % inputs['smoke_queue'])
    if inputs['smoke_workers'] < 0:
        errors.append('volcano_smoke_workers %d must be 0 (auto) or more' % inputs['smoke_workers'])
    return errors


def build_plan(inputs, cluster):
    """Everything the role applies, from its typed inputs and what it read of the cluster.

    ``cluster``: {version, nodes: [{name, labels, allocatable}], crds: [..], device_plugin_daemonsets: [..],
    hosts: {inventory_hostname: {gpu, facts}}}. Raises VolcanoError with every problem at once.
    """
    errors = input_errors(inputs)
    if errors:
        raise VolcanoError(errors)
    compat = check_compatibility(inputs['version'], cluster['version'])
    if not compat['ok']:
        raise VolcanoError(['volcano_version: %s' % compat['reason']])
    warnings = []
    if not compat['validated']:
        warnings.append('Kubernetes %s is supported by Volcano %s, but the collection validates its objects against '
                        'Kubernetes %s only' % (compat['kubernetes'], compat['volcano'], ', '.join(VALIDATED_KUBERNETES)))
    conf = render_scheduler_conf(inputs['scheduler_actions'], inputs['scheduler_tiers'],
                                 inputs.get('scheduler_configurations'))
    digest = checksum(conf)
    configmap = {'apiVersion': 'v1', 'kind': 'ConfigMap',
                 'metadata': {'name': SCHEDULER_CONFIGMAP, 'namespace': inputs['namespace']},
                 'data': {SCHEDULER_CONFIG_KEY: conf}}
    rollout = {'apiVersion': 'apps/v1', 'kind': 'Deployment',
               'metadata': {'name': SCHEDULER_DEPLOYMENT, 'namespace': inputs['namespace']},
               'spec': {'template': {'metadata': {'annotations': {CHECKSUM_ANNOTATION: digest}}}}}
    prefix = inputs['node_label_prefix']
    operator = detect_gpu_operator(cluster.get('crds'), [n.get('labels') for n in cluster.get('nodes', [])],
                                   cluster.get('device_plugin_daemonsets'))
    mode = inputs['device_plugin']
    if mode == 'never':
        device_plugin = {'deploy': False, 'reason': 'volcano_device_plugin is never'}
    elif mode == 'always':
        device_plugin = {'deploy': True, 'reason': 'volcano_device_plugin is always (%s)' % operator['reason']}
    else:
        device_plugin = {'deploy': not operator['present'], 'reason': operator['reason']}
    device_objects = []
    if device_plugin['deploy']:
        if inputs['device_plugin_runtime_class']:
            device_objects.append(render_runtime_class(inputs['device_plugin_runtime_class']))
        device_objects.append(render_device_plugin(inputs['device_plugin_image'], inputs['device_plugin_namespace'],
                                                   inputs['device_plugin_runtime_class'], prefix))
    labels = label_patches(cluster.get('hosts') or {}, cluster.get('nodes') or [], prefix, inputs['node_names'])
    for host in labels['unmatched']:
        warnings.append('inventory host %s matches no Kubernetes node; map it in volcano_node_names' % host)
    smoke = {'run': False, 'workers': 0, 'reason': 'volcano_smoke_job is false'}
    smoke_job = None
    if inputs['smoke_job']:
        probed = sum(int(p['labels'].get(prefix + 'gpu.count', 0)) for p in labels['patches'])
        smoke = smoke_plan(inputs['smoke_workers'], cluster.get('nodes'), probed)
        if smoke.get('error'):
            raise VolcanoError([smoke['reason']])
        if smoke['run']:
            smoke_job = render_smoke_job(inputs['smoke_name'], inputs['smoke_namespace'], inputs['smoke_queue'],
                                         smoke['workers'], inputs['smoke_image'], inputs['smoke_command'],
                                         runtime_class=inputs['device_plugin_runtime_class'])
    plan = {
        'compatibility': compat,
        'warnings': warnings,
        'scheduler': {'configmap': configmap, 'rollout': rollout, 'checksum': digest},
        'queues': [render_queue(q) for q in inputs['queues']],
        'priority_classes': [render_priority_class(pc) for pc in inputs['priority_classes']],
        'device_plugin': dict(device_plugin, objects=device_objects),
        'labels': dict(labels, objects=[render_label_patch(p) for p in labels['patches'] if p['change']]),
        'smoke': dict(smoke, job=smoke_job),
    }
    problems = []
    for obj in plan['queues'] + ([smoke_job] if smoke_job else []):
        problems.extend('%s %s: %s' % (obj['kind'], obj['metadata']['name'], e)
                        for e in validate_volcano_object(obj, inputs['version']))
    if problems:
        raise VolcanoError(problems)
    return plan


def core_objects(plan):
    """The Kubernetes core objects of a plan (validated against the OpenAPI schemas by the tests).

    Label patches are merge patches (a null value removes a stale label); what is validated is
    the node with the labels it ends up with.
    """
    objects = [plan['scheduler']['configmap']]
    objects += plan['priority_classes'] + plan['device_plugin']['objects']
    objects += [{'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': p['node'], 'labels': p['labels']}}
                for p in plan['labels']['patches']]
    return [copy.deepcopy(o) for o in objects]


def nodes_from_resources(resources):
    """[{name, labels, allocatable}] from the Node objects kubernetes.core.k8s_info returned."""
    nodes = []
    for res in resources or []:
        meta = res.get('metadata') or {}
        nodes.append({'name': meta.get('name'), 'labels': dict(meta.get('labels') or {}),
                      'allocatable': dict((res.get('status') or {}).get('allocatable') or {})})
    return nodes


def daemonsets_from_resources(resources):
    out = []
    for res in resources or []:
        meta = res.get('metadata') or {}
        labels = meta.get('labels') or {}
        out.append({'name': meta.get('name'), 'namespace': meta.get('namespace'), 'labels': dict(labels),
                    'managed': labels.get('app.kubernetes.io/managed-by') == 'gpuops.dlserver'})
    return out


def manifest_objects(documents, namespace, scheduler_config_exists):
    """The release manifest's objects to apply. Once the scheduler ConfigMap exists, the
    manifest's copy is left out: the role writes that ConfigMap itself, and re-applying the
    release's default would undo it on every run (and roll the scheduler twice)."""
    objects = []
    for doc in documents or []:
        if not isinstance(doc, dict) or not doc.get('kind'):
            continue
        meta = doc.get('metadata') or {}
        if (scheduler_config_exists and doc['kind'] == 'ConfigMap' and meta.get('name') == SCHEDULER_CONFIGMAP
                and meta.get('namespace', namespace) == namespace):
            continue
        objects.append(doc)
    return objects


def pod_templates(plan):
    """The smoke job's pod templates as Pods, so that the core schema checks them too."""
    job = plan['smoke']['job']
    if not job:
        return []
    return [{'apiVersion': 'v1', 'kind': 'Pod',
             'metadata': dict(copy.deepcopy(task['template'].get('metadata') or {}),
                              name='%s-%s-0' % (job['metadata']['name'], task['name']),
                              namespace=job['metadata']['namespace']),
             'spec': copy.deepcopy(task['template']['spec'])} for task in job['spec']['tasks']]


def volcano_objects(plan):
    return [copy.deepcopy(o) for o in plan['queues'] + ([plan['smoke']['job']] if plan['smoke']['job'] else [])]


# Shared by the volcano filters (plugins/filter/volcano_*.py).
def hosts_view(hosts, hostvars):
    out = {}
    for host in hosts or []:
        hv = hostvars[host] if host in hostvars else {}
        facts = hv.get('ansible_facts') or {}
        out[str(host)] = {
            'gpu': plain(hv.get('gpuops_gpu')) if hv.get('gpuops_gpu') is not None else None,
            'facts': {'hostname': facts.get('hostname'), 'fqdn': facts.get('fqdn'), 'nodename': facts.get('nodename')},
        }
    return out
