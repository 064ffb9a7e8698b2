"""gpuops.dlserver.gpu_validate, group sel, over the LAN: no in-band BMC device, the BMC's address and
credentials given (the SDR cache in the read's own directory, removed with it). A stand-in
ipmi-sel copies the FreeIPMI configuration file it was handed (and its
mode) and prints sel.txt: the password is in that 0600 file only while ipmi-sel runs, never on its
command line, in the result, the record or a message."""
import json
import os
import stat

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import sel, sel_lan
from ansible_collections.gpuops.dlserver.plugins.action.gpu_validate import spec_defaults
from ansible_collections.gpuops.dlserver.plugins.modules import gpu_validate
from module_harness import run_module  # noqa: E402 pylint: disable=wrong-import-order

PASSWORD = "Lab.sel-pw3"
CPU_ONLY = {"source": "pci", "gpu_count": 0, "driver": {"loaded": False}, "gpus": []}
SEL = ("ID,Date,Time,Name,Type,State,Event\n"
       "1,PostInit,PostInit,Memory ECC,Memory,Warning,Correctable memory error\n"
       "2,PostInit,PostInit,Memory ECC,Memory,Critical,Uncorrectable memory error\n")


@pytest.fixture
def lan(tmp_path, monkeypatch):
    monkeypatch.setattr(sel, "BMC_DEVICES", ("/nonexistent/ipmi0",))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "ipmi-sel"
    tool.write_text('#!/bin/sh\necho "$@" > "{t}/args"\ncp "$2" "{t}/seen.conf"\nstat -c %a "$2" > "{t}/mode"\n'
                    'stat -c %a "$(dirname "$2")" > "{t}/dirmode"\ncat "{t}/sel.txt"\nexit $(cat "{t}/rc")\n'
                    .format(t=tmp_path))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "rc").write_text("0")
    (tmp_path / "sel.txt").write_text(SEL)
    (tmp_path / "textfile").mkdir()
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, os.environ.get("PATH", "")))
    return tmp_path


def _run(tmp_path, check_mode=False, **changes):
    args = dict(spec_defaults(), gpu_facts=CPU_ONLY, groups=["sel"], host_name="n1",
                record_dir=str(tmp_path / "gpuops"), textfile_dir=str(tmp_path / "textfile"), nvml_path=[],
                sysfs_root=str(tmp_path), bmc_address="172.30.99.101", bmc_user="labmonitor", bmc_password=PASSWORD,
                bmc_workaround_flags=["opensesspriv"])
    args.update(changes)
    return run_module(gpu_validate.main, args, check_mode)


def _sel_checks(res):
    return [c for c in res["validation"]["checks"] if c["group"] == "sel"]


def _nowhere(tmp_path, res):
    assert PASSWORD not in json.dumps(res)
    for root, _dirs, files in os.walk(str(tmp_path / "gpuops")):
        for name in files:
            with open(os.path.join(root, name)) as fh:
                assert PASSWORD not in fh.read(), name
    assert PASSWORD not in (tmp_path / "args").read_text()


def test_the_sel_is_read_over_the_lan_with_a_private_config_file(lan):
    res = _run(lan)
    args = (lan / "args").read_text().split()
    assert args[0] == "--config-file" and args[2:4] == ["--sdr-cache-directory", os.path.dirname(args[1])]
    assert args[4:] == [
        "--hostname", "172.30.99.101", "--output-event-state", "--comma-separated-output", "--non-abbreviated-units"]
    assert not os.path.exists(args[1]) and not os.path.exists(os.path.dirname(args[1]))   # removed after the run
    assert (lan / "mode").read_text().strip() == "600" and (lan / "dirmode").read_text().strip() == "700"
    assert (lan / "seen.conf").read_text().splitlines()[1:] == [
        "driver-type LAN_2_0", "username labmonitor", "password %s" % PASSWORD,
        "privilege-level USER", "workaround-flags opensesspriv"]
    check = _sel_checks(res)[0]
    assert res["validation"]["verdict"] == "fail"
    assert (check["check"], check["status"], check["value"]) == ("sel_memory", "fail", 2)
    assert "1 x Correctable ECC" in check["reason"] and "1 x Uncorrectable ECC" in check["reason"]
    _nowhere(lan, res)
    # the same SEL again: both events are before the recorded position
    again = _run(lan)
    assert again["validation"]["verdict"] == "pass"
    assert "0 SEL entries since the last validation (SEL record 2" in _sel_checks(again)[0]["reason"]
    _nowhere(lan, again)


def test_a_port_other_than_623_is_part_of_the_hostname(lan):
    _run(lan, bmc_port=6230)
    assert "--hostname 172.30.99.101:6230 " in (lan / "args").read_text()


def test_a_refused_login_is_unknown_and_never_echoes_the_password(lan):
    (lan / "rc").write_text("1")
    (lan / "sel.txt").write_text("ipmi-sel: password invalid (%s)\n" % PASSWORD)
    res = _run(lan)
    check = _sel_checks(res)[0]
    assert check["status"] == "skip" and check["reason"].startswith("unknown: ipmi-sel could not read the SEL (rc 1)")
    assert "password invalid (********)" in check["reason"]
    assert PASSWORD not in json.dumps(res)


@pytest.mark.parametrize("changes, words", [
    ({"bmc_password": "pw\nhostname evil"}, "bmc_password holds a character outside"),
    ({"bmc_password": "pw word"}, "bmc_password holds a character outside"),
    ({"bmc_password": "a" * 21}, "bmc_password is 21 characters long"),
    ({"bmc_user": "lab\nuser"}, "bmc_user must be"),
    ({"bmc_address": "10.0.0.1\nusername root"}, "bmc_address must be"),
    ({"bmc_workaround_flags": ["opensesspriv\nk_g x"]}, "bmc_workaround_flags must be"),
    ({"bmc_port": 0}, "bmc_port must be"),
])
def test_bad_bmc_inputs_fail_before_anything_is_read(lan, changes, words):
    res = _run(lan, **changes)
    assert res.get("failed") and words in res["msg"] and "nothing was measured" in res["msg"]
    assert not os.path.exists(str(lan / "args"))
    for value in changes.values():
        if isinstance(value, str) and "bmc_password" in changes:
            assert value not in res["msg"]


def test_without_ipmi_sel_it_is_unknown(lan, monkeypatch):
    monkeypatch.setattr(gpu_validate.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: None)
    check = _sel_checks(_run(lan))[0]
    assert check["status"] == "skip" and "over the LAN needs ipmi-sel" in check["reason"]


def test_an_in_band_device_wins_over_the_lan(lan, monkeypatch):
    device = lan / "ipmi0"
    device.write_text("")
    monkeypatch.setattr(sel, "BMC_DEVICES", (str(device),))
    _run(lan)
    assert "--config-file" not in (lan / "args").read_text()


def test_no_credentials_no_lan_read(lan):
    check = _sel_checks(_run(lan, bmc_password=""))[0]
    assert check["reason"].startswith("unknown: no BMC access (no in-band BMC device")


def test_config_text_refuses_what_it_cannot_write():
    with pytest.raises(ValueError):
        sel_lan.config_text({"address": "h", "user": "u", "password": "a b"})
