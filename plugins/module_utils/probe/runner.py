# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the ``gpu_facts`` module does with its parameters: the command runner and one call.

``gather(params, run_command, get_bin_path)`` checks the options the argument spec cannot,
wraps ``run_command`` (AnsibleModule's) so that nvidia-smi runs with a C locale and a time
limit, and returns the ``gpuops_gpu`` facts of ``gpu_probe.probe``. Standard library only,
Python 3.8+ (runs on targets).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import devices as bmc_devices
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import packages as package_depth
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.gpu_probe import ProbeError, probe

TIMEOUT_RC = 124
KILLED_RC = 128 + 9
TIMEOUT_OPTIONS = ("nvidia_smi_timeout", "nvml_init_timeout")


def command_runner(run_command, get_bin_path, timeout):
    """``run(args) -> (rc, out, err)`` with a C locale and, when ``timeout`` > 0, a time limit.

    ``run_command(args, environ_update=...)`` is AnsibleModule.run_command. The limit is
    coreutils ``timeout`` (TERM after ``timeout`` seconds, KILL 5 s later), present on every
    supported platform; where it is missing the command runs without one and ``run.notes``
    says so. A killed call answers rc 124 and says it timed out. ``run.called`` tells whether
    any command ran.
    """
    wrapper = get_bin_path("timeout") if timeout else None
    notes = []
    if timeout and not wrapper:
        notes.append("coreutils timeout not found: nvidia-smi runs without a time limit")

    def run(args):
        run.called = True
        full = ([wrapper, "-k", "5", str(timeout)] + list(args)) if wrapper else list(args)
        rc, out, err = run_command(full, environ_update={"LC_ALL": "C"})
        if wrapper and rc in (TIMEOUT_RC, KILLED_RC):
            return TIMEOUT_RC, "", "%s did not answer within %d s and was killed (a hung GPU?)" % (args[0], timeout)
        return rc, out, err

    run.notes = notes
    run.called = False
    return run


def gather(params, run_command, get_bin_path):
    """The ``gpuops_gpu`` facts for the module's ``params``; raises ProbeError on what must fail."""
    for name in TIMEOUT_OPTIONS:
        if params[name] < 0:
            raise ProbeError("%s must be 0 (no limit) or a number of seconds, got %d" % (name, params[name]))
    run = command_runner(run_command, get_bin_path, params["nvidia_smi_timeout"])
    facts = probe(
        sysfs_root=params["sysfs_root"],
        procfs_root=params["procfs_root"],
        pci_ids_path=params["pci_ids_path"],
        nvml=params["nvml"],
        nvml_path=params["nvml_path"],
        nvidia_smi=params["nvidia_smi"],
        nvidia_smi_path=params["nvidia_smi_path"],
        run_command=run,
        get_bin_path=get_bin_path,
        nvml_init_timeout=params["nvml_init_timeout"] or None,
    )
    if run.notes and run.called:
        facts["errors"].extend({"source": "nvidia-smi", "error": note} for note in run.notes)
    # the in-band BMC device (the plan's in-band ipmi_exporter decision reads it)
    facts["bmc"] = {"inband_device": bmc_devices.inband_device()}
    if params.get("packages", "auto") == "auto":
        # who installed the driver (plan/adopt.py): dpkg/rpm state, apt's origins, a runfile
        found = package_depth.read(lambda args: run_command(args, environ_update={"LC_ALL": "C"}), get_bin_path)
        facts["components"] = found.pop("components")
        facts["driver"].update(found)
    return facts
