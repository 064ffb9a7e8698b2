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
  plugins registered in pkg/scheduler/plugins/factory.go of each Volcano release 1.6 to 1.14 (the
  minors COMPATIBILITY lists), each read at its vX.Y.0 tag.
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

# Every table below carries, per row, where it was read and when (docs/vendor-facts.md lists the rows):
# Volcano's own source at the release tag, volcano-sh/apis at the tag Volcano's go.mod names, Kubernetes'
# k8s.io/api and well-known-labels page, NVIDIA's k8s-device-plugin. The shapes the code reads are built
# from the rows.
READ = '2026-12-07'
_VC = 'volcano-sh/volcano v%s:%s'
_APIS = 'volcano-sh/apis v1.13.0:pkg/apis/%s (the apis tag volcano v1.13.0 go.mod requires)'
_WEBHOOK = ('volcano-sh/volcano v1.13.0:pkg/webhooks/admission/jobs/validate/util.go %s: true (allowed for external '
            'use); read at v1.6.0, v1.9.0, v1.10.0, v1.11.0, v1.12.0 and v1.14.0 too: first true at v%s.0')

# The scheduler's actions (the same six in every release from 1.6 to 1.14) and the plugins each
# release registers, read per release from its factory.go files (a plugin's word is its package's
# PluginName, e.g. numaaware "numa-aware"); a release adds plugins, none was removed.
_ACTIONS = ('enqueue', 'allocate', 'backfill', 'preempt', 'reclaim', 'shuffle')
_PLUGINS_1_6 = ('binpack', 'conformance', 'drf', 'extender', 'gang', 'nodeorder', 'numa-aware', 'overcommit',
                'predicates', 'priority', 'proportion', 'rescheduling', 'resourcequota', 'sla', 'task-topology',
                'tdm', 'usage')
_PLUGINS_1_7 = _PLUGINS_1_6 + ('cdp',)
_PLUGINS_1_9 = _PLUGINS_1_7 + ('capacity', 'deviceshare', 'nodegroup', 'pdb')
_PLUGINS_1_12 = _PLUGINS_1_9 + ('network-topology-aware',)
_PLUGINS_1_13 = _PLUGINS_1_12 + ('resource-strategy-fit',)


def _vocabulary_row(release, plugins):
    return {'actions': _ACTIONS, 'plugins': tuple(sorted(plugins)),
            'source': (_VC % (release, 'pkg/scheduler/actions/factory.go')
                       + ' (framework.RegisterAction of the six actions; each Name() returns the word) and '
                       + _VC % (release, 'pkg/scheduler/plugins/factory.go')
                       + ' (RegisterPluginBuilder of %d plugins; each PluginName, e.g. numaaware "numa-aware")'
                       % len(plugins)),
            'read': READ}


SCHEDULER_VOCABULARY = dict((release.rsplit('.', 1)[0], _vocabulary_row(release, plugins)) for release, plugins in (
    ('1.6.0', _PLUGINS_1_6), ('1.7.0', _PLUGINS_1_7), ('1.8.0', _PLUGINS_1_7), ('1.9.0', _PLUGINS_1_9),
    ('1.10.0', _PLUGINS_1_9), ('1.11.0', _PLUGINS_1_9), ('1.12.0', _PLUGINS_1_12), ('1.13.0', _PLUGINS_1_13),
    ('1.14.0', _PLUGINS_1_13)))

# Queue hierarchy (spec.parent, capacity plugin with enableHierarchy) from this Volcano minor.
HIERARCHY_ROWS = (
    {'volcano': '1.11', 'feature': 'hierarchical queues (capacity plugin enableHierarchy, Queue spec.parent)',
     'source': (_VC % ('1.11.0', 'pkg/scheduler/plugins/capacity/capacity.go')
                + ' HierarchyEnabled() reads EnabledHierarchy (absent from capacity/*.go at v1.10.0); '
                'docs/design/hierarchical-queue-on-capacity-plugin.md at v1.11.0'), 'read': READ},
)
HIERARCHY_MIN_VERSION = tuple(int(p) for p in HIERARCHY_ROWS[0]['volcano'].split('.'))

SCHEDULER_CONFIGMAP = 'volcano-scheduler-configmap'
SCHEDULER_CONFIG_KEY = 'volcano-scheduler.conf'
SCHEDULER_DEPLOYMENT = 'volcano-scheduler'
CHECKSUM_ANNOTATION = 'checksum/scheduler-config'

# Resource names a queue capability may name: the core ones, hugepages, and extended resources
# of device plugins the collection knows (nvidia.com/gpu and the MIG/shared forms).
_K8S_TYPES = 'kubernetes/api v0.34.10:core/v1/types.go'
CORE_RESOURCE_ROWS = tuple(
    {'resource': name, 'source': '%s: %s' % (_K8S_TYPES, quote), 'read': READ} for name, quote in (
        ('cpu', 'ResourceCPU ResourceName = "cpu"'), ('memory', 'ResourceMemory ResourceName = "memory"'),
        ('pods', 'ResourcePods ResourceName = "pods"'),
        ('ephemeral-storage', 'ResourceEphemeralStorage ResourceName = "ephemeral-storage"')))
CORE_RESOURCES = tuple(row['resource'] for row in CORE_RESOURCE_ROWS)
_DP = 'NVIDIA/k8s-device-plugin v0.20.0'
RESOURCE_PATTERN_ROWS = (
    {'pattern': r'^hugepages-[0-9]+(Ki|Mi|Gi)\Z', 'read': READ,
     'source': _K8S_TYPES + ': ResourceHugePagesPrefix = "hugepages-" (the page size follows as a quantity, '
                            'hugepages-2Mi, hugepages-1Gi)'},
    {'pattern': r'^nvidia\.com/gpu(\.shared)?\Z', 'read': READ,
     'source': _DP + ' api/config/v1/consts.go: ResourceNamePrefix = "nvidia.com", DefaultSharedResourceNameSuffix = '
                     '".shared" (time-slicing or MPS with renameByDefault)'},
    {'pattern': r'^nvidia\.com/mig-[0-9]+g\.[0-9]+gb(\.me|\.me\.all|\.gfx|-me)?(\.shared)?\Z', 'read': READ,
     'source': _DP + ' internal/rm/rm.go (mixed strategy): resourceName := strings.ReplaceAll("mig-"+p.String(), '
                     '"+", ".") for profiles with C == G; vendor/github.com/NVIDIA/go-nvlib/pkg/nvlib/device/'
                     'mig_profile.go String(): "%dg.%dgb" plus "+" attributes me, me.all, gfx or "-" me; '
                     'api/config/v1/replicas.go: with timeSlicing renameByDefault a resource (README: MIG ones '
                     'are time-sliceable, e.g. nvidia.com/mig-1g.5gb) is advertised as DefaultSharedRename(), '
                     'the name plus ".shared"'},
    {'pattern': r'^volcano\.sh/vgpu-(number|memory|memory-percentage|cores)\Z', 'read': READ,
     'source': (_VC % ('1.13.0', 'pkg/scheduler/api/devices/config/vgpu.go')
                + ': VolcanoVGPUNumber = "volcano.sh/vgpu-number", VolcanoVGPUMemory = "volcano.sh/vgpu-memory", '
                'VolcanoVGPUMemoryPercentage = "volcano.sh/vgpu-memory-percentage", '
                'VolcanoVGPUCores = "volcano.sh/vgpu-cores"')},
)
RESOURCE_PATTERNS = tuple(re.compile(row['pattern']) for row in RESOURCE_PATTERN_ROWS)
QUANTITY = re.compile(r'^(\+)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)'
                      r'|(\.[0-9]+))))?\Z')
DNS1123_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z')
DNS1123_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z')
LABEL_VALUE = re.compile(r'^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z')

# Label prefixes that belong to other tools: the role never writes under them.
_WELL_KNOWN = ('Kubernetes "Well-Known Labels, Annotations and Taints" (https://kubernetes.io/docs/reference/'
               'labels-annotations-taints/): "Kubernetes reserves all labels, annotations and taints in the '
               'kubernetes.io and k8s.io namespaces"')
FOREIGN_LABEL_PREFIX_ROWS = (
    {'prefix': 'nvidia.com', 'read': READ,
     'source': _DP + ' (GPU feature discovery) internal/lm labels such as "nvidia.com/gpu.product"'},
    {'prefix': 'feature.node.kubernetes.io', 'read': READ,
     'source': 'Node Feature Discovery, Introduction (https://kubernetes-sigs.github.io/node-feature-discovery/v0.8/'
               'get-started/introduction.html): "Feature labels are prefixed with feature.node.kubernetes.io/"'},
    {'prefix': 'kubernetes.io', 'read': READ, 'source': _WELL_KNOWN},
    {'prefix': 'k8s.io', 'read': READ, 'source': _WELL_KNOWN},
    {'prefix': 'node.kubernetes.io', 'read': READ,
     'source': _WELL_KNOWN + '; kubernetes/api v0.34.10:core/v1/well_known_labels.go LabelNodeExcludeBalancers = '
               '"node.kubernetes.io/exclude-from-external-load-balancers"'},
    {'prefix': 'node-role.kubernetes.io', 'read': READ,
     'source': _WELL_KNOWN + ' (it lists node-role.kubernetes.io/control-plane)'},
    {'prefix': 'volcano.sh', 'read': READ,
     'source': _APIS % 'batch/v1alpha1/labels.go' + ': JobNameKey = "volcano.sh/job-name", TaskSpecKey = '
               '"volcano.sh/task-spec"'},
)
FOREIGN_LABEL_PREFIXES = tuple(row['prefix'] for row in FOREIGN_LABEL_PREFIX_ROWS)

# Job lifecycle policy words: those the job admission webhook allows for external use (it refuses the others),
# each from the first Volcano minor whose webhook allows it (the role checks a Job against its release).
JOB_POLICY_EVENT_ROWS = tuple(
    {'event': word, 'from': since, 'read': READ,
     'source': '%s %s = "%s"; %s' % (_APIS % 'bus/v1alpha1/events.go', constant, word,
                                     _WEBHOOK % ('policyEventMap ' + constant, since))}
    for word, constant, since in (
        ('*', 'AnyEvent', '1.6'), ('PodFailed', 'PodFailedEvent', '1.6'), ('PodEvicted', 'PodEvictedEvent', '1.6'),
        ('PodPending', 'PodPendingEvent', '1.11'), ('Unknown', 'JobUnknownEvent', '1.6'),
        ('TaskCompleted', 'TaskCompletedEvent', '1.6'), ('TaskFailed', 'TaskFailedEvent', '1.6'),
        ('JobUpdated', 'JobUpdatedEvent', '1.6')))
JOB_POLICY_ACTION_ROWS = tuple(
    {'action': word, 'from': since, 'read': READ,
     'source': '%s %s = "%s"; %s' % (_APIS % 'bus/v1alpha1/actions.go', constant, word,
                                     _WEBHOOK % ('policyActionMap ' + constant, since))}
    for word, constant, since in (
        ('AbortJob', 'AbortJobAction', '1.6'), ('RestartJob', 'RestartJobAction', '1.6'),
        ('RestartTask', 'RestartTaskAction', '1.6'), ('RestartPod', 'RestartPodAction', '1.11'),
        ('TerminateJob', 'TerminateJobAction', '1.6'), ('CompleteJob', 'CompleteJobAction', '1.6'),
        ('ResumeJob', 'ResumeJobAction', '1.6'))) + (
    {'action': 'RestartPartition', 'from': '1.14', 'read': READ,
     'source': 'volcano-sh/apis v1.14.0:pkg/apis/bus/v1alpha1/actions.go RestartPartitionAction = "RestartPartition" '
               '(absent at v1.13.0); volcano-sh/volcano v1.14.0:pkg/webhooks/admission/jobs/validate/util.go '
               'policyActionMap RestartPartitionAction: true (absent at v1.13.0)'},)
JOB_POLICY_EVENTS = tuple(row['event'] for row in JOB_POLICY_EVENT_ROWS)
JOB_POLICY_ACTIONS = tuple(row['action'] for row in JOB_POLICY_ACTION_ROWS)
_PHASES = _APIS % 'batch/v1alpha1/job.go'
JOB_PHASE_ROWS = tuple({'phase': phase, 'read': READ, 'source': '%s: %s JobPhase = "%s"' % (_PHASES, phase, phase)}
                       for phase in ('Pending', 'Aborting', 'Aborted', 'Running', 'Restarting', 'Completing',
                                     'Completed', 'Terminating', 'Terminated', 'Failed'))
JOB_PHASES = tuple(row['phase'] for row in JOB_PHASE_ROWS)
# The phases that end a smoke job: Volcano's finished ones, and Aborted, which only a ResumeJob command moves on.
_FINISHED = _VC % ('1.13.0', 'pkg/controllers/job/state/factory.go') + ': "case vcbatch.Terminated, vcbatch.Completed, ' \
    'vcbatch.Failed: return &finishedState"'
JOB_DONE_PHASE_ROWS = (
    {'phase': 'Completed', 'read': READ, 'source': _FINISHED},
    {'phase': 'Failed', 'read': READ, 'source': _FINISHED},
    {'phase': 'Aborted', 'read': READ,
     'source': _VC % ('1.13.0', 'pkg/controllers/job/state/aborted.go') + ': abortedState leaves Aborted only on '
                                                                          'ResumeJobAction (the smoke job sends none, so Aborted ends it)'},
    {'phase': 'Terminated', 'read': READ, 'source': _FINISHED},
)
JOB_DONE_PHASES = tuple(row['phase'] for row in JOB_DONE_PHASE_ROWS)

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
