"""gpu_validate's dcgm_diag and ib_write_bw checks (module_utils/validate/dcgm_diag.py, ib_perf.py),
from the case tables data/validate_dcgm_diag_cases.yml and data/validate_ib_perf_cases.yml, on the
published outputs under tests/fixtures/dcgmi/ and tests/fixtures/perftest/."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import dcgm_diag, ib_perf, observe, report

HERE = os.path.dirname(__file__)
DATA = os.path.join(os.path.dirname(HERE), "data")
FIXTURES = os.path.join(HERE, "..", "..", "..", "..", "fixtures")


def _cases(name):
    with open(os.path.join(DATA, name)) as handle:
        return yaml.safe_load(handle)


def _fixture(kind, name):
    with open(os.path.join(FIXTURES, kind, name)) as handle:
        text = handle.read()
    assert text.startswith("# SOURCE: "), "%s/%s has no SOURCE line" % (kind, name)
    return text


def _ids(cases):
    return [c["name"] for c in cases]


DCGM = _cases("validate_dcgm_diag_cases.yml")


@pytest.mark.parametrize("case", DCGM, ids=_ids(DCGM))
def test_dcgm_diag(case):
    if case["kind"] == "can_run":
        run, reason = dcgm_diag.can_run(case["gpus"], case["driver_loaded"], case["dcgmi"], case["hostengine"])
        assert run is case["run"]
        assert case["reason"] in reason and bool(reason) is not run
        return
    text = _fixture("dcgmi", case["fixture"]) if "fixture" in case else case["text"]
    parsed = dcgm_diag.parse(text)
    if "tests" in case:
        assert parsed["version"] == case["version"] and len(parsed["tests"]) == case["tests"], parsed
    checks = dcgm_diag.checks(parsed, 1, 0)
    assert report.verdict(checks)[0] == case["verdict"]
    for want in case["expect"]:
        found = [c for c in checks if c["subject"] == want["subject"]]
        assert len(found) == 1, (want, checks)
        got = found[0]
        assert got["check"] == "dcgm_diag" and got["status"] == want["status"], got
        assert " ".join(want.get("reason", "").split()) in got["reason"], got
        if "value" in want:
            assert got["value"] == want["value"]
    for c in checks:
        assert c["status"] == "pass" or c["reason"], c


def test_dcgm_diag_command_line():
    assert dcgm_diag.argv("/usr/bin/dcgmi", 2) == ["/usr/bin/dcgmi", "diag", "-r", "2", "-j"]
    with pytest.raises(ValueError, match="level must be one of"):
        dcgm_diag.argv("/usr/bin/dcgmi", 3)


IB = _cases("validate_ib_perf_cases.yml")


@pytest.mark.parametrize("case", IB, ids=_ids(IB))
def test_ib_perf(case, tmp_path):
    kind = case["kind"]
    if kind == "report":
        text = _fixture("perftest", case["fixture"]) if "fixture" in case else case["text"]
        got = ib_perf.parse(text)
        if "error" in case:
            assert case["error"] in got.get("error", ""), got
        else:
            assert got == case["expect"]
    elif kind == "port":
        ports = tmp_path / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
        ports.mkdir(parents=True)
        for name, content in case["files"].items():
            (ports / name).write_text(content + "\n")
        found = observe.ib_ports(str(tmp_path), ["mlx5_0"])
        assert len(found) == 1 and found[0]["device"] == "mlx5_0" and found[0]["port"] == 1
        for key, value in case["expect"].items():
            assert found[0][key] == value, (key, found[0])
    elif kind == "choose":
        port, reason = ib_perf.choose_port(case["ports"])
        if "use" in case:
            assert port["device"] == case["use"] and reason == ""
        else:
            assert port is None and case["reason"] in reason
    else:
        entry = ib_perf.verdict("n1 (10.0.0.1)", 18515, case["result"], case["port"], case["fraction"])
        assert entry["check"] == "ib_write_bw" and entry["status"] == case["expect"]["status"], entry
        assert case["expect"].get("reason", "") in entry["reason"], entry
        if "fraction" in case["expect"]:
            assert entry["fraction"] == pytest.approx(case["expect"]["fraction"], abs=0.001)


def test_ib_ports_lists_a_device_without_ports_and_ignores_odd_names(tmp_path):
    (tmp_path / "class" / "infiniband" / "mlx5_0").mkdir(parents=True)
    found = observe.ib_ports(str(tmp_path), ["mlx5_1", "bad\nname"])
    assert [(p["device"], p["port"]) for p in found] == [("mlx5_0", None), ("mlx5_1", None)]
    assert observe.ib_ports(str(tmp_path / "absent")) == []


def test_ib_command_lines():
    port = {"device": "mlx5_0", "port": 1}
    assert ib_perf.server_argv(port, 18515, 5) == [
        "ib_write_bw", "-d", "mlx5_0", "-i", "1", "-p", "18515", "-D", "5", "-F", "--report_gbits"]
    assert ib_perf.client_argv(port, 18515, 5, "10.0.0.1")[-1] == "10.0.0.1"
