# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lines the run summary (the fleet_summary callback) prints for one host from what the host
published with set_stats (``gpuops_summary``): the probe and the plan, what the roles hold back,
the Python environments, the validation and the power cycle through the BMC. Text only, no
decisions: each line says what the host published, nothing more.

Standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


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
        for role, decision in sorted((plan.get("adopt") or {}).items()):
            if isinstance(decision, dict) and decision.get("action") == "leave":
                lines.append("left alone (%s): %s" % (role, decision.get("reason")))
        for w in plan.get("warnings") or []:
            lines.append("warning: %s" % (w.get("message") if isinstance(w, dict) else w))
    return lines


def driver_security_line(published):
    """The driver security updates the pin or hold keeps back (nvidia_driver's set_stats), and
    what would take them; '' when none were published."""
    held = (published or {}).get("security_updates_held_back") or []
    if not held:
        return ""
    return "driver security updates held back: %s; to take them: %s" % (", ".join(
        "%s %s -> %s" % (u.get("name"), u.get("installed"), u.get("available")) for u in held),
        (published or {}).get("security_updates_take") or "set nvidia_driver_version and run the rolling upgrade")


def published_lines(published):
    """The lines of what the roles published beyond the probe and the plan (``published`` is the
    host's ``gpuops_summary``)."""
    published = published or {}
    lines = []
    held = (published.get("os_tuning") or {}).get("kernel_security_updates_held_back") or []
    if held:
        lines.append("kernel security updates held back (driver host): " + ", ".join(
            "%s %s -> %s" % (u.get("name"), u.get("installed"), u.get("candidate")) for u in held))
    driver_held = driver_security_line(published.get("nvidia_driver"))
    if driver_held:
        lines.append(driver_held)
    for env in published.get("python_stack") or []:
        if env.get("left_alone"):
            lines.append("python env %s: left alone: %s" % (env.get("name"), env["left_alone"].get("reason")))
            continue
        ver = env.get("verification") or {}
        state = "FAILED" if ver.get("ok") is False else ("verified" if ver.get("ok") else "not verified")
        lines.append("python env %s (%s, Python %s): %s: %s" % (
            env.get("name"), env.get("backend"), ver.get("python") or env.get("python"), state,
            ver.get("summary") or "; ".join(ver.get("problems") or []) or "-"))
    validation = published.get("validate") or {}
    if validation:
        lines.append("validation: %s" % validation.get("summary"))
    recovery = published.get("bmc_recovery") or {}
    if recovery.get("message"):
        lines.append("power cycle through the BMC: %s" % recovery["message"])
    return lines
