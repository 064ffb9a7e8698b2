"""gpuops.dlserver.dcgm_exporter_host through main(): a converged host (files, units, gpg as the
role leaves them) is verified in the same round trip; a drifted file, mode or unit reopens the
role's steps without reading the page; host mode without apt fails naming dcgm_exporter_mode."""

import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.dcgm_verify import verify_metrics
from ansible_collections.gpuops.dlserver.plugins.modules import dcgm_exporter_host as mod
from module_harness import ExitJson, FailJson

PAGE = "# HELP DCGM_FI_DEV_GPU_TEMP x\nDCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 41\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 80\n"


def run(args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as exc:
            mod.main()
    return exc.type, exc.value.args[0]


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A host as the role leaves it: the directory, the counters file, the unit, gpg; units read
    from a table, the page from PAGE (counting reads)."""
    etc = tmp_path / "dcgm-exporter"
    etc.mkdir()
    os.chmod(str(etc), 0o755)
    config = {"run": True, "mode": "host", "packages_missing": [], "stop_units": [],
              "csv_path": str(etc / "gpuops-counters.csv"),
              "csv": "# c\nDCGM_FI_DEV_GPU_TEMP, gauge, t\nDCGM_FI_DEV_POWER_USAGE, gauge, p\n",
              "unit": "[Unit]\nDescription=x\n", "verify_url": "http://127.0.0.1:9400/metrics",
              "metric_names": ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"]}
    unit_file = tmp_path / "dcgm-exporter.service"
    for path, text in ((config["csv_path"], config["csv"]), (str(unit_file), config["unit"])):
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, 0o644)
    gpg = tmp_path / "gpg"
    gpg.write_text("")
    monkeypatch.setattr(mod, "GPG", str(gpg))
    units = {"nvidia-dcgm": {"enabled": "enabled", "active": "active"},
             "dcgm-exporter": {"enabled": "enabled", "active": "active"}}
    monkeypatch.setattr(mod, "units_state", lambda module, names: dict((n, units.get(n, {})) for n in names))
    reads = []

    def page(url, expected, timeout):
        reads.append(url)
        return verify_metrics(PAGE, expected)

    monkeypatch.setattr(mod, "read_page", page)
    args = {"config": config, "config_dir": str(etc), "unit_file": str(unit_file), "backend": "apt"}
    return {"args": args, "units": units, "reads": reads, "gpg": gpg}


def test_converged_host_is_verified_in_the_same_round_trip(host):
    kind, result = run(host["args"])
    assert kind is ExitJson, result.get("msg")
    assert result["converged"] == {"current": True, "reasons": []}
    assert result["verified"]["ok"] is True and result["verified"]["served"] == host["args"]["config"]["metric_names"]
    assert host["reads"] == ["http://127.0.0.1:9400/metrics"]


@pytest.mark.parametrize("drift,reason", [
    ("edit", "the counters file"),
    ("chmod", "the counters file"),
    ("unit", "the unit file would change"),
    ("disable", "dcgm-exporter is not enabled (disabled)"),
    ("gpg", "gpg is not installed"),
])
def test_each_drift_reopens_the_role_without_reading_the_page(host, drift, reason):
    config = host["args"]["config"]
    if drift == "edit":
        with open(config["csv_path"], "a") as handle:
            handle.write("DCGM_FI_DEV_FB_USED, gauge, mine\n")
    elif drift == "chmod":
        os.chmod(config["csv_path"], 0o666)
    elif drift == "unit":
        with open(host["args"]["unit_file"], "w") as handle:
            handle.write("[Unit]\nDescription=edited\n")
    elif drift == "disable":
        host["units"]["dcgm-exporter"] = {"enabled": "disabled", "active": "active"}
    else:
        host["gpg"].unlink()
    kind, result = run(host["args"])
    assert kind is ExitJson and result["converged"]["current"] is False
    assert [r for r in result["converged"]["reasons"] if reason in r], result["converged"]["reasons"]
    assert result["verified"] is None and host["reads"] == []


def test_host_mode_without_apt_fails_naming_the_variable(host):
    host["args"]["backend"] = "dnf"
    kind, result = run(host["args"])
    assert kind is FailJson and "dcgm_exporter_mode" in result["msg"] and "dnf" in result["msg"]
