"""Verify gpuops.dlserver.nvidia_driver (cuda_repo source) against the lab's CUDA repository
TEST DOUBLE, after converge (580.95.05) and the side_effect upgrade to 580.105.08."""

import json
import os

import pytest

STATUS = "/etc/gpuops/nvidia_driver.json"
SOURCES = "/etc/apt/sources.list.d/gpuops-nvidia-cuda.sources"
KEYRING = "/etc/apt/keyrings/gpuops-nvidia-cuda.gpg"
PIN_FILE = "/etc/apt/preferences.d/gpuops-nvidia-driver.pref"
OLD, NEW = "580.95.05", "580.105.08"
SUFFIX = "-1+gpuops.testdouble"
PINNED = ["nvidia-driver-cuda", "nvidia-fabricmanager-580", "nvidia-kernel-open-dkms"]


def manifest():
    mirror = os.environ.get("GPUOPS_MIRROR_DIR") or os.path.join(
        os.environ["MOLECULE_PROJECT_DIRECTORY"], ".cache", "mirror")
    with open(os.path.join(mirror, "apt", "cuda", "testdouble.json")) as handle:
        return json.load(handle)


@pytest.fixture(name="status")
def fixture_status(host):
    return json.loads(host.file(STATUS).content_string)


def test_repository_is_the_mirror_with_a_signed_by_keyring(host, status):
    text = host.file(SOURCES).content_string
    assert "Signed-By: %s\n" % KEYRING in text and "Suites: /\n" in text
    url = status["repository"]["cuda_url"]
    assert url.endswith("/apt/cuda/debian12/x86_64/") and "URIs: %s\n" % url in text
    assert status["repository"]["cuda_for_fabric_manager_only"] is False
    assert not host.file("/etc/apt/preferences.d/gpuops-nvidia-cuda.pref").exists
    assert not host.file("/etc/apt/sources.list.d/gpuops-nvidia-debian.sources").exists
    # The key is trusted for this repository only (Signed-By above), never globally as
    # apt-key would have done.
    assert not host.file("/etc/apt/trusted.gpg").exists
    global_keys = host.check_output("ls -1 /etc/apt/trusted.gpg.d/ 2>/dev/null || true").split()
    assert not [k for k in global_keys if "nvidia" in k or "cuda" in k or "gpuops" in k], global_keys


def test_keyring_is_the_checked_lab_key(host, status):
    info = manifest()
    key = host.file(KEYRING)
    assert key.user == "root" and key.mode == 0o644
    assert key.sha256sum == info["repos"]["debian12/x86_64"]["keyring_sha256"]
    assert status["repository"]["cuda_keyring_fingerprints"] == [info["fingerprint"]]


def test_upgraded_to_the_second_pinned_version(host, status):
    assert status["version"] == NEW
    for pkg in PINNED:
        assert host.check_output("dpkg-query -W -f '${Version}' %s" % pkg) == NEW + SUFFIX, pkg
        assert host.check_output("dpkg-query -W -f '${Description}' %s" % pkg).startswith("TEST DOUBLE")
    log = host.file("/var/log/dpkg.log").content_string
    for pkg in PINNED:
        assert "upgrade %s:amd64 %s %s" % (pkg, OLD + SUFFIX, NEW + SUFFIX) in log, pkg


def test_pinned_and_held_again_after_the_upgrade(host, status):
    pin = host.file(PIN_FILE).content_string
    assert "Pin: version %s-*\n" % NEW in pin and "Pin-Priority: 1001" in pin
    assert sorted(status["held"]) == sorted(PINNED)
    for pkg in PINNED:
        assert host.check_output("dpkg --get-selections %s" % pkg).split()[-1] == "hold", pkg
    # Dependencies follow the pin: nvidia-smi, libcuda1, nvidia-persistenced at the new version.
    for pkg in ("nvidia-smi", "libcuda1", "libnvidia-ml1", "nvidia-persistenced"):
        assert host.check_output("dpkg-query -W -f '${Version}' %s" % pkg) == NEW + SUFFIX, pkg


def test_open_modules_and_fabric_manager_from_the_plan(host, status):
    assert status["kernel_modules"]["value"] == "open"
    assert status["fabric_manager"]["required"] is True
    assert status["fabric_manager"]["packages"] == ["nvidia-fabricmanager-580"]
    assert host.service("nvidia-fabricmanager").is_enabled
    assert not host.service("nvidia-fabricmanager").is_running
    assert host.service("nvidia-persistenced").is_enabled
    assert not host.package("nvidia-kernel-dkms").is_installed


def test_nvidia_smi_double_fails_like_the_real_tool_without_driver(host):
    out = host.run("nvidia-smi")
    assert out.rc == 9
    assert "TEST DOUBLE" in out.stderr and "couldn't communicate with the NVIDIA driver" in out.stderr


def test_deferred_reboot_and_settings_recorded_with_reasons(host, status):
    reboot = status["reboot"]
    assert reboot["action"] == "not_applicable" and reboot["pending"] is False
    assert "container" in reboot["reason"]
    marker = host.file("/run/gpuops/reboot-required")
    assert not marker.exists or not marker.contains("^nvidia_driver:")
    settings = status["settings"]
    assert settings["applied"] is False and settings["power_limit_watts"] == 400
    assert "not applied" in settings["reason"] and "not loaded here" in settings["reason"]
    mig = settings["mig"]
    assert mig["mode"] == "enabled" and len(mig["capable_gpus"]) == 8 and mig["apply"] is False
