"""bench/callback_plugins/fleet_bench_tasks.py: how the fleet benchmark counts tasks."""
import importlib.util
import json
import os
import sys
import time

import pytest

CALLBACK = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench",
                                        "callback_plugins", "fleet_bench_tasks.py"))


@pytest.fixture
def callback():
    spec = importlib.util.spec_from_file_location("fleet_bench_tasks", CALLBACK)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod.CallbackModule()


class Host:
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


class Task:
    def __init__(self, action):
        self.action = action


class Result:
    def __init__(self, host, action, changed=False):
        self._host = Host(host)
        self._task = Task(action)
        self._result = {"changed": changed}


class Stats:
    processed = {"h1": 1}

    @staticmethod
    def summarize(host):
        return {"ok": 3, "changed": 1, "skipped": 1, "failures": 0, "unreachable": 0, "host": host}


def test_counts_by_status(callback):
    callback.v2_runner_on_ok(Result("h1", "ansible.builtin.file"))
    callback.v2_runner_on_ok(Result("h1", "ansible.builtin.copy", changed=True))
    callback.v2_runner_on_ok(Result("h1", "ansible.builtin.set_fact"))
    callback.v2_runner_on_ok(Result("h1", "ansible.builtin.include_role"))
    callback.v2_runner_on_ok(Result("h1", "include_tasks"))
    callback.v2_runner_on_skipped(Result("h1", "ansible.builtin.apt"))
    callback.v2_runner_on_failed(Result("h2", "ansible.builtin.command"))
    callback.v2_runner_on_unreachable(Result("h2", "ansible.builtin.ping"))
    assert callback.hosts["h1"] == {"executed": 3, "changed": 1, "failed": 0, "skipped": 1, "unreachable": 0,
                                    "includes": 2, "controller_only": 1}
    assert callback.hosts["h2"]["executed"] == 1
    assert callback.hosts["h2"]["failed"] == 1
    assert callback.hosts["h2"]["unreachable"] == 1


def test_a_failed_include_counts_as_executed_and_failed(callback):
    callback.v2_runner_on_failed(Result("h1", "ansible.builtin.include_tasks"))
    assert callback.hosts["h1"]["executed"] == 1 and callback.hosts["h1"]["includes"] == 0


def test_writes_counts_and_recap_where_the_environment_says(callback, tmp_path, monkeypatch):
    path = tmp_path / "counts.json"
    monkeypatch.setenv("GPUOPS_BENCH_COUNTS", str(path))
    callback.v2_runner_on_ok(Result("h1", "ansible.builtin.file"))
    callback.v2_playbook_on_stats(Stats())
    doc = json.loads(path.read_text())
    assert doc["hosts"]["h1"]["executed"] == 1
    assert doc["recap"]["h1"]["ok"] == 3


def test_writes_nothing_without_the_environment(callback, tmp_path, monkeypatch):
    monkeypatch.delenv("GPUOPS_BENCH_COUNTS", raising=False)
    monkeypatch.chdir(tmp_path)
    callback.v2_playbook_on_stats(Stats())
    assert not os.listdir(str(tmp_path))


def test_a_skipped_include_is_skipped(callback):
    callback.v2_runner_on_skipped(Result("h1", "ansible.builtin.include_role"))
    assert callback.hosts["h1"]["skipped"] == 1 and callback.hosts["h1"]["includes"] == 0


class NamedTask:
    def __init__(self, name):
        self.name = name

    def get_name(self):
        return self.name


def test_slowest_tasks(callback):
    for name, now in (("a", 0.0), ("b", 1.0), ("c", 6.0)):
        callback._task_started(name, now)  # pylint: disable=protected-access
    callback._task_started(None, 8.0)  # pylint: disable=protected-access
    assert callback.slowest(2) == [{"task": "b", "wall_s": 5.0}, {"task": "c", "wall_s": 2.0}]


def test_costliest_tasks_add_up_each_name(callback):
    """CPU between one task start and the next is the earlier task's; runs of one name add up."""
    for name, cpu in (("a", 10.0), ("b", 10.5), ("a", 12.5), ("c", 13.0)):
        callback._task_started(name, 0.0, cpu)  # pylint: disable=protected-access
    callback._task_started(None, 0.0, 13.25)  # pylint: disable=protected-access
    assert callback.costliest(2) == [{"task": "b", "cpu_s": 2.0, "runs": 1}, {"task": "a", "cpu_s": 1.0, "runs": 2}]


def test_controller_cpu_grows_with_work(callback):
    controller_cpu = sys.modules[type(callback).__module__].controller_cpu
    before = controller_cpu()
    deadline = time.time() + 0.2
    while time.time() < deadline:
        pass
    assert controller_cpu() > before


def test_task_start_events_are_timed(callback, monkeypatch):
    monkeypatch.delenv("GPUOPS_BENCH_COUNTS", raising=False)
    callback.v2_playbook_on_task_start(NamedTask("x"), False)
    callback.v2_playbook_on_handler_task_start(NamedTask("y"))
    callback.v2_playbook_on_stats(Stats())
    assert sorted(entry["task"] for entry in callback.slowest()) == ["x", "y"]


def test_node_cpu_per_task_from_the_cgroup_counters(tmp_path, monkeypatch):
    counters = {"n1": tmp_path / "n1.usage", "n2": tmp_path / "n2.usage"}
    counters["n1"].write_text("1000000000\n")
    counters["n2"].write_text("500000000\n")
    mapping = tmp_path / "nodes.json"
    mapping.write_text(json.dumps(dict((host, str(path)) for host, path in counters.items())))
    monkeypatch.setenv("GPUOPS_BENCH_NODE_CPU", str(mapping))
    spec = importlib.util.spec_from_file_location("fleet_bench_tasks", CALLBACK)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cb = mod.CallbackModule()
    assert mod.node_cpu(cb.node_paths) == 1.5
    cb._task_started("probe", 0.0, 0.0)  # pylint: disable=protected-access
    counters["n1"].write_text("3000000000\n")  # the probe: 2 s on n1, 0.25 s on n2
    counters["n2"].write_text("750000000\n")
    cb._task_started("status", 0.0, 0.0)  # pylint: disable=protected-access
    counters["n2"].write_text("1250000000\n")
    cb._task_started(None, 0.0, 0.0)  # pylint: disable=protected-access
    assert cb.costliest(column=3) == [{"task": "probe", "cpu_s": 2.25, "runs": 1},
                                      {"task": "status", "cpu_s": 0.5, "runs": 1}]


def test_node_cpu_without_counters_is_zero(callback):
    assert callback.node_paths == []
    assert callback.costliest(column=3) == []
