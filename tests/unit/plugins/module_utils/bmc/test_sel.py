"""bmc/sel.py: the SEL as FreeIPMI's ipmi-sel and ipmitool print it, decoded by sensor type and
event offset (IPMI 2.0 table 42-3), judged, and counted only after the last validation's
position; on published output (SOURCE lines) and a table of constructed cases
(data/bmc_sel_cases.yml)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import sel

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "data", "bmc_sel_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
ALL = CASES["published"] + CASES["table"]


def test_every_published_case_names_its_source_and_every_table_case_says_it_is_constructed():
    for case in CASES["published"]:
        assert case["source"].startswith("SOURCE: https://") and "read 2026-12-07" in case["source"], case["id"]
    for case in CASES["table"]:
        assert case["note"].startswith("constructed case (table)"), case["id"]


@pytest.mark.parametrize("case", ALL, ids=[c["id"] for c in ALL])
def test_parse_and_judge(case):
    parsed = sel.parse(case["text"])
    assert parsed["format"] == case["format"]
    assert len(parsed["entries"]) == case["entries"]
    if "offsets" in case:
        assert [e["offset"] for e in parsed["entries"]] == case["offsets"]
    if "position" in case:
        got = sel.position(parsed, case["tool"])
        assert {k: got[k] for k in ("id", "date", "time")} == case["position"]
        assert got["tool"] == case["tool"] and got["entries"] == case["entries"]
    found = sel.checks(parsed, case.get("recorded"), case["tool"])
    assert [c["check"] for c in found] == [e["check"] for e in case["expect"]], found
    for check, want in zip(found, case["expect"]):
        assert check["status"] == want["status"], check
        assert check["value"] == want["value"], check
        assert check["subject"] == "bmc"
        assert want.get("reason", "") in check["reason"], check["reason"]


@pytest.mark.parametrize("case", CASES["can_read"], ids=[c["id"] for c in CASES["can_read"]])
def test_can_read(case):
    tool, reason = sel.can_read(case["devices"], case["tools"])
    assert tool == case["tool"]
    assert case["reason"] in reason
    if tool is None:
        assert reason.startswith("unknown: no BMC access")


def test_no_bmc_is_never_a_pass():
    assert sel.can_read([], {"ipmi-sel": "/usr/sbin/ipmi-sel"})[0] is None
    for check in sel.unreadable("ipmi-sel", 1, "ipmi_cmd_get_sel_entry: BMC busy\n"):
        assert check["status"] == "skip" and check["reason"].startswith("unknown: ")
        assert "BMC busy" in check["reason"]


def test_every_judged_offset_is_in_the_specification_range():
    # table 42-3: 0Ch memory offsets 00h-0Ah, 13h critical interrupt 00h-0Bh, 07h processor 00h-0Ch
    top = {sel.MEMORY: 0x0A, sel.CRITICAL_INTERRUPT: 0x0B, sel.PROCESSOR: 0x0C, sel.POWER_SUPPLY: 0x07,
           sel.EVENT_LOGGING: 0x06}
    for (stype, offset), (status, name, others) in sel.OFFSETS.items():
        assert 0 <= offset <= top[stype], (stype, offset)
        assert status in (None, "warn", "fail") and name


@pytest.mark.parametrize("stype,offset", [
    (sel.MEMORY, 0x01), (sel.CRITICAL_INTERRUPT, 0x04), (sel.CRITICAL_INTERRUPT, 0x05),
    (sel.CRITICAL_INTERRUPT, 0x0A), (sel.PROCESSOR, 0x00), (sel.PROCESSOR, 0x01)])
def test_what_the_issue_names_fails_the_node(stype, offset):
    assert sel.OFFSETS[(stype, offset)][0] == "fail"


@pytest.mark.parametrize("stype,offset", [
    (sel.MEMORY, 0x00), (sel.CRITICAL_INTERRUPT, 0x07), (sel.PROCESSOR, 0x0C), (sel.EVENT_LOGGING, 0x04),
    (sel.EVENT_LOGGING, 0x05)])
def test_correctable_errors_and_a_full_sel_warn(stype, offset):
    assert sel.OFFSETS[(stype, offset)][0] == "warn"


def test_raw_event_data_decides_over_the_description():
    text = ("SEL Record ID          : 0007\n Record Type           : 02\n Timestamp             : 01/01/2026 00:00:01\n"
            " Sensor Type           : Critical Interrupt\n Event Type            : Sensor-specific Discrete\n"
            " Event Direction       : Assertion Event\n Event Data            : a5ffff\n Description           : \n")
    entry = sel.parse(text)["entries"][0]
    assert (entry["sensor_type"], entry["offset"], entry["kind"]) == (sel.CRITICAL_INTERRUPT, 5, "specific")
    assert sel.judge(entry) == ("fail", "sel_pcie", "PCI SERR")


def test_argv():
    assert sel.argv("ipmi-sel", "/usr/sbin/ipmi-sel") == [
        "/usr/sbin/ipmi-sel", "--output-event-state", "--comma-separated-output", "--non-abbreviated-units"]
    assert sel.argv("ipmitool", "/usr/bin/ipmitool") == ["/usr/bin/ipmitool", "sel", "elist"]
