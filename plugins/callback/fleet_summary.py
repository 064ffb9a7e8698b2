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
    versions, CUDA or CPU, the mixed-precision step (C(gpuops_summary.python_stack)).
  - The last line says whether anything changed, so a second run of a converged fleet says
    so in one line.
  - Enable it with C(callbacks_enabled = gpuops.dlserver.fleet_summary) in C(ansible.cfg) or
    C(ANSIBLE_CALLBACKS_ENABLED).
requirements:
  - enable in configuration
"""

from ansible.plugins.callback import CallbackBase

PRIVATE_ROLE = "common"
ROLE_PREFIX = "gpuops.dlserver."


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpuops.dlserver.fleet_summary"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        # host -> role -> {"ok": n, "changed": n, "skipped": n, "failed": n}
        self.roles = {}
        self.order = []

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

    def _count(self, result, key):
        host = result._host.get_name()
        role = self._role_of(result._task)
        if host not in self.roles:
            self.roles[host] = {}
            self.order.append(host)
        counts = self.roles[host].setdefault(role, {"ok": 0, "changed": 0, "skipped": 0, "failed": 0})
        counts[key] += 1
        if key == "ok" and result._result.get("changed", False):
            counts["changed"] += 1

    def v2_runner_on_ok(self, result):
        self._count(result, "ok")

    def v2_runner_on_skipped(self, result):
        self._count(result, "skipped")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result, "failed")

    def v2_runner_on_unreachable(self, result):
        self._count(result, "failed")

    # ------------------------------------------------------------------ report
    def v2_playbook_on_stats(self, stats):
        hosts = sorted(set(self.order) | set(stats.processed.keys()))
        custom = getattr(stats, "custom", {}) or {}
        self._display.banner("GPUOPS FLEET SUMMARY")
        total_changed = 0
        for host in hosts:
            summary = stats.summarize(host)
            total_changed += summary.get("changed", 0)
            for line in self.host_lines(host, summary, self.roles.get(host, {}),
                                        (custom.get(host) or {}).get("gpuops_summary")):
                self._display.display(line)
        if any(stats.summarize(h).get("failures") or stats.summarize(h).get("unreachable") for h in hosts):
            self._display.display("Some hosts failed: see the errors above.")
        elif total_changed == 0:
            self._display.display("No changes on any host: the fleet was already converged.")
        else:
            self._display.display("%d change(s) made; run again to confirm it converges with zero changes."
                                  % total_changed)

    @staticmethod
    def hardware_lines(gpu, plan):
        """What the probe saw and what the plan decided, a few lines."""
        lines = []
        if gpu:
            gpus = gpu.get("gpus") or []
            if gpus:
                models = {}
                for g in gpus:
                    key = "%s (%s)" % (g.get("name") or g.get("pci_device_id"), g.get("architecture"))
                    models[key] = models.get(key, 0) + 1
                lines.append("GPUs: " + ", ".join("%d x %s" % (n, m) for m, n in models.items())
                             + "; NVSwitches: %d; NICs: %d" % (gpu.get("nvswitch_count", 0), len(gpu.get("nics") or [])))
            else:
                lines.append("GPUs: none (%d NVSwitches)" % gpu.get("nvswitch_count", 0))
            why = ["%s: %s" % (d.get("depth"), d.get("reason")) for d in gpu.get("depths_tried") or []
                   if not d.get("answered") and d.get("reason")]
            lines.append("probe depth: %s%s" % (gpu.get("source"), (" (" + "; ".join(why) + ")") if why else ""))
            drv = gpu.get("driver") or {}
            if drv.get("loaded"):
                version = drv.get("version") or "(version unknown)"
                lines.append("driver: loaded %s, CUDA %s" % (version, drv.get("cuda_version") or "unknown"))
            else:
                lines.append("driver: not loaded")
            for g in gpus:
                pcie = g.get("pcie") or {}
                lines.append("  GPU%s %s NUMA %s PCIe Gen%s x%s (max Gen%s x%s)%s" % (
                    g.get("index", "?"), g.get("pci_bus_id"), g.get("numa_node"), pcie.get("current_gen"),
                    pcie.get("current_width"), pcie.get("max_gen"), pcie.get("max_width"),
                    " DEGRADED" if pcie.get("degraded") else ""))
            matrix = (gpu.get("topology") or {}).get("matrix") or {}
            names = sorted((n for n in matrix if n.startswith("GPU")), key=lambda n: int(n[3:]) if n[3:].isdigit() else 0)
            if names:
                lines.append("topology:     " + " ".join("%-5s" % n for n in names))
                for row in names:
                    lines.append("  %-11s " % row + " ".join("%-5s" % matrix[row].get(col, "") for col in names))
        if plan:
            drv = plan.get("driver") or {}
            parts = []
            if drv.get("required"):
                parts.append("driver: %s kernel modules" % (drv.get("kernel_modules") or {}).get("value"))
            else:
                parts.append("driver: not needed")
            for key, label in (("fabric_manager", "Fabric Manager"), ("nvlink_subnet_manager", "NVLink SM")):
                if (plan.get(key) or {}).get("required"):
                    parts.append(label)
            mig = plan.get("mig") or {}
            if mig.get("capable_gpus"):
                parts.append("MIG-capable: %d" % len(mig["capable_gpus"]))
            prof = ((plan.get("dcgm") or {}).get("profiling") or {})
            parts.append("DCGM profiling: %s" % ("yes" if prof.get("value") else "no"))
            lines.append("plan: " + "; ".join(parts))
            for w in plan.get("warnings") or []:
                lines.append("warning: %s" % (w.get("message") if isinstance(w, dict) else w))
        return lines

    @classmethod
    def host_lines(cls, host, summary, roles, published):
        """Text lines for one host. ``published`` is what site.yml gave set_stats."""
        changed = summary.get("changed", 0)
        state = "FAILED" if summary.get("failures") or summary.get("unreachable") else (
            "converged, nothing changed" if changed == 0 else "%d changed" % changed)
        lines = ["%s: %s" % (host, state)]
        published = published or {}
        plan = published.get("plan") or {}
        for line in cls.hardware_lines(published.get("gpu"), plan):
            lines.append("  " + line)
        held = (published.get("os_tuning") or {}).get("kernel_security_updates_held_back") or []
        if held:
            lines.append("  kernel security updates held back (driver host): " + ", ".join(
                "%s %s -> %s" % (u.get("name"), u.get("installed"), u.get("candidate")) for u in held))
        for env in published.get("python_stack") or []:
            ver = env.get("verification") or {}
            state = "FAILED" if ver.get("ok") is False else ("verified" if ver.get("ok") else "not verified")
            lines.append("  python env %s (%s, Python %s): %s: %s" % (
                env.get("name"), env.get("backend"), ver.get("python") or env.get("python"), state,
                ver.get("summary") or "; ".join(ver.get("problems") or []) or "-"))
        validation = published.get("validate") or {}
        if validation:
            lines.append("  validation: %s" % validation.get("summary"))
        plan_roles = plan.get("roles") or {}
        names = [r for r in roles if r != "(playbook)" and not (r.startswith("(") and not roles[r]["failed"])]
        names += [r for r in plan_roles if r not in names]
        for role in names:
            counts = roles.get(role)
            decision = plan_roles.get(role, {})
            ran = counts and (counts["ok"] or counts["failed"])
            if ran:
                what = "converged" if not counts["failed"] else "FAILED"
                lines.append("  %-26s %s (%d tasks, %d changed)" % (role, what, counts["ok"], counts["changed"]))
            elif decision.get("run", True) is False:
                lines.append("  %-26s skipped: %s" % (role, decision.get("reason")))
            else:
                lines.append("  %-26s not in this playbook yet (plan: run; %s)" % (role, decision.get("reason")))
        return lines
