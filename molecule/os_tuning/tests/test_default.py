"""Verify gpuops.dlserver.os_tuning with its defaults on a Debian lab node (a container)."""

import json
import re

import pytest

# The scenario's nodes with the role's defaults (../molecule.yml); tests/test_alternative.py
# verifies the other two.
testinfra_hosts = ["os_tuning_defaults"]

STATUS_FILE = "/etc/gpuops/os_tuning.json"

EXPECTED_SYSCTL = {
    "vm.swappiness": "1",
    "kernel.numa_balancing": "0",
    "vm.max_map_count": "1048576",
    "net.core.rmem_max": "16777216",
    "net.core.wmem_max": "16777216",
    "fs.inotify.max_user_watches": "524288",
    "fs.inotify.max_user_instances": "8192",
}

EXPECTED_LIMITS = {
    ("*", "-", "memlock", "unlimited"),
    ("*", "-", "nofile", "1048576"),
    ("root", "-", "memlock", "unlimited"),
    ("root", "-", "nofile", "1048576"),
}


def config_lines(text, comment="#"):
    """Non-empty lines that are not comments."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith(comment)]


def journal(host, unit):
    return host.run("journalctl --no-pager -n 40 -u %s" % unit).stdout


@pytest.fixture(name="status")
def fixture_status(host):
    return json.loads(host.file(STATUS_FILE).content_string)


def test_sysctl_file_holds_exactly_the_defaults(host):
    conf = host.file("/etc/sysctl.d/60-gpuops-os-tuning.conf")
    assert conf.user == "root" and conf.mode == 0o644
    assert "Ansible managed" in conf.content_string
    pairs = [line.split("=", 1) for line in config_lines(conf.content_string)]
    assert {key.strip(): value.strip() for key, value in pairs} == EXPECTED_SYSCTL
    assert len(pairs) == len(EXPECTED_SYSCTL)


def test_numa_balancing_is_not_a_modprobe_option(host):
    out = host.run("grep -rs numa_balancing /etc/modprobe.d /lib/modprobe.d")
    assert out.stdout == "", out.stdout


def test_live_sysctl_values_were_left_to_the_host(host, status):
    before = json.loads(host.file("/var/tmp/os_tuning-sysctl-before.json").content_string)
    now = host.check_output("sysctl -n %s" % " ".join(before)).splitlines()
    assert dict(zip(before, now)) == before
    assert status["container"] is True
    assert status["live"] is False
    assert status["sysctl"]["live"] is False
    assert status["sysctl"]["reason"].startswith("container (docker)")
    assert status["sysctl"]["settings"] == {k: int(v) for k, v in EXPECTED_SYSCTL.items()}


@pytest.mark.parametrize("unit", ["gpuops-thp.service", "gpuops-cpufreq.service"])
def test_units_enabled_but_not_started_in_a_container(host, unit):
    enabled = host.run("systemctl is-enabled %s" % unit)
    assert enabled.stdout.strip() == "enabled", journal(host, unit)
    active = host.run("systemctl is-active %s" % unit)
    assert active.stdout.strip() == "inactive", journal(host, unit)
    unit_text = host.file("/etc/systemd/system/%s" % unit).content_string
    assert "ConditionVirtualization=!container" in unit_text
    verify = host.run("systemd-analyze verify /etc/systemd/system/%s" % unit)
    assert verify.rc == 0, verify.stderr + journal(host, unit)


def test_thp_unit_writes_the_default_policy(host, status):
    unit_text = host.file("/etc/systemd/system/gpuops-thp.service").content_string
    assert "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled" in unit_text
    assert "echo madvise > /sys/kernel/mm/transparent_hugepage/defrag" in unit_text
    assert status["thp"] == {
        "enabled": "madvise",
        "defrag": "madvise",
        "unit": "gpuops-thp.service",
        "live": False,
        "reason": status["reason"],
    }


def test_cpufreq_unit_and_script(host, status):
    unit_text = host.file("/etc/systemd/system/gpuops-cpufreq.service").content_string
    assert "ExecStart=/usr/local/libexec/gpuops/cpufreq-governor performance" in unit_text
    script = host.file("/usr/local/libexec/gpuops/cpufreq-governor")
    assert script.mode == 0o755
    driver = host.file("/sys/devices/system/cpu/cpu0/cpufreq").exists
    assert status["cpufreq"]["driver"] is driver
    assert status["cpufreq"]["live"] is False
    if driver:
        # The node's /sys is read-only; a governor no CPU offers must be refused, not ignored.
        out = host.run("/usr/local/libexec/gpuops/cpufreq-governor no-such-governor")
        assert out.rc == 1 and "not offered" in out.stderr, out.stdout + out.stderr
        assert status["cpufreq"]["reason"] == status["reason"]
    else:
        out = host.run("/usr/local/libexec/gpuops/cpufreq-governor performance")
        assert out.rc == 0 and "no cpufreq driver" in out.stdout, out.stdout + out.stderr
        assert status["cpufreq"]["reason"].startswith("no cpufreq driver")


def test_pam_limits_drop_in(host):
    conf = host.file("/etc/security/limits.d/90-gpuops.conf")
    assert conf.mode == 0o644
    assert {tuple(line.split()) for line in config_lines(conf.content_string)} == EXPECTED_LIMITS


def test_systemd_manager_limits_drop_in(host, status):
    conf = host.file("/etc/systemd/system.conf.d/90-gpuops-limits.conf")
    assert config_lines(conf.content_string) == [
        "[Manager]",
        "DefaultLimitMEMLOCK=infinity",
        "DefaultLimitNOFILE=1048576",
    ]
    # systemd itself reads the drop-in (not only that the file exists).
    merged = host.check_output("systemd-analyze cat-config systemd/system.conf")
    assert "DefaultLimitMEMLOCK=infinity" in merged and "DefaultLimitNOFILE=1048576" in merged
    assert status["limits"]["systemd_reexec"] is False


def test_unattended_upgrades_blacklist_without_kernels_on_a_cpu_node(host, status):
    conf = host.file("/etc/apt/apt.conf.d/51gpuops-unattended-upgrades")
    assert conf.mode == 0o644
    dump = host.check_output("apt-config dump Unattended-Upgrade::Package-Blacklist")
    patterns = re.findall(r'^Unattended-Upgrade::Package-Blacklist:: "(.*)";$', dump, re.M)
    # The plan installs no driver on this CPU-only node: the kernel globs of the default list
    # are left out (kernel security updates flow), the NVIDIA/CUDA globs stay.
    assert patterns == ["nvidia-.*$", "libnvidia-.*$", "cuda-.*$", "libcudnn.*$", "libnccl.*$"]
    # unattended-upgrades matches with re.match: the right packages, and only those.
    for name in ["nvidia-driver", "libnvidia-ml1", "cuda-toolkit-12-4", "libnccl2", "libcudnn9-cuda-12"]:
        assert any(re.match(p, name) for p in patterns), name
    for name in ["linux-image-amd64", "linux-headers-6.1.0-18-amd64", "kernel", "linux-base", "libc6",
                 "python3-nvidia-ml-py", "firmware-linux"]:
        assert not any(re.match(p, name) for p in patterns), name
    holds = status["package_holds"]
    assert holds["driver_required"] is False
    assert holds["unattended_blacklist_requested"][:3] == ["linux-image-*", "linux-headers-*", "linux-modules-*"]
    assert "installs no NVIDIA driver" in holds["unattended_reason"]
    assert holds["hold_kernel"] is False
    assert holds["held"] == []
    assert holds["kernel_updates_held_back"]["checked"] is False


def test_no_grub_drop_in_without_parameters(host, status):
    assert not host.file("/etc/default/grub.d/90-gpuops.cfg").exists
    assert status["kernel_cmdline"]["wanted"] == []
    assert status["kernel_cmdline"]["reboot_required"] is False
    assert status["kernel_cmdline"]["reboot"] == "none"
    marker = host.file("/run/gpuops/reboot-required")
    assert not marker.exists or "os_tuning:" not in marker.content_string
    # Nothing pending, nothing rebooted: systemd (PID 1) is the one that ran before converge.
    assert host.file("/proc/1/stat").content_string.split()[21] == \
        host.file("/var/tmp/os_tuning-pid1-start").content_string.strip()
