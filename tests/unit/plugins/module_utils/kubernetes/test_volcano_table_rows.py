# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36: the Volcano, Kubernetes and device plugin words of kubernetes/volcano_tables.py row by row.

Each row names the file (and tag) it was read in and quotes the constant; the shapes volcano_scheduling
reads are built from the rows; the words the job admission webhook refuses are refused here too, by the
webhook of the Volcano release the Job is rendered for."""
import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes import volcano_scheduling as sched
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes import volcano_tables as vt

DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
ROWS = [
    ("HIERARCHY_ROWS", vt.HIERARCHY_ROWS, "volcano"), ("CORE_RESOURCE_ROWS", vt.CORE_RESOURCE_ROWS, "resource"),
    ("RESOURCE_PATTERN_ROWS", vt.RESOURCE_PATTERN_ROWS, "pattern"),
    ("FOREIGN_LABEL_PREFIX_ROWS", vt.FOREIGN_LABEL_PREFIX_ROWS, "prefix"),
    ("JOB_POLICY_EVENT_ROWS", vt.JOB_POLICY_EVENT_ROWS, "event"),
    ("JOB_POLICY_ACTION_ROWS", vt.JOB_POLICY_ACTION_ROWS, "action"),
    ("JOB_PHASE_ROWS", vt.JOB_PHASE_ROWS, "phase"), ("JOB_DONE_PHASE_ROWS", vt.JOB_DONE_PHASE_ROWS, "phase"),
]


@pytest.mark.parametrize("name, rows, key", ROWS, ids=[r[0] for r in ROWS])
def test_every_row_has_a_source_and_a_read_date_and_a_word_without_a_newline(name, rows, key):
    assert rows
    for row in rows:
        assert DATE.fullmatch(row["read"]) and row["source"].strip(), (name, row)
        assert "\n" not in row[key], (name, row)


QUOTED = [r for r in ROWS if r[2] in ("event", "action", "phase", "resource") and r[0] != "JOB_DONE_PHASE_ROWS"]


@pytest.mark.parametrize("name, rows, key", QUOTED, ids=[r[0] for r in QUOTED])
def test_each_word_is_quoted_as_the_constant_its_source_names(name, rows, key):
    for row in rows:
        assert '"%s"' % row[key] in row["source"], (name, row)


def test_the_shapes_the_code_reads_are_built_from_the_rows():
    assert vt.JOB_POLICY_EVENTS == tuple(r["event"] for r in vt.JOB_POLICY_EVENT_ROWS)
    assert vt.JOB_POLICY_ACTIONS == tuple(r["action"] for r in vt.JOB_POLICY_ACTION_ROWS)
    assert vt.HIERARCHY_MIN_VERSION == (1, 11)
    assert vt.CORE_RESOURCES == ("cpu", "memory", "pods", "ephemeral-storage")
    assert [p.pattern for p in vt.RESOURCE_PATTERNS] == [r["pattern"] for r in vt.RESOURCE_PATTERN_ROWS]
    assert vt.JOB_DONE_PHASES == ("Completed", "Failed", "Aborted", "Terminated")
    assert set(vt.JOB_DONE_PHASES) <= set(vt.JOB_PHASES)
    for row in vt.JOB_DONE_PHASE_ROWS:
        assert "vcbatch.%s" % row["phase"] in row["source"] or "abortedState" in row["source"], row
    vocabulary = vt.SCHEDULER_VOCABULARY["1.13"]
    assert DATE.fullmatch(vocabulary["read"]) and "v1.13.0:pkg/scheduler/plugins/factory.go" in vocabulary["source"]


# SOURCE (volcano-sh/volcano v1.13.0 pkg/webhooks/admission/jobs/validate/util.go): policyEventMap
# "busv1alpha1.PodRunningEvent: false", "busv1alpha1.JobUpdatedEvent: true"; policyActionMap
# "busv1alpha1.RestartPodAction: true"; RestartPartitionAction first in v1.14.0.
@pytest.mark.parametrize("version, field, word, allowed", [
    ("1.13.0", "event", "PodRunning", False), ("1.13.0", "event", "JobUpdated", True),
    ("1.13.0", "event", "PodPending", True), ("1.10.2", "event", "PodPending", False),
    ("1.13.0", "action", "RestartPod", True), ("1.10.0", "action", "RestartPod", False),
    ("1.13.0", "action", "RestartPartition", False), ("1.14.1", "action", "RestartPartition", True),
    ("1.13.0", "action", "SyncJob", False), ("1.13.0", "event", "PodFailed\n", False),
])
def test_a_policy_word_is_allowed_only_where_that_release_webhook_allows_it(version, field, word, allowed):
    policy = {"event": word, "action": "RestartJob"} if field == "event" else {"event": "PodFailed", "action": word}
    errors = sched._policy_errors("spec.policies", [policy], version)
    assert (not errors) is allowed, errors
    if not allowed:
        assert "spec.policies[0].%s: %r is not one of" % (field, word) in errors[0]
        assert "the job webhook of Volcano %s" % ".".join(version.split(".")[:2]) in errors[0]


# SOURCE (NVIDIA/k8s-device-plugin v0.20.0 internal/rm/rm.go): resourceName :=
# strings.ReplaceAll("mig-"+p.String(), "+", "."): a media-extension profile is advertised as mig-1g.10gb.me.
@pytest.mark.parametrize("name, known", [
    ("nvidia.com/gpu", True), ("nvidia.com/gpu.shared", True), ("nvidia.com/mig-3g.40gb", True),
    ("nvidia.com/mig-1g.10gb.me", True), ("nvidia.com/mig-1g.24gb.me.all", True), ("nvidia.com/mig-1g.24gb.gfx", True),
    ("nvidia.com/mig-1g.10gb+me", False), ("hugepages-2Mi", True), ("hugepages-2Mi\n", False),
    ("volcano.sh/vgpu-cores", True), ("cpu", True), ("gpu", False),
    # api/config/v1/replicas.go: time-slicing with renameByDefault adds ".shared", MIG resources included;
    # pkg/scheduler/api/devices/config/vgpu.go (Volcano): VolcanoVGPUMemoryPercentage
    ("nvidia.com/mig-1g.5gb.shared", True), ("nvidia.com/mig-1g.10gb.me.shared", True),
    ("nvidia.com/mig-1g.5gb.shared\n", False), ("nvidia.com/mig-1g.5gb.shared.shared", False),
    ("volcano.sh/vgpu-memory-percentage", True), ("volcano.sh/vgpu-percentage", False),
])
def test_resource_names_are_those_kubernetes_and_the_device_plugins_advertise(name, known):
    assert sched.resource_name_ok(name) is known
