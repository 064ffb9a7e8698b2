"""host/os_tuning_host: the host read and the result of os_tuning_facts, without AnsibleModule."""
import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning_host as oth


def test_missing_inputs_and_backend_settings_are_named():
    with pytest.raises(oth.HostError, match="inputs lacks apply_live, .*reboot_timeout"):
        oth.check_params({}, {"cmdline_backend": "grubby"})
    inputs = dict((name, None) for name in oth.REQUIRED_INPUTS)
    with pytest.raises(oth.HostError, match="platform.grub_dropin is required"):
        oth.check_params(inputs, {"cmdline_backend": "grub_dropin"})


def test_a_failed_command_carries_its_output():
    reader = oth.HostReader(lambda argv, environ_update: (3, "out", "err"), "/")
    with pytest.raises(oth.HostError) as err:
        reader.run(["apt-get", "x"], "simulating the upgrades")
    assert err.value.msg == "os_tuning_facts: simulating the upgrades failed (apt-get x)"
    assert err.value.details == {"rc": 3, "stdout": "out", "stderr": "err"}


def test_commands_run_with_a_c_locale():
    seen = []
    reader = oth.HostReader(lambda argv, environ_update: seen.append(environ_update) or (0, "", ""), "/")
    reader.run(["true"], "x")
    assert seen == [{"LANG": "C", "LC_ALL": "C", "LC_MESSAGES": "C"}]


def test_reads_under_root_and_names_an_unreadable_file(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cmdline").write_text("quiet\n")
    reader = oth.HostReader(None, str(tmp_path))
    assert reader.read("/proc/cmdline") == "quiet\n"
    with pytest.raises(oth.HostError, match="cannot read /etc/missing"):
        reader.read("/etc/missing")


def test_live_sysctl_names_map_to_proc(tmp_path):
    (tmp_path / "proc/sys/net/ipv4/conf/eth0.100").mkdir(parents=True)
    (tmp_path / "proc/sys/net/ipv4/conf/eth0.100/rp_filter").write_text("1\n")
    reader = oth.HostReader(None, str(tmp_path))
    assert reader.sysctl_live(["net.ipv4.conf.eth0/100.rp_filter", "vm.absent"]) == {
        "net.ipv4.conf.eth0/100.rp_filter": "1"}
