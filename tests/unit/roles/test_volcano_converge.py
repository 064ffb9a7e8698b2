"""The volcano role end to end against a TEST DOUBLE of the Kubernetes API
(tests/doubles/fake_kube_apiserver.py; no real API server can run here): check mode on a fresh
cluster creates nothing, converge applies every object of the plan, a second run changes nothing,
a new scheduler configuration changes the ConfigMap and rolls the scheduler (and nothing else),
and a gang that cannot be placed fails the role with its reason after the job is deleted. Those
runs share one fake cluster (module fixture `converged`): a run of the role costs tens of seconds.

What the double cannot prove - Volcano's scheduling, the device plugin advertising GPUs, Helm -
is for the live molecule scenario (KUBECONFIG=... make molecule-one SCENARIO=volcano)."""
import copy
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
sys.path[0:0] = [os.path.join(REPO, "tests", "doubles"), os.path.join(REPO, "tests", "render")]
import fake_kube_apiserver as fake  # noqa: E402
import volcano_validate  # noqa: E402

PREFIX = "dlserver.gpuops.io/"
PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  roles:
    - role: gpuops.dlserver.volcano
"""
# An earlier run's read of the cluster (the client writes its discovery cache), cheaper than a
# run of the role.
EARLIER_RUN = """
- hosts: localhost
  gather_facts: false
  tasks:
    - kubernetes.core.k8s_info:
        kind: Node
        kubeconfig: "{{ volcano_kubeconfig }}"
"""
MANIFEST = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "volcano-system"}},
    {"apiVersion": "v1", "kind": "ConfigMap",
     "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
     "data": {"volcano-scheduler.conf": "actions: \"enqueue, allocate, backfill\"\n"}},
    {"apiVersion": "apps/v1", "kind": "Deployment",
     "metadata": {"name": "volcano-scheduler", "namespace": "volcano-system"},
     "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "volcano-scheduler"}},
              "template": {"metadata": {"labels": {"app": "volcano-scheduler"}},
                           "spec": {"containers": [{"name": "volcano-scheduler",
                                                    "image": "volcanosh/vc-scheduler:v1.13.0"}]}}}},
    {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "default"},
     "spec": {"weight": 1, "reclaimable": True}},
]


@pytest.fixture(scope="module")
def probed():
    return volcano_validate.fixture_hosts()


def start_lab(tmp_path, probed):
    """A fresh fake cluster (a GPU node, a CPU node with a stale label) and the playbook,
    inventory, kubeconfig and manifest the role is run with; returns (cluster, server)."""
    nodes = [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": "gpu-a", "labels": {"kubernetes.io/hostname": "gpu-a", "nvidia.com/gpu.product": "GFD"}},
         "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "96"}}},
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": "cpu-b", "labels": {"kubernetes.io/hostname": "cpu-b", PREFIX + "gpu.present": "true"}},
         "status": {"allocatable": {"cpu": "8"}}},
    ]
    cluster = fake.FakeCluster(nodes=nodes)
    server, url = fake.serve(cluster)
    (tmp_path / "kubeconfig").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": url}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "test-double"}}]}))
    (tmp_path / "volcano.yaml").write_text(yaml.safe_dump_all(MANIFEST))
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    inventory = {"all": {"hosts": {"localhost": {"ansible_connection": "local",
                                                 "ansible_python_interpreter": sys.executable}},
                         "children": {"gpu_nodes": {"hosts": {
                             "gpu-a": {"__common_probe": {"ansible_facts": {"gpuops_gpu": probed["hgx-h100-8gpu"]["gpu"]}}},
                             "cpu-b": {"__common_probe": {"ansible_facts": {"gpuops_gpu": probed["cpu-only"]["gpu"]}}}}}}}}
    (tmp_path / "inv.yml").write_text(yaml.safe_dump(inventory))
    return cluster, server


@pytest.fixture
def lab(tmp_path, probed):
    cluster, server = start_lab(tmp_path, probed)
    yield cluster, tmp_path
    server.shutdown()


@pytest.fixture(scope="module")
def converged(tmp_path_factory, probed):
    """ONE fake cluster for the module, taken through check mode, converge and a second run
    (each ansible-playbook run of the role costs tens of seconds: the runs are shared by the
    tests below, which read what each run left). Snapshots of the cluster after each run."""
    tmp_path = tmp_path_factory.mktemp("volcano")
    cluster, server = start_lab(tmp_path, probed)
    before = copy.deepcopy(cluster.objects)
    check = run(tmp_path, check=True)
    after_check = copy.deepcopy(cluster.objects)
    first = run(tmp_path)
    after_first = copy.deepcopy(cluster.objects)
    first_requests = list(cluster.requests)
    second = run(tmp_path)
    yield {"cluster": cluster, "tmp_path": tmp_path, "before": before, "check": check, "after_check": after_check,
           "first": first, "after_first": after_first, "first_requests": first_requests, "second": second}
    server.shutdown()


def snapshot_get(objects, group, plural, namespace, name):
    """FakeCluster.get on a snapshot of its objects."""
    return objects.get((group, plural, namespace or None, name))


def run(tmp_path, extra=None, check=False, playbook="play.yml"):
    variables = {"volcano_kubeconfig": str(tmp_path / "kubeconfig"), "volcano_status_file": "",
                 "volcano_install_method": "manifest", "volcano_manifest_src": str(tmp_path / "volcano.yaml"),
                 "volcano_wait_timeout": 20, "volcano_smoke_timeout": 10}
    variables.update(extra or {})
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_HOME=str(tmp_path / "ansible-home"),
               K8S_AUTH_CACHE_DIR=str(tmp_path / "k8s-cache"), TMPDIR=str(tmp_path))
    cmd = [os.path.join(BIN, "ansible-playbook"), "-i", str(tmp_path / "inv.yml"), "-e", json.dumps(variables),
           str(tmp_path / playbook)] + (["--check"] if check else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=600, check=False)
    recap = re.search(r"localhost\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=\d+\s+failed=(\d+)", proc.stdout)
    return proc, (dict(zip(("ok", "changed", "failed"), map(int, recap.groups()))) if recap else None)


def test_check_mode_creates_nothing(converged):
    proc, _recap = converged["check"]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert converged["after_check"] == converged["before"], "check mode changed the cluster"


def test_converge_applies_every_object_of_the_plan(converged):
    proc, _recap = converged["first"]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "all 4 worker(s) of the gang ran together and succeeded" in proc.stdout
    objects = converged["after_first"]

    def get(*key):
        return snapshot_get(objects, *key)

    conf = get("", "configmaps", "volcano-system", "volcano-scheduler-configmap")["data"]["volcano-scheduler.conf"]
    assert yaml.safe_load(conf)["actions"] == "enqueue, allocate, backfill"
    assert [p["name"] for p in yaml.safe_load(conf)["tiers"][0]["plugins"]] == ["priority", "gang", "conformance"]
    deploy = get("apps", "deployments", "volcano-system", "volcano-scheduler")
    assert deploy["spec"]["template"]["metadata"]["annotations"]["checksum/scheduler-config"]
    gpu = get("", "nodes", None, "gpu-a")["metadata"]["labels"]
    assert gpu["nvidia.com/gpu.product"] == "GFD"                     # GPU Feature Discovery's label untouched
    assert gpu[PREFIX + "gpu.product"] == "NVIDIA-H100-80GB-HBM3" and gpu[PREFIX + "nvswitch"] == "true"
    cpu = get("", "nodes", None, "cpu-b")["metadata"]["labels"]
    assert not any(k.startswith(PREFIX) for k in cpu)                 # stale label removed, none added
    assert all(get("scheduling.volcano.sh", "queues", None, q) for q in ("training", "inference", "best-effort"))
    assert get("scheduling.volcano.sh", "queues", None, "training")["spec"]["weight"] == 4
    assert get("scheduling.k8s.io", "priorityclasses", None, "gpuops-training")["value"] == 10000
    assert get("node.k8s.io", "runtimeclasses", None, "nvidia")["handler"] == "nvidia"
    ds = get("apps", "daemonsets", "kube-system", "nvidia-device-plugin-daemonset")
    assert ds["spec"]["template"]["spec"]["nodeSelector"] == {PREFIX + "gpu.present": "true"}
    assert get("batch.volcano.sh", "jobs", "default", "gpuops-volcano-smoke") is None
    assert any(m == "POST" and "/jobs" in p for m, p in converged["first_requests"])


def test_second_run_changes_nothing(converged):
    proc, recap = converged["second"]
    assert proc.returncode == 0 and recap["changed"] == 0, proc.stdout[-6000:]


def test_new_config_rolls_the_scheduler_and_an_unplaceable_gang_fails(converged):
    """On the converged cluster: a new scheduler configuration changes the ConfigMap and rolls
    the scheduler (2 changes, nothing else), and a gang that cannot be placed fails the role with
    its reason, after the job is deleted (one run for both: the smoke job is not a change)."""
    cluster, tmp_path = converged["cluster"], converged["tmp_path"]
    checksum = snapshot_get(converged["after_first"], "apps", "deployments", "volcano-system", "volcano-scheduler")[
        "spec"]["template"]["metadata"]["annotations"]["checksum/scheduler-config"]
    writes = len([r for r in cluster.requests if r[0] != "GET"])
    proc, recap = run(tmp_path, {"volcano_scheduler_actions": ["enqueue", "allocate", "preempt", "backfill"],
                                 "volcano_smoke_image": "registry.invalid/never-schedules:1.0.0", "volcano_smoke_timeout": 5})
    assert proc.returncode != 0
    assert recap["changed"] == 2 and recap["failed"] == 1, proc.stdout[-6000:]
    assert "The Volcano gang smoke job failed" in proc.stdout and "could not be placed together" in proc.stdout, \
        proc.stdout[-4000:]
    assert cluster.get("batch.volcano.sh", "jobs", "default", "gpuops-volcano-smoke") is None
    conf = cluster.get("", "configmaps", "volcano-system", "volcano-scheduler-configmap")["data"]["volcano-scheduler.conf"]
    assert yaml.safe_load(conf)["actions"] == "enqueue, allocate, preempt, backfill"
    rolled = cluster.get("apps", "deployments", "volcano-system", "volcano-scheduler")
    assert rolled["spec"]["template"]["metadata"]["annotations"]["checksum/scheduler-config"] != checksum
    assert writes < len([r for r in cluster.requests if r[0] != "GET"])


def test_unsupported_kubernetes_changes_nothing(lab):
    """A cluster upgraded to a Kubernetes the Volcano release does not support, after a run
    that left the client's API discovery cached (the cache file is keyed by the API URL and
    user, so it outlives the upgrade): the role sees the new version, fails and changes nothing."""
    cluster, tmp_path = lab
    (tmp_path / "earlier.yml").write_text(EARLIER_RUN)
    proc, _recap = run(tmp_path, playbook="earlier.yml")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert list(tmp_path.glob("k8srcp-*.json")), "the client's discovery cache was not written where the test looks"
    cluster.version = "v1.34.2"
    before = copy.deepcopy(cluster.objects)
    cluster.requests.clear()
    proc, _recap = run(tmp_path)
    assert proc.returncode != 0
    assert "Volcano 1.13 does not support Kubernetes 1.34" in proc.stdout and "1.14" in proc.stdout
    assert cluster.objects == before
    assert not [r for r in cluster.requests if r[0] != "GET"]
