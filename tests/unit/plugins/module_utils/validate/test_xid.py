"""validate/xid.py: every row of the XID table carries NVIDIA's recovery action for it and where it
was checked (the driver's nverror.h symbol of its number, or what could not be confirmed); the
health check fails a node whose XID needs a GPU reset or a node reboot, and follows the driver's
own verdict (XID 154) read from real kernel log lines (data/xid_kernel_log_cases.yml)."""
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import health, xid

SYMBOL_RE = re.compile(r"[A-Z][A-Z0-9_]+")
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(HERE))))
with open(os.path.join(HERE, "data", "xid_kernel_log_cases.yml")) as _fh:
    LOGS = yaml.safe_load(_fh)

# NVIDIA's XID catalogue (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html,
# "Xid Catalog Reference", column "Resolution Bucket (Immediate Action)", read 2026-12-07), for every
# number of the table. 61 and 123 have no row among the catalogue's Ampere-and-newer rows (None).
CATALOGUE_ACTIONS = {
    13: "RESTART_APP", 31: "RESTART_APP", 32: "RESTART_APP", 38: "IGNORE", 43: "IGNORE", 45: "WORKFLOW_XID_45",
    46: "RESET_GPU", 48: "WORKFLOW_XID_48", 61: None, 62: "RESET_GPU", 63: "IGNORE", 64: "RESET_GPU",
    74: "WORKFLOW_NVLINK_ERR", 79: "RESTART_BM", 92: "IGNORE", 94: "RESTART_APP", 95: "RESET_GPU",
    109: "RESET_GPU", 110: "RESET_GPU", 119: "RESET_GPU", 120: "RESET_GPU", 123: None, 136: "RESET_GPU",
    140: "RESET_GPU", 143: "RESET_GPU", 151: "RESTART_VM", 154: "XID_154", 155: "RESET_GPU", 156: "RESET_GPU",
    158: "RESET_GPU",
}


@pytest.mark.parametrize("number", sorted(xid.XID_TABLE))
def test_every_row_is_sourced_or_marked_unconfirmed(number):
    row = xid.XID_TABLE[number]
    assert row["meaning"] and row["cause"] and isinstance(row["critical"], bool)
    assert row["source"] == xid.CATALOGUE and row["read"] == "2026-12-07"
    assert row["action"] in xid.ACTION_VERDICT and row["verdict"] == xid.ACTION_VERDICT[row["action"]]
    if row["nverror"] is None:
        assert row["unconfirmed"] and len(row["unconfirmed"]) > 20, "a row without a source says what is missing"
    else:
        assert SYMBOL_RE.fullmatch(row["nverror"]), row["nverror"]
    assert row["unconfirmed"] is None or isinstance(row["unconfirmed"], str)


def test_actions_are_the_catalogues():
    # the old table had no action and warned on 46, 140 and 154, which the catalogue resets or
    # leaves to the driver's verdict
    assert {n: r["action"] for n, r in xid.XID_TABLE.items()} == CATALOGUE_ACTIONS


def test_numbers_and_symbols_kept():
    # issue 36: the XID numbers and nverror.h symbols were right; the rows of before keep them
    kept = {13: "ROBUST_CHANNEL_GR_EXCEPTION", 31: "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
            32: "ROBUST_CHANNEL_PBDMA_ERROR", 38: None, 43: "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR",
            45: "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", 48: "ROBUST_CHANNEL_GPU_ECC_DBE", 61: "PMU_BREAKPOINT",
            62: "PMU_HALT_ERROR", 63: "INFOROM_PAGE_RETIREMENT_EVENT", 64: "INFOROM_PAGE_RETIREMENT_FAILURE",
            74: "NVLINK_ERROR", 79: "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", 92: "EXCESSIVE_SBE_INTERRUPTS",
            94: "ROBUST_CHANNEL_CONTAINED_ERROR", 95: "ROBUST_CHANNEL_UNCONTAINED_ERROR", 119: "GSP_RPC_TIMEOUT",
            120: "GSP_ERROR", 123: "SPI_PMU_RPC_WRITE_FAIL"}
    assert {n: xid.XID_TABLE[n]["nverror"] for n in kept} == kept


def test_sources_and_the_documented_failing_set():
    assert xid.CATALOGUE.startswith("https://docs.nvidia.com/deploy/xid-errors/")
    assert xid.NVERROR.startswith("https://github.com/NVIDIA/open-gpu-kernel-modules/")
    # docs/roles/gpu_validate.md names these as the XIDs that fail health (154: by the driver's verdict)
    assert xid.XID_CRITICAL == frozenset((46, 48, 62, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 143, 151,
                                          154, 155, 156, 158))
    assert 94 not in xid.XID_CRITICAL and 63 not in xid.XID_CRITICAL  # RESTART_APP, IGNORE


def test_health_reports_the_table():
    # the log lines' shape as validate_health_cases.yml has them; 999 is a number the table does not know
    events = health.parse_xids("NVRM: Xid (PCI:0000:1b:00): 62, pid=1, Internal micro-controller halt\n"
                               "NVRM: Xid (PCI:0000:1c:00): 999, pid=2\n")
    assert events[0]["meaning"] == "Internal micro-controller halt" and events[0]["critical"] is True
    assert events[0]["action"] == "RESET_GPU"
    assert events[1]["meaning"] == "XID 999" and "catalogue" in events[1]["cause"] and not events[1]["critical"]


@pytest.mark.parametrize("case", LOGS["cases"], ids=[c["id"] for c in LOGS["cases"]])
def test_published_kernel_logs(case):
    assert case["source"].startswith("SOURCE: https://") and "read 2026-12-07" in case["source"]
    gpus = [{"index": i, "pci_bus_id": bus} for i, bus in enumerate(case["gpus"])]
    checks = health.check_xids(health.parse_xids(case["log"]), gpus)
    got = {int(c["value"].split()[1]): c for c in checks}
    assert sorted(got) == sorted(e["xid"] for e in case["expect"])
    for want in case["expect"]:
        c = got[want["xid"]]
        assert c["status"] == want["status"], (want, c)
        assert want["reason"] in c["reason"], (want, c["reason"])
        assert c["subject"] == "GPU0"


def test_the_catalogues_example_asks_for_a_node_reboot():
    text = LOGS["catalogue_example"]
    assert xid.recovery_action(text) == {"code": 2, "label": "Node Reboot Required", "verdict": "reboot"}
    # the same words in a kernel line of the shape the driver prints (the forum lines above): the node fails
    line = "NVRM: Xid (PCI:0000:01:00): 154, " + text.split("Xid 154 ", 1)[1]
    (result,) = health.check_xids(health.parse_xids(line), [{"index": 0, "pci_bus_id": "0000:01:00.0"}])
    assert result["status"] == "fail" and "Node Reboot Required" in result["reason"]
    assert "drain it and reboot" in result["reason"]


def test_the_latest_verdict_of_a_gpu_counts():
    log = ("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)\n"
           "NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x2 "
           "(Node Reboot Required)\n")
    (result,) = health.check_xids(health.parse_xids(log), [{"index": 3, "pci_bus_id": "0000:01:00.0"}])
    assert result["status"] == "fail" and "Node Reboot Required" in result["reason"] and result["value"] == "XID 154 x2"


@pytest.mark.parametrize("tail, verdict, status", [
    ("GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)", "none", "warn"),
    ("GPU recovery action changed from 0x0 (None) to 0x3 (Drain P2P)", "drain", "fail"),
    ("GPU recovery action changed from 0x0 (None) to 0x5 (Recover IMEX Domain)", "domain", "warn"),
    ("GPU recovery action changed from 0x0 (None) to 0x9 (Something New)", "unknown", "fail"),
    ("something the driver never printed", None, "fail"),
    # a newline ends the line: the verdict of the next line is not this one's
    ("GPU recovery action changed from 0x0 (None) to\n0x0 (None)", None, "fail"),
])
def test_every_driver_verdict(tail, verdict, status):
    events = health.parse_xids("NVRM: Xid (PCI:0000:01:00): 154, " + tail + "\n")
    assert (events[0]["recovery"] or {}).get("verdict") == verdict
    (result,) = health.check_xids(events, [{"index": 0, "pci_bus_id": "0000:01:00.0"}])
    assert result["status"] == status, result


def test_prometheus_pages_the_same_xids():
    # roles/prometheus/files/rules/gpu.rules.yml: GPUXidErrors pages exactly the XIDs the table fails
    # (reset, reboot, the driver's verdict); GPUXidOther is every other one but the application's
    with open(os.path.join(ROOT, "roles", "prometheus", "files", "rules", "gpu.rules.yml")) as fh:
        rules = yaml.safe_load(fh)
    alerts = dict((r["alert"], r["expr"]) for g in rules["groups"] for r in g["rules"] if "alert" in r)
    page = re.search(r'xid=~"([0-9|]+)"', alerts["GPUXidErrors"]).group(1).split("|")
    assert tuple(int(n) for n in page) == xid.XID_PAGE
    other = re.search(r'xid!~"([0-9|]+)"', alerts["GPUXidOther"]).group(1).split("|")
    application = re.search(r'xid=~"([0-9|]+)"', alerts["GPUXidApplication"]).group(1).split("|")
    assert set(other) == set(page) | set(application)
    assert all(xid.XID_TABLE[int(n)]["verdict"] in ("application", "none") for n in application)


def test_recovery_codes_are_sourced():
    # NVML's nvmlDeviceGpuRecoveryAction_t: 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset
    assert [xid.RECOVERY_CODES[c]["verdict"] for c in range(5)] == ["none", "reset", "reboot", "drain", "reset"]
    for row in xid.RECOVERY_CODES.values():
        assert row["source"] == xid.NVML_RECOVERY and row["read"] == "2026-12-07"
