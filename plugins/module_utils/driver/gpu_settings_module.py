# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one call of gpuops.dlserver.__private.nvidia_driver_gpu_settings: ``run(module)`` reads the
GPU settings with nvidia-smi, applies what differs (driver/gpu_settings.py decides) and reads back."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.driver import gpu_settings

TIMEOUT_RC = 124


def _runner(module, timeout):
    wrapper = module.get_bin_path("timeout") if timeout else None

    def run(args):
        full = ([wrapper, "-k", "5", str(timeout)] + list(args)) if wrapper else list(args)
        rc, out, err = module.run_command(full, environ_update={"LC_ALL": "C"})
        if wrapper and rc in (TIMEOUT_RC, 128 + 9):
            err = "%s did not answer within %d s and was killed (a hung GPU?)" % (args[0], timeout)
        return rc, out, err

    return run


def _read(module, run, binary):
    args = gpu_settings.query_args(binary)
    rc, out, err = run(args)
    if rc != 0:
        module.fail_json(msg="reading the GPU settings failed: %s" % " ".join(args), rc=rc, stdout=out, stderr=err)
    try:
        return gpu_settings.parse_query(out)
    except gpu_settings.SettingsError as exc:
        module.fail_json(msg=str(exc), stdout=out)


def _decide(module, rows, wanted):
    try:
        return gpu_settings.decide(rows, wanted)
    except gpu_settings.SettingsError as exc:
        module.fail_json(msg=str(exc))


def run(module):
    """The module's whole call, ended with exit_json or fail_json."""
    params = module.params
    clocks = dict((k, v) for k, v in (params["application_clocks"] or {}).items() if v is not None)
    wanted = {"persistence": params["persistence"], "power_limit_watts": params["power_limit_watts"],
              "application_clocks": clocks, "mig": params["mig"] or {}}
    run = _runner(module, params["timeout"])
    binary = module.get_bin_path(params["binary"], required=True)
    before = _decide(module, _read(module, run, binary), wanted)
    if before["errors"]:
        module.fail_json(msg="gpuops.dlserver.__private.nvidia_driver_gpu_settings: %s" % before["reason"], gpus=before["gpus"])
    argvs = [[binary] + command["argv"][1:] for command in before["commands"]]
    if module.check_mode or not argvs:
        module.exit_json(changed=bool(argvs), gpus=before["gpus"], commands=argvs, converged=not argvs,
                         reason=("check mode, would run %d command(s): " % len(argvs) if argvs else "") + before["reason"])
    for argv in argvs:
        rc, out, err = run(argv)
        if rc != 0:
            module.fail_json(msg="%s failed (rc=%s)" % (" ".join(argv), rc), rc=rc, stdout=out, stderr=err,
                             commands=argvs, gpus=before["gpus"])
    after = _decide(module, _read(module, run, binary), wanted)
    converged = not after["commands"]
    if not converged:
        module.warn("after nvidia-smi ran, these settings still differ: %s" % "; ".join(
            "%s %s" % (c["bus_id"], c["setting"]) for c in after["commands"]))
    module.exit_json(changed=True, gpus=after["gpus"], commands=argvs, converged=converged,
                     reason="ran %d command(s): %s" % (len(argvs), before["reason"]))
