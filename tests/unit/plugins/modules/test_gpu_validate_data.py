"""gpuops.dlserver.gpu_validate's data group through the module: check mode measures nothing, a node
without fio or a measuring python says what was not measured (and removes nothing of the user's), the
figures reach validate.json's ``data`` and the textfile; with GPUOPS_TEST_TORCH_PYTHON (a python with
CPU torch, Pillow and lmdb) and Debian's fio, a real measurement."""
import json
import os
import shutil

import pytest

from ansible_collections.gpuops.dlserver.plugins.action.gpu_validate import spec_defaults
from ansible_collections.gpuops.dlserver.plugins.modules import gpu_validate
from module_harness import run_module  # noqa: E402 pylint: disable=wrong-import-order

CPU_ONLY = {"source": "pci", "gpu_count": 0, "driver": {"loaded": False}, "gpus": []}


def _run(check_mode=False, **args):
    # the options the task leaves out, as the action of the same name fills them (the role's spec)
    return run_module(gpu_validate.main, dict(spec_defaults(), **args), check_mode)


@pytest.fixture(name="dirs")
def fixture_dirs(tmp_path):
    (tmp_path / "textfile").mkdir()
    (tmp_path / "dataset").mkdir()
    (tmp_path / "dataset" / "users-file.jpg").write_bytes(b"keep me")
    return dict(record_dir=str(tmp_path / "gpuops"), textfile_dir=str(tmp_path / "textfile"), host_name="n1",
                nvml_path=[], sysfs_root=str(tmp_path), dataset_path=str(tmp_path / "dataset"),
                data_images=16, data_sample_mib=2, data_seconds=1)


def test_check_mode_measures_no_data_path(dirs):
    res = _run(check_mode=True, gpu_facts=CPU_ONLY, groups=["data"], **dirs)
    checks = res["validation"]["checks"]
    assert [(c["group"], c["check"], c["status"]) for c in checks] == [("data", "data_feed", "skip")]
    assert "check mode" in checks[0]["reason"] and not os.path.exists(dirs["record_dir"])


def test_bad_data_numbers_fail_before_running(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["data"], **dict(dirs, data_images=4))
    assert res["failed"] and "gpu_validate_data_images must be a whole number from 16 to 100000, got 4" in res["msg"]


def test_without_a_measuring_python_says_so_and_leaves_the_dataset(dirs, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no fio either
    res = _run(gpu_facts=CPU_ONLY, groups=["data"], python="/nonexistent/python", **dirs)
    val = res["validation"]
    by = dict(("%s/%s" % (c["check"], c["subject"]), c) for c in val["checks"])
    assert "fio is not installed" in by["data_read/sequential"]["reason"]
    assert "/nonexistent/python is not an executable python" in by["data_loader/loose"]["reason"]
    assert by["data_feed/host"]["status"] == "skip" and val["verdict"] == "pass"
    assert os.listdir(dirs["dataset_path"]) == ["users-file.jpg"]
    record = json.load(open(os.path.join(dirs["record_dir"], "validate.json")))
    assert record["data"]["summary"].startswith("seq unknown MB/s, rand unknown MB/s, images/s unknown")


@pytest.mark.skipif(not os.environ.get("GPUOPS_TEST_TORCH_PYTHON") or not shutil.which("fio"),
                    reason="GPUOPS_TEST_TORCH_PYTHON (CPU torch, pillow, lmdb) not set, or no fio")
def test_real_figures_on_the_cpu(dirs):
    res = _run(gpu_facts=CPU_ONLY, groups=["data"], python=os.environ["GPUOPS_TEST_TORCH_PYTHON"], **dirs)
    data = res["validation"]["data"]
    assert data["sequential_read_mbps"] > 0 and data["random_read_mbps"] > 0, data
    assert data["loose_images_per_s"] > 0 and data["lmdb_images_per_s"] > 0, data
    assert "no GPU demand to compare" in data["verdict"]
    assert os.listdir(dirs["dataset_path"]) == ["users-file.jpg"]
    prom = open(os.path.join(dirs["textfile_dir"], "gpuops_validate.prom")).read()
    assert 'gpuops_validate_data_images_per_second{source="loose"}' in prom
