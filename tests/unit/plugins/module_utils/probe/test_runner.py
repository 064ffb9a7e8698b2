# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_facts module's logic (plugins/module_utils/probe/runner.py), without AnsibleModule."""

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import runner
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.gpu_probe import ProbeError


def _recorder(answer):
    calls = []

    def run_command(args, environ_update=None):
        calls.append((list(args), environ_update))
        return answer

    return calls, run_command


def test_runner_wraps_in_timeout_with_a_c_locale():
    calls, run_command = _recorder((0, "out", ""))
    run = runner.command_runner(run_command, lambda name: "/usr/bin/" + name, 7)
    assert run.called is False and run.notes == []
    assert run(["/usr/bin/nvidia-smi", "-L"]) == (0, "out", "")
    assert calls == [(["/usr/bin/timeout", "-k", "5", "7", "/usr/bin/nvidia-smi", "-L"], {"LC_ALL": "C"})]
    assert run.called is True


@pytest.mark.parametrize("rc", [124, 137])
def test_a_killed_command_says_so(rc):
    dummy, run_command = _recorder((rc, "partial", "Terminated"))
    run = runner.command_runner(run_command, lambda name: "/usr/bin/" + name, 3)
    assert run(["nvidia-smi"]) == (124, "", "nvidia-smi did not answer within 3 s and was killed (a hung GPU?)")


def test_no_timeout_binary_is_a_note_and_no_wrapper():
    calls, run_command = _recorder((0, "", ""))
    run = runner.command_runner(run_command, lambda name: None, 30)
    run(["nvidia-smi"])
    assert calls[0][0] == ["nvidia-smi"] and run.notes == [
        "coreutils timeout not found: nvidia-smi runs without a time limit"]


def test_zero_means_no_limit():
    calls, run_command = _recorder((124, "", ""))
    run = runner.command_runner(run_command, lambda name: "/usr/bin/" + name, 0)
    assert run(["nvidia-smi"]) == (124, "", "") and calls[0][0] == ["nvidia-smi"]


@pytest.mark.parametrize("name", runner.TIMEOUT_OPTIONS)
def test_gather_refuses_negative_timeouts(name):
    params = {"nvidia_smi_timeout": 30, "nvml_init_timeout": 30}
    params[name] = -1
    with pytest.raises(ProbeError, match=name):
        runner.gather(params, None, None)


def test_gather_reports_the_in_band_bmc_device(monkeypatch):
    """The probe's one read of the in-band BMC device (the plan's bmc.local decides from it)."""
    monkeypatch.setattr(runner, "probe", lambda **kwargs: {"errors": [], "driver": {}})
    monkeypatch.setattr(runner.bmc_devices, "inband_device", lambda: "/dev/ipmi0")
    params = {"nvidia_smi_timeout": 0, "nvml_init_timeout": 0, "sysfs_root": "/sys", "procfs_root": "/proc",
              "pci_ids_path": None, "nvml": "disabled", "nvml_path": [], "nvidia_smi": "disabled",
              "nvidia_smi_path": None, "packages": "disabled"}
    assert runner.gather(params, None, lambda name: None)["bmc"] == {"inband_device": "/dev/ipmi0"}
