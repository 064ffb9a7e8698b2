"""gpuops.dlserver.__private.nvidia_driver_gpu_settings: one read with a C locale and a time limit, only what differs runs,
check mode runs nothing, changed tells the truth, a power limit out of range fails before any change."""
import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.module_utils.driver.gpu_settings import FIELDS
from ansible_collections.gpuops.dlserver.plugins.modules.__private import nvidia_driver_gpu_settings
from module_harness import ExitJson, FailJson  # noqa: E402 pylint: disable=wrong-import-order

HEADER = ", ".join(FIELDS) + "\n"
ROW_300 = "00000000:1B:00.0, Enabled, 300.00, 100.00, 350.00, [Requested functionality has been deprecated], " \
          "[Requested functionality has been deprecated], Disabled, Disabled\n"
ROW_250 = ROW_300.replace("300.00, 100.00", "250.00, 100.00")


class FakeSmi(object):
    """nvidia-smi whose power limit changes when -pl runs."""

    def __init__(self, row, rc=0):
        self.row = row
        self.rc = rc
        self.calls = []

    def __call__(self, module, args, **kwargs):
        self.calls.append((list(args), kwargs.get("environ_update")))
        args = list(args)
        if args[:4] == ["/usr/bin/timeout", "-k", "5", "60"]:
            args = args[4:]
        if "-pl" in args:
            self.row = self.row.replace(self.row.split(", ")[2], "%s.00" % args[-1], 1)
            return self.rc, "Power limit set\n", ""
        return 0, HEADER + self.row, ""


def _run(monkeypatch, smi, check_mode=False, **args):
    def run_command(self, args, **kwargs):
        return smi(self, args, **kwargs)

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    if check_mode:
        args["_ansible_check_mode"] = True
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as info:
            nvidia_driver_gpu_settings.main()
    return info.value.args[0]


def test_sets_only_what_differs_then_reads_again(monkeypatch):
    smi = FakeSmi(ROW_250)
    res = _run(monkeypatch, smi, persistence=True, power_limit_watts=300,
               application_clocks={"memory_mhz": 1593, "graphics_mhz": 1410})
    assert res["changed"] is True and res["converged"] is True
    assert res["commands"] == [["/usr/bin/nvidia-smi", "-i", "00000000:1B:00.0", "-pl", "300"]]
    gpu = res["gpus"][0]
    assert gpu["power_limit"]["action"] == "none" and gpu["power_limit"]["current"] == 300
    assert gpu["application_clocks"]["action"] == "deprecated"
    # query, -pl, query again; every call with a C locale and the time limit
    assert len(smi.calls) == 3
    assert all(env == {"LC_ALL": "C"} for call, env in smi.calls)
    assert all(call[:4] == ["/usr/bin/timeout", "-k", "5", "60"] for call, env in smi.calls)
    assert smi.calls[0][0][5:] == ["--query-gpu=" + ",".join(FIELDS), "--format=csv,nounits"]


def test_second_run_changes_nothing(monkeypatch):
    smi = FakeSmi(ROW_300)
    res = _run(monkeypatch, smi, persistence=True, power_limit_watts=300,
               application_clocks={"memory_mhz": 1593, "graphics_mhz": 1410})
    assert res["changed"] is False and res["commands"] == [] and res["converged"] is True
    assert len(smi.calls) == 1


def test_check_mode_reports_and_runs_nothing(monkeypatch):
    smi = FakeSmi(ROW_250)
    res = _run(monkeypatch, smi, check_mode=True, power_limit_watts=300)
    assert res["changed"] is True
    assert res["commands"] == [["/usr/bin/nvidia-smi", "-i", "00000000:1B:00.0", "-pl", "300"]]
    assert "check mode, would run 1 command(s)" in res["reason"]
    assert len(smi.calls) == 1


def test_out_of_range_fails_naming_the_variable_before_any_change(monkeypatch):
    smi = FakeSmi(ROW_250)
    res = _run(monkeypatch, smi, power_limit_watts=400)
    assert res["failed"] is True
    assert "nvidia_driver_power_limit_watts 400 is outside the range of GPU 0000:1b:00.0 (100 to 350 W)" in res["msg"]
    assert len(smi.calls) == 1


def test_a_failing_command_fails_with_its_output(monkeypatch):
    smi = FakeSmi(ROW_250, rc=4)
    res = _run(monkeypatch, smi, power_limit_watts=300)
    assert res["failed"] is True and res["rc"] == 4
    assert "-pl 300 failed" in res["msg"]


def test_a_failing_read_fails(monkeypatch):
    def broken(module, args, **kwargs):
        return 9, "", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."

    res = _run(monkeypatch, broken, power_limit_watts=300)
    assert res["failed"] is True and res["rc"] == 9
    assert "couldn't communicate" in res["stderr"]
