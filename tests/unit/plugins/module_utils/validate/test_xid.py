"""validate/xid.py: every row of the XID table says where it was checked (the driver's nverror.h
symbol of its number, or what could not be confirmed), and health.py reports its meanings."""
import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import health, xid

SYMBOL_RE = re.compile(r"[A-Z][A-Z0-9_]+")


@pytest.mark.parametrize("number", sorted(xid.XID_TABLE))
def test_every_row_is_sourced_or_marked_unconfirmed(number):
    row = xid.XID_TABLE[number]
    assert row["meaning"] and row["cause"] and isinstance(row["critical"], bool)
    if row["nverror"] is None:
        assert row["unconfirmed"] and len(row["unconfirmed"]) > 20, "a row without a source says what is missing"
    else:
        assert SYMBOL_RE.fullmatch(row["nverror"]), row["nverror"]
    assert row["unconfirmed"] is None or isinstance(row["unconfirmed"], str)


def test_sources_and_the_documented_critical_set():
    assert xid.CATALOGUE.startswith("https://docs.nvidia.com/deploy/xid-errors/")
    assert xid.NVERROR.startswith("https://github.com/NVIDIA/open-gpu-kernel-modules/")
    # docs/roles/gpu_validate.md names these as the XIDs that fail health
    assert xid.XID_CRITICAL == frozenset((48, 62, 64, 74, 79, 94, 95, 119, 120))
    assert [n for n, r in xid.XID_TABLE.items() if r["unconfirmed"]] == [38]


def test_health_reports_the_table():
    # the log lines' shape as validate_health_cases.yml has them; 999 is a number the table does not know
    events = health.parse_xids("NVRM: Xid (PCI:0000:1b:00): 62, pid=1, Internal micro-controller halt\n"
                               "NVRM: Xid (PCI:0000:1c:00): 999, pid=2\n")
    assert events[0]["meaning"] == "Internal micro-controller halt" and events[0]["critical"] is True
    assert events[1]["meaning"] == "XID 999" and "catalogue" in events[1]["cause"]
