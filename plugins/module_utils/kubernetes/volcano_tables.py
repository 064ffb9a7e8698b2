# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The volcano role's tables (compatibility, scheduler vocabulary, names, patterns) and versions.

Part of the volcano decisions (kubernetes/volcano.py builds the plan from them). Pure, no I/O.

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

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.versions import numeric_or_none

COMPATIBILITY_SOURCE = 'https://github.com/volcano-sh/volcano#kubernetes-compatibility'

# Volcano minor -> Kubernetes minors it is exactly compatible with (the table's check marks). Each
# row carries its source and the date it was read, as data (docs/vendor-facts.md lists them).
COMPATIBILITY_READ = '2026-12-07'
_COMPATIBILITY_ROW_SOURCE = (COMPATIBILITY_SOURCE + ' (README "Kubernetes compatibility" and, for releases it no '
                             'longer lists, docs/ "Kubernetes Compatibility Archive")')
COMPATIBILITY_ROWS = tuple(
    {'volcano': volcano_minor, 'kubernetes': kubernetes_minors, 'source': _COMPATIBILITY_ROW_SOURCE,
     'read': COMPATIBILITY_READ}
    for volcano_minor, kubernetes_minors in sorted({
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
    }.items(), key=lambda item: tuple(int(p) for p in item[0].split('.'))))
COMPATIBILITY = dict((row['volcano'], row['kubernetes']) for row in COMPATIBILITY_ROWS)

# The Volcano release the role installs by default (chart version = app version).
PINNED_VERSION = '1.13.0'
# Matched whole (re.fullmatch): the version reaches Helm's command line as the chart version.
VOLCANO_VERSION = re.compile(r'[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?')
# A container image reference (distribution's reference grammar): [registry[:port]/]path[:tag][@digest].
IMAGE_REFERENCE = re.compile(
    r'(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]+)?/)?'
    r'[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*'
    r'(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?')
# A Helm chart reference: repo/name, a path or an oci:// URL; one word, never an option.
CHART_REF = re.compile(r'[A-Za-z0-9./~][A-Za-z0-9._~/:@+-]*')
CHART_REPO_URL = re.compile(r'https?://[A-Za-z0-9._~:/?#\[\]@!$&()*+,;=%-]+')
MANIFEST_CHECKSUM = re.compile(r'sha256:[0-9a-f]{64}')

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
    re.compile(r'^hugepages-[0-9]+(Ki|Mi|Gi)\Z'),
    re.compile(r'^nvidia\.com/gpu(\.shared)?\Z'),
    re.compile(r'^nvidia\.com/mig-[0-9]+g\.[0-9]+gb(\+me)?\Z'),
    re.compile(r'^volcano\.sh/vgpu-(number|memory|cores)\Z'),
)
QUANTITY = re.compile(r'^(\+)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)'
                      r'|(\.[0-9]+))))?\Z')
DNS1123_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z')
DNS1123_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z')
LABEL_VALUE = re.compile(r'^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z')

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
    """'v1.30.4-eks-1' or '1.30' -> (1, 30, 4 or None) (core/versions.numeric). Raises ValueError naming ``what``."""
    numbers = numeric_or_none(text, what)
    if not numbers or len(numbers) < 2:
        raise ValueError('%s %r is not a version like 1.30 or v1.30.4' % (what, text))
    return numbers[0], numbers[1], (numbers[2] if len(numbers) > 2 else None)


def volcano_version_errors(text):
    """volcano_version reaches Helm as the chart version and names the release's images: a
    release version such as 1.13.0 (a pre-release suffix allowed), matched whole."""
    if not isinstance(text, str) or not VOLCANO_VERSION.fullmatch(text):
        return ['volcano_version %r is not a Volcano release version such as %s' % (text, PINNED_VERSION)]
    return []


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
