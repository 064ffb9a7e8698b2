"""Verify gpuops.dlserver.nvidia_driver (cuda_repo source) against the lab's CUDA repository
TEST DOUBLE, after converge (580.95.05) and the side_effect upgrade to 580.105.08, made with
the fixture's kernel running 580.95.05, the reboot deferred, the two-key key file double and
os_tuning asking for a reboot of its own in the same play.

Expectations are written here or computed from the double's published data, never read from
the role's own record."""

import base64
import json
import os

import pytest

STATUS = "/etc/gpuops/nvidia_driver.json"
SOURCES = "/etc/apt/sources.list.d/gpuops-nvidia-cuda.sources"
KEYRING = "/etc/apt/keyrings/gpuops-nvidia-cuda.asc"
PIN_FILE = "/etc/apt/preferences.d/gpuops-nvidia-driver.pref"
MARKER = "/run/gpuops/reboot-required"
REQUEST = "/run/gpuops-scenario/gpuops_reboot.json"
OLD, NEW = "580.95.05", "580.105.08"
SUFFIX = "-1+gpuops.testdouble"
# From R580 NVIDIA's repositories name Fabric Manager nvidia-fabricmanager.
PINNED = {"nvidia-driver-cuda", "nvidia-fabricmanager", "nvidia-kernel-open-dkms"}


def mirror():
    return os.environ.get("GPUOPS_MIRROR_DIR") or os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], ".cache",
                                                               "mirror")


def manifest():
    with open(os.path.join(mirror(), "apt", "cuda", "testdouble.json")) as handle:
        return json.load(handle)


def two_keys():
    with open(os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "two_keys.json")) as handle:
        return json.load(handle)


def fingerprints(host, path):
    out = host.check_output("h=$(mktemp -d); GNUPGHOME=$h gpg --batch --with-colons --show-keys %s; rm -rf $h" % path)
    found, after_pub = [], False
    for line in out.splitlines():
        fields = line.split(":")
        if fields[0] == "pub":
            after_pub = True
        elif fields[0] == "fpr" and after_pub:
            found.append(fields[9])
            after_pub = False
    return found


@pytest.fixture(name="status")
def fixture_status(host):
    return json.loads(host.file(STATUS).content_string)


def test_repository_is_the_mirror_with_a_signed_by_keyring(host, status):
    text = host.file(SOURCES).content_string
    assert "Signed-By: %s\n" % KEYRING in text and "Suites: /\n" in text
    url = status["repository"]["cuda_url"]
    assert url.endswith("/apt/cuda/debian12/x86_64/") and "URIs: %s\n" % url in text
    assert not host.file("/etc/apt/preferences.d/gpuops-nvidia-cuda.pref").exists
    assert not host.file("/etc/apt/sources.list.d/gpuops-nvidia-debian.sources").exists


def test_no_key_is_trusted_globally(host):
    """Every key apt trusts globally (trusted.gpg and every file in trusted.gpg.d), whatever its
    name, is neither the double's key nor the intruder's."""
    ours = set(two_keys()["fingerprints"])
    assert ours and manifest()["fingerprint"] in ours
    files = ["/etc/apt/trusted.gpg"] if host.file("/etc/apt/trusted.gpg").exists else []
    if host.file("/etc/apt/trusted.gpg.d").is_directory:
        files += ["/etc/apt/trusted.gpg.d/" + f for f in host.file("/etc/apt/trusted.gpg.d").listdir()]
    assert host.file("/etc/apt/trusted.gpg.d").is_directory, "the check must look somewhere"
    for path in files:
        assert not ours & set(fingerprints(host, path)), path


def test_keyring_holds_only_the_wanted_key_of_the_two_key_file(host):
    """The upgrade read a key file with two keys: the keyring has exactly the double's key,
    byte for byte what gpg exports of it from the double's published key file."""
    info, two = manifest(), two_keys()
    assert fingerprints(host, KEYRING) == [info["fingerprint"]]
    assert two["fingerprints"][1] != info["fingerprint"]
    with open(os.path.join(mirror(), "apt", "cuda", "debian12", "x86_64", info["keyring"]), "rb") as handle:
        published = base64.b64encode(handle.read()).decode()
    expected = host.check_output(
        "set -e; h=$(mktemp -d); echo %s | base64 -d > $h/pub; GNUPGHOME=$h gpg --batch -q --import $h/pub; "
        "GNUPGHOME=$h gpg --batch --armor --export-options export-clean --export %s | sha256sum | cut -d' ' -f1; "
        "rm -rf $h" % (published, info["fingerprint"]))
    key = host.file(KEYRING)
    assert key.sha256sum == expected
    assert key.user == "root" and key.mode == 0o644
    assert not host.file("/etc/apt/keyrings/gpuops-nvidia-cuda.gpg").exists


def test_upgraded_to_the_second_pinned_version(host, status):
    assert status["version"] == NEW
    for pkg in PINNED:
        assert host.check_output("dpkg-query -W -f '${Version}' %s" % pkg) == NEW + SUFFIX, pkg
        assert host.check_output("dpkg-query -W -f '${Description}' %s" % pkg).startswith("TEST DOUBLE")
    log = host.file("/var/log/dpkg.log").content_string
    for pkg in PINNED:
        assert "upgrade %s:amd64 %s %s" % (pkg, OLD + SUFFIX, NEW + SUFFIX) in log, pkg


def test_pinned_and_held_again_after_the_upgrade(host):
    pin = host.file(PIN_FILE).content_string
    assert "Pin: version %s-*\n" % NEW in pin and "Pin-Priority: 1001" in pin
    rows = [line.split() for line in host.check_output("dpkg --get-selections").splitlines()]
    assert {row[0].split(":")[0] for row in rows if row[-1] == "hold"} == PINNED
    # Dependencies follow the pin: nvidia-smi, libcuda1, nvidia-persistenced at the new version.
    for pkg in ("nvidia-smi", "libcuda1", "libnvidia-ml1", "nvidia-persistenced"):
        assert host.check_output("dpkg-query -W -f '${Version}' %s" % pkg) == NEW + SUFFIX, pkg


def test_open_modules_and_fabric_manager_from_the_plan(host, status):
    assert status["kernel_modules"]["value"] == "open"
    assert status["fabric_manager"]["required"] is True
    assert status["fabric_manager"]["packages"] == ["nvidia-fabricmanager"]
    assert not host.package("nvidia-fabricmanager-580").is_installed
    assert host.service("nvidia-fabricmanager").is_enabled
    assert not host.service("nvidia-fabricmanager").is_running
    assert host.service("nvidia-persistenced").is_enabled
    assert not host.package("nvidia-kernel-dkms").is_installed


def test_nvidia_smi_double_fails_like_the_real_tool_without_driver(host):
    out = host.run("nvidia-smi")
    assert out.rc == 9
    assert "TEST DOUBLE" in out.stderr and "couldn't communicate with the NVIDIA driver" in out.stderr


def test_deferred_reboot_recorded_with_its_reason(host, status):
    """The upgrade ran while 580.95.05 was loaded (fixture): the deferred path ran."""
    decision = status["reboot"]["decision"]
    assert decision["needed"] is True and decision["action"] == "deferred"
    assert "driver %s is loaded" % OLD in decision["reason"] and NEW in decision["reason"]
    assert "nvidia_driver_reboot is false" in decision["reason"]
    assert status["reboot"]["pending"] is True
    assert status["verify"]["ran"] is False
    settings = status["settings"]
    assert settings["applied"] is False and settings["power_limit_watts"] == 400
    mig = settings["mig"]
    assert mig["mode"] == "enabled" and len(mig["capable_gpus"]) == 8 and mig["apply"] is False


def test_one_reboot_request_carries_both_roles(host):
    """os_tuning (a kernel parameter not in /proc/cmdline) and nvidia_driver (the upgrade) both
    need a reboot; the host has one request with both reasons, one marker line per role."""
    assert "gpuops_scenario_param=1" not in host.file("/proc/cmdline").content_string
    lines = [line for line in host.file(MARKER).content_string.splitlines() if line.strip()]
    assert sorted(line.split(":", 1)[0] for line in lines) == ["nvidia_driver", "os_tuning"], lines
    nvd = [line for line in lines if line.startswith("nvidia_driver:")][0]
    assert "driver %s is loaded" % OLD in nvd and NEW in nvd
    ost = [line for line in lines if line.startswith("os_tuning:")][0]
    assert "gpuops_scenario_param=1" in ost
    request = json.loads(host.file(REQUEST).content_string)
    assert sorted(request["pending"]) == ["nvidia_driver", "os_tuning"]
    assert {r["action"] for r in request["pending"].values()} == {"deferred"}
    assert request["roles"] == {}, "nothing may reboot now: both roles deferred"


def test_plan_json_names_the_installed_branch(host):
    """/etc/gpuops/plan.json says which branch and why, and it is the branch the role installed."""
    plan = json.loads(host.file("/etc/gpuops/plan.json").content_string)
    version = host.check_output("dpkg-query -W -f '${Version}' nvidia-driver-cuda")
    assert plan["driver"]["branch"]["value"] == int(version.split(":")[-1].split(".")[0]), plan["driver"]["branch"]
    assert plan["driver"]["branch"]["from"] == "nvidia_driver_version", plan["driver"]["branch"]
    assert plan["driver"]["branch"]["reason"]
