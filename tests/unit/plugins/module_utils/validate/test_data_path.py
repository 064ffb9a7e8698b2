"""gpu_validate's data group (module_utils/validate/data_path.py, data_run.py, data_measure.py): the
decisions from data/validate_data_cases.yml, fio's JSON parsed from published output
(tests/fixtures/fio/, SOURCE line first) and from the fio of this machine where it is installed,
the textfile metrics, the fleet table's column and the node side's clean-up."""
import json
import os
import shutil
import subprocess

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import (
    data_measure, data_path, data_run, inputs, report)

HERE = os.path.dirname(__file__)
DATA = os.path.join(os.path.dirname(HERE), "data")
FIXTURES = os.path.join(HERE, "..", "..", "..", "..", "fixtures", "fio")

with open(os.path.join(DATA, "validate_data_cases.yml")) as _handle:
    CASES = yaml.safe_load(_handle)


def _fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        text = handle.read()
    assert text.startswith("# SOURCE: https://"), "%s has no SOURCE line" % name
    return text


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "demand"],
                         ids=[c["name"] for c in CASES if c["kind"] == "demand"])
def test_demand(case):
    got = data_path.demand(case["gpus"], case["rate"])
    assert got["images_per_s"] == case["images_per_s"]
    assert case["reason"] in got["reason"], got


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] == "checks"],
                         ids=[c["name"] for c in CASES if c["kind"] == "checks"])
def test_checks(case):
    need = data_path.demand(case["gpus"], 0)
    checks = data_path.checks(case["fio"], case["loader"], need)
    assert [c["check"] for c in checks] == ["data_read", "data_read", "data_loader", "data_loader", "data_loader",
                                            "data_feed"]
    for want in case["expect"]:
        found = [c for c in checks if c["check"] == want["check"] and c["subject"] == want["subject"]]
        assert len(found) == 1, checks
        got = found[0]
        assert got["status"] == want["status"], got
        assert want.get("reason", "") in got["reason"], got
        if "value" in want:
            assert got["value"] == want["value"]
        if "fraction" in want:
            assert got["fraction"] == pytest.approx(want["fraction"], abs=0.001)
    for c in checks:
        if c["status"] in ("warn", "fail"):
            assert c["reason"], c
    grouped = [dict(c, group="data") for c in checks]
    assert report.verdict(grouped)[0] == case["verdict"]
    if "summary" in case:
        assert case["summary"] in data_path.summary(checks)
    kept = data_path.record(checks)
    assert kept["summary"] == data_path.summary(checks)
    assert json.loads(json.dumps(kept)) == kept


def test_published_fio_json():
    """fio-3.20's JSON (kubestr): the randread job's bw_bytes in MB/s; a job that is not a read reads 0."""
    parsed = data_path.parse_fio(_fixture("randread-randwrite-4k-kubestr.json.txt").split("\n", 1)[1])
    assert parsed["version"] == "fio-3.20"
    assert parsed["jobs"]["read_iops"] == {"rw": "randread", "bs": "4K", "read_mbps": 4.0, "read_iops": 982.1,
                                           "runtime_ms": 15321}
    assert parsed["jobs"]["write_iops"]["read_mbps"] == 0.0


def test_fio_notices_before_the_json_are_skipped():
    text = _fixture("randread-randwrite-4k-kubestr.json.txt").split("\n", 1)[1]
    parsed = data_path.parse_fio("fio: this platform does not support process shared mutexes\n" + text)
    assert parsed["jobs"]["read_iops"]["read_mbps"] == 4.0


@pytest.mark.parametrize("text, error", [
    ("", "fio printed no JSON report"),
    ("fio: failed parsing size=1Q", "fio printed no JSON report"),
    ('{"fio version": "fio-3.33", "jobs": [', "fio printed no JSON report"),
    ('{"fio version": "fio-3.33"}', "fio printed no JSON report"),
])
def test_fio_without_a_report(text, error):
    assert error in data_path.parse_fio(text)["error"]


def test_fio_job_error():
    parsed = data_path.parse_fio('{"jobs": [{"jobname": "random", "error": 5}]}')
    assert parsed["jobs"]["random"]["error"] == "fio job random failed with error 5"
    checks = data_path.fio_checks(parsed)
    assert checks[0]["status"] == "warn" and "fio reported no job sequential" in checks[0]["reason"]
    assert checks[1]["status"] == "warn" and "failed with error 5" in checks[1]["reason"]


@pytest.mark.parametrize("directory", ["relative/dir", "/data/a:b", "/data/x\n--name=evil", "/data\x00", "", None])
def test_fio_refuses_a_careless_directory(directory):
    with pytest.raises(ValueError, match="data path"):
        data_path.fio_argv("/usr/bin/fio", directory, 16, 5)


def test_fio_argv():
    argv = data_path.fio_argv("/usr/bin/fio", "/raid/imagenet/.gpuops-data-x", 64, 7)
    assert argv[:8] == ["/usr/bin/fio", "--output-format=json", "--directory=/raid/imagenet/.gpuops-data-x",
                        "--filename=gpuops-fio.dat", "--size=64M", "--runtime=7", "--ioengine=psync", "--invalidate=1"]
    assert argv[8:] == ["--name=sequential", "--rw=read", "--bs=1M", "--stonewall",
                        "--name=random", "--rw=randread", "--bs=128k", "--stonewall"]


@pytest.mark.skipif(not shutil.which("fio"), reason="fio is not installed (Debian's fio; make setup installs it)")
def test_this_machines_fio(tmp_path):
    """The argv runs on the fio of this machine and its JSON parses to both jobs' read rates."""
    out = subprocess.run(data_path.fio_argv(shutil.which("fio"), str(tmp_path), 4, 2), capture_output=True,
                         text=True, check=True).stdout
    parsed = data_path.parse_fio(out)
    assert sorted(parsed["jobs"]) == ["random", "sequential"], parsed
    assert all(job["read_mbps"] > 0 for job in parsed["jobs"].values()), parsed


def test_textfile_lines():
    checks = [dict(c, group="data") for c in data_path.checks(
        CASES[5]["fio"], CASES[5]["loader"], data_path.demand(CASES[5]["gpus"], 0))]
    text = report.textfile(checks, "warn", 1700000000, "cuda")
    assert 'gpuops_validate_data_read_megabytes_per_second{pattern="sequential"} 6000.0' in text
    assert 'gpuops_validate_data_images_per_second{source="lmdb"} 2900.0' in text
    assert "gpuops_validate_data_demand_images_per_second 4800.0" in text
    assert 'gpuops_validate_fraction_of_peak{group="data",check="data_feed",subject="host"} 0.604' in text


def test_fleet_table_has_the_data_column_only_where_measured():
    checks = data_path.checks(CASES[4]["fio"], CASES[4]["loader"], data_path.demand([], 0))
    hv = {"a": {"gpu_validate_report": {"verdict": "pass", "device": "cpu", "worst": None,
                                        "data": data_path.record(checks)}},
          "b": {"gpu_validate_report": {"verdict": "pass", "device": "cpu", "worst": None}}, "c": {}}
    lines = report.fleet_table(["a", "b", "c"], hv)
    assert lines[0].split()[-2:] == ["data", "path"]
    assert "seq 1,800 MB/s, rand 420 MB/s, loose 310, lmdb 356 images/s" in lines[1]
    assert lines[2].endswith("not measured") and lines[3].split()[-1] == "-"
    assert report.fleet_table(["b"], hv)[0].split()[-1] == "measured/peak"


def test_bounds_of_the_data_variables():
    problems = inputs.input_problems({"data_images": 8, "data_seconds": 0, "data_workers": -1,
                                      "data_sample_mib": 1, "data_images_per_gpu": 0})
    assert "gpu_validate_data_images must be a whole number from 16 to 100000, got 8" in problems
    assert "gpu_validate_data_seconds must be a whole number from 1 to 600, got 0" in problems
    assert "gpu_validate_data_workers must be a whole number from 0 to 1024, got -1" in problems
    assert len([p for p in problems if "gpu_validate_data_" in p]) == 3


def _params(tmp_path, **extra):
    params = {"dataset_path": str(tmp_path), "data_workers": 1, "data_images": 16, "data_sample_mib": 1,
              "data_seconds": 1, "data_images_per_gpu": 0, "python": None}
    params.update(extra)
    return params


def test_run_removes_the_sample_even_when_a_measurement_fails(tmp_path, monkeypatch):
    seen = []

    def fake_run(argv, timeout, env=None):
        seen.append(argv)
        sample = [a for a in argv if a.startswith("--directory=")][0].split("=", 1)[1]
        assert os.path.isdir(sample) and os.path.dirname(sample) == str(tmp_path)
        return 1, "", "fio: failed to lay out the file"

    monkeypatch.setattr(data_run.runner, "run", fake_run)
    checks = data_run.run(_params(tmp_path), [], {}, "/usr/bin/fio")
    assert os.listdir(str(tmp_path)) == []
    reads = [c for c in checks if c["check"] == "data_read"]
    assert all(c["status"] == "warn" and "failed to lay out the file" in c["reason"] for c in reads), reads
    loose = [c for c in checks if c["subject"] == "loose"][0]
    assert loose["status"] == "skip" and loose["reason"] == "not measured: no python to measure with (gpu_validate_python)"
    assert len(seen) == 1


def test_run_without_room_or_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(data_run, "_free_bytes", lambda path: 10 * 1048576)
    checks = data_run.run(_params(tmp_path, data_sample_mib=64), [], {}, "/usr/bin/fio")
    assert "MiB free; the sample takes about" in checks[0]["reason"] and checks[0]["status"] == "skip"
    checks = data_run.run(_params(tmp_path, dataset_path=str(tmp_path / "missing")), [], {}, None)
    assert checks[0]["reason"].endswith("missing is not a directory")
    checks = data_run.run(_params(tmp_path, dataset_path="/data/a:b"), [], {}, None)
    assert "not measured: gpu_validate_dataset_path" in checks[0]["reason"]


def test_measure_script_is_handed_over_with_its_arguments():
    argv = data_measure.argv("/opt/env/bin/python", "/data/.gpuops-data-1", 64, 4)
    assert argv[0] == "/opt/env/bin/python" and argv[1] == "-c"
    assert argv[3:] == ["--dir", "/data/.gpuops-data-1", "--images", "64", "--workers", "4", "--batch", "32"]
    assert data_measure.parse("noise\nGPUOPS-DATA {\"images\": 3}\n") == {"images": 3}
