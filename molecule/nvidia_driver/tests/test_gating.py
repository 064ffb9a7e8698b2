"""Hardware gating: per host, what the plan decided from the fixture tree, and what ran.

The nodes carry sysfs trees of real servers (tests/fixtures/hosts/); playbooks/site.yml
probed them, recorded the plan in /etc/gpuops/plan.json and ran the roles the plan allowed.
This scenario's converge is site.yml on every node (formerly the `gating` scenario, merged
here because it converged a subset of these nodes): these assertions hold for the HGX, the
RTX box and nvd-cpu, a CPU-only server (after site.yml, converge.yml also applies the role
directly there, for the role's own assertions in test_default.py; what site.yml alone left
there was recorded before, /run/gpuops-scenario/site-only.json).
"""
import json
import os
import re

import pytest

testinfra_hosts = ["nvd-hgx", "nvd-deb13-rtx", "nvd-cpu"]
CPU_ONLY = "nvd-cpu"


def plan(host):
    return json.loads(host.file("/etc/gpuops/plan.json").content_string)


def name(host):
    return host.backend.get_hostname()


def test_plan_recorded_and_consistent(host):
    p = plan(host)
    assert p["ok"] is True, p["errors"]
    assert p["host"]["in_container"] is True
    assert p["host"]["source"] == "pci", "no driver in the lab: the probe can only read PCI sysfs"


def test_driver_decision(host):
    p = plan(host)
    drv = p["driver"]
    if name(host) == CPU_ONLY:
        assert drv["required"] is False
        assert "no NVIDIA GPU" in drv["reason"]
    else:
        assert drv["required"] is True
        assert drv["kernel_modules"]["value"] == "open"
        assert drv["load_modules"]["value"] is False
        assert "container" in drv["load_modules"]["reason"]


def test_fabric_manager_only_with_nvswitches(host):
    p = plan(host)
    fm = p["fabric_manager"]
    if name(host) == "nvd-hgx":
        assert p["host"]["nvswitch_count"] == 4
        assert fm["required"] is True
        assert "NVSwitch" in fm["reason"]
        assert p["nvlink_subnet_manager"]["required"] is False
    else:
        assert p["host"]["nvswitch_count"] == 0
        assert fm["required"] is False


def test_gpu_counts_and_architectures(host):
    p = plan(host)
    expected = {"nvd-hgx": (8, ["hopper"]), "nvd-deb13-rtx": (8, ["ada"]), "nvd-cpu": (0, [])}[name(host)]
    assert (p["host"]["gpu_count"], p["host"]["architectures"]) == expected


def test_mig_and_profiling(host):
    p = plan(host)
    if name(host) == "nvd-hgx":
        assert len(p["mig"]["capable_gpus"]) == 8
        assert p["dcgm"]["profiling"]["value"] is True
    elif name(host) == "nvd-deb13-rtx":
        assert p["mig"]["capable_gpus"] == []
        assert p["dcgm"]["profiling"]["value"] is False
        assert "data-centre" in p["dcgm"]["profiling"]["reason"]


@pytest.mark.parametrize("role", ["nvidia_driver", "cuda_toolkit", "nvidia_container_toolkit", "dcgm_exporter",
                                  "gpu_validate"])
def test_gpu_roles_gated(host, role):
    decision = plan(host)["roles"][role]
    if role == "cuda_toolkit":
        # Toolkits are installed where the inventory lists them (cuda_toolkit_versions), on GPU hosts
        # and - with cuda_toolkit_without_gpu - on others; this scenario lists none.
        assert decision["run"] is False, decision
        assert "cuda_toolkit_versions" in decision["reason"], decision
    elif name(host) == CPU_ONLY:
        assert decision["run"] is False, decision
        assert "GPU" in decision["reason"]
    elif role == "gpu_validate":
        # GPUs, but no driver can load in a container: nothing to measure, and the plan says so.
        assert decision["run"] is False, decision
        assert "container" in decision["reason"]
    else:
        assert decision["run"] is True, decision


def test_os_tuning_ran_everywhere(host):
    p = plan(host)
    assert p["roles"]["os_tuning"]["run"] is True
    status = json.loads(host.file("/etc/gpuops/os_tuning.json").content_string)
    assert status, "os_tuning recorded no status"
    assert host.file("/etc/sysctl.d/60-gpuops-os-tuning.conf").contains("kernel.numa_balancing")


def test_nvml_binding_installed_beside_the_system_python(host):
    """nvd-hgx asked for gpuops_nvml_install: the binding sits where the probe looks,
    the system Python is untouched, and the probe then got past the import to nvmlInit."""
    probe_path = "import sys; sys.path.insert(0, '/opt/gpuops/nvml'); import pynvml; print(pynvml.__file__)"
    if name(host) != "nvd-hgx":
        assert not host.file("/opt/gpuops/nvml").exists
        return
    res = host.run("python3 -c \"%s\"" % probe_path)
    assert res.rc == 0, res.stderr
    assert res.stdout.strip().startswith("/opt/gpuops/nvml/")
    assert host.run("python3 -c 'import pynvml'").rc != 0, "pynvml leaked into the system Python"
    assert host.file("/opt/gpuops/nvml/nvidia_ml_py-13.615.71.dist-info").is_directory


def driver_status(host):
    return json.loads(host.file("/etc/gpuops/nvidia_driver.json").content_string)


def installed_packages(host):
    out = host.check_output("dpkg-query -W -f '${Package}\\t${db:Status-Abbrev}\\n'")
    return {row.split("\t")[0] for row in out.splitlines() if row.split("\t")[1][1:2] == "i"}


def test_driver_installed_only_where_the_plan_says(host):
    packages = installed_packages(host)
    if name(host) == CPU_ONLY:
        # site.yml did not even include the role here (no status file after it; converge.yml's
        # direct run of the role came later): the plan said why.
        site_only = json.loads(host.file("/run/gpuops-scenario/site-only.json").content_string)
        assert site_only == {"driver_status_after_site_yml": False}
        assert "no NVIDIA GPU" in plan(host)["roles"]["nvidia_driver"]["reason"]
        assert not [p for p in packages if p.startswith(("nvidia", "libnvidia")) or p == "libcuda1"]
        return
    status = driver_status(host)
    assert status["required"] is True
    assert status["kernel_modules"]["value"] == "open"
    assert "nvidia-open-kernel-dkms" in packages
    assert "nvidia-kernel-dkms" not in packages
    assert not {"xserver-xorg", "nvidia-driver", "libgl1-nvidia-glvnd-glx"} & packages, "a headless server got desktop GL/X"
    assert status["load_modules"]["value"] is False
    assert "container" in status["load_modules"]["reason"]


def test_fabric_manager_installed_only_with_nvswitches(host):
    if name(host) == CPU_ONLY:
        return
    status = driver_status(host)
    fm = [p for p in installed_packages(host) if p.startswith("nvidia-fabricmanager")]
    if name(host) == "nvd-hgx":
        assert status["fabric_manager"]["required"] is True
        assert fm, "Fabric Manager not installed on the NVSwitch host"
        assert status["fabric_manager"]["started"] is False
    else:
        assert status["fabric_manager"]["required"] is False
        assert not fm


# Roles with scenarios of their own: skipped by tag on the five nodes (ANSIBLE_SKIP_TAGS in
# molecule.yml), run on nvd-hgx by the whole site.yml (converge.yml) where the plan says so.
WHOLE_STACK_ONLY = ("nvidia_container_toolkit", "python_stack", "dcgm_exporter", "node_exporter")


@pytest.mark.parametrize("role", WHOLE_STACK_ONLY)
def test_whole_stack_only_on_the_hgx_node(host, role):
    recorded = host.file("/etc/gpuops/%s.json" % role).exists
    if name(host) == "nvd-hgx":
        assert plan(host)["roles"][role]["run"] is True, plan(host)["roles"][role]
        assert recorded, "the whole site.yml did not run %s on nvd-hgx" % role
    else:
        assert not recorded, "%s ran on %s, where the scenario skips it by tag" % (role, name(host))


def test_whole_site_run_recap():
    """The whole site.yml on nvd-hgx (converge.yml's nested run, idempotence's copy last): every
    role's tasks listed, nothing changed, nothing failed."""
    path = os.path.join(os.environ["MOLECULE_EPHEMERAL_DIRECTORY"], "site-whole-nvd-hgx.log")
    with open(path) as handle:
        log = handle.read()
    tasks = re.findall(r"^TASK \[([^\]]+)\]", log, re.M)
    for role in ("os_tuning", "nvidia_driver") + WHOLE_STACK_ONLY:
        assert [t for t in tasks if t.startswith("gpuops.dlserver.%s : " % role)], role
    recap = re.search(r"^nvd-hgx\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", log, re.M)
    assert recap, log[-2000:]
    assert (int(recap.group(2)), int(recap.group(3)), int(recap.group(4))) == (0, 0, 0), recap.group(0)
