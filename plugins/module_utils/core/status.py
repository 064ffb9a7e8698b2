# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Status records of the roles: what a role decided, did and skipped, and why.

``build(role, parts)`` hands ``parts`` (the facts and registered results a role's
``tasks/status.yml`` passes in, by name) to that role's builder and returns the record that
``roles/common/tasks/status.yml`` writes to the role's status file. A part that is missing,
or a registered result of a task that was skipped (which lacks the task's keys), gives the
same "not read (check mode)" / "not verified: <why>" values as a run that never got there.
Only stable values are recorded, so a run that changes nothing rewrites nothing.
Pure functions, standard library only (reached through the filter gpuops.dlserver.__private.role_status).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

_MISSING = object()


class StatusError(ValueError):
    """A part a role's record cannot be built without is missing or of the wrong shape."""


def dig(value, *keys, **kwargs):
    """``value[k1][k2]...``, or ``default`` when a key is missing or a level is not a dict."""
    default = kwargs.get("default")
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return default
        value = value[key]
    return value


def _need(parts, role, *names):
    for name in names:
        if not isinstance(parts.get(name), dict):
            raise StatusError("%s status: the part %r must be a dict, got %r" % (role, name, parts.get(name, None)))


def nvidia_driver(parts):
    """Parts: ``plan`` (gpuops_plan), ``inputs`` (__nvidia_driver), ``resolved``, ``after``,
    ``verified``, ``settings`` (the registered results of the role's tasks; any may be absent)."""
    _need(parts, "nvidia_driver", "plan", "inputs")
    plan = parts["plan"]
    driver = plan.get("driver") or {}
    if not driver.get("required"):
        return {"required": False, "reason": driver.get("reason"), "in_container": dig(plan, "host", "in_container"),
                "load_modules": driver.get("load_modules")}
    adopt = dig(plan, "adopt", "nvidia_driver", default={}) or {}
    if adopt.get("action") == "leave":
        # a driver the collection did not install: reported, not touched (plan/adopt.py)
        return {"required": True, "left_alone": True, "reason": adopt.get("reason"), "owner": adopt.get("owner"),
                "installed": driver.get("installed"), "loaded": driver.get("loaded")}
    resolved = parts.get("resolved") or {}
    record = dict(dig(resolved, "status", default={}) or {})
    if dig(resolved, "activation", "action", default="") in ("deferred", "skipped", "not_applicable"):
        skip = dig(resolved, "status", "reboot", "reason", default="")
    else:
        skip = "check mode: the driver change is not applied"
    # read after the install where it ran (the resolve read the host before it): what the next run reads
    held = dig(parts, "after", "security_updates_held_back", default=None)
    if held:
        record["security_updates_held_back"] = held
    record["dkms"] = dig(parts, "after", "dkms", default=_MISSING)
    if record["dkms"] is _MISSING:
        record["dkms"] = {"status": [], "reason": "not read (check mode)"}
    record["verify"] = dig(parts, "verified", "verify", default=_MISSING)
    if record["verify"] is _MISSING:
        record["verify"] = {"ran": False, "reason": "not verified: " + (skip or "")}
    record["settings"] = driver_settings(parts, skip)
    return record


def driver_settings(parts, skip):
    """The ``settings`` part of the driver's record, from the nvidia_driver_gpu_settings result."""
    inputs = parts["inputs"]
    plan = parts["plan"]
    result = parts.get("settings") or {}
    ran = "gpus" in result
    if ran:
        reason = result.get("reason") or ""
    else:
        reason = "not applied: the driver is not verified: " + (skip or "")
    return {
        "applied": ran,
        "reason": reason,
        "changed": bool(result.get("changed")) if ran else False,
        "commands": result.get("commands", []) if ran else [],
        "gpus": result.get("gpus", []) if ran else [],
        "persistence": dig(plan, "persistence", "enabled"),
        "power_limit_watts": inputs.get("power_limit_watts"),
        "application_clocks": inputs.get("application_clocks") or {},
        "mig": plan.get("mig") or {},
    }


def nvidia_container_toolkit(parts):
    """Parts: ``plan``, ``inputs`` (__nvidia_container_toolkit), ``keyring`` (path or None),
    ``repo`` (the result of gpuops.dlserver.__private.package_repository), ``resolved``, ``verified``,
    ``runtime`` (registered results; any may be absent)."""
    _need(parts, "nvidia_container_toolkit", "plan", "inputs")
    decision = dig(parts["plan"], "roles", "nvidia_container_toolkit", default={}) or {}
    if not decision.get("run"):
        return {"run": False, "reason": decision.get("reason")}
    resolved = parts.get("resolved") or {}
    verified = parts.get("verified") or {}
    cdi = dict(dig(resolved, "cdi", default={}) or {})
    cdi["specs"] = dig(verified, "verify", "cdi_specs", default=[])
    return {
        "run": True,
        "reason": decision.get("reason"),
        "version": resolved.get("version"),
        "pin": resolved.get("pin"),
        "vulnerabilities": resolved.get("vulnerabilities", {}),
        "installed": verified.get("installed", {"reason": "not read (check mode)"}),
        "repository": {
            "url": parts["inputs"].get("repo_url"),
            "keyring": parts.get("keyring"),
            "fingerprints": dig(parts, "repo", "keyring", "fingerprints", default=[]),
            "not_trusted": dig(parts, "repo", "keyring", "dropped", default=[]),
        },
        "engines": resolved.get("engines", {}),
        "engine_files": resolved.get("records", {}),
        "engines_live": dig(verified, "verify", "engines", default={}),
        "runtime_settings": dig(parts, "runtime", "settings", default={}),
        "cdi": cdi,
        "smoke_test": resolved.get("smoke", {}),
    }


def dcgm_exporter(parts):
    """Parts: ``config`` (__dcgm_exporter_config), ``inputs`` (__dcgm_exporter), ``verified``
    (the verification, absent when it did not run), ``cuda_repo`` (gpuops_cuda_repo: the
    collection's CUDA repository of this host), ``repo`` (the result of
    gpuops.dlserver.__private.package_repository: ``configured_by`` names sources files that already serve
    the repository); the last two may be absent."""
    _need(parts, "dcgm_exporter", "config", "inputs")
    config = parts["config"]
    record = dict(config.get("status") or {})
    verified = parts.get("verified")
    if not isinstance(verified, dict) or "ok" not in verified:
        why = "check mode" if config.get("run") else (config.get("reason") or "")
        verified = {"ok": None, "reason": "not verified: " + why}
    record["verify"] = dict((k, v) for k, v in verified.items() if k != "served")
    if config.get("run") and config.get("mode") == "host":
        repository = config.get("repository") or {}
        if not parts["inputs"].get("repo_manage"):
            sources = "not managed: dcgm_exporter_repo_manage is false"
        else:
            sources = list(dig(parts, "repo", "configured_by", default=[]) or [])
            sources = sources or [repository.get("sources_file")]
        record["repository"] = {"url": dig(parts, "cuda_repo", "url"), "sources": sources}
    return record


def cuda_toolkit(parts):
    """Parts: ``plan``, ``inputs`` (__cuda_toolkit), ``resolved`` (the cuda_toolkit_plan filter's
    decisions), ``repo`` (gpuops.dlserver.__private.package_repository's result), ``cuda_repo``
    (gpuops_cuda_repo), ``verified`` (the cuda_toolkit_verify filter's record); all but the
    first two may be absent."""
    _need(parts, "cuda_toolkit", "plan", "inputs")
    decision = dig(parts["plan"], "roles", "cuda_toolkit", default={}) or {}
    if not decision.get("run"):
        return {"run": False, "reason": decision.get("reason")}
    resolved = parts.get("resolved") or {}
    verified = parts.get("verified")
    if not isinstance(verified, dict) or "ok" not in verified:
        verified = {"ok": None, "reason": "not verified: check mode"}
    record = {
        "run": True,
        "reason": decision.get("reason"),
        "source": resolved.get("source"),
        "toolkits": [dict((k, t.get(k)) for k in ("version", "home", "packages")) for t in resolved.get("toolkits") or []],
        "default": resolved.get("default"),
        "nccl": resolved.get("nccl"),
        "unlisted": dict((k, v) for k, v in (resolved.get("unlisted") or {}).items() if k != "versions"),
        "driver_compatibility": resolved.get("compatibility", {}),
        "verify": verified,
    }
    if resolved.get("source") == "cuda_repo":
        sources = list(dig(parts, "repo", "configured_by", default=[]) or [])
        record["repository"] = {"url": dig(parts, "cuda_repo", "url"), "sources": sources}
    return record


BUILDERS = {
    "cuda_toolkit": cuda_toolkit,
    "nvidia_driver": nvidia_driver,
    "nvidia_container_toolkit": nvidia_container_toolkit,
    "dcgm_exporter": dcgm_exporter,
}


def build(role, parts):
    """The status record of ``role`` from ``parts``; raises StatusError for an unknown role or bad parts."""
    if role not in BUILDERS:
        raise StatusError("no status record is defined for the role %r (known: %s)" % (role, ", ".join(sorted(BUILDERS))))
    if not isinstance(parts, dict):
        raise StatusError("%s status: the parts must be a dict, got %r" % (role, parts))
    return BUILDERS[role](parts)


def record_text(value):
    """The text of a status or plan file: ``value`` as Ansible's ``to_nice_json(sort_keys=true)``
    writes it (4-space indent, sorted keys, ``', '``/``': '`` separators, ASCII escapes), plus a
    final newline. The same bytes the roles wrote with the copy module, so converged hosts stay
    converged."""
    return json.dumps(value, indent=4, sort_keys=True, separators=(',', ': ')) + "\n"


def plan_record_decision(plan, driver_target=None):
    """``{record, reason}``: whether /etc/gpuops/plan.json records ``plan`` now.

    Only a plan that was accepted is recorded (issue 34: a run that failed before it acted wrote
    its refused ``driver_branch: 5800``): not a plan that leaves the driver branch open (``from:
    source``: the branches of the driver source are not known for the host's platform,
    packages/driver_branches.py - the driver role refuses it), and not a plan
    that runs the driver role before that role has read the host and its repositories in this
    run and chosen the version to install (``driver_target``, the ``target`` of its
    ``nvidia_driver_host`` resolve; None or '' when it has not). site.yml's first play and the
    roles that run before the driver role therefore leave a driver host's record as it was; the
    driver role's status step records the plan it accepted, and every later role's the same.
    """
    if not plan:
        return {"record": False, "reason": "no plan given"}
    if not isinstance(plan, dict):
        raise StatusError("plan: must be the host plan (a dict), got %r" % (plan,))
    if dig(plan, "driver", "branch", "from") == "source":
        return {"record": False, "reason": "the plan leaves the driver branch open (the driver source's "
                                           "branches are not known for this platform)"}
    if dig(plan, "roles", "nvidia_driver", "run") is True and not driver_target:
        return {"record": False, "reason": "the nvidia_driver role has not accepted the plan in this run (it has "
                                           "not chosen the driver to install): recorded by its status step"}
    return {"record": True, "reason": "the plan was accepted" + (
        " (the nvidia_driver role chose driver %s)" % driver_target if driver_target else "")}


def plan_to_record(plan, driver_target=None):
    """The plan to record in /etc/gpuops/plan.json, or None (see plan_record_decision)."""
    return plan if plan_record_decision(plan, driver_target)["record"] else None


def status_files(path, status, plan, plan_path, driver_target=None):
    """[(path, text)] one status step writes: the role's status record at ``path`` (when a path
    is given) and the plan record at ``plan_path`` (when plan_to_record keeps the plan). The
    module writes them; its action plugin compares them with what this run already saw on the
    host. Raises StatusError for a plan that is not a dict."""
    files = []
    if path is not None:
        files.append((path, record_text(status)))
    record = plan_to_record(plan, driver_target)
    if record is not None:
        files.append((plan_path, record_text(record)))
    return files
