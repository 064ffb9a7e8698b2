# -*- coding: utf-8 -*-
# Copyright (c) gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: fleet_summary
type: aggregate
short_description: Per-host summary of what a gpuops.dlserver run converged, changed and skipped
version_added: 0.1.0
description:
  - At the end of a playbook run, prints one block per host, after the usual recap, with
    what each role of the collection did on that host (tasks run, tasks changed) and what
    was skipped and why.
  - Hosts that publish C(gpuops_summary) with M(ansible.builtin.set_stats) (C(per_host=true)),
    as C(playbooks/site.yml) does, also show their GPUs, probe depth, topology and the
    hardware plan's decisions with their reasons, and the kernel security updates that
    os_tuning's kernel hold keeps back on driver hosts (C(gpuops_summary.os_tuning)), and
    one line per Python environment of python_stack with what its verification saw - framework
    versions, CUDA or CPU, the mixed-precision step (C(gpuops_summary.python_stack)) - and what a
    power cycle through the BMC did (C(gpuops_summary.bmc_recovery), the rolling driver upgrade's
    opt-in recovery; the password is never part of it).
  - Before the detail, one line per host - GPUs, driver, plan, changed tasks, pending reboot
    (the collection's reboot request C(gpuops_reboot)), validation verdict, and how many tasks
    the host executed and skipped (what a no-op re-run of a converged fleet costs per host).
  - A dry run (C(--check), or plays in check mode such as C(gpuops.dlserver.probe)) says it is
    one - its changes are predictions - and a converged fleet reports zero of them. Roles the dry
    run did not inspect (C(gpuops_summary.probe.unknown), published by the probe) are unknown, and a
    dry run with any never says the fleet is converged.
  - The counts of changes come from what the tasks reported (this callback's own counts per host
    and role); a run in which any task changed something never ends with "already converged".
  - A failure is attributed to the role and step that failed, from the task's role and path - a
    task of the private C(common) role (its CUDA-repository check, its preflight) that another role
    included is reported as common's step, included by that role. A failure the task ignores
    (C(ignore_errors)) is not counted as the role's failure.
  - Unreachable hosts are told apart from failed ones, and a role the plan runs but that a failed
    or unreachable host never reached says so.
  - The last line says whether anything changed, so a second run of a converged fleet says
    so in one line.
  - The same summary is written as JSON (for CI and AWX) where O(json_path) says.
  - Enable it with C(callbacks_enabled = gpuops.dlserver.fleet_summary) in C(ansible.cfg) or
    C(ANSIBLE_CALLBACKS_ENABLED).
requirements:
  - enable in configuration
options:
  json_path:
    description:
      - Where to write the summary as JSON on the controller (C(dry_run), C(changed), C(failed),
        C(unreachable), and per host its line's values and per role what it did). Not written when empty.
    type: path
    env:
      - name: GPUOPS_SUMMARY_JSON
    ini:
      - section: callback_gpuops_fleet_summary
        key: json_path
"""

import json
import re

from ansible import context
from ansible.plugins.callback import CallbackBase

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import summary_lines

PRIVATE_ROLE = "common"
# Dynamic includes report an ok result of their own; they are not counted as executed tasks.
INCLUDE_ACTIONS = frozenset(("include_tasks", "include_role", "include_vars"))
ROLE_PREFIX = "gpuops.dlserver."
# The steps of the private helper (roles/common/tasks/<file>) that other roles include: a failure
# there is the step's, not the including role's own tasks' (issue 34).
COMMON_STEPS = {
    "cuda_repo.yml": "NVIDIA CUDA repository check (key, sources)",
    "cuda_repo_lookup.yml": "NVIDIA CUDA repository check (key, sources)",
    "package_repo.yml": "package repository check (key, sources)",
    "package_repo_write.yml": "package repository write",
    "preflight.yml": "preflight (platform, typed inputs)",
    "gpu.yml": "probe and plan (every role's inputs checked)",
    "plan.yml": "probe and plan (every role's inputs checked)",
    "probe.yml": "probe and plan (every role's inputs checked)",
    "nvml.yml": "NVML binding install",
    "plan_record.yml": "plan record (/etc/gpuops/plan.json)",
    "status.yml": "status record",
    "reboot.yml": "reboot",
}
# What the callback counts per host and role ("ignored": failures the task ignores, not the role's).
COUNT_KEYS = ("ok", "changed", "skipped", "failed", "ignored", "unreachable")
# <anything>/roles/<role>/(tasks|handlers)/<file>:<line> (Task.get_path() of a role's task or handler)
_TASK_PATH_RE = re.compile(r"(?:.*/)?roles/([A-Za-z0-9_.]+)/(tasks|handlers)/([^:]+):([0-9]+)")


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpuops.dlserver.fleet_summary"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        # host -> role -> {"ok": n, "changed": n, "skipped": n, "failed": n, "unreachable": n}
        self.roles = {}
        self.order = []
        # host -> the collection's reboot request (gpuops_reboot) as a role last set it
        self.reboots = {}
        # host -> changes made by tasks that are not in check mode
        self.made = {}
        # host -> ok results of dynamic includes (include_tasks, include_role, include_vars)
        self.includes = {}
        # host -> the failures of its tasks, each attributed to the role and step that failed
        self.failures = {}
        # play uuid -> {"name", "targets": hosts of the play, "reached": hosts of the batches that ran}
        self.plays = {}
        self.dry_run = bool(context.CLIARGS.get("check", False))

    # ------------------------------------------------------------------ events
    @staticmethod
    def _role_of(task):
        role = getattr(task, "_role", None)
        if role is None:
            return "(playbook)"
        name = role.get_name()
        if name.startswith(ROLE_PREFIX):
            name = name[len(ROLE_PREFIX):]
        if name == PRIVATE_ROLE:
            # the private helper (roles/common) count towards the role that called them
            parent = getattr(role, "_parents", None)
            if parent:
                return CallbackModule._role_name(parent[0]) or name
            return "(gpu probe and plan)"
        return name

    @staticmethod
    def _role_name(role):
        name = role.get_name()
        return name[len(ROLE_PREFIX):] if name.startswith(ROLE_PREFIX) else name

    @staticmethod
    def attribution(role, parent, path):
        """Which role and step a failed task belongs to, from its role, the role that included it
        (``parent``, for the private ``common``) and its path (``.../roles/<role>/tasks/<file>:<line>``):
        ``{role, for, step, where}``. A task of ``common`` is the common step's (its file says which),
        included for ``parent``; a task of a playbook has role None."""
        match = _TASK_PATH_RE.fullmatch(path or "")
        where = "roles/%s/%s/%s:%s" % match.groups() if match else (path or None)
        if role is None:
            return {"role": None, "for": None, "step": "playbook task", "where": where}
        step = "%s/%s" % match.group(2, 3) if match else "its tasks"
        if role == PRIVATE_ROLE and match:
            # common's handler is the collection's one reboot handler (roles/common/handlers/main.yml)
            step = COMMON_STEPS.get(match.group(3).rsplit("/", 1)[-1], step) if match.group(2) == "tasks" else \
                "reboot handler" if match.group(3) == "main.yml" else step
        return {"role": role, "for": parent if role == PRIVATE_ROLE else None, "step": step, "where": where}

    @classmethod
    def _failure_of(cls, result):
        task = result._task
        role = getattr(task, "_role", None)
        name = parent = None
        if role is not None:
            name = cls._role_name(role)
            parents = getattr(role, "_parents", None) or []
            parent = cls._role_name(parents[0]) if parents else None
        path = task.get_path() if hasattr(task, "get_path") else None
        failure = cls.attribution(name, parent, path)
        msg = str(result._result.get("msg") or "").strip().splitlines()
        failure.update(task=getattr(task, "name", None) or None, msg=msg[0] if msg else None)
        return failure

    def _count(self, result, key):
        host = result._host.get_name()
        role = self._role_of(result._task)
        if host not in self.roles:
            self.roles[host] = {}
            self.order.append(host)
        counts = self.roles[host].setdefault(role, dict((k, 0) for k in COUNT_KEYS))
        counts[key] += 1
        if key == "ok" and (getattr(result._task, "action", None) or "").rsplit(".", 1)[-1] in INCLUDE_ACTIONS:
            self.includes[host] = self.includes.get(host, 0) + 1
        if key == "ok" and result._result.get("changed", False):
            counts["changed"] += 1
        fields = getattr(result, "_task_fields", None) or {}
        if self.dry_run and key == "ok" and result._result.get("changed", False) and fields.get("check_mode") is False:
            # a task that runs for real in a dry run (check_mode: false, e.g. a report written on the
            # controller); outside a dry run every change is a change made, counted as such
            self.made[host] = self.made.get(host, 0) + 1
        if key == "failed":
            self.failures.setdefault(host, []).append(dict(self._failure_of(result), counted_for=role))
        request = (result._result.get("ansible_facts") or {}).get("gpuops_reboot") if key == "ok" else None
        if isinstance(request, dict):
            self.reboots[host] = request

    def v2_playbook_on_play_start(self, play):
        if getattr(play, "check_mode", False) is True:
            self.dry_run = True
        # Called once per batch of a play with `serial`, with the inventory restricted to the batch:
        # the play's hosts (within --limit) and the batch's. A host of a play none of whose batches
        # ran (the play stopped after an earlier batch failed) is "not reached", never "converged".
        try:
            inventory = play.get_variable_manager()._inventory  # pylint: disable=protected-access
            targets = set(h.name for h in inventory.get_hosts(play.hosts, ignore_restrictions=True))
            batch = set(h.name for h in inventory.get_hosts(play.hosts))
        except (AttributeError, TypeError, ValueError):
            return
        record = self.plays.setdefault(getattr(play, "_uuid", id(play)), {
            "name": play.get_name(), "targets": set(), "reached": set()})
        record["targets"] |= targets
        record["reached"] |= batch

    def not_reached(self, host):
        """The names of the plays that listed ``host`` but whose batches stopped before it."""
        return sorted(set(p["name"] for p in self.plays.values() if host in p["targets"] - p["reached"]))

    def v2_runner_on_ok(self, result):
        self._count(result, "ok")

    def v2_runner_on_skipped(self, result):
        self._count(result, "skipped")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        # a failure the task ignores (ignore_errors) is not the role's failure: counted apart
        self._count(result, "ignored" if ignore_errors else "failed")

    def v2_runner_on_unreachable(self, result):
        self._count(result, "unreachable")

    # ------------------------------------------------------------------ report
    def v2_playbook_on_stats(self, stats):
        hosts = sorted(set(self.order) | set(stats.processed.keys()))
        custom = getattr(stats, "custom", {}) or {}
        self._display.banner("GPUOPS FLEET SUMMARY" + (" (DRY RUN)" if self.dry_run else ""))
        records = {}
        for host in hosts:
            summary = self.totals(stats.summarize(host), self.roles.get(host, {}))
            records[host] = self.host_record(host, summary, self.roles.get(host, {}),
                                             (custom.get(host) or {}).get("gpuops_summary"), self.reboots.get(host),
                                             self.dry_run, self.made.get(host, 0), self.includes.get(host, 0),
                                             self.failures.get(host), self.not_reached(host))
            self._display.display(self.overview_line(records[host]))
        for host in hosts:
            summary = self.totals(stats.summarize(host), self.roles.get(host, {}))
            for line in self.host_lines(host, summary, self.roles.get(host, {}),
                                        (custom.get(host) or {}).get("gpuops_summary"), self.dry_run,
                                        self.made.get(host, 0), self.failures.get(host), self.not_reached(host)):
                self._display.display(line)
        document = self.fleet_document(records, self.dry_run)
        self._display.display(self.final_line(document))
        path = self._json_path()
        if path:
            try:
                with open(path, "w") as handle:
                    json.dump(document, handle, indent=2, sort_keys=True)
                    handle.write("\n")
            except (IOError, OSError) as exc:
                self._display.warning("gpuops.dlserver.fleet_summary: cannot write %s: %s" % (path, exc))

    def _json_path(self):
        try:
            return self.get_option("json_path")
        except (KeyError, AttributeError):
            return None

    @staticmethod
    def totals(summary, roles):
        """The host's recap counts with ``changed`` taken from what its tasks reported (this callback's
        own counts, every role and play together; a handler is a task); failures, unreachable and
        rescued as the recap has them (a rescued failure is not the host's)."""
        summary = dict(summary or {})
        summary["changed"] = sum(c.get("changed", 0) for c in (roles or {}).values())
        return summary

    @staticmethod
    def unknown_roles(published):
        """The roles a dry run could not predict on this host (``gpuops_summary.probe.unknown``, published by
        playbooks/probe.yml: roles the probe did not inspect)."""
        probe = (published or {}).get("probe") or {}
        return sorted(probe.get("unknown") or [])

    @staticmethod
    def probe_predictions(published):
        """What the probe predicts of this host's roles in a dry run (``gpuops_summary.probe``, published by
        playbooks/probe.yml): ``{would_change: [role], would_fail: [role]}``. Its read-only tasks change
        nothing, so a probe run's task counts alone would say "no change predicted"."""
        probe = (published or {}).get("probe") or {}
        return {"would_change": sorted(probe.get("would_change") or []),
                "would_fail": sorted(probe.get("would_fail") or [])}

    @staticmethod
    def state_of(summary, dry_run=False, made=0, unknown=(), probe=None, not_reached=()):
        """``(state, text)`` of a host from its task counts; in a dry run, ``made`` of its changes were
        made by tasks outside check mode (the rest are predictions), ``unknown`` names the roles the
        dry run did not inspect (never "converged" while any is unknown) and ``probe`` is what the probe
        predicts of its roles (probe_predictions)."""
        changed = summary.get("changed", 0)
        if summary.get("unreachable"):
            return "unreachable", "UNREACHABLE"
        if summary.get("failures"):
            return "failed", "FAILED"
        if not_reached:
            # the play stopped before this host's batch: nothing of it ran here, so nothing is known of it
            return "not reached", "NOT REACHED by %s (the play stopped before this host's batch; %s)" % (
                ", ".join("play '%s'" % name for name in not_reached),
                "%d change(s) by the plays that ran" % changed if changed else "nothing changed by the plays that ran")
        if dry_run:
            note = "; %d change(s) made outside check mode" % made if made else ""
            predicted = changed - made
            parts = ["%d change(s) a run would make (dry run: not made)" % predicted] if predicted > 0 else []
            probe = probe or {}
            if probe.get("would_fail"):
                parts.append("the probe predicts a run would FAIL in %s" % ", ".join(probe["would_fail"]))
            if probe.get("would_change"):
                parts.append("the probe predicts changes in %s" % ", ".join(probe["would_change"]))
            if unknown:
                return "unknown", "%s; unknown for %d role(s) not inspected (%s)%s" % (
                    "; ".join(parts) or "no change predicted", len(unknown), ", ".join(unknown), note)
            return ("converged", "converged: a run would change nothing" + note) if not parts else (
                "changes", "; ".join(parts) + note)
        return ("converged", "converged, nothing changed") if changed == 0 else ("changed", "%d changed" % changed)

    @classmethod
    def host_record(cls, host, summary, roles, published, reboot=None, dry_run=False, made=0, includes=0,
                    failures=None, not_reached=()):
        """What the summary says of one host, as data (the overview line and the JSON)."""
        published = published or {}
        plan = published.get("plan") or {}
        gpu = published.get("gpu") or {}
        unknown = cls.unknown_roles(published) if dry_run else []
        predicted = cls.probe_predictions(published) if dry_run else {"would_change": [], "would_fail": []}
        state, text = cls.state_of(summary, dry_run, made, unknown, predicted, not_reached)
        drv = gpu.get("driver") or {}
        pending = dict((role, (v or {}).get("action")) for role, v in ((reboot or {}).get("pending") or {}).items())
        validation = published.get("validate") or {}
        return {
            "host": host, "state": state, "text": text, "changed": summary.get("changed", 0) - made, "made": made,
            "gpus": gpu.get("gpu_count", (plan.get("host") or {}).get("gpu_count")) if (gpu or plan) else None,
            "driver": (drv.get("version") or "loaded") if drv.get("loaded") else ("not loaded" if gpu else None),
            "plan": None if not plan else ("ok" if plan.get("ok", True) else "conflict"),
            "pending_reboot": pending,
            "validation": validation.get("verdict"),
            "bmc_recovery": published.get("bmc_recovery") or None,
            "tasks": cls.task_counts(roles, includes),
            "unknown": unknown,
            "predicted": predicted,
            "failures": [dict((k, v) for k, v in f.items() if k != "counted_for") for f in failures or []],
            "not_reached": list(not_reached),
            "roles": dict((role, {"state": st, "text": detail})
                          for role, st, detail in cls.role_rows(roles, plan, state, failures)),
        }

    @staticmethod
    def task_counts(roles, includes=0):
        """Task results of one host, all roles and plays together: ``executed`` (ok, changed or
        not, and failed; the ``includes`` ok results of dynamic includes left out) and ``skipped``."""
        counts = list((roles or {}).values())
        return {"executed": sum(c.get("ok", 0) + c.get("failed", 0) for c in counts) - includes,
                "skipped": sum(c.get("skipped", 0) for c in counts)}

    @staticmethod
    def overview_line(record):
        """One line per host: GPUs, driver, plan, changed, pending reboot, validation."""
        unknown = "?" if record["state"] in ("failed", "unreachable") else "-"
        pending = ", ".join("%s (%s)" % (r, a) for r, a in sorted(record["pending_reboot"].items())) or "no"
        tasks = record.get("tasks") or {}
        return "%s: %s; GPUs %s; driver %s; plan %s; changed %d; pending reboot: %s; validation: %s; tasks: %d executed, " \
            "%d skipped" % (
                record["host"], record["text"], unknown if record["gpus"] is None else record["gpus"],
                record["driver"] or unknown, record["plan"] or unknown, record["changed"], pending,
                record["validation"] or "not run", tasks.get("executed", 0), tasks.get("skipped", 0))

    @staticmethod
    def fleet_document(records, dry_run):
        hosts = sorted(records)
        return {"dry_run": dry_run, "hosts": records,
                "changed": sum(records[h]["changed"] for h in hosts),
                "changed_hosts": [h for h in hosts if records[h]["changed"] > 0],
                "made_outside_check_mode": sum(records[h]["made"] for h in hosts),
                "unknown": dict((h, records[h]["unknown"]) for h in hosts if records[h].get("unknown")),
                "predicted": dict((h, records[h]["predicted"]) for h in hosts
                                  if any((records[h].get("predicted") or {}).values())),
                "failed": [h for h in hosts if records[h]["state"] == "failed"],
                "unreachable": [h for h in hosts if records[h]["state"] == "unreachable"],
                "not_reached": [h for h in hosts if records[h]["state"] == "not reached"]}

    @staticmethod
    def outcome_sentence(document):
        """What changed (or would), from the tasks' own counts: never "converged" when a task changed
        something, nor in a dry run while a host has roles it did not inspect."""
        changed = document["changed"]
        unknown = document.get("unknown") or {}
        if document["dry_run"]:
            parts = ["a run would make %d change(s) (not made)" % changed] if changed else []
            predicted = document.get("predicted") or {}
            for key, text in (("would_fail", "the probe predicts a run would FAIL in"),
                              ("would_change", "the probe predicts changes in")):
                hosts = [h for h in sorted(predicted) if predicted[h].get(key)]
                if hosts:
                    parts.append("%s %d role(s) on %d host(s) (%s)" % (
                        text, sum(len(predicted[h][key]) for h in hosts), len(hosts), ", ".join(hosts)))
            if unknown:
                return "Dry run: %s; unknown for %d role(s) on %d host(s) that the dry run did not inspect: not known " \
                    "to be converged." % ("; ".join(parts) or "no change predicted", sum(len(r) for r in unknown.values()),
                                          len(unknown))
            if not parts:
                return "Dry run: a run would change nothing on any host; the fleet is converged."
            if len(parts) == 1 and changed:
                return "Dry run: a run would make %d change(s); they were not made." % changed
            return "Dry run: %s; nothing was changed." % "; ".join(parts)
        if changed == 0:
            return "No changes on any host: the fleet was already converged."
        return "%d change(s) made; run again to confirm it converges with zero changes." % changed

    @classmethod
    def final_line(cls, document):
        parts = []
        if document["unreachable"]:
            parts.append("Unreachable: %s." % ", ".join(document["unreachable"]))
        if document["failed"]:
            parts.append("Failed: %s." % ", ".join(document["failed"]))
        if document.get("not_reached"):
            parts.append("Not reached (their batch never ran): %s." % ", ".join(document["not_reached"]))
        if parts:
            if document["changed"]:
                parts.append("%d change(s) made (on %s)." % (
                    document["changed"], ", ".join(document.get("changed_hosts") or [])))
            return " ".join(parts) + " See the errors above."
        return cls.outcome_sentence(document)

    @staticmethod
    def failure_text(failure, role):
        """Where a failure counted for ``role`` happened: in the role's own tasks, or in a step of the
        private common role that ``role`` included (its CUDA-repository check, its preflight...)."""
        if failure.get("role") == PRIVATE_ROLE:
            text = "FAILED in common's %s (included by %s), not in %s's own tasks" % (
                failure.get("step"), failure.get("for") or role, role)
        else:
            text = "FAILED in %s" % (failure.get("task") or failure.get("step"))
        if failure.get("where"):
            text += " [%s]" % failure["where"]
        return text + (": %s" % failure["msg"] if failure.get("msg") else "")

    @classmethod
    def role_rows(cls, roles, plan, state, failures=None):
        """``(role, state, text)`` per role: what it did, or why it did not run; a failure says which
        role's step failed (failures: the host's attributed failures, see ``attribution``)."""
        plan_roles = plan.get("roles") or {}
        names = [r for r in roles if r != "(playbook)" and not (r.startswith("(") and not roles[r]["failed"])]
        names += [r for r in plan_roles if r not in names]
        rows = []
        for role in names:
            counts = roles.get(role)
            decision = plan_roles.get(role, {})
            own = [f for f in failures or [] if f.get("counted_for") == role]
            if counts and counts.get("unreachable"):
                rows.append((role, "unreachable", "UNREACHABLE (%d tasks ran before)" % counts["ok"]))
            elif counts and counts["failed"] and state not in ("failed", "unreachable"):
                # the host did not fail: a block's rescue took the failure (the recap counts it as rescued)
                rows.append((role, "rescued", "rescued after %s (%d tasks, %d changed)" % (
                    cls.failure_text(own[-1], role) if own else "a failure", counts["ok"], counts["changed"])))
            elif counts and counts["failed"] and own:
                rows.append((role, "failed", "%s (%d tasks, %d changed)" % (
                    cls.failure_text(own[-1], role), counts["ok"], counts["changed"])))
            elif counts and (counts["ok"] or counts["failed"]):
                what = "converged" if not counts["failed"] else "FAILED"
                rows.append((role, "failed" if counts["failed"] else "ran",
                             "%s (%d tasks, %d changed)" % (what, counts["ok"], counts["changed"])))
            elif decision.get("run", True) is False:
                rows.append((role, "skipped", "skipped: %s" % decision.get("reason")))
            elif state in ("failed", "unreachable"):
                rows.append((role, "not_reached", "not reached: the host %s earlier (plan: run)"
                             % ("failed" if state == "failed" else "was unreachable")))
            else:
                rows.append((role, "not_in_playbook", "not in this playbook (plan: run; %s)" % decision.get("reason")))
        return rows

    @classmethod
    def host_lines(cls, host, summary, roles, published, dry_run=False, made=0, failures=None, not_reached=()):
        """Text lines for one host. ``published`` is what site.yml gave set_stats."""
        unknown = cls.unknown_roles(published) if dry_run else []
        predicted = cls.probe_predictions(published) if dry_run else None
        lines = ["%s: %s" % (host, cls.state_of(summary, dry_run, made, unknown, predicted, not_reached)[1])]
        published = published or {}
        plan = published.get("plan") or {}
        for line in summary_lines.hardware_lines(published.get("gpu"), plan):
            lines.append("  " + line)
        for line in summary_lines.published_lines(published):
            lines.append("  " + line)
        for role, dummy, text in cls.role_rows(roles, plan, cls.state_of(summary)[0], failures):
            lines.append("  %-26s %s" % (role, text))
        return lines
