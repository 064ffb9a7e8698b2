"""Verify gpuops.dlserver.os_tuning with non-default settings (see ../molecule.yml, group os_tuning_alt)."""

import json
import re

import pytest

# The scenario's nodes with non-default settings (../molecule.yml); tests/test_default.py
# verifies the other two.
testinfra_hosts = ["os_tuning_alt"]

# vm.swappiness and net.core.somaxconn differ per host: host_vars overwrite the group layer.
COMMON_SYSCTL = {
    "kernel.numa_balancing": "0",
    "vm.max_map_count": "1048576",
    "net.core.rmem_max": "16777216",
    "net.core.wmem_max": "16777216",
    "fs.inotify.max_user_watches": "524288",
    "net.ipv4.tcp_rmem": "4096 87380 16777216",
}
PER_HOST_SYSCTL = {
    "os-tuning-alt-debian12": {"vm.swappiness": "5"},
    "os-tuning-alt-debian13": {"vm.swappiness": "0", "net.core.somaxconn": "4096"},
}


@pytest.fixture(name="status")
def fixture_status(host):
    return json.loads(host.file("/etc/gpuops/os_tuning.json").content_string)


@pytest.fixture(name="settings")
def fixture_settings(host):
    """key = value lines of a config file, comments dropped."""

    def read(path):
        text = host.file(path).content_string
        return [line.strip() for line in text.splitlines() if line.strip() and line.strip()[0] not in "#/"]

    return read


def test_sysctl_layers_merge_with_null_removals(host, settings, status):
    name = host.backend.get_hostname()
    expected = dict(COMMON_SYSCTL, **PER_HOST_SYSCTL[name])
    pairs = [line.split("=", 1) for line in settings("/etc/sysctl.d/70-gpu-node.conf")]
    got = {key.strip(): value.strip() for key, value in pairs}
    assert got == expected
    # null in the group layer removed a default; null in the host layer removed a group key.
    assert "fs.inotify.max_user_instances" not in got
    assert ("net.core.somaxconn" in got) is (name == "os-tuning-alt-debian13")
    assert not host.file("/etc/sysctl.d/60-gpuops-os-tuning.conf").exists
    assert status["sysctl"]["file"] == "/etc/sysctl.d/70-gpu-node.conf"
    assert status["sysctl"]["live"] is False


def test_thp_never_and_defrag_left_alone(host, status):
    unit = host.file("/etc/systemd/system/gpuops-thp.service").content_string
    assert "echo never > /sys/kernel/mm/transparent_hugepage/enabled" in unit
    assert "transparent_hugepage/defrag" not in unit
    enabled = host.run("systemctl is-enabled gpuops-thp.service")
    assert enabled.stdout.strip() == "enabled", host.run("journalctl --no-pager -u gpuops-thp.service").stdout
    assert status["thp"]["enabled"] == "never" and status["thp"]["defrag"] == ""


def test_governor_left_alone_means_no_unit(host, status):
    assert not host.file("/etc/systemd/system/gpuops-cpufreq.service").exists
    assert not host.file("/usr/local/libexec/gpuops/cpufreq-governor").exists
    listed = host.run("systemctl list-unit-files --no-legend gpuops-cpufreq.service")
    assert "gpuops-cpufreq" not in listed.stdout
    assert status["cpufreq"]["unit"] is None
    assert status["cpufreq"]["reason"] == "os_tuning_cpu_governor is empty: left alone"


def test_grub_drop_in_appends_the_parameter(host):
    dropin = "/etc/default/grub.d/90-gpuops.cfg"
    assert host.file(dropin).mode == 0o644
    # What update-grub would see: the drop-in sourced after the distribution's default.
    out = host.check_output("sh -c 'GRUB_CMDLINE_LINUX_DEFAULT=quiet; . %s; echo \"$GRUB_CMDLINE_LINUX_DEFAULT\"'" % dropin)
    assert out == "quiet iommu=pt"


def test_reboot_reported_not_done_in_a_container(host, status):
    name = host.backend.get_hostname()
    running = host.file("/proc/cmdline").content_string.split()
    pending = [p for p in ["iommu=pt"] if p not in running]
    cmdline = status["kernel_cmdline"]
    assert cmdline["wanted"] == ["iommu=pt"]
    assert cmdline["pending"] == pending
    assert cmdline["reboot_required"] is bool(pending)
    assert cmdline["boot_loader_update"] is False
    assert cmdline["boot_loader_reason"].startswith("container (docker)")
    marker = host.file("/run/gpuops/reboot-required")
    if pending:
        line = [ln for ln in marker.content_string.splitlines() if ln.startswith("os_tuning:")]
        assert line and line[0].startswith(
            "os_tuning: kernel command line parameters not active until reboot: iommu=pt; "), marker.content_string
        if name == "os-tuning-alt-debian12":
            # os_tuning_reboot: "false" (a string, as -e gives it) means false: deferred.
            assert cmdline["reboot"] == "deferred"
            assert "deferred: os_tuning_reboot is false" in cmdline["reboot_reason"]
        else:
            # Asked for, and refused by the container gate.
            assert cmdline["reboot"] == "skipped"
            assert "not rebooted: container (docker)" in cmdline["reboot_reason"]
        assert line[0] == "os_tuning: " + cmdline["reboot_reason"]
    else:
        assert cmdline["reboot"] == "none"
        assert not marker.exists or "os_tuning:" not in marker.content_string
    # The node was not rebooted: systemd (PID 1) is the one that ran before the converge.
    assert host.file("/proc/1/stat").content_string.split()[21] == \
        host.file("/var/tmp/os_tuning-pid1-start").content_string.strip()


def test_limits_with_extra_entries(host, settings):
    entries = {tuple(line.split()) for line in settings("/etc/security/limits.d/90-gpuops.conf")}
    assert ("@gpu", "soft", "nproc", "65536") in entries
    assert ("@gpu", "hard", "nproc", "131072") in entries
    assert ("*", "-", "memlock", "unlimited") in entries
    assert len(entries) == 6
    assert settings("/etc/systemd/system.conf.d/90-gpuops-limits.conf") == [
        "[Manager]",
        "DefaultLimitMEMLOCK=infinity",
        "DefaultLimitNOFILE=65536:1048576",
    ]


def test_custom_blacklist_and_kernel_hold(host, status):
    name = host.backend.get_hostname()
    dump = host.check_output("apt-config dump Unattended-Upgrade::Package-Blacklist")
    patterns = re.findall(r'^Unattended-Upgrade::Package-Blacklist:: "(.*)";$', dump, re.M)
    holds = status["package_holds"]
    assert holds["hold_kernel"] is True
    assert holds["unattended_blacklist_requested"] == ["nvidia-*", "libnvidia-*", "linux-image-?.*"]
    # The lab image has no kernel package the hold names (prepare adds a double on debian12 that
    # only the blacklist covers): nothing is held.
    assert host.check_output("dpkg --get-selections | awk '$2 == \"hold\"'") == ""
    held_back = holds["kernel_updates_held_back"]
    if name == "os-tuning-alt-debian12":
        # RTX 4090 box: the plan installs a driver, so the kernel glob applies and kernels are held.
        assert holds["driver_required"] is True
        assert patterns == ["nvidia-.*$", "libnvidia-.*$", "linux-image-.[.].*$"]
        assert re.match(patterns[2], "linux-image-6.1.0-18-amd64")
        assert not re.match(patterns[2], "linux-image-amd64")
        assert holds["held"] == [] and holds["reason"] == "no kernel package installed"
        # What the blacklist keeps back was checked against the node's package lists: prepare
        # installed a kernel package double at 1.0 and a security archive double offering 1.1.
        assert held_back["checked"] is True
        double = {"name": "linux-image-9.9.9-gpuops-double", "installed": "1.0", "candidate": "1.1",
                  "origins": ["TestDouble-Security:12/stable-security"], "security": True}
        assert held_back["updates"] == [double]
        assert held_back["security"] == [double]
        assert held_back["reason"].startswith("apt-get --simulate --ignore-hold dist-upgrade")
        # ... and unattended-upgrades would indeed skip it.
        assert any(re.match(p, double["name"]) for p in patterns)
    else:
        # CPU-only: no driver, so the kernel glob is left out and nothing is held.
        assert holds["driver_required"] is False
        assert patterns == ["nvidia-.*$", "libnvidia-.*$"]
        assert holds["held"] == []
        assert holds["reason"].startswith("not held: the hardware plan installs no NVIDIA driver here")
        assert host.run("dpkg-query -W 'linux-image-*'").rc != 0
        assert held_back["checked"] is False
