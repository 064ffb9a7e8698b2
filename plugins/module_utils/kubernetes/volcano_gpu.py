# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUs on the cluster: the NVIDIA device plugin (unless the GPU Operator runs one), the node
labels from the collection's probe, and the gang smoke job that proves GPU pods schedule.

Part of the volcano decisions (kubernetes/volcano.py builds the plan; sources in volcano_tables.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano_tables import (
    DNS1123_SUBDOMAIN, FOREIGN_LABEL_PREFIXES, GPU_OPERATOR_CRD, GPU_OPERATOR_NODE_LABEL, JOB_DONE_PHASES,
)


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
