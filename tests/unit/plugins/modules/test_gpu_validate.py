"""gpuops.dlserver.gpu_validate: bad thresholds fail before anything runs, the record is written once
per verdict, check mode writes nothing, a driverless GPU host fails health with the cause."""
import json
import os

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import node
from ansible_collections.gpuops.dlserver.plugins.action.gpu_validate import spec_defaults
from ansible_collections.gpuops.dlserver.plugins.modules import gpu_validate
from module_harness import run_module  # noqa: E402 pylint: disable=wrong-import-order

NO_DRIVER = {"source": "pci", "gpu_count": 1, "driver": {"loaded": False},
             "gpus": [{"index": 0, "pci_bus_id": "0000:1b:00.0", "pci_device_id": "0x2330",
                       "pcie": {"current_gen": 5, "max_gen": 5, "current_width": 16, "max_width": 16}}]}
CPU_ONLY = {"source": "pci", "gpu_count": 0, "driver": {"loaded": False}, "gpus": []}


def _run(check_mode=False, **args):
    # the options the task leaves out, as the action of the same name fills them (the role's spec)
    return run_module(gpu_validate.main, dict(spec_defaults(), **args), check_mode)


@pytest.fixture
def dirs(tmp_path):
    (tmp_path / "textfile").mkdir()
    return dict(record_dir=str(tmp_path / "gpuops"), textfile_dir=str(tmp_path / "textfile"), host_name="n1",
                nvml_path=[], sysfs_root=str(tmp_path))


@pytest.mark.parametrize("bad", [{"thresholds": {"matmul": 1.5}}, {"thresholds_by_model": {"0x2330": {"network": 0}}},
                                 {"balance_thresholds": {"nic_gbps": -1}}])
def test_bad_thresholds_fail_before_running(dirs, bad):
    res = _run(gpu_facts=CPU_ONLY, groups=["health"], **dict(dirs, **bad))
    assert res["failed"] and "nothing was measured" in res["msg"]
    assert not os.path.exists(dirs["record_dir"])


def test_messages_name_the_role_variables(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["health"], thresholds={"matmul": 2},
               input_names={"thresholds": "gpu_validate_thresholds"}, **dirs)
    assert res["failed"] and "gpu_validate_thresholds.matmul must be a fraction" in res["msg"]


def test_no_driver_fails_health_with_the_cause_and_writes_once(dirs):
    res = _run(gpu_facts=NO_DRIVER, groups=["health", "balance", "performance"], **dirs)
    assert res["changed"] is True
    val = res["validation"]
    assert val["verdict"] == "fail" and val["device"] == "none"
    assert val["worst"]["check"] == "driver" and "not loaded" in val["worst"]["reason"]
    perf = [c for c in val["checks"] if c["group"] == "performance"]
    assert perf[0]["status"] == "fail" and "driver is not loaded" in perf[0]["reason"]
    record = json.load(open(os.path.join(dirs["record_dir"], "validate.json")))
    assert record["verdict"] == "fail"
    assert "FAIL" in open(os.path.join(dirs["record_dir"], "validate.txt")).read()
    prom = open(os.path.join(dirs["textfile_dir"], "gpuops_validate.prom")).read()
    assert 'gpuops_validate_ok{device="none"} 0' in prom
    again = _run(gpu_facts=NO_DRIVER, groups=["health", "balance", "performance"], **dirs)
    assert again["changed"] is False and "not rewritten" in again["validation"]["record"]["reason"]


def test_check_mode_measures_nothing_and_writes_nothing(dirs):
    res = _run(check_mode=True, gpu_facts=CPU_ONLY, allow_cpu=True, python="/nonexistent/python",
               groups=["health", "balance", "performance"], **dirs)
    assert res["changed"] is False
    assert not os.path.exists(dirs["record_dir"])
    perf = [c for c in res["validation"]["checks"] if c["group"] == "performance"]
    assert perf[0]["status"] == "skip" and "check mode" in perf[0]["reason"]


def test_cpu_without_permission_is_not_measured(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["performance"], python="/nonexistent/python", **dirs)
    assert res["validation"]["verdict"] == "pass"
    assert "allow_cpu is false" in res["validation"]["checks"][0]["reason"]


def test_cross_node_needs_peers(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["cross_node"], python="/x", peers=[{"name": "a", "address": "1"}], **dirs)
    assert res["failed"] and "two or more peers" in res["msg"]


def test_cpu_measurement_that_fails_names_the_error(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["performance"], allow_cpu=True, python="/nonexistent/python", **dirs)
    val = res["validation"]
    assert val["device"] == "cpu" and val["verdict"] == "fail"
    assert "not an executable python" in val["worst"]["reason"]


@pytest.mark.skipif(not os.environ.get("GPUOPS_TEST_TORCH_PYTHON"),
                    reason="GPUOPS_TEST_TORCH_PYTHON (a python with CPU torch) not set")
def test_cpu_run_with_real_torch_is_never_a_gpu_result(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["performance"], allow_cpu=True, size_mib=8,
               python=os.environ["GPUOPS_TEST_TORCH_PYTHON"], **dirs)
    val = res["validation"]
    assert val["device"] == "cpu" and val["verdict"] == "pass", val
    names = sorted(c["check"] for c in val["checks"])
    assert names == ["allreduce", "matmul", "memory_copy"]
    assert all("device: cpu" in c["reason"] for c in val["checks"])
    prom = open(os.path.join(dirs["textfile_dir"], "gpuops_validate.prom")).read()
    assert 'gpuops_validate_ok{device="cpu"} 1' in prom and "fraction_of_peak{" not in prom


@pytest.mark.skipif(not os.environ.get("GPUOPS_TEST_TORCH_PYTHON"),
                    reason="GPUOPS_TEST_TORCH_PYTHON (a python with CPU torch) not set")
def test_resnet50_on_the_cpu_is_measured_never_judged(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["performance"], allow_cpu=True, size_mib=8, resnet50=True,
               python=os.environ["GPUOPS_TEST_TORCH_PYTHON"], **dirs)
    resnet = [c for c in res["validation"]["checks"] if c["check"] == "resnet50"]
    assert len(resnet) == 1 and resnet[0]["status"] == "skip" and resnet[0]["measured"] > 0, resnet
    assert "device: cpu" in resnet[0]["reason"] and resnet[0]["fraction"] is None


@pytest.mark.skipif(not os.environ.get("GPUOPS_TEST_TORCH_PYTHON"),
                    reason="GPUOPS_TEST_TORCH_PYTHON (a python with CPU torch) not set")
def test_gpus_torch_cannot_see_fail_and_cpu_figures_are_not_gpu_results(dirs):
    facts = dict(NO_DRIVER, driver={"loaded": True, "version": "550.127.05"})
    res = _run(gpu_facts=facts, groups=["performance"], allow_cpu=True, size_mib=8,
               python=os.environ["GPUOPS_TEST_TORCH_PYTHON"], **dirs)
    val = res["validation"]
    assert val["device"] == "cpu" and val["verdict"] == "fail"
    first = val["checks"][0]
    assert first["check"] == "performance" and "PyTorch" in first["reason"] and "not GPU results" in first["reason"]
    assert all("device: cpu" in c["reason"] for c in val["checks"][1:])


@pytest.mark.skipif(not os.environ.get("GPUOPS_TEST_TORCH_PYTHON"),
                    reason="GPUOPS_TEST_TORCH_PYTHON (a python with CPU torch) not set")
def test_unreachable_peer_fails_naming_peer_and_port_while_others_run(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["balance", "cross_node"], timeout=3, port=1, iperf3_port=2,
               peers=[{"name": "gone", "address": "127.0.0.1"}, {"name": "n1", "address": "127.0.0.1"}], rank=1,
               python=os.environ["GPUOPS_TEST_TORCH_PYTHON"], **dirs)
    val = res["validation"]
    checks = dict((c["check"], c) for c in val["checks"])
    assert checks["cross_allreduce"]["status"] == "fail"
    assert "rendezvous 127.0.0.1:1 (peer gone)" in checks["cross_allreduce"]["reason"]
    assert checks["network"]["status"] == "fail"
    assert "iperf3 to gone (127.0.0.1) port 2 failed" in checks["network"]["reason"]
    assert "system_memory" in checks  # the other checks still ran


def test_each_gpu_is_measured_in_its_native_precision(monkeypatch):
    # A V100 and an A100 on one host: float16 for the V100 (no bf16 tensor cores; current PyTorch's
    # is_bf16_supported() says True there by emulation), bfloat16 for the A100's matmul, float16 for
    # both ResNet-50 runs (NVIDIA's published figures are float16 AMP).
    seen = []

    def fake_run(argv, timeout):
        seen.append(argv)
        return 0, '', ''
    monkeypatch.setattr(node, "_run", fake_run)
    monkeypatch.setattr(node.runner, "run_parallel", lambda argvs, timeout, env: [(1, '', 'not run')] * len(argvs))
    gpus = [{"pci_device_id": "0x1db5", "compute_capability": "7.0", "architecture": "volta"},
            {"pci_device_id": "0x20b2", "compute_capability": "8.0", "architecture": "ampere"}]
    params = {"python": "/env/bin/python", "size_mib": 8, "resnet50": True, "resnet50_batch": 16, "timeout": 5}
    node._local(params, gpus, "cuda", node.perf.validate_thresholds({}, {}))
    dtypes = [(a[a.index("--mode") + 1], a[a.index("--gpu") + 1], a[a.index("--dtype") + 1])
              for a in seen if "--dtype" in a]
    assert dtypes == [("local", "0", "float16"), ("resnet50", "0", "float16"),
                      ("local", "1", "bfloat16"), ("resnet50", "1", "float16")]
