"""Verify gpuops.dlserver.nvidia_driver (distro source) on the lab nodes.

The nodes are containers standing for real servers (sysfs fixture trees): nvd-deb12-v100
(2x V100, Debian 12), nvd-deb13-rtx (8x RTX 4090, Debian 13), nvd-hgx (HGX H100 with
NVSwitches, Debian 12) and nvd-cpu (no GPU, Debian 13). Debian's real non-free packages
are installed; Fabric Manager on nvd-hgx is the TEST DOUBLE from the lab mirror.
"""

import base64
import json
import os
import re

import pytest

# The plan and site.yml's gating on these nodes belong to tests/test_gating.py.
testinfra_hosts = ["nvd-deb12-v100", "nvd-deb13-rtx", "nvd-hgx", "nvd-cpu"]

STATUS = "/etc/gpuops/nvidia_driver.json"
DEBIAN_FILE = "/etc/apt/sources.list.d/gpuops-nvidia-debian.sources"
CUDA_FILE = "/etc/apt/sources.list.d/gpuops-nvidia-cuda.sources"
PIN_FILE = "/etc/apt/preferences.d/gpuops-nvidia-driver.pref"
CUDA_PIN_FILE = "/etc/apt/preferences.d/gpuops-nvidia-cuda.pref"
KEYRING = "/etc/apt/keyrings/gpuops-nvidia-cuda.asc"
# Kernel-module package the plan's flavour selects, per node.
FLAVOUR = {"nvd-deb12-v100": ("proprietary", "nvidia-kernel-dkms", "nvidia-open-kernel-dkms"),
           "nvd-deb13-rtx": ("open", "nvidia-open-kernel-dkms", "nvidia-kernel-dkms"),
           "nvd-hgx": ("open", "nvidia-open-kernel-dkms", "nvidia-kernel-dkms")}
# A headless server gets no X server, no desktop GL/EGL/Vulkan stack, no settings GUI.
DESKTOP = ("xserver-xorg", "libgl1-nvidia", "libglx-nvidia", "libegl-nvidia", "libgles-nvidia",
           "nvidia-vulkan-icd", "nvidia-settings", "nvidia-driver", "nvidia-driver-libs",
           "nvidia-vdpau-driver", "nvidia-egl-icd")


# What each node must hold, written down here (not read from the role's record).
HELD = {"nvd-deb12-v100": {"nvidia-kernel-dkms", "nvidia-smi", "libcuda1"},
        "nvd-deb13-rtx": {"nvidia-open-kernel-dkms", "nvidia-smi", "libcuda1"},
        "nvd-hgx": {"nvidia-open-kernel-dkms", "nvidia-smi", "libcuda1", "nvidia-fabricmanager-535"},
        "nvd-cpu": set()}
# site.yml's later play (nvidia_container_toolkit) holds the container toolkit's packages on the
# GPU nodes; they are that role's, checked here only as a set apart from the driver's.
TOOLKIT_HELD = {"nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
                "libnvidia-container1"}


def mirror_manifest():
    mirror = os.environ.get("GPUOPS_MIRROR_DIR") or os.path.join(
        os.environ["MOLECULE_PROJECT_DIRECTORY"], ".cache", "mirror")
    with open(os.path.join(mirror, "apt", "cuda", "testdouble.json")) as handle:
        info = json.load(handle)
    return mirror, info


def expected_keyring_sha256(host, repo_path):
    """sha256 of the keyring the role should install, computed here from the double's published
    key file: only the double's fingerprint, exported with the node's own gpg."""
    mirror, info = mirror_manifest()
    with open(os.path.join(mirror, "apt", "cuda", repo_path, info["keyring"]), "rb") as handle:
        published = base64.b64encode(handle.read()).decode()
    return host.check_output(
        "set -e; h=$(mktemp -d); echo %s | base64 -d > $h/pub; GNUPGHOME=$h gpg --batch -q --import $h/pub; "
        "GNUPGHOME=$h gpg --batch --armor --export-options export-clean --export %s | sha256sum | cut -d' ' -f1; "
        "rm -rf $h" % (published, info["fingerprint"]))


def keyring_fingerprints(host, path):
    out = host.check_output("h=$(mktemp -d); GNUPGHOME=$h gpg --batch --with-colons --show-keys %s; rm -rf $h" % path)
    fprs, after_pub = [], False
    for line in out.splitlines():
        fields = line.split(":")
        if fields[0] == "pub":
            after_pub = True
        elif fields[0] == "fpr" and after_pub:
            fprs.append(fields[9])
            after_pub = False
    return fprs


def name(host):
    return host.backend.get_hostname()


def gpu_node(host):
    return name(host) != "nvd-cpu"


@pytest.fixture(name="status")
def fixture_status(host):
    return json.loads(host.file(STATUS).content_string)


def installed(host):
    """{package: version} of the installed packages (held ones included)."""
    out = host.check_output("dpkg-query -W -f '${Package}\\t${Version}\\t${db:Status-Abbrev}\\n'")
    rows = [line.split("\t") for line in out.splitlines()]
    return {row[0]: row[1] for row in rows if len(row) == 3 and row[2][1:2] == "i"}


def deb822(text):
    stanzas, cur = [], {}
    for line in text.splitlines() + [""]:
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                stanzas.append(cur)
            cur = {}
            continue
        key, value = line.split(":", 1)
        cur[key.strip()] = value.strip()
    return stanzas


def test_cpu_only_host_gets_nothing_and_says_why(host, status):
    if gpu_node(host):
        pytest.skip("GPU node")
    assert status["required"] is False
    assert "no NVIDIA GPU" in status["reason"] and "nvidia_driver_force" in status["reason"]
    assert not [p for p in installed(host) if "nvidia" in p or p == "libcuda1"]
    for path in (DEBIAN_FILE, CUDA_FILE, PIN_FILE, KEYRING):
        assert not host.file(path).exists, path


def test_debian_components_added_to_the_hosts_own_archive(host, status):
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    own = deb822(host.file("/etc/apt/sources.list.d/debian.sources").content_string)
    assert all(s["Components"] == "main" for s in own), "the user's sources file was edited"
    added = deb822(host.file(DEBIAN_FILE).content_string)
    assert added, "no stanza added"
    own_uris = {s["URIs"].rstrip("/") for s in own}
    codename = host.check_output(". /etc/os-release && echo $VERSION_CODENAME")
    suites = set()
    for stanza in added:
        assert stanza["URIs"].rstrip("/") in own_uris, "mirror not taken from the host's sources"
        assert stanza["Components"].split() == ["contrib", "non-free", "non-free-firmware"]
        assert stanza["Signed-By"] == own[0]["Signed-By"]
        suites.update(stanza["Suites"].split())
    assert suites == {codename, codename + "-updates", codename + "-security"}
    assert status["repository"]["debian_components_from"] == ["/etc/apt/sources.list.d/debian.sources"]
    assert host.file(DEBIAN_FILE).mode == 0o644


def test_driver_is_the_newest_version_every_package_carries(host, status):
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    flavour, module_pkg, other_pkg = FLAVOUR[name(host)]
    assert status["kernel_modules"]["value"] == flavour
    have = installed(host)
    assert module_pkg in have and other_pkg not in have
    wanted = [module_pkg, "nvidia-smi", "libcuda1"]
    assert sorted(status["packages"]) == sorted(wanted + (["nvidia-fabricmanager-535"]
                                                          if name(host) == "nvd-hgx" else []))
    for pkg in wanted:
        assert have[pkg] == status["packages"][pkg]
        assert have[pkg].startswith(status["version"] + "-")
    # Versions Debian carries of each package: the chosen one is the newest they share.
    own_uris = {s["URIs"].rstrip("/") for s in
                deb822(host.file("/etc/apt/sources.list.d/debian.sources").content_string)}
    common = None
    for pkg in wanted:
        out = host.check_output("apt-cache madison %s" % pkg)
        ups = {line.split("|")[1].strip().rsplit("-", 1)[0] for line in out.splitlines()
               if line.split("|")[2].split()[0].rstrip("/") in own_uris}
        common = ups if common is None else common & ups
    newest = sorted(common, key=lambda v: [int(x) for x in v.split(".")])[-1]
    assert status["version"] == newest
    assert status["branch"] == newest.split(".")[0]


def test_driver_is_pinned_and_held(host, status):
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    pin = host.file(PIN_FILE).content_string
    assert "Pin: version %s-*" % status["version"] in pin
    assert "Pin-Priority: 1001" in pin
    selections = [line.split() for line in host.check_output("dpkg --get-selections").splitlines()]
    held = {row[0].split(":")[0] for row in selections if row[-1] == "hold"}
    assert held & TOOLKIT_HELD in (set(), TOOLKIT_HELD)
    assert held - TOOLKIT_HELD == HELD[name(host)]
    # apt would not move the driver: the pinned version is the candidate of every held package.
    for pkg in status["held"]:
        policy = host.check_output("apt-cache policy %s" % pkg)
        candidate = [line.split(":", 1)[1].strip() for line in policy.splitlines()
                     if line.strip().startswith("Candidate:")][0]
        assert candidate == status["packages"][pkg], policy
    upgradable = host.check_output("apt-get -s -o Debug::NoLocking=1 upgrade")
    assert not [line for line in upgradable.splitlines() if line.startswith("Inst") and "nvidia" in line]


def test_server_is_headless(host):
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    have = installed(host)
    desktop = [p for p in have for prefix in DESKTOP if p == prefix or p.startswith(prefix + "-")
               or p.startswith(prefix + ":")]
    assert not desktop, desktop


def test_nothing_built_or_loaded_in_the_container_and_why(host, status):
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    assert status["in_container"] is True
    assert status["load_modules"]["value"] is False
    assert "container" in status["load_modules"]["reason"]
    kernel = host.check_output("uname -r")
    heads = status["headers"]
    assert heads["installed"] is False
    assert [h["package"] for h in heads["packages"] if h["running"]] == ["linux-headers-" + kernel]
    assert "container" in heads["reason"] and "DKMS builds nothing" in heads["reason"]
    assert not [p for p in installed(host) if p.startswith("linux-headers-")]
    # DKMS registered the source and built nothing (no kernel it could build for).
    assert status["dkms"]["status"] and all(line.endswith(": added") for line in status["dkms"]["status"])
    assert host.check_output("dkms status").strip().endswith("added")
    assert status["secure_boot"]["state"] == "not_checked"
    assert status["reboot"]["action"] == "not_applicable" and status["reboot"]["pending"] is False
    assert status["reboot"]["reason"] == status["load_modules"]["reason"]
    assert status["reboot"]["decision"]["action"] == "none"
    assert status["verify"]["ran"] is False
    assert "container" in status["verify"]["reason"]
    assert status["settings"]["applied"] is False
    # No nvidia-smi read in a container: the settings record says why and lists no GPU.
    assert "not verified" in status["settings"]["reason"] and "container" in status["settings"]["reason"]
    assert status["settings"]["gpus"] == [] and status["settings"]["commands"] == []
    marker = host.file("/run/gpuops/reboot-required")
    assert not marker.exists or not marker.contains("^nvidia_driver:")


def test_nouveau_blacklisted_and_modules_listed(host):
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    blacklist = host.file("/etc/modprobe.d/gpuops-nvidia-blacklist-nouveau.conf")
    assert blacklist.contains("^blacklist nouveau$") and blacklist.contains("^options nouveau modeset=0$")
    modules = host.file("/etc/modules-load.d/gpuops-nvidia.conf").content_string.split()
    assert modules[-2:] == ["nvidia", "nvidia-uvm"]


def test_persistenced_enabled_not_started_by_the_role(host, status):
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    assert status["persistence"]["enabled"] is True
    assert status["persistence"]["started"] is False
    assert host.service("nvidia-persistenced").is_enabled


def test_fabric_manager_only_with_nvswitches(host, status):
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    fm = status["fabric_manager"]
    if name(host) != "nvd-hgx":
        assert fm["required"] is False and fm["packages"] == []
        assert not host.file(CUDA_FILE).exists and not host.file(KEYRING).exists
        assert not [p for p in installed(host) if "fabricmanager" in p]
        return
    assert fm["required"] is True and fm["start"] is False and fm["started"] is False
    assert status["nvlink_subnet_manager"]["required"] is False
    pkg = "nvidia-fabricmanager-535"
    version = installed(host)[pkg]
    assert version == status["version"] + "-1+gpuops.testdouble", "FM is not at the driver version"
    assert host.check_output("dpkg-query -W -f '${Description}' %s" % pkg).startswith("TEST DOUBLE")
    assert host.service("nvidia-fabricmanager").is_enabled
    assert not host.service("nvidia-fabricmanager").is_running
    # The CUDA repository serves Fabric Manager only: signed-by keyring, priority 100, the
    # driver stays Debian's.
    cuda = deb822(host.file(CUDA_FILE).content_string)
    assert cuda == [{"Types": "deb", "URIs": status["repository"]["cuda_url"], "Suites": "/",
                     "Signed-By": KEYRING}]
    assert status["repository"]["cuda_for_fabric_manager_only"] is True
    assert host.file(CUDA_PIN_FILE).contains("^Pin-Priority: 100$")
    assert host.file(KEYRING).sha256sum == expected_keyring_sha256(host, "debian12/x86_64")
    assert keyring_fingerprints(host, KEYRING) == [mirror_manifest()[1]["fingerprint"]]
    policy = host.check_output("apt-cache policy nvidia-smi")
    assert "*** %s 1001" % status["packages"]["nvidia-smi"] in policy
    assert not installed(host)["nvidia-smi"].endswith("testdouble")


def test_status_file_is_the_role_record(host, status):
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    assert status["source"] == "distro"
    assert host.file(STATUS).mode == 0o644
    assert set(status["held"]) == set(status["packages"])


def test_plan_json_names_the_installed_branch(host):
    """/etc/gpuops/plan.json says which branch and why, and it is the branch the role installed."""
    if not gpu_node(host):
        pytest.skip("CPU-only node")
    plan = json.loads(host.file("/etc/gpuops/plan.json").content_string)
    module_pkg = FLAVOUR[name(host)][1]
    installed_branch = int(installed(host)[module_pkg].split(":")[-1].split(".")[0])
    assert plan["driver"]["branch"]["value"] == installed_branch, plan["driver"]["branch"]
    assert plan["driver"]["branch"]["from"] in ("installed", "newest_supported"), plan["driver"]["branch"]
    assert plan["driver"]["branch"]["reason"]


# Roles that `--tags nvidia_driver` must leave alone (their tasks are never listed in the run).
OTHER_ROLES = ("os_tuning", "cuda_toolkit", "nvidia_container_toolkit", "python_stack", "dcgm_exporter",
               "node_exporter", "prometheus", "volcano", "gpu_validate")


def test_tags_through_site_yml():
    """side_effect ran `site.yml --tags nvidia_driver` on the converged V100 node: the driver role
    ran (its preflight and resolve, the gated include of its change phases - skipped on this converged
    node - settings and record), no other role did, nothing changed."""
    path = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "site-tags-nvidia_driver.log")
    with open(path) as handle:
        log = handle.read()
    tasks = re.findall(r"^TASK \[([^\]]+)\]", log, re.M)
    driver = [t for t in tasks if t.startswith("gpuops.dlserver.nvidia_driver : ")]
    # the role's own steps (common's imported steps are listed as common's: its typed inputs for
    # nvidia_driver and the status record)
    assert "gpuops.dlserver.nvidia_driver : Read the host and the repositories and choose the driver version" in driver, tasks
    assert "gpuops.dlserver.nvidia_driver : Install, configure and verify what is not current yet" in driver, tasks
    assert any(t.endswith("by the argument spec of nvidia_driver") for t in tasks), tasks
    assert "gpuops.dlserver.common : Write the status file and record the host's plan" in tasks, tasks
    others = [t for t in tasks if any(t.startswith("gpuops.dlserver.%s : " % r) for r in OTHER_ROLES)]
    assert not others, others
    recap = re.search(r"^nvd-deb12-v100\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", log, re.M)
    assert recap, log[-2000:]
    assert (int(recap.group(2)), int(recap.group(3)), int(recap.group(4))) == (0, 0, 0), recap.group(0)
