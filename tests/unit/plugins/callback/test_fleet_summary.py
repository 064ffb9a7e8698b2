"""fleet_summary: the per-host lines built from what site.yml publishes."""
import importlib.util
import json
import os

from ansible_collections.gpuops.dlserver.plugins.callback.fleet_summary import CallbackModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan import gpu_plan
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import gpu_probe

HERE = os.path.dirname(__file__)
FIXTURES = os.path.abspath(os.path.join(HERE, "..", "..", "..", "fixtures"))


def _builder():
    spec = importlib.util.spec_from_file_location("build_sysfs", os.path.join(FIXTURES, "build_sysfs.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def published(tmp_path, host):
    builder = _builder()
    root = str(tmp_path / host / "sys")
    builder.build(builder.load_spec(os.path.join(FIXTURES, "hosts", host)), root)
    facts = gpu_probe.probe(sysfs_root=root, procfs_root=str(tmp_path / "noproc"), nvml="disabled",
                            nvidia_smi="disabled")
    return {"gpu": facts, "plan": gpu_plan.build_plan(facts, {"in_container": True})}


def test_hgx_host_lines(tmp_path):
    roles = {"os_tuning": {"ok": 30, "changed": 0, "skipped": 5, "failed": 0}}
    lines = CallbackModule.host_lines("lab-hgx", {"changed": 0}, roles, published(tmp_path, "hgx-h100-8gpu"))
    text = "\n".join(lines)
    assert lines[0] == "lab-hgx: converged, nothing changed"
    assert "8 x " in text and "(hopper)" in text and "NVSwitches: 4" in text
    assert "probe depth: pci" in text
    assert "Fabric Manager" in text
    assert "os_tuning                  converged (30 tasks, 0 changed)" in text
    assert "nvidia_driver              not in this playbook (plan: run;" in text
    assert text.count("PCIe Gen") == 8


def test_cpu_host_lines_say_why_gpu_roles_are_skipped(tmp_path):
    lines = CallbackModule.host_lines("lab-cpu", {"changed": 2}, {}, published(tmp_path, "cpu-only"))
    text = "\n".join(lines)
    assert lines[0] == "lab-cpu: 2 changed"
    assert "GPUs: none" in text
    assert "driver: not needed" in text
    for role in ("nvidia_driver", "dcgm_exporter", "gpu_validate"):
        line = [ln for ln in lines if ln.strip().startswith(role + " ")][0]
        assert "skipped: " in line and "GPU" in line


def test_failed_host():
    roles = {"os_tuning": {"ok": 1, "changed": 0, "skipped": 0, "failed": 1}}
    lines = CallbackModule.host_lines("h", {"failures": 1}, roles, None)
    assert lines[0] == "h: FAILED"
    assert "os_tuning" in lines[1] and "FAILED" in lines[1]


def test_kernel_security_updates_held_back_are_shown(tmp_path):
    published_data = published(tmp_path, "hgx-h100-8gpu")
    published_data["os_tuning"] = {"kernel_security_updates_held_back": [
        {"name": "linux-image-amd64", "installed": "6.1.76-1", "candidate": "6.1.85-1",
         "origins": ["Debian-Security:12/stable-security"], "security": True}]}
    lines = CallbackModule.host_lines("lab-hgx", {"changed": 0}, {}, published_data)
    assert "  kernel security updates held back (driver host): linux-image-amd64 6.1.76-1 -> 6.1.85-1" in lines
    plain = CallbackModule.host_lines("lab-hgx", {"changed": 0}, {}, published(tmp_path / "plain", "hgx-h100-8gpu"))
    assert not any("held back" in line for line in plain)


def test_driver_security_updates_held_back_are_shown_with_what_takes_them(tmp_path):
    published_data = published(tmp_path, "hgx-h100-8gpu")
    published_data["nvidia_driver"] = {
        "security_updates_held_back": [{"name": "nvidia-driver", "installed": "535.261.03-1~deb12u1",
                                        "available": "535.309.01-0+deb12u1", "security": True}],
        "security_updates_take": "set nvidia_driver_version=535.309.01 and run the rolling upgrade"}
    lines = CallbackModule.host_lines("lab-hgx", {"changed": 0}, {}, published_data)
    assert ("  driver security updates held back: nvidia-driver 535.261.03-1~deb12u1 -> 535.309.01-0+deb12u1; "
            "to take them: set nvidia_driver_version=535.309.01 and run the rolling upgrade") in lines
    plain = CallbackModule.host_lines("lab-hgx", {"changed": 0}, {}, published(tmp_path / "plain", "hgx-h100-8gpu"))
    assert not any("driver security" in line for line in plain)


def test_python_stack_verification_is_shown(tmp_path):
    published_data = published(tmp_path, "hgx-h100-8gpu")
    published_data["python_stack"] = [
        {"name": "pytorch", "backend": "venv", "python": "3.11",
         "verification": {"ok": True, "python": "3.11.2", "summary": "torch 2.13.0+cpu CPU (bfloat16 step ok)"}},
        {"name": "tf", "backend": "conda", "python": "3.10",
         "verification": {"ok": False, "problems": ["environment tf: TensorFlow lists no GPU"]}}]
    lines = CallbackModule.host_lines("lab-hgx", {"changed": 0}, {}, published_data)
    assert "  python env pytorch (venv, Python 3.11.2): verified: torch 2.13.0+cpu CPU (bfloat16 step ok)" in lines
    assert "  python env tf (conda, Python 3.10): FAILED: environment tf: TensorFlow lists no GPU" in lines


def test_a_python_environment_left_alone_is_shown_with_its_path(tmp_path):
    published_data = published(tmp_path, "hgx-h100-8gpu")
    reason = ("environment team: /opt/gpuops/envs/team is a directory the role did not create (no "
              ".gpuops-python-stack.json marker): left alone (set python_stack_adopt: true to let the role take it over)")
    published_data["python_stack"] = [
        {"name": "team", "backend": "venv", "python": "3.11",
         "left_alone": {"path": "/opt/gpuops/envs/team", "reason": reason},
         "verification": {"ok": None, "summary": "not verified: left alone (/opt/gpuops/envs/team)"}}]
    lines = CallbackModule.host_lines("lab-hgx", {"changed": 0}, {}, published_data)
    assert "  python env team: left alone: " + reason in lines


def test_validation_line_is_shown():
    published_data = {"validate": {"verdict": "fail", "device": "cpu",
                                   "summary": "fail: pcie_link GPU3 (device: cpu)"}}
    lines = CallbackModule.host_lines("lab-a100", {"changed": 0}, {}, published_data)
    assert "  validation: fail: pcie_link GPU3 (device: cpu)" in lines
    assert not [line for line in CallbackModule.host_lines("h", {"changed": 0}, {}, {}) if "validation" in line]


# ---------------------------------------------------------------- whole runs with fake results
class _Host(object):
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


class _Role(object):
    def __init__(self, name):
        self.name = name
        self._parents = []

    def get_name(self):
        return "gpuops.dlserver." + self.name


class _Task(object):
    def __init__(self, role=None, action="ansible.builtin.command"):
        self._role = _Role(role) if role else None
        self.action = action


class _Result(object):
    def __init__(self, host, role, result=None, action="ansible.builtin.command"):
        self._host = _Host(host)
        self._task = _Task(role, action)
        self._result = result or {}


class _Play(object):
    def __init__(self, check_mode):
        self.check_mode = check_mode


class _Display(object):
    def __init__(self):
        self.lines = []

    def banner(self, text):
        self.lines.append("BANNER " + text)

    def display(self, text):
        self.lines.append(text)

    def warning(self, text):
        self.lines.append("WARNING " + text)


def _run(tmp_path, events, check=False, published=None):
    """Feed ``events`` ((kind, host, role, result)) to the callback; return its lines and JSON."""
    from ansible.executor.stats import AggregateStats

    callback = CallbackModule()
    callback._display = _Display()
    path = str(tmp_path / "summary.json")
    callback.get_option = lambda name: path if name == "json_path" else None
    callback.v2_playbook_on_play_start(_Play(check))
    stats = AggregateStats()
    for event in events:
        kind, host, role, result = event[:4]
        res = _Result(host, role, result, *event[4:])
        if kind == "ok":
            callback.v2_runner_on_ok(res)
            stats.increment("ok", host)
            if res._result.get("changed"):
                stats.increment("changed", host)
        elif kind == "skipped":
            callback.v2_runner_on_skipped(res)
            stats.increment("skipped", host)
        elif kind == "failed":
            callback.v2_runner_on_failed(res)
            stats.increment("failures", host)
        elif kind == "unreachable":
            callback.v2_runner_on_unreachable(res)
            stats.increment("dark", host)
    for host, data in (published or {}).items():
        stats.update_custom_stats("gpuops_summary", data, host)
    callback.v2_playbook_on_stats(stats)
    with open(path) as handle:
        return callback._display.lines, json.load(handle)


def _plan_run_all():
    roles = dict((r, {"run": True, "reason": "GPUs present"}) for r in ("os_tuning", "nvidia_driver", "gpu_validate"))
    return {"plan": {"ok": True, "host": {"gpu_count": 8}, "roles": roles},
            "gpu": {"gpu_count": 8, "driver": {"loaded": True, "version": "580.95.05"}}}


def test_unreachable_failed_and_not_reached_are_told_apart(tmp_path):
    reboot = {"pending": {"nvidia_driver": {"action": "deferred", "reason": "driver change"}}, "roles": {}}
    events = [
        ("ok", "gpu-a", "os_tuning", {"changed": True}),
        ("ok", "gpu-a", "nvidia_driver", {"changed": False, "ansible_facts": {"gpuops_reboot": reboot}}),
        ("ok", "gpu-b", "os_tuning", {}),
        ("failed", "gpu-b", "os_tuning", {"msg": "boom"}),
        ("unreachable", "gpu-c", None, {"msg": "ssh: no route"}),
    ]
    published = {"gpu-a": _plan_run_all(), "gpu-b": _plan_run_all()}
    lines, doc = _run(tmp_path, events, published=published)
    assert lines[0] == "BANNER GPUOPS FLEET SUMMARY"
    # one line per host before the detail
    assert lines[1] == ("gpu-a: 1 changed; GPUs 8; driver 580.95.05; plan ok; changed 1; "
                        "pending reboot: nvidia_driver (deferred); validation: not run; tasks: 2 executed, 0 skipped")
    assert lines[2].startswith("gpu-b: FAILED; GPUs 8;")
    assert lines[3] == ("gpu-c: UNREACHABLE; GPUs ?; driver ?; plan ?; changed 0; pending reboot: no; "
                        "validation: not run; tasks: 0 executed, 0 skipped")
    text = "\n".join(lines)
    assert "  nvidia_driver              not reached: the host failed earlier (plan: run)" in text
    block_b = text[text.index("\ngpu-b: FAILED\n"):text.index("\ngpu-c: UNREACHABLE\n")]
    assert "not in this playbook" not in block_b and "gpu_validate               not reached" in block_b
    assert "  gpu_validate               not in this playbook (plan: run; GPUs present)" in text
    # the change gpu-a made is said, even though other hosts failed
    assert lines[-1] == "Unreachable: gpu-c. Failed: gpu-b. 1 change(s) made (on gpu-a). See the errors above."
    assert doc["failed"] == ["gpu-b"] and doc["unreachable"] == ["gpu-c"] and doc["dry_run"] is False
    assert doc["hosts"]["gpu-b"]["roles"]["gpu_validate"]["state"] == "not_reached"
    assert doc["hosts"]["gpu-a"]["pending_reboot"] == {"nvidia_driver": "deferred"}
    assert doc["hosts"]["gpu-c"]["state"] == "unreachable"
    assert doc["hosts"]["gpu-a"]["tasks"] == {"executed": 2, "skipped": 0}
    assert doc["hosts"]["gpu-b"]["tasks"] == {"executed": 2, "skipped": 0}


def test_noop_rerun_reports_executed_and_skipped_tasks_per_host(tmp_path):
    """A no-op re-run (`make lab` twice): each host's line says how many tasks it executed and
    skipped, every play and role counted (the probe and plan included; a dynamic include is not a task)."""
    events = [("ok", "gpu-a", None, {}), ("ok", "gpu-a", None, {}, "ansible.builtin.include_role"),
              ("ok", "gpu-a", "os_tuning", {}), ("skipped", "gpu-a", "os_tuning", {}),
              ("ok", "gpu-a", "nvidia_driver", {}), ("skipped", "gpu-a", "nvidia_driver", {}),
              ("skipped", "gpu-a", "nvidia_driver", {}), ("ok", "cpu-b", "os_tuning", {}),
              ("skipped", "cpu-b", "os_tuning", {})]
    lines, doc = _run(tmp_path, events)
    assert lines[1].startswith("cpu-b: converged, nothing changed;") and lines[1].endswith("; tasks: 1 executed, 1 skipped")
    assert lines[2].startswith("gpu-a: converged, nothing changed;") and lines[2].endswith("; tasks: 3 executed, 3 skipped")
    assert doc["hosts"]["gpu-a"]["tasks"] == {"executed": 3, "skipped": 3}
    assert lines[-1] == "No changes on any host: the fleet was already converged."


def test_dry_run_says_so_and_a_converged_fleet_predicts_nothing(tmp_path):
    events = [("ok", "gpu-a", "os_tuning", {"changed": False}), ("ok", "gpu-a", "nvidia_driver", {})]
    lines, doc = _run(tmp_path, events, check=True, published={"gpu-a": _plan_run_all()})
    assert lines[0] == "BANNER GPUOPS FLEET SUMMARY (DRY RUN)"
    assert lines[1].startswith("gpu-a: converged: a run would change nothing; GPUs 8;")
    assert lines[-1] == "Dry run: a run would change nothing on any host; the fleet is converged."
    assert doc["dry_run"] is True and doc["changed"] == 0


def test_dry_run_with_predicted_changes(tmp_path):
    lines, doc = _run(tmp_path, [("ok", "gpu-a", "nvidia_driver", {"changed": True})], check=True)
    assert "1 change(s) a run would make (dry run: not made)" in lines[1]
    assert lines[-1] == "Dry run: a run would make 1 change(s); they were not made."


def test_dry_run_tells_changes_made_outside_check_mode(tmp_path):
    # playbooks/probe.yml writes its report on the controller (a task outside check mode)
    callback = CallbackModule()
    res = _Result("localhost", None, {"changed": True})
    res._task_fields = {"check_mode": False}
    callback.dry_run = True
    callback.v2_runner_on_ok(res)
    record = CallbackModule.host_record("localhost", {"changed": 1}, callback.roles["localhost"], None, None, True,
                                        callback.made["localhost"])
    assert record["text"] == "converged: a run would change nothing; 1 change(s) made outside check mode"
    assert record["changed"] == 0 and record["made"] == 1


def test_json_path_unset_writes_nothing(tmp_path):
    callback = CallbackModule()
    callback.get_option = lambda name: None
    assert callback._json_path() is None


def test_a_driver_left_alone_is_shown():
    plan = {'driver': {'required': True, 'kernel_modules': {'value': 'open'}},
            'adopt': {'nvidia_driver': {'action': 'leave', 'owner': 'runfile', 'reason': 'runfile; left alone'}},
            'roles': {'nvidia_driver': {'run': False, 'reason': 'runfile; left alone'}}}
    lines = CallbackModule.host_lines("h", {"changed": 0}, {}, {"plan": plan})
    assert "  left alone (nvidia_driver): runfile; left alone" in lines
    assert any("nvidia_driver" in line and "skipped: runfile; left alone" in line for line in lines)


# ---------------------------------------------------------------- issue 34: reports that say what they know
import pytest  # noqa: E402
import yaml  # noqa: E402

DATA = os.path.abspath(os.path.join(HERE, "..", "module_utils", "data"))
with open(os.path.join(DATA, "fleet_summary_attribution.yml")) as _handle:
    ATTRIBUTION = yaml.safe_load(_handle)["cases"]


@pytest.mark.parametrize("case", ATTRIBUTION, ids=[c["name"] for c in ATTRIBUTION])
def test_failure_attribution(case):
    assert CallbackModule.attribution(case["role"], case["parent"], case["path"]) == case["expect"]


class _CommonTask(_Task):
    """A task of the private common role included by ``parent`` (its Task.get_path())."""

    def __init__(self, parent, path, name):
        _Task.__init__(self, "common")
        self._role._parents = [_Role(parent)]
        self.name = name
        self._path = path

    def get_path(self):
        return self._path


def test_a_real_run_counts_a_change_of_a_task_outside_check_mode(tmp_path):
    """Issue 34: `lab-cpu: 1 changed; ... changed 0` then `No changes on any host` - a task with
    check_mode: false that changed in a real run is a change made, not one 'made outside check mode'."""
    callback = CallbackModule()
    callback._display = _Display()
    callback.get_option = lambda name: str(tmp_path / "s.json") if name == "json_path" else None
    callback.v2_playbook_on_play_start(_Play(False))
    res = _Result("lab-cpu", "os_tuning", {"changed": True})
    res._task_fields = {"check_mode": False}
    callback.v2_runner_on_ok(res)
    from ansible.executor.stats import AggregateStats
    stats = AggregateStats()
    stats.increment("ok", "lab-cpu")
    stats.increment("changed", "lab-cpu")
    callback.v2_playbook_on_stats(stats)
    lines = callback._display.lines
    assert lines[1].startswith("lab-cpu: 1 changed; GPUs -") and "; changed 1;" in lines[1]
    assert lines[-1] == "1 change(s) made; run again to confirm it converges with zero changes."
    assert callback.made == {}


def test_totals_come_from_what_the_tasks_reported(tmp_path):
    """The recap's count aside, a task that reported changed is a change: never 'already converged'."""
    callback = CallbackModule()
    callback._display = _Display()
    callback.get_option = lambda name: None
    callback.v2_playbook_on_play_start(_Play(False))
    callback.v2_runner_on_ok(_Result("gpu-a", "nvidia_driver", {"changed": True}))
    callback.v2_runner_on_ok(_Result("gpu-a", None, {"changed": True}))
    from ansible.executor.stats import AggregateStats
    stats = AggregateStats()
    stats.increment("ok", "gpu-a")  # the recap saw no change
    callback.v2_playbook_on_stats(stats)
    assert "; changed 2;" in callback._display.lines[1]
    assert callback._display.lines[-1] == "2 change(s) made; run again to confirm it converges with zero changes."
    assert not any("already converged" in line for line in callback._display.lines)


def test_a_failure_in_commons_cuda_check_is_commons_not_the_driver_roles(tmp_path):
    """Issue 34: `nvidia_driver FAILED` for a failure in common's CUDA key check."""
    callback = CallbackModule()
    callback._display = _Display()
    path = str(tmp_path / "s.json")
    callback.get_option = lambda name: path if name == "json_path" else None
    callback.v2_playbook_on_play_start(_Play(False))
    callback.v2_runner_on_ok(_Result("gpu-a", "nvidia_driver", {}))
    res = _Result("gpu-a", None, {"msg": "the repository key http://m/k.pub comes over plain http: set "
                                         "gpuops_cuda_repo_key_checksum to its sha256 (or use https://)\nmore"})
    res._task = _CommonTask("nvidia_driver", "/c/roles/common/tasks/cuda_repo_lookup.yml:11",
                            "Look up this host's CUDA repository and its key")
    callback.v2_runner_on_failed(res)
    from ansible.executor.stats import AggregateStats
    stats = AggregateStats()
    stats.increment("ok", "gpu-a")
    stats.increment("failures", "gpu-a")
    stats.update_custom_stats("gpuops_summary", _plan_run_all(), "gpu-a")
    callback.v2_playbook_on_stats(stats)
    text = "\n".join(callback._display.lines)
    assert ("  nvidia_driver              FAILED in common's NVIDIA CUDA repository check (key, sources) (included by "
            "nvidia_driver), not in nvidia_driver's own tasks [roles/common/tasks/cuda_repo_lookup.yml:11]: the "
            "repository key http://m/k.pub comes over plain http: set gpuops_cuda_repo_key_checksum to its sha256 "
            "(or use https://) (1 tasks, 0 changed)") in text
    with open(path) as handle:
        doc = json.load(handle)
    failure = doc["hosts"]["gpu-a"]["failures"][0]
    assert failure["role"] == "common" and failure["for"] == "nvidia_driver"
    assert failure["step"] == "NVIDIA CUDA repository check (key, sources)"
    assert doc["hosts"]["gpu-a"]["roles"]["nvidia_driver"]["state"] == "failed"
    assert callback._display.lines[-1] == "Failed: gpu-a. See the errors above."


def test_a_failure_in_the_roles_own_task_names_the_task():
    res = _Result("gpu-a", "nvidia_driver", {"msg": "apt failed"})
    res._task.name = "Install the driver packages"
    callback = CallbackModule()
    callback.v2_runner_on_failed(res)
    rows = CallbackModule.role_rows(callback.roles["gpu-a"], {}, "failed", callback.failures["gpu-a"])
    assert rows == [("nvidia_driver", "failed", "FAILED in Install the driver packages: apt failed (0 tasks, 0 changed)")]


def test_an_ignored_failure_is_not_the_roles_failure():
    callback = CallbackModule()
    callback.v2_runner_on_ok(_Result("gpu-a", "os_tuning", {}))
    callback.v2_runner_on_failed(_Result("gpu-a", "os_tuning", {"msg": "expected"}), ignore_errors=True)
    counts = callback.roles["gpu-a"]["os_tuning"]
    assert counts["failed"] == 0 and counts["ignored"] == 1 and "gpu-a" not in callback.failures
    assert CallbackModule.role_rows(callback.roles["gpu-a"], {}, "converged") == [
        ("os_tuning", "ran", "converged (1 tasks, 0 changed)")]


def test_a_dry_run_with_roles_not_inspected_never_says_converged(tmp_path):
    """Issue 34: the probe's `Dry run: a run would change nothing on any host; the fleet is converged.`
    while 6 of 10 roles per GPU host were not inspected."""
    published = _plan_run_all()
    published["probe"] = {"inspected": ["nvidia_driver"], "would_change": [], "would_fail": [],
                          "unknown": ["gpu_validate", "os_tuning"]}
    lines, doc = _run(tmp_path, [("ok", "gpu-a", "nvidia_driver", {})], check=True, published={"gpu-a": published})
    assert lines[1].startswith("gpu-a: no change predicted; unknown for 2 role(s) not inspected (gpu_validate, "
                               "os_tuning); GPUs 8;")
    assert lines[-1] == ("Dry run: no change predicted; unknown for 2 role(s) on 1 host(s) that the dry run did not "
                         "inspect: not known to be converged.")
    assert not any("converged." in line and "not known" not in line for line in lines)
    assert doc["unknown"] == {"gpu-a": ["gpu_validate", "os_tuning"]} and doc["hosts"]["gpu-a"]["state"] == "unknown"
    lines, doc = _run(tmp_path, [("ok", "gpu-a", "nvidia_driver", {"changed": True})], check=True,
                      published={"gpu-a": published})
    assert lines[-1].startswith("Dry run: a run would make 1 change(s) (not made); unknown for 2 role(s)")
    # a real run's summary does not read the probe's unknowns
    lines, doc = _run(tmp_path, [("ok", "gpu-a", "nvidia_driver", {})], published={"gpu-a": published})
    assert lines[-1] == "No changes on any host: the fleet was already converged."


def test_a_probe_run_says_what_the_probe_predicts(tmp_path):
    """A probe run's own tasks change nothing (check mode): its summary must not say "no change
    predicted" while the probe's report predicts a driver change or a failure."""
    published = _plan_run_all()
    published["probe"] = {"inspected": ["node_exporter", "nvidia_driver"], "would_change": ["nvidia_driver"],
                          "would_fail": ["node_exporter"], "unknown": ["os_tuning"]}
    lines, doc = _run(tmp_path, [("ok", "gpu-a", "nvidia_driver", {})], check=True,
                      published={"gpu-a": published})
    assert lines[1].startswith("gpu-a: the probe predicts a run would FAIL in node_exporter; the probe predicts "
                               "changes in nvidia_driver; unknown for 1 role(s) not inspected (os_tuning); GPUs 8;")
    assert lines[-1] == ("Dry run: the probe predicts a run would FAIL in 1 role(s) on 1 host(s) (gpu-a); the probe "
                         "predicts changes in 1 role(s) on 1 host(s) (gpu-a); unknown for 1 role(s) on 1 host(s) that "
                         "the dry run did not inspect: not known to be converged.")
    assert doc["predicted"] == {"gpu-a": {"would_change": ["nvidia_driver"], "would_fail": ["node_exporter"]}}
    # every line says it: the overview and the host's own lines
    assert not any("no change predicted" in line for line in lines), lines
    # every role inspected, one would change: never "converged", and said as the probe's prediction
    published["probe"] = {"inspected": ["nvidia_driver"], "would_change": ["nvidia_driver"], "would_fail": [],
                          "unknown": []}
    lines, doc = _run(tmp_path, [("ok", "gpu-a", "nvidia_driver", {})], check=True,
                      published={"gpu-a": published})
    assert doc["hosts"]["gpu-a"]["state"] == "changes"
    assert lines[-1] == ("Dry run: the probe predicts changes in 1 role(s) on 1 host(s) (gpu-a); nothing was "
                         "changed.")
    # a real run's summary does not read the probe's predictions
    lines, doc = _run(tmp_path, [("ok", "gpu-a", "nvidia_driver", {})], published={"gpu-a": published})
    assert lines[-1] == "No changes on any host: the fleet was already converged."


def test_a_rescued_failure_is_not_the_hosts_failure():
    """A failure a block's rescue took (the recap counts it as rescued, not as a failure) is said as such."""
    callback = CallbackModule()
    callback.v2_runner_on_ok(_Result("gpu-a", "nvidia_driver", {"changed": True}))
    res = _Result("gpu-a", "nvidia_driver", {"msg": "apt: held broken packages"})
    res._task.name = "Apply the driver change"
    callback.v2_runner_on_failed(res)
    state = CallbackModule.state_of(CallbackModule.totals({"rescued": 1}, callback.roles["gpu-a"]))[0]
    assert state == "changed"
    rows = CallbackModule.role_rows(callback.roles["gpu-a"], {}, state, callback.failures["gpu-a"])
    assert rows == [("nvidia_driver", "rescued", "rescued after FAILED in Apply the driver change: apt: held broken "
                                                 "packages (1 tasks, 1 changed)")]


BATCHED = """- name: probe
  hosts: all
  gather_facts: false
  tasks:
    - ansible.builtin.debug: {msg: probed}
- name: batched
  hosts: all
  gather_facts: false
  serial: 1
  max_fail_percentage: 0
  tasks:
    - ansible.builtin.fail: {msg: the canary failed}
      when: inventory_hostname == 'roll-a'
"""


def test_a_host_whose_batch_never_ran_is_not_reached_never_converged(tmp_path):
    """Issue 34 (found by the reboot injection): the rolling upgrade stopped after roll-a's batch and the
    summary said `roll-b: converged, nothing changed` although the play never reached roll-b."""
    import subprocess
    import sys
    repo = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
    (tmp_path / "pb.yml").write_text(BATCHED)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(repo, ".cache", "collections"),
               ANSIBLE_CALLBACKS_ENABLED="gpuops.dlserver.fleet_summary", ANSIBLE_NOCOLOR="1",
               GPUOPS_FLEET_SUMMARY_JSON=str(tmp_path / "summary.json"))
    res = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "roll-a,roll-b,",
                          "-c", "local", "-e", "ansible_python_interpreter=%s" % sys.executable, str(tmp_path / "pb.yml")],
                         capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path), check=False)
    out = res.stdout
    assert res.returncode != 0, out
    summary = out.split("GPUOPS FLEET SUMMARY", 1)[1]
    assert "roll-b: NOT REACHED by play 'batched' (the play stopped before this host's batch; nothing changed by " \
           "the plays that ran)" in summary, summary
    assert "roll-b: converged" not in summary
    assert summary.rstrip().splitlines()[-1] == "Failed: roll-a. Not reached (their batch never ran): roll-b. " \
                                                "See the errors above.", summary


def test_the_power_cycle_through_the_bmc_is_one_line_and_in_the_record():
    report = {"power_cycled": True, "back": False,
              "message": "the reboot timed out; it did not come back after the power cycle either: timeout"}
    lines = CallbackModule.host_lines("roll-a", {"failures": 1}, {}, {"bmc_recovery": report})
    said = [line for line in lines if "BMC" in line]
    assert said == ["  power cycle through the BMC: " + report["message"]]
    record = CallbackModule.host_record("roll-a", {"failures": 1}, {}, {"bmc_recovery": report})
    assert record["bmc_recovery"] == report
    assert CallbackModule.host_record("h", {}, {}, {})["bmc_recovery"] is None
    assert not [line for line in CallbackModule.host_lines("h", {}, {}, {}) if "BMC" in line]
