"""Batches, canary and the rolling driver upgrade (issue 21 items 3 and 4), read from the playbooks
as tests/unit/test_role_contracts.py reads them; and kubernetes.core.k8s_drain against the TEST
DOUBLE of the Kubernetes API (tests/doubles/fake_kube_apiserver.py): drain cordons the node and
evicts its workload pod (the DaemonSet's stays), uncordon marks it schedulable again."""
import ast
import json
import os
import subprocess
import sys
import time
import urllib.request

import jinja2
import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOKS = os.path.join(REPO, "playbooks")
REBOOTING_ROLES = {"gpuops.dlserver.os_tuning", "gpuops.dlserver.nvidia_driver"}


def load(name):
    with open(os.path.join(PLAYBOOKS, name)) as fh:
        return yaml.safe_load(fh)


def render(text, **variables):
    """A play keyword as Ansible templates it (undefined variables fall to their default)."""
    value = jinja2.Environment().from_string(text).render(**variables)
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return value


def roles_of(play):
    return {(t.get("ansible.builtin.include_role") or {}).get("name") for t in play.get("tasks") or []}


def test_site_reboots_in_batches_after_a_canary_and_stops_at_a_failed_batch():
    plays = [p for p in load("site.yml") if roles_of(p) & REBOOTING_ROLES]
    assert plays, "no play of site.yml includes os_tuning or nvidia_driver"
    for play in plays:
        assert render(play["serial"]) == [1, "20%"], play["name"]           # canary, then 20% at a time
        assert render(play["max_fail_percentage"]) == 0, play["name"]       # a failed host stops the run
        assert render(play["serial"], gpuops_serial="100%") == "100%"
        assert render(play["max_fail_percentage"], gpuops_max_fail_percentage=10) == 10
    # The probe play stays on every host at once: it changes nothing.
    assert "serial" not in load("site.yml")[0]


def test_the_one_reboot_handler_is_throttled_by_a_declared_input():
    with open(os.path.join(REPO, "roles", "common", "handlers", "main.yml")) as fh:
        handlers = yaml.safe_load(fh)
    reboot = [h for h in handlers if "ansible.builtin.reboot" in h]
    assert len(reboot) == 1 and reboot[0]["listen"] == "gpuops reboot"
    assert reboot[0]["throttle"] == "{{ __common.gpuops_reboot_throttle }}"
    with open(os.path.join(REPO, "roles", "common", "meta", "argument_specs.yml")) as fh:
        spec = yaml.safe_load(fh)["argument_specs"]["gpu"]["options"]["gpuops_reboot_throttle"]
    assert spec["type"] == "int" and spec["default"] == 0


def _tasks(node):
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in ("block", "rescue", "always"):
            yield from _tasks(node.get(key))


def test_rolling_upgrade_play_shape():
    probe, upgrade, summary = load("rolling_driver_upgrade.yml")
    assert "serial" not in probe
    assert render(upgrade["serial"]) == 1 and render(upgrade["serial"], gpuops_rolling_serial=3) == 3
    assert upgrade["max_fail_percentage"] == 0
    tasks = list(_tasks(upgrade["tasks"]))
    names = [t.get("name") for t in tasks]
    drains = [t for t in tasks if "kubernetes.core.k8s_drain" in t]
    assert [t["kubernetes.core.k8s_drain"]["state"] for t in drains] == ["drain", "uncordon"]
    assert all(t["delegate_to"] == "localhost" for t in drains)
    uncordon = drains[1]
    assert "__rolling_decision.uncordon" in uncordon["when"]          # only after validation passed
    hooks = [t["ansible.builtin.include_tasks"] for t in tasks if "ansible.builtin.include_tasks" in t]
    assert hooks == ["{{ gpuops_rolling_drain_tasks }}", "{{ gpuops_rolling_resume_tasks }}"]
    roles = [t["ansible.builtin.include_role"]["name"] for t in tasks if "ansible.builtin.include_role" in t]
    # common twice: the probe after the reboot, and the power cycle through the BMC in the rescue (issue 39)
    assert roles == ["gpuops.dlserver.nvidia_driver", "gpuops.dlserver.common", "gpuops.dlserver.gpu_validate",
                     "gpuops.dlserver.common", "gpuops.dlserver.nvidia_driver"]
    # drain, upgrade, reboot, probe, validate - in that order
    order = ["Cordon and drain the Kubernetes node", "Upgrade the driver (nvidia_driver releases the hold, installs, holds again)",
             "Reboot now if the upgrade asked for it (the collection's handler)", "Probe the GPUs again after the upgrade",
             "Validate the node (gpu_validate, verdict recorded, the host not failed yet)"]
    assert [names.index(n) for n in order] == sorted(names.index(n) for n in order)
    assert any("gpuops.dlserver.__private.driver_rollback" in str(t.get("ansible.builtin.set_fact")) for t in tasks)
    stop = [t for t in tasks if "ansible.builtin.fail" in t]
    assert len(stop) == 1 and stop[0]["when"] == "not __rolling_decision.uncordon"
    assert summary["tasks"][0]["run_once"] is True


PLAY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - kubernetes.core.k8s_drain:
        name: gpu-01
        state: "{{ state }}"
        kubeconfig: "{{ kubeconfig }}"
        delete_options: {ignore_daemonsets: true, wait_timeout: 10, wait_sleep: 1}
"""


@pytest.fixture
def cluster(tmp_path):
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-01"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "train", "namespace": "default",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "t", "uid": "u1"}]},
         "spec": {"nodeName": "gpu-01", "containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "exporter", "namespace": "mon",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "e", "uid": "u2"}]},
         "spec": {"nodeName": "gpu-01", "containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "elsewhere", "namespace": "default",
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "t", "uid": "u1"}]},
         "spec": {"nodeName": "gpu-02", "containers": [{"name": "c", "image": "i"}]}, "status": {"phase": "Running"}},
    ]
    (tmp_path / "objects.json").write_text(json.dumps(objects))
    url_file = tmp_path / "url"
    proc = subprocess.Popen([sys.executable, os.path.join(REPO, "tests", "doubles", "fake_kube_apiserver.py"),
                             "--objects", str(tmp_path / "objects.json"), "--url-file", str(url_file),
                             "--lifetime", "120"])
    try:
        for _attempt in range(100):
            if url_file.exists():
                break
            time.sleep(0.1)
        url = url_file.read_text().strip()
        (tmp_path / "kubeconfig").write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": url}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "u"}}],
            "users": [{"name": "u", "user": {"token": "test-double"}}]}))
        (tmp_path / "play.yml").write_text(PLAY)
        yield url, tmp_path
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _get(url, path):
    with urllib.request.urlopen(url + path, timeout=10) as answer:
        return json.load(answer)


def _drain(tmp_path, state):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_HOME=str(tmp_path / "ansible-home"),
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, TMPDIR=str(tmp_path))  # the k8s client caches discovery in TMPDIR
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
           "-e", json.dumps({"state": state, "kubeconfig": str(tmp_path / "kubeconfig")}), str(tmp_path / "play.yml")]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)


def test_k8s_drain_cordons_evicts_and_uncordons_against_the_double(cluster):
    url, tmp_path = cluster
    proc = _drain(tmp_path, "drain")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert _get(url, "/api/v1/nodes/gpu-01")["spec"]["unschedulable"] is True
    left = sorted(p["metadata"]["name"] for p in _get(url, "/api/v1/pods")["items"])
    assert left == ["elsewhere", "exporter"]                          # workload evicted, DaemonSet pod kept
    proc = _drain(tmp_path, "uncordon")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert _get(url, "/api/v1/nodes/gpu-01")["spec"]["unschedulable"] is False
    assert "changed=1" in proc.stdout


def test_the_double_is_stopped_by_its_url_file_and_only_once(tmp_path):
    """The rolling_upgrade scenario's destroy stops the API double it started (--stop URL_FILE)."""
    double = os.path.join(REPO, "tests", "doubles", "fake_kube_apiserver.py")
    url_file = tmp_path / "url"
    proc = subprocess.Popen([sys.executable, double, "--url-file", str(url_file), "--lifetime", "120"])
    try:
        for _attempt in range(100):
            if (tmp_path / "url.pid").exists():
                break
            time.sleep(0.1)
        stopped = subprocess.run([sys.executable, double, "--stop", str(url_file)], capture_output=True, text=True,
                                 check=True)
        assert stopped.stdout.strip() == "stopped process %d" % proc.pid
        assert proc.wait(timeout=10) != 0
        again = subprocess.run([sys.executable, double, "--stop", str(url_file)], capture_output=True, text=True,
                               check=True)
        assert again.stdout.startswith("not running: no process id")
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=10)


def test_a_reused_process_id_is_not_killed(tmp_path):
    """A pid file naming a process that is not the double (the id was reused) kills nothing."""
    double = os.path.join(REPO, "tests", "doubles", "fake_kube_apiserver.py")
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "url.pid").write_text("%d\n" % sleeper.pid)
        out = subprocess.run([sys.executable, double, "--stop", str(tmp_path / "url")], capture_output=True,
                             text=True, check=True)
        assert out.stdout.startswith("not running: process %d is gone or is not the double" % sleeper.pid)
        assert sleeper.poll() is None
    finally:
        sleeper.terminate()
        sleeper.wait(timeout=10)
