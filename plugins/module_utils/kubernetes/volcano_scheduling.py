# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Volcano's own objects: the scheduler configuration, queues and priority classes, and the
checks of Volcano objects (queues, jobs) against the pinned release's required fields and enums.

Part of the volcano decisions (kubernetes/volcano.py builds the plan; sources in volcano_tables.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json

from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano_tables import (
    DNS1123_LABEL, DNS1123_SUBDOMAIN, HIERARCHY_MIN_VERSION, JOB_POLICY_ACTION_ROWS, JOB_POLICY_EVENT_ROWS,
    PINNED_VERSION, QUANTITY, RESOURCE_PATTERNS, CORE_RESOURCES, SCHEDULER_VOCABULARY, VolcanoError,
    minor, parse_version,
)


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
            errors.extend(_policy_errors('spec.tasks[%d].policies' % i, task.get('policies'), volcano_version))
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
        errors.extend(_policy_errors('spec.policies', spec.get('policies'), volcano_version))
    else:
        errors.append('kind: %r is not a Volcano kind the collection renders (Queue, Job)' % kind)
    return errors


def policy_words(rows, field, volcano_version):
    """The policy events or actions (``field``) of ``rows`` that the job admission webhook of
    ``volcano_version`` allows: each row's ``from`` is the first Volcano minor that allows it."""
    release = parse_version(volcano_version, 'volcano_version')[:2]
    return tuple(row[field] for row in rows if release >= tuple(int(p) for p in row['from'].split('.')))


def _policy_errors(where, policies, volcano_version=PINNED_VERSION):
    errors = []
    events = policy_words(JOB_POLICY_EVENT_ROWS, 'event', volcano_version)
    actions = policy_words(JOB_POLICY_ACTION_ROWS, 'action', volcano_version)
    release = minor(volcano_version, 'volcano_version')
    for i, policy in enumerate(policies or []):
        if policy.get('event') is not None and policy['event'] not in events:
            errors.append('%s[%d].event: %r is not one of %s (the job webhook of Volcano %s)'
                          % (where, i, policy['event'], ', '.join(events), release))
        if policy.get('action') not in actions:
            errors.append('%s[%d].action: %r is not one of %s (the job webhook of Volcano %s)'
                          % (where, i, policy.get('action'), ', '.join(actions), release))
    return errors
