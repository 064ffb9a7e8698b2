"""Verify gpuops.dlserver.gpu_validate on two CPU lab nodes (molecule/gpu_validate): the record,
the report and the textfile metrics, after converge and an idempotence run that changed nothing."""

import json

import pytest

RECORD = "/etc/gpuops/validate.json"
PROM = "/var/lib/node_exporter/textfile/gpuops_validate.prom"


@pytest.fixture(name="record")
def fixture_record(host):
    return json.loads(host.file(RECORD).content_string)


def _find(record, check, subject=None):
    return [c for c in record["checks"] if c["check"] == check and (subject is None or c["subject"] == subject)]


def test_every_measurement_says_cpu(host, record):
    assert record["device"] == "cpu"
    perf = [c for c in record["checks"] if c["group"] in ("performance", "cross_node")
            and c["check"] not in ("network", "performance", "ib_write_bw")]
    assert {c["check"] for c in perf} == {"matmul", "memory_copy", "allreduce", "cross_allreduce"}
    for c in perf:
        assert c["status"] == "skip" and "device: cpu" in c["reason"], c
        assert c["fraction"] is None and c["measured"] > 0, c


def test_degraded_node_fails_with_the_right_reasons(host, record):
    if host.backend.get_hostname() != "val-a100":
        pytest.skip("the fault is injected on val-a100")
    assert record["verdict"] == "fail"
    link = _find(record, "pcie_link", "GPU3")[0]
    assert link["status"] == "fail" and "GPU3 PCIe Gen4 x8, expected Gen4 x16: reseat" in link["reason"]
    ecc = _find(record, "ecc_uncorrected", "GPU0")[0]
    assert ecc["status"] == "fail" and "GPU0 has 2 volatile uncorrectable ECC error(s)" in ecc["reason"]
    assert _find(record, "ecc_uncorrected", "GPU1")[0]["status"] == "pass"
    assert _find(record, "gpu_count")[0]["status"] == "pass"  # NVML (the double) sees every PCI GPU
    assert _find(record, "driver_versions")[0]["status"] == "pass"
    # the fixture's GPUs have a "loaded" driver, but the CPU torch sees none: no GPU figure, said so
    torch = _find(record, "performance", "host")[0]
    assert torch["status"] == "fail" and "4 GPU(s) on PCI with a loaded driver, but PyTorch" in torch["reason"]
    report = host.file("/etc/gpuops/validate.txt").content_string
    assert report.startswith("gpu_validate on val-a100: FAIL (device: cpu)")
    prom = host.file(PROM).content_string
    assert 'gpuops_validate_ok{device="cpu"} 0' in prom
    assert 'gpuops_validate_check_ok{group="health",check="ecc_uncorrected",subject="GPU0",status="fail"} 0' in prom


def test_cpu_node_passes(host, record):
    if host.backend.get_hostname() != "val-cpu":
        pytest.skip("val-cpu is the healthy node")
    assert record["verdict"] in ("pass", "warn"), record["summary"]
    assert _find(record, "driver")[0]["reason"] == "no NVIDIA GPU on PCI"
    assert 'gpuops_validate_ok{device="cpu"} 1' in host.file(PROM).content_string


def test_cross_node_ran_between_the_two(host, record):
    allreduce = _find(record, "cross_allreduce")[0]
    assert "all-reduce across 2 nodes (gloo)" in allreduce["reason"] or "2 ranks" in allreduce["reason"]
    network = _find(record, "network")[0]
    assert network["status"] == "pass", network
    assert host.package("iperf3").is_installed


def test_balance_reports_figures(host, record):
    checks = dict((c["check"], c) for c in record["checks"] if c["group"] == "balance")
    assert set(checks) >= {"system_memory", "dataset_device", "nic_speed"}
    assert checks["dataset_device"]["status"] in ("pass", "warn", "fail")
    assert checks["dataset_device"]["value"]
