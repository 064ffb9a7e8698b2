"""gpuops.dlserver.gpu_validate: dcgmi diag where DCGM runs (a TEST DOUBLE of dcgmi that prints the
published fixture), skipped with the reason elsewhere; ib_write_bw between two peers (a TEST DOUBLE of
ib_write_bw that prints the published report) over a sysfs port tree, skipped without InfiniBand."""
import os
import stat

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import node
from ansible_collections.gpuops.dlserver.plugins.action.gpu_validate import spec_defaults
from ansible_collections.gpuops.dlserver.plugins.modules import gpu_validate
from module_harness import ExitJson, FailJson  # noqa: E402 pylint: disable=wrong-import-order

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures")
GPU = {"source": "nvml", "gpu_count": 1, "driver": {"loaded": True, "version": "550.127.05"},
       "gpus": [{"index": 0, "pci_bus_id": "0000:1b:00.0", "pci_device_id": "0x2330",
                 "pcie": {"current_gen": 5, "max_gen": 5, "current_width": 16, "max_width": 16}}]}
CPU_ONLY = {"source": "pci", "gpu_count": 0, "driver": {"loaded": False}, "gpus": []}


def _run(**args):
    # the options the task leaves out, as the action of the same name fills them (the role's spec)
    with patch_module_args(dict(spec_defaults(), **args)):
        with pytest.raises((ExitJson, FailJson)) as info:
            gpu_validate.main()
    return info.value.args[0]


def _double(bindir, name, fixture, rc=0):
    """A TEST DOUBLE named ``name`` on PATH that prints a published output (its SOURCE line dropped)."""
    path = bindir / name
    path.write_text("#!/bin/sh\n# TEST DOUBLE of %s: prints %s\ntail -n +2 '%s'\nexit %d\n"
                    % (name, fixture, os.path.abspath(os.path.join(FIXTURES, fixture)), rc))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    (tmp_path / "textfile").mkdir()
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", "%s:%s" % (tmp_path / "bin", os.environ.get("PATH", "")))
    return dict(record_dir=str(tmp_path / "gpuops"), textfile_dir=str(tmp_path / "textfile"), host_name="n1",
                nvml_path=[], sysfs_root=str(tmp_path))


def test_dcgm_diag_skipped_without_gpu(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["dcgm_diag"], **dirs)
    (check,) = res["validation"]["checks"]
    assert check["group"] == "dcgm_diag" and check["status"] == "skip"
    assert check["reason"].startswith("no NVIDIA GPU on PCI")


def test_dcgm_diag_skipped_without_dcgmi(dirs):
    res = _run(gpu_facts=GPU, groups=["dcgm_diag"], **dirs)
    (check,) = res["validation"]["checks"]
    assert check["status"] == "skip" and check["reason"].startswith("dcgmi is not installed"), check


def test_dcgm_diag_reports_each_failed_test_by_name(dirs, tmp_path):
    bindir = tmp_path / "bin"
    _double(bindir, "dcgmi", "dcgmi/diag-1.7-4gpu-smstress-fail-dcgm-testdiagmanagerstrings.json.txt", rc=226)
    (bindir / "systemctl").write_text("#!/bin/sh\n# TEST DOUBLE of systemctl is-active\necho active\n")
    (bindir / "systemctl").chmod(0o755)
    res = _run(gpu_facts=GPU, groups=["dcgm_diag"], dcgm_diag_level=2, **dirs)
    val = res["validation"]
    assert val["verdict"] == "fail"
    failed = [c for c in val["checks"] if c["status"] == "fail"]
    assert [c["subject"] for c in failed] == ["sm_stress"]
    assert failed[0]["value"] == "level 2: failed on GPU 0, GPU 2, GPU 3"
    assert "Max stress level of 2128.7 did not exceed desired stress level of 3000.0 for GPU 0" in failed[0]["reason"]
    prom = open(os.path.join(dirs["textfile_dir"], "gpuops_validate.prom")).read()
    assert 'check="dcgm_diag",subject="sm_stress",status="fail"} 0' in prom


def test_dcgm_diag_stopped_host_engine_skips(dirs, tmp_path):
    bindir = tmp_path / "bin"
    _double(bindir, "dcgmi", "dcgmi/diag-r1-3.1.0-8gpu-pass-dcgm-jsonresulttests.json.txt")
    (bindir / "systemctl").write_text("#!/bin/sh\necho inactive\nexit 3\n")
    (bindir / "systemctl").chmod(0o755)
    res = _run(gpu_facts=GPU, groups=["dcgm_diag"], **dirs)
    (check,) = res["validation"]["checks"]
    assert check["status"] == "skip" and "(nvidia-dcgm) is not running (state: inactive)" in check["reason"]


def _ib_tree(root, rate="400 Gb/sec (4X NDR)"):
    port = root / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "state").write_text("4: ACTIVE\n")
    (port / "rate").write_text(rate + "\n")
    (port / "link_layer").write_text("InfiniBand\n")


def _params(dirs, rank):
    return dict(dirs, peers=[{"name": "n0", "address": "127.0.0.1"}, {"name": "n1", "address": "127.0.0.1"}],
                rank=rank, ib_port=18515, ib_seconds=1, timeout=2)


def test_ib_write_bw_client_judges_against_the_link_rate(dirs, tmp_path):
    _ib_tree(tmp_path)
    _double(tmp_path / "bin", "ib_write_bw", "perftest/write-bw-bnxt-re0-3qp-duration-scc24.txt")
    merged = node.perf.validate_thresholds({}, {})
    (check,) = node._ib(_params(dirs, 1), {"nics": []}, merged)  # pylint: disable=protected-access
    assert check["check"] == "ib_write_bw" and check["status"] == "pass", check
    assert check["subject"] == "n0 (127.0.0.1)" and check["fraction"] == pytest.approx(0.909, abs=0.001)


def test_ib_write_bw_server_counts_its_peers(dirs, tmp_path):
    _ib_tree(tmp_path)
    _double(tmp_path / "bin", "ib_write_bw", "perftest/write-bw-rocep1s0f1-4qp-dgxspark-eugr.txt")
    merged = node.perf.validate_thresholds({}, {})
    (check,) = node._ib(_params(dirs, 0), {"nics": []}, merged)  # pylint: disable=protected-access
    assert check["status"] == "pass" and check["value"] == "1 of 1 peers", check


def test_ib_write_bw_skipped_without_a_port(dirs):
    merged = node.perf.validate_thresholds({}, {})
    facts = {"nics": [{"ib_devices": ["mlx5_0"]}, {"ib_devices": []}]}
    (check,) = node._ib(_params(dirs, 1), facts, merged)  # pylint: disable=protected-access
    assert check["status"] == "skip" and "mlx5_0 on PCI, but no port under /sys/class/infiniband" in check["reason"]
