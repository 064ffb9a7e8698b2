# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Task counts per host for bench/fleet_bench.py (a benchmark helper, not a collection plugin)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: fleet_bench_tasks
type: aggregate
short_description: Per-host task counts for the fleet benchmark
description:
  - Counts, per host, the task results of a run by status and writes them as JSON to the
    file named by the environment variable C(GPUOPS_BENCH_COUNTS) when the run ends.
  - C(executed) counts the tasks that ran for the host (status ok, changed or failed),
    one per task even when it loops; C(skipped) is counted apart. Dynamic includes
    (C(include_tasks), C(include_role), C(include_vars)) are counted apart as C(includes), since
    they are expanded on the controller and never reach the host.
  - C(controller_only) is the part of C(executed) whose action runs on the controller
    (C(set_fact), C(debug), C(assert), C(set_stats), ...), so no round trip to the host.
  - With these rules C(executed) + C(includes) is the recap's C(ok) plus its C(failures),
    and C(skipped) is the recap's C(skipped); the recap is written beside the counts.
  - C(slowest_tasks) lists the tasks that took the longest wall time (all hosts together);
    C(costliest_tasks) the tasks that used the most controller CPU (user and system seconds of
    C(ansible-playbook) and of the workers and SSH clients it reaped while the task ran, all
    hosts together), which shows where an added host's CPU goes.
  - Lives under C(bench/callback_plugins); enable it with C(ANSIBLE_CALLBACK_PLUGINS) and
    C(ANSIBLE_CALLBACKS_ENABLED=fleet_bench_tasks).
requirements:
  - enable in configuration
"""

import json
import os
import resource
import sys
import time

from ansible.plugins.callback import CallbackBase

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import fleet_report  # noqa: E402  pylint: disable=wrong-import-position

COUNT_KEYS = ("executed", "changed", "failed", "skipped", "unreachable", "includes", "controller_only")
INCLUDE_ACTIONS = frozenset(("include_tasks", "include_role", "include_vars", "include"))
CONTROLLER_ACTIONS = frozenset((
    "set_fact", "debug", "assert", "fail", "set_stats", "meta", "add_host", "group_by",
    "validate_argument_spec", "pause", "import_role", "import_tasks",
))


def controller_split():
    """{main, workers}: user and system CPU seconds of ansible-playbook's own process (the
    strategy, templating, includes, callbacks) and of the children it has reaped so far
    (workers, ssh clients)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"main": own.ru_utime + own.ru_stime, "workers": children.ru_utime + children.ru_stime}


def controller_cpu():
    """User and system CPU seconds of this process and of the children it has reaped."""
    return sum(controller_split().values())


def node_cpu(paths):
    """CPU seconds the nodes' cgroups have used so far, all together (0 without counters)."""
    return sum(fleet_report.read_cpu_counter(path) for path in paths)


def short_action(action):
    """'ansible.builtin.set_fact' -> 'set_fact'."""
    return (action or "").rsplit(".", 1)[-1]


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "fleet_bench_tasks"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.hosts = {}
        self.task_times = []
        self._current = None
        self.node_paths = []
        mapping = os.environ.get("GPUOPS_BENCH_NODE_CPU")
        if mapping and os.path.exists(mapping):
            with open(mapping) as handle:
                self.node_paths = sorted(json.load(handle).values())

    def _task_started(self, name, now=None, cpu=None, nodes=None):
        now = time.time() if now is None else now
        cpu = controller_cpu() if cpu is None else cpu
        nodes = node_cpu(self.node_paths) if nodes is None else nodes
        if self._current is not None:
            self.task_times.append((self._current[0], now - self._current[1], cpu - self._current[2],
                                    nodes - self._current[3]))
        self._current = (name, now, cpu, nodes) if name is not None else None

    def slowest(self, count=10):
        ordered = sorted(self.task_times, key=lambda item: -item[1])[:count]
        return [{"task": item[0], "wall_s": round(item[1], 2)} for item in ordered]

    def costliest(self, count=15, column=2):
        """The task names that used the most controller CPU (column 2) or node CPU (column 3),
        each name's runs added up."""
        totals = {}
        for item in self.task_times:
            entry = totals.setdefault(item[0], [0.0, 0])
            entry[0] += item[column]
            entry[1] += 1
        ordered = sorted(totals.items(), key=lambda kv: -kv[1][0])[:count]
        return [{"task": name, "cpu_s": round(cpu, 2), "runs": runs} for name, (cpu, runs) in ordered]

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._task_started(task.get_name())

    def v2_playbook_on_handler_task_start(self, task):
        self._task_started(task.get_name())

    def count(self, host, action, status, changed=False):
        counts = self.hosts.setdefault(host, dict((k, 0) for k in COUNT_KEYS))
        action = short_action(action)
        if action in INCLUDE_ACTIONS and status == "ok":
            counts["includes"] += 1
            return
        if status in ("skipped", "unreachable"):
            counts[status] += 1
            return
        counts["executed"] += 1
        if status == "failed":
            counts["failed"] += 1
        if changed:
            counts["changed"] += 1
        if action in CONTROLLER_ACTIONS:
            counts["controller_only"] += 1

    def _record(self, result, status):
        self.count(result._host.get_name(), result._task.action, status,
                   bool(result._result.get("changed", False)))

    def v2_runner_on_ok(self, result):
        self._record(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._record(result, "failed")

    def v2_runner_on_skipped(self, result):
        self._record(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._record(result, "unreachable")

    def v2_playbook_on_stats(self, stats):
        self._task_started(None)
        path = os.environ.get("GPUOPS_BENCH_COUNTS")
        if not path:
            return
        recap = dict((host, stats.summarize(host)) for host in sorted(stats.processed))
        with open(path, "w") as handle:
            json.dump({"hosts": self.hosts, "recap": recap, "slowest_tasks": self.slowest(),
                       "costliest_tasks": self.costliest(),
                       "node_costliest_tasks": self.costliest(column=3) if self.node_paths else [],
                       "controller_split": dict((k, round(v, 2)) for k, v in controller_split().items())},
                      handle, indent=1, sort_keys=True)
