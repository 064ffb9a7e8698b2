"""gpu_validate's checks and verdicts (module_utils/validate/ and hardware/gpu_peaks.py), from the
case tables data/validate_*_cases.yml."""
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware import gpu_peaks
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import (
    balance, health, inputs, measure, observe, perf, report)

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")


def _cases(name):
    with open(os.path.join(DATA, name)) as handle:
        return yaml.safe_load(handle)


def _ids(cases):
    return [c["name"] for c in cases]


def _assert_expected(checks, expected):
    for want in expected:
        found = [c for c in checks if c["check"] == want["check"]
                 and c["subject"] == want.get("subject", c["subject"])
                 and c["status"] == want["status"]
                 and want.get("reason", "") in c["reason"]]
        assert found, "no %r among:\n%s" % (want, "\n".join(json.dumps(c) for c in checks))
        if "fraction" in want:
            assert found[0]["fraction"] == pytest.approx(want["fraction"], abs=0.001)
        if "value" in want:
            assert found[0]["value"] == want["value"]
    for c in checks:
        assert c["status"] in health.STATUSES
        if c["status"] in ("fail", "warn"):
            assert c["reason"], c


HEALTH = _cases("validate_health_cases.yml")


@pytest.mark.parametrize("case", HEALTH, ids=_ids(HEALTH))
def test_health(case):
    checks = health.health(case["facts"], case["plan"], case["observed"], case.get("retired_page_limit", 0))
    _assert_expected(checks, case["expect"])
    assert report.verdict(checks)[0] == case["verdict"]


BALANCE = _cases("validate_balance_cases.yml")


@pytest.mark.parametrize("case", BALANCE, ids=_ids(BALANCE))
def test_balance(case):
    if "error" in case:
        with pytest.raises(ValueError, match=re.escape(case["error"])):
            balance.validate_thresholds(case["thresholds"])
        return
    _assert_expected(balance.balance(case["facts"], case["host"], case.get("thresholds")), case["expect"])


PERF = _cases("validate_perf_cases.yml")


@pytest.mark.parametrize("case", PERF, ids=_ids(PERF))
def test_perf(case):
    if case["kind"] == "thresholds":
        if "error" in case:
            with pytest.raises(ValueError, match=re.escape(case["error"])):
                perf.validate_thresholds(case.get("thresholds"), case.get("by_model"))
            return
        merged = perf.validate_thresholds(case.get("thresholds"), case.get("by_model"))
        got = perf.thresholds_for(merged, gpu_peaks.peak_for(case["model"]))
        for key, value in case["expect_thresholds"].items():
            assert got[key] == value, key
        return
    merged = perf.validate_thresholds({}, {})
    _assert_expected(perf.local_perf(case["result"], case["gpus"], merged), case["expect"])


REPORT = _cases("validate_report_cases.yml")


@pytest.mark.parametrize("case", REPORT, ids=_ids(REPORT))
def test_report(case):
    if case["kind"] == "verdict":
        name, worst = report.verdict(case["checks"])
        assert name == case["verdict"]
        assert (worst and [worst["check"], worst["subject"]]) == (case["worst"] or None)
        return
    write, reason = report.record_decision(case["old"], case["key"], case["now"], case.get("refresh", 604800))
    assert write is case["write"]
    assert case["reason"] in reason


def test_peak_table_rows_are_complete_and_sourced():
    for device_id, row in gpu_peaks.PEAKS.items():
        assert row["source"] and row["model"]
        for key in gpu_peaks.KEYS:
            assert key in row, (hex(device_id), key)
        assert row["bf16_tflops"] or row["fp16_tflops"]
    assert gpu_peaks.peak_for("0x2330")["model"] == "H100 SXM5 80GB"
    assert gpu_peaks.peak_for("0x9999") is None
    assert gpu_peaks.peak_for("not hex") is None
    assert gpu_peaks.pcie_peak_gbps(4, 8) == 15.75


def test_allreduce_and_network_verdicts():
    gpus = [{"pci_device_id": "0x2330"}, {"pci_device_id": "0x2330"}]
    assert perf.node_allreduce_peak(gpus) == 450.0
    assert perf.node_allreduce_peak([{"pci_device_id": "0x20b5", "pcie": {"max_gen": 4, "max_width": 16}}]) == 31.5
    assert perf.node_allreduce_peak([{"pci_device_id": "0x0001"}]) is None
    cpu = perf.allreduce_perf("allreduce", {"device": "cpu", "world": 2, "busbw_gbps": 1.5}, None, 0.5, "x")
    assert cpu["status"] == "skip" and "device: cpu" in cpu["reason"]
    gpu = perf.allreduce_perf("allreduce", {"device": "cuda", "world": 8, "busbw_gbps": 150.0}, 450.0, 0.5, "x")
    assert gpu["status"] == "fail" and gpu["fraction"] == pytest.approx(0.333, abs=0.001)
    failed = perf.allreduce_perf("cross_allreduce", {"error": "rendezvous 10.0.0.1:29511 (peer n1): timeout"},
                                 None, 0.3, "all-reduce across 2 nodes (gloo)")
    assert failed["status"] == "fail" and "10.0.0.1:29511" in failed["reason"]
    net = perf.network_check("n1 (10.0.0.1)", 5201, {"error": "unable to connect to server"}, None, 0.5)
    assert net["status"] == "fail" and "n1 (10.0.0.1) port 5201" in net["reason"]
    assert perf.network_check("n1", 5201, {"gbps": 9.0}, 10.0, 0.5)["status"] == "pass"
    assert perf.network_check("n1", 5201, {"gbps": 2.0}, 10.0, 0.5)["status"] == "fail"


# SOURCE: the XID line format NVRM prints, as quoted in NVIDIA's "XID Errors" documentation and in
# public bug reports (e.g. "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.").
def test_parse_xids():
    text = ("[ 1.0] NVRM: Xid (PCI:0000:3B:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
            "[ 2.0] NVRM: Xid (PCI:0000:1b:00.0): 48, pid=1, name=x, DBE\n"
            "[ 3.0] nvidia-nvswitch: something else\n")
    events = health.parse_xids(text)
    assert [(e["pci_bus_id"], e["xid"], e["critical"]) for e in events] == [
        ("0000:3b:00.0", 79, True), ("0000:1b:00.0", 48, True)]
    assert health.parse_xids("") == []


def test_textfile_is_well_formed_and_escapes_labels():
    checks = [dict(health.check("pcie_link", "fail", "Gen4 x8", "Gen4 x16", "r", 'GPU1"\nx'), group="health"),
              dict(health.check("matmul", "pass", "1", "2", "", "GPU0"), group="performance", fraction=0.7)]
    text = report.textfile(checks, "fail", 1700000000, "cuda")
    assert 'gpuops_validate_ok{device="cuda"} 0' in text
    assert "gpuops_validate_timestamp_seconds 1700000000" in text
    assert 'gpuops_validate_fraction_of_peak{group="performance",check="matmul",subject="GPU0"} 0.7' in text
    assert 'subject="GPU1__x"' in text  # a quote or newline never reaches the label
    sample = re.compile(r'^[a-z_]+(\{([a-z_]+="([^"\\\n]|\\.)*",?)*\})? -?\d+(\.\d+)?$')
    for line in text.splitlines():
        assert line.startswith("#") or sample.match(line), line
    assert report.summary_line("fail", dict(checks[1], measured=1, peak=2), "cuda") == \
        "fail: matmul GPU0 1 of peak 2 = 70% (device: cuda)"


# SOURCE: `iperf3 -c HOST -t 2 -J` (iperf 3.12, Debian 12) prints one JSON object whose
# end.sum_received.bits_per_second is the receiver's rate, and {"error": "..."} on failure;
# the objects below keep only those keys.
def test_observe_parsers():
    ok = json.dumps({"end": {"sum_received": {"bits_per_second": 9.41e9}}})
    assert observe.iperf3_result(0, ok, "") == {"gbps": 9.41}
    refused = json.dumps({"error": "unable to connect to server: Connection refused"})
    assert observe.iperf3_result(1, refused, "")["error"].startswith("unable to connect")
    assert observe.iperf3_result(127, "", "No such file")["error"] == "No such file"
    # SOURCE: nv-fabricmanager --version prints "Fabric Manager version is : 535.161.08"
    assert observe.fabric_manager_version("Fabric Manager version is : 535.161.08\n") == "535.161.08"
    assert observe.fabric_manager_version("nothing") is None


def test_env_file(tmp_path):
    path = tmp_path / "python_stack.env"
    path.write_text("NCCL_DEBUG=WARN\nNCCL_IB_HCA=mlx5_0,mlx5_1\n# comment\nbad line\n")
    assert observe.env_file(str(path)) == {"NCCL_DEBUG": "WARN", "NCCL_IB_HCA": "mlx5_0,mlx5_1"}
    assert observe.env_file(str(tmp_path / "none")) == {}


def test_dataset_device_and_host_reads(tmp_path):
    missing = observe.dataset_device(str(tmp_path / "nope"))
    assert "cannot stat" in missing["error"]
    here = observe.dataset_device(str(tmp_path))
    assert here["path"] == str(tmp_path) and here["kind"]
    assert observe.dataset_device("") is None
    assert observe.memory_mib() > 0 and observe.cpu_count() > 0
    assert isinstance(observe.nics(), list)


def test_measure_argv_and_parse():
    cmd = measure.argv("/env/bin/python", "allreduce", rank=1, world=2, master="10.0.0.1", port=29511,
                       local_rank=None, cpu=False)
    assert cmd[:2] == ["/env/bin/python", "-c"] and "MARKER = 'GPUOPS-VALIDATE '" in cmd[2]
    assert cmd[3:] == ["--mode", "allreduce", "--master", "10.0.0.1", "--port", "29511", "--rank", "1",
                       "--world", "2"]
    assert measure.parse("noise\nGPUOPS-VALIDATE {\"device\": \"cpu\"}\n") == {"device": "cpu"}
    assert measure.parse("GPUOPS-VALIDATE {broken") is None
    assert measure.parse(None) is None


TORCH_PYTHON = os.environ.get("GPUOPS_TEST_TORCH_PYTHON")


@pytest.mark.skipif(not TORCH_PYTHON, reason="GPUOPS_TEST_TORCH_PYTHON (a python with CPU torch) not set")
def test_measure_runs_on_cpu_with_real_torch():
    out = subprocess.run(measure.argv(TORCH_PYTHON, "local", cpu=True, size_mib=8), stdout=subprocess.PIPE,
                         universal_newlines=True, timeout=300, check=True).stdout
    result = measure.parse(out)
    assert result["device"] == "cpu" and result["gpus"][0]["matmul_tflops"] > 0
    checks = perf.local_perf(result, [], perf.validate_thresholds({}, {}))
    assert all(c["status"] == "skip" and "device: cpu" in c["reason"] for c in checks)


def test_peers():
    hv = {"a": {"ansible_host": "10.0.0.1"}, "b": {"gpu_validate_address": "b.example"}, "c": {}}
    assert report.peers(["a", "b", "c"], hv) == [
        {"name": "a", "address": "10.0.0.1"}, {"name": "b", "address": "b.example"}, {"name": "c", "address": "c"}]
    with pytest.raises(ValueError, match="gpu_validate_address of a"):
        report.peers(["a"], {"a": {"gpu_validate_address": "10.0.0.1\n"}})


def test_fleet_table():
    worst_a = {"check": "matmul", "subject": "GPU1", "measured": 400.0, "peak": 989.4, "fraction": 0.404}
    worst_b = {"check": "pcie_link", "subject": "GPU3", "value": "Gen4 x8", "expected": "Gen4 x16"}
    hv = {"a": {"gpu_validate_report": {"verdict": "fail", "device": "cuda", "worst": worst_a}},
          "b": {"gpu_validate_report": {"verdict": "fail", "device": "cpu", "worst": worst_b}},
          "c": {"gpu_validate_report": {"verdict": "pass", "device": "cpu", "worst": None}}, "d": {}}
    lines = report.fleet_table(["a", "b", "c", "d"], hv)
    assert lines[0].split() == ["node", "verdict", "device", "worst", "check", "measured/peak"]
    assert lines[1].split() == ["a", "fail", "cuda", "matmul", "GPU1", "400.0/989.4", "(40%)"]
    assert "Gen4 x8 (expected Gen4 x16)" in lines[2]
    assert lines[3].split() == ["c", "pass", "cpu", "-", "-"]
    assert lines[4].split() == ["d", "not", "run", "-", "-", "-"]


def test_nvml_counters_through_the_binding(monkeypatch):
    import fake_pynvml  # tests/unit, on sys.path through conftest
    data = fake_pynvml.inject_device(fake_pynvml.load_host("a100-pcie-4gpu-degraded"), 0,
                                     ecc_errors={"uncorrected_volatile": 2}, remapped_rows=[0, 0, 1, 0])
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.make_module(data))
    counters, reason = observe.nvml_counters(["0000:17:00.0", "0000:31:00.0", "0000:ff:00.0"], [])
    assert reason is None
    assert counters["0000:17:00.0"] == {"ecc_volatile_uncorrected": 2, "row_remap_pending": True,
                                        "row_remap_failure": False, "retired_pages": None,
                                        "retired_pages_pending": None}
    assert counters["0000:31:00.0"]["ecc_volatile_uncorrected"] is None  # not in the fixture: not reported
    assert "0000:ff:00.0" not in counters
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.make_module(data, init_error="DRIVER_NOT_LOADED"))
    counters, reason = observe.nvml_counters(["0000:17:00.0"], [])
    assert counters == {} and "nvmlInit failed" in reason


def _role_defaults():
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles", "gpu_validate",
                           "defaults", "main.yml")) as handle:
        return {k[len("gpu_validate_"):]: v for k, v in yaml.safe_load(handle).items()}


INPUTS = _cases("validate_inputs_cases.yml")


@pytest.mark.parametrize("case", INPUTS, ids=_ids(INPUTS))
def test_input_problems(case):
    values = dict(_role_defaults(), **case["inputs"])
    found = inputs.input_problems(values)
    assert len(found) == len(case["problems"]), found
    for want in case["problems"]:
        assert any(want in p for p in found), (want, found)
    assert all("gpu_validate_" in p for p in found)


@pytest.mark.parametrize("params,want", [
    ({"port": 29511, "iperf3_port": 5201, "timeout": 20, "size_mib": 256, "retired_page_limit": 10,
      "peers": [{"name": "a", "address": "10.0.0.1"}, {"name": "b", "address": "b.example"}]}, []),
    ({"port": 0}, ["gpu_validate_port must be a whole number from 1 to 65535, got 0"]),
    ({"peers": [{"name": "b", "address": "10.0.0.2\n-c"}]},
     ["gpu_validate_address of peer 'b': '10.0.0.2\\n-c' is not a host name or IP address"]),
])
def test_module_problems(params, want):
    assert inputs.module_problems(params) == want
