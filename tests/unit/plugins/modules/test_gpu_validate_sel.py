"""gpuops.dlserver.gpu_validate, group sel: the SEL is read through the in-band BMC with ipmi-sel
(a stand-in script printing ipmi-sel's comma-separated form), judged, and its position kept in
validate.json so that the next validation counts only what came after; no BMC, no tool or a
failing tool is "unknown", never a pass."""
import json
import os
import stat

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import sel
from ansible_collections.gpuops.dlserver.plugins.action.gpu_validate import spec_defaults
from ansible_collections.gpuops.dlserver.plugins.modules import gpu_validate
from module_harness import run_module  # noqa: E402 pylint: disable=wrong-import-order

CPU_ONLY = {"source": "pci", "gpu_count": 0, "driver": {"loaded": False}, "gpus": []}
HEADER = "ID,Date,Time,Name,Type,State,Event\n"
UE = "1,Dec-01-2026,10:00:00,DIMM_A1,Memory,Critical,Uncorrectable memory error\n"
CE = ("2,Dec-02-2026,09:00:00,DIMM_B1,Memory,Warning,Correctable memory error\n"
      "3,Dec-02-2026,09:05:00,DIMM_B1,Memory,Warning,Correctable memory error\n")


def _run(check_mode=False, **args):
    # the options the task leaves out, as the action of the same name fills them (the role's spec)
    return run_module(gpu_validate.main, dict(spec_defaults(), **args), check_mode)


@pytest.fixture
def bmc(tmp_path, monkeypatch):
    """An in-band BMC device node and an ipmi-sel on PATH that prints the file sel.txt (exit code in rc)."""
    device = tmp_path / "ipmi0"
    device.write_text("")
    monkeypatch.setattr(sel, "BMC_DEVICES", (str(device), "/nonexistent/ipmi/0"))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "ipmi-sel"
    tool.write_text('#!/bin/sh\necho "$@" > "%s/args"\ncat "%s/sel.txt"\nexit $(cat "%s/rc")\n'
                    % (tmp_path, tmp_path, tmp_path))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "rc").write_text("0")
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, os.environ.get("PATH", "")))
    (tmp_path / "textfile").mkdir()
    return tmp_path


def _args(tmp_path):
    return dict(gpu_facts=CPU_ONLY, groups=["sel"], host_name="n1", record_dir=str(tmp_path / "gpuops"),
                textfile_dir=str(tmp_path / "textfile"), nvml_path=[], sysfs_root=str(tmp_path))


def _sel_checks(res):
    return [c for c in res["validation"]["checks"] if c["group"] == "sel"]


def test_events_are_counted_once(bmc):
    (bmc / "sel.txt").write_text(HEADER + UE)
    first = _run(**_args(bmc))
    assert (bmc / "args").read_text().split() == [
        "--output-event-state", "--comma-separated-output", "--non-abbreviated-units"]
    assert first["validation"]["verdict"] == "fail"
    check = _sel_checks(first)[0]
    assert check["check"] == "sel_memory" and check["status"] == "fail" and "DIMM_A1" in check["reason"]
    record = json.load(open(os.path.join(str(bmc), "gpuops", "validate.json")))
    assert record["sel"] == {"tool": "ipmi-sel", "id": "1", "date": "Dec-01-2026", "time": "10:00:00", "entries": 1}
    # the same SEL again: the uncorrectable error is before the recorded position
    again = _run(**_args(bmc))
    assert again["validation"]["verdict"] == "pass"
    assert "0 SEL entries since the last validation (SEL record 1" in _sel_checks(again)[0]["reason"]
    # two correctable errors after it: warn with the count, the failure is not counted again
    (bmc / "sel.txt").write_text(HEADER + UE + CE)
    third = _run(**_args(bmc))
    check = _sel_checks(third)[0]
    assert third["validation"]["verdict"] == "warn"
    assert (check["check"], check["status"], check["value"]) == ("sel_memory", "warn", 2)
    assert "2 x Correctable ECC" in check["reason"] and "records 2, 3" in check["reason"]
    assert json.load(open(os.path.join(str(bmc), "gpuops", "validate.json")))["sel"]["id"] == "3"


def test_position_moves_even_when_the_verdict_does_not(bmc):
    (bmc / "sel.txt").write_text(HEADER + CE)
    assert _run(**_args(bmc))["validation"]["verdict"] == "warn"
    more = "4,Dec-03-2026,09:00:00,DIMM_B1,Memory,Warning,Correctable memory error\n"
    (bmc / "sel.txt").write_text(HEADER + CE + more)
    res = _run(**_args(bmc))
    assert res["validation"]["verdict"] == "warn" and _sel_checks(res)[0]["value"] == 1
    assert res["changed"] is True and "does not cover" in res["validation"]["record"]["reason"]
    assert json.load(open(os.path.join(str(bmc), "gpuops", "validate.json")))["sel"]["id"] == "4"


def test_check_mode_reads_and_writes_nothing(bmc):
    (bmc / "sel.txt").write_text(HEADER + UE)
    res = _run(check_mode=True, **_args(bmc))
    assert _sel_checks(res)[0]["status"] == "fail"
    assert res["changed"] is False and not os.path.exists(str(bmc / "gpuops"))


def test_no_bmc_device_is_unknown(bmc, monkeypatch):
    monkeypatch.setattr(sel, "BMC_DEVICES", ("/nonexistent/ipmi0",))
    check = _sel_checks(_run(**_args(bmc)))[0]
    assert check["status"] == "skip" and check["value"] == "unknown"
    assert check["reason"].startswith("unknown: no BMC access (no in-band BMC device")


def test_no_tool_is_unknown(bmc, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(gpu_validate.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    check = _sel_checks(_run(**_args(bmc)))[0]
    assert check["status"] == "skip" and "neither ipmi-sel" in check["reason"]


def test_failing_tool_is_unknown_and_keeps_the_old_position(bmc):
    (bmc / "sel.txt").write_text(HEADER + UE)
    _run(**_args(bmc))
    (bmc / "rc").write_text("1")
    (bmc / "sel.txt").write_text("ipmi_ctx_open_inband: driver timeout\n")
    res = _run(**_args(bmc))
    check = _sel_checks(res)[0]
    assert check["status"] == "skip" and check["reason"].startswith("unknown: ipmi-sel could not read the SEL (rc 1)")
    assert "driver timeout" in check["reason"]
    assert json.load(open(os.path.join(str(bmc), "gpuops", "validate.json")))["sel"]["id"] == "1"
