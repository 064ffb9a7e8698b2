# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the volcano role: every object it applies, rendered and checked before any change.

Pure functions, no I/O. The role reads the cluster (version, nodes, what is installed) and
hands it to build_plan() with its typed inputs; the plan holds every object to apply, the
node label patches, the smoke job and the reasons, or the errors that stop the role before it
changes anything (each naming the role variable to change). input_errors() checks every input
before the cluster is contacted and before anything is applied.

By concern: volcano_tables.py (tables and their sources, versions), volcano_scheduling.py
(scheduler configuration, queues, priority classes, Volcano object checks), volcano_gpu.py
(device plugin, node labels, smoke job); this file builds the whole plan, and its names are
the API of the volcano filters and tests (everything above is importable from here).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.run_state import probe_of
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano_inputs import access_errors
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano_tables import (  # noqa: F401  pylint: disable=unused-import
    CHECKSUM_ANNOTATION, COMPATIBILITY, COMPATIBILITY_SOURCE, CORE_RESOURCES, DNS1123_LABEL, DNS1123_SUBDOMAIN,
    FOREIGN_LABEL_PREFIXES, GPU_OPERATOR_CRD, GPU_OPERATOR_NODE_LABEL, HIERARCHY_MIN_VERSION, JOB_DONE_PHASES,
    JOB_PHASES, JOB_POLICY_ACTIONS, JOB_POLICY_EVENTS, LABEL_VALUE, PINNED_VERSION, QUANTITY, RESOURCE_PATTERNS,
    SCHEDULER_CONFIG_KEY, SCHEDULER_CONFIGMAP, SCHEDULER_DEPLOYMENT, SCHEDULER_VOCABULARY, VALIDATED_KUBERNETES,
    VOLCANO_VERSION, IMAGE_REFERENCE, CHART_REF, CHART_REPO_URL, MANIFEST_CHECKSUM, VolcanoError, check_compatibility,
    minor, parse_version, volcano_version_errors,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano_scheduling import (  # noqa: F401  pylint: disable=unused-import
    QUEUE_KEYS, PRIORITY_CLASS_KEYS, checksum, priority_class_errors, queue_errors, render_priority_class,
    render_queue, render_scheduler_conf, resource_name_ok, scheduler_config_errors, validate_volcano_object,
    vocabulary,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano_gpu import (  # noqa: F401  pylint: disable=unused-import
    allocatable_gpus, detect_gpu_operator, label_patches, label_prefix_errors, label_value, match_node,
    node_labels, render_device_plugin, render_label_patch, render_runtime_class, render_smoke_job, smoke_plan,
    smoke_result,
)


# --- the whole plan -------------------------------------------------------------------------

INSTALL_METHODS = ('helm', 'manifest')


def _name_errors(inputs, checks):
    """``checks``: (key, pattern, what); an error naming volcano_<key> for each value that is no such name."""
    errors = []
    for key, pattern, what in checks:
        value = inputs.get(key)
        if not isinstance(value, str) or not pattern.match(value):
            errors.append('volcano_%s %r is not %s' % (key, value, what))
    return errors


def _whole(pattern, value):
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def input_errors(inputs):
    """Every problem with the role's typed inputs, before the cluster is read and before anything
    is applied: the values that reach Helm, the manifest, the device plugin, the smoke job and the
    waits included (each matched whole, so a newline or a second word is refused)."""
    errors = volcano_version_errors(inputs['version'])
    if errors:
        return errors
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
    label = 'a DNS-1123 label (lower case letters, digits and -, at most 63)'
    errors.extend(_name_errors(inputs, (
        ('namespace', DNS1123_LABEL, 'a namespace name (%s)' % label),
        ('device_plugin_namespace', DNS1123_LABEL, 'a namespace name (%s)' % label),
        ('smoke_namespace', DNS1123_LABEL, 'a namespace name (%s)' % label),
        ('smoke_name', DNS1123_LABEL, 'a Volcano job name (%s)' % label),
    )))
    for key in ('namespace', 'device_plugin_namespace', 'smoke_namespace', 'smoke_name'):
        if isinstance(inputs.get(key), str) and len(inputs[key]) > 63:
            errors.append('volcano_%s %r is longer than 63 characters' % (key, inputs[key]))
    runtime_class = inputs.get('device_plugin_runtime_class')
    if runtime_class and not (isinstance(runtime_class, str) and _whole(DNS1123_LABEL, runtime_class)
                              and len(runtime_class) <= 63):
        errors.append('volcano_device_plugin_runtime_class %r is not a RuntimeClass handler name (%s), or empty'
                      % (runtime_class, label))
    for key in ('device_plugin_image', 'smoke_image'):
        if not _whole(IMAGE_REFERENCE, inputs.get(key)):
            errors.append('volcano_%s %r is not an image reference such as registry/path:tag or '
                          'registry/path@sha256:<digest>' % (key, inputs.get(key)))
    if inputs['install_method'] == 'helm':
        if not _whole(CHART_REF, inputs.get('chart_ref')):
            errors.append('volcano_chart_ref %r is not a chart reference (repo/name, a path or oci://...; one word)'
                          % (inputs.get('chart_ref'),))
        if inputs.get('chart_repo_url') and not _whole(CHART_REPO_URL, inputs['chart_repo_url']):
            errors.append('volcano_chart_repo_url %r is not an http(s) URL' % (inputs['chart_repo_url'],))
    for key in ('wait_timeout', 'smoke_timeout'):
        value = inputs.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            errors.append('volcano_%s %r must be a number of seconds above 0' % (key, value))
    if inputs['install_method'] == 'manifest':
        src = inputs['manifest_src']
        if not src:
            errors.append('volcano_manifest_src: set the release manifest URL or file for volcano_install_method: '
                          'manifest')
        elif src.startswith(('http://', 'https://')) and not inputs['manifest_checksum']:
            errors.append('volcano_manifest_checksum: a manifest downloaded from %s needs its checksum '
                          '(sha256:<hex>)' % src)
        if inputs['manifest_checksum'] and not _whole(MANIFEST_CHECKSUM, inputs['manifest_checksum']):
            errors.append('volcano_manifest_checksum %r is not sha256:<64 hex digits>' % (inputs['manifest_checksum'],))
    queue_names = [q.get('name') for q in inputs['queues'] if isinstance(q, dict)] + ['default']
    if inputs['smoke_job'] and inputs['smoke_queue'] not in queue_names:
        errors.append('volcano_smoke_queue %r is neither default nor a queue of volcano_queues' % inputs['smoke_queue'])
    if inputs['smoke_workers'] < 0:
        errors.append('volcano_smoke_workers %d must be 0 (auto) or more' % inputs['smoke_workers'])
    errors.extend(access_errors(inputs))
    return errors


def build_plan(inputs, cluster):
    """Everything the role applies, from its typed inputs and what it read of the cluster.

    ``cluster``: {version, nodes: [{name, labels, allocatable}], crds: [..], device_plugin_daemonsets: [..],
    hosts: {inventory_hostname: {gpu, facts}}}. Raises VolcanoError with every problem at once.
    """
    # ``inputs`` passed input_errors in the registry of input checks (core/input_checks.py), run on
    # the controller by the role's preflight before this plan: what is checked here needs the cluster.
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
    # what the status file records: the cluster's labelled nodes after this run, and the warnings
    # about the cluster - not the hosts this run covered (a --limit would rewrite it otherwise)
    labels['labelled_after'] = labelled_after(cluster.get('nodes') or [], labels['patches'], prefix)
    cluster_warnings = list(warnings)
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
        'cluster_warnings': cluster_warnings,
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


def labelled_after(nodes, patches, prefix):
    """The nodes of the cluster that carry labels under ``prefix`` once ``patches`` (label_patches'
    ``change``: a None value removes a label) are applied, sorted: the cluster's state, the same
    whichever inventory hosts the run covered."""
    change = dict((p['node'], p.get('change') or {}) for p in patches or [])
    out = []
    for node in nodes or []:
        labels = dict(node.get('labels') or {})
        for key, value in change.get(node.get('name'), {}).items():
            if value is None:
                labels.pop(key, None)
            else:
                labels[key] = value
        if any(str(key).startswith(prefix) for key in labels):
            out.append(node.get('name'))
    return sorted(out)


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
    release's default would undo it on every run (and roll the scheduler twice). A document
    that is not a Kubernetes object (a string, metadata that is not a mapping) is the role's
    error naming volcano_manifest_src, before anything is applied."""
    objects = []
    errors = []
    for index, doc in enumerate(documents or [], 1):
        if doc is None:
            continue
        if not isinstance(doc, dict):
            errors.append('document %d is not a mapping (%s)' % (index, type(doc).__name__))
            continue
        if not doc.get('kind'):
            continue
        if not isinstance(doc['kind'], str):
            errors.append('document %d: kind is not a string' % index)
            continue
        meta = doc.get('metadata')
        if meta is None:
            meta = {}
        if not isinstance(meta, dict):
            errors.append('document %d (%s): metadata is not a mapping' % (index, doc['kind']))
            continue
        if (scheduler_config_exists and doc['kind'] == 'ConfigMap' and meta.get('name') == SCHEDULER_CONFIGMAP
                and meta.get('namespace', namespace) == namespace):
            continue
        objects.append(doc)
    if errors:
        raise VolcanoError(['volcano_manifest_src: %s' % e for e in errors])
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
    """{host: {gpu, facts}} of the GPU hosts to label: ``gpu`` is the GPU facts of the host's probe in
    this run (``__common_probe``, the registered result of gpu_facts: never a fact from a cache or
    an earlier run). ValueError names a host without one, and what to do."""
    out = {}
    for host in hosts or []:
        hv = hostvars[host] if host in hostvars else {}
        facts = hv.get('ansible_facts') or {}
        gpu = probe_of(plain(hv.get('__common_probe')))
        if gpu is None:
            raise ValueError('volcano: host %s has no probe in this run (__common_probe, the GPU facts its node labels '
                             'come from): include %s in the run (playbooks/volcano.yml\'s first play probes every '
                             'host of the run), or take it out of volcano_gpu_group' % (host, host))
        out[str(host)] = {
            'gpu': gpu,
            'facts': {'hostname': facts.get('hostname'), 'fqdn': facts.get('fqdn'), 'nodename': facts.get('nodename')},
        }
    return out
