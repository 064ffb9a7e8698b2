"""gpuops.dlserver.__private.dcgm_exporter_host through main(): a converged host (files, units, gpg as the
role leaves them) is verified in the same round trip; a drifted file, mode or unit reopens the
role's steps without reading the page; host mode without apt fails naming dcgm_exporter_mode."""

import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm_module
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.dcgm_verify import verify_metrics
from ansible_collections.gpuops.dlserver.plugins.modules.__private import dcgm_exporter_host as mod
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
    monkeypatch.setattr(dcgm_module, "GPG", str(gpg))
    units = {"nvidia-dcgm": {"enabled": "enabled", "active": "active"},
             "dcgm-exporter": {"enabled": "enabled", "active": "active"}}
    monkeypatch.setattr(dcgm_module, "units_state", lambda module, names: dict((n, units.get(n, {})) for n in names))
    reads = []

    def page(url, expected, timeout):
        reads.append(url)
        return verify_metrics(PAGE, expected)

    monkeypatch.setattr(dcgm_module, "read_page", page)
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


def cuda_repository(tmp_path, key_path, fingerprint, **extra):
    """The role's repository option (vars/main.yml __dcgm_exporter_repository) for a local key file."""
    spec = {"url": "https://mirror.example/cuda/debian12/x86_64/", "url_var": "gpuops_cuda_repo_base_url",
            "key": {"url": "file://%s" % key_path, "fingerprint": fingerprint,
                    "url_var": "gpuops_cuda_repo_key_url", "checksum_var": "gpuops_cuda_repo_key_checksum",
                    "fingerprint_var": "gpuops_cuda_repo_key_fingerprint"},
            "keyring_file": str(tmp_path / "keyrings" / "gpuops-dcgm.asc"),
            "sources_file": str(tmp_path / "sources" / "gpuops-dcgm.sources"),
            "header": "# Managed by Ansible", "description": "NVIDIA's CUDA repository, for DCGM"}
    spec.update(extra)
    return spec


@pytest.mark.skipif(not __import__("shutil").which("gpg"), reason="needs gpg")
def test_host_read_checks_the_repository_in_the_same_round_trip(host, two_key_file, tmp_path):
    """What package_repository answers, from the host read (real gpg): only the wanted key reaches the
    keyring; each file says whether the host has it already; written so, the next read finds it current."""
    path, fprs = two_key_file
    args = dict(host["args"], repository=cuda_repository(tmp_path, path, fprs[0]))
    kind, result = run(args)
    assert kind is ExitJson, result.get("msg")
    repo = result["repository"]
    assert repo["keyring"]["fingerprints"] == [fprs[0]] and repo["keyring"]["dropped"] == [fprs[1]]
    assert repo["current"] is False and sorted(os.path.basename(f["dest"]) for f in repo["files"]) == [
        "gpuops-dcgm.asc", "gpuops-dcgm.sources"]
    # the exporter itself is converged either way: the repository is the role's other question
    assert result["converged"]["current"] is True
    for item in repo["files"]:
        os.makedirs(os.path.dirname(item["dest"]), exist_ok=True)
        with open(item["dest"], "w") as handle:
            handle.write(item["content"])
        os.chmod(item["dest"], 0o644)
    kind, again = run(args)
    assert kind is ExitJson and again["repository"]["current"] is True


@pytest.mark.skipif(not __import__("shutil").which("gpg"), reason="needs gpg")
@pytest.mark.parametrize("checksum,needle", [
    # a problem of the options (nothing to check the key by)
    (False, "cannot be checked: set gpuops_cuda_repo_key_fingerprint"),
    # a failure of the key itself (gpg finds a second key, no fingerprint tells them apart)
    (True, "carries 2 keys"),
])
def test_a_key_that_fails_its_checks_fails_the_read_naming_the_variable(host, two_key_file, tmp_path, checksum, needle):
    path, dummy = two_key_file
    extra = {}
    if checksum:
        extra = {"sha256": "sha256:" + __import__("hashlib").sha256(path.read_bytes()).hexdigest()}
    spec = cuda_repository(tmp_path, path, "")
    spec["key"].update(extra)
    kind, result = run(dict(host["args"], repository=spec))
    assert kind is FailJson and needle in result["msg"], result["msg"]
    assert "gpuops_cuda_repo_key_fingerprint" in result["msg"]


def test_a_bad_repository_option_fails_the_read_naming_it(host, tmp_path):
    bad = dict(cuda_repository(tmp_path, "/nowhere", "A" * 40), surprise=1)
    kind, result = run(dict(host["args"], repository=bad))
    assert kind is FailJson and "repository: " in result["msg"] and "surprise" in result["msg"]


def test_without_gpg_the_repository_waits_for_the_role_to_install_it(host, tmp_path, monkeypatch):
    """The key cannot be checked without gpg: repository null (main.yml installs gpg and checks it
    then), the read itself answers; nothing is fetched."""
    host["gpg"].unlink()
    monkeypatch.setattr(dcgm_module.repo_files, "check_option", lambda *a, **k: pytest.fail("checked without gpg"))
    kind, result = run(dict(host["args"], repository=cuda_repository(tmp_path, "/nowhere", "A" * 40)))
    assert kind is ExitJson and result["repository"] is None
    assert result["host"]["gpg"] is False and "gpg is not installed" in " ".join(result["converged"]["reasons"])
