"""host/os_tuning_host: the host read and the result of os_tuning_host, without AnsibleModule."""
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
    assert err.value.msg == "os_tuning_host: simulating the upgrades failed (apt-get x)"
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


# ---- the converged fast path, on files under a scratch root ----------------------------
def _params(root, **inputs):
    import os

    import yaml
    role = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "roles", "os_tuning")
    with open(os.path.join(role, "defaults", "main.yml")) as handle:
        defaults = dict((k[len("os_tuning_"):], v) for k, v in yaml.safe_load(handle).items())
    with open(os.path.join(role, "vars", "Debian.yml")) as handle:
        platform = yaml.safe_load(handle)["__os_tuning_platform"]
    defaults.update(inputs)
    return {"inputs": defaults, "platform": platform, "in_container": True, "virtualization_type": "docker",
            "virtualization_role": "guest", "driver_required": True, "kernel": "6.1.0-18-amd64",
            "reboot_marker": "/run/gpuops/reboot-required", "root": str(root)}


def _systemctl(states):
    def run(argv, environ_update):
        if argv[0] == "apt-get":
            return 0, "", ""
        assert argv[:3] == ["systemctl", "show", "-p"]
        return 0, "\n\n".join("Id=%s\nUnitFileState=%s\nActiveState=inactive" % (u, states.get(u, "enabled"))
                              for u in argv[4:]), ""
    return run


def _converge(root, result):
    """What the role's change phases leave: the directories and files, root-owned, modes set."""
    import os
    for entry in result["files"]["directories"]:
        os.makedirs(os.path.join(str(root), entry["path"].lstrip("/")), exist_ok=True)
        os.chmod(os.path.join(str(root), entry["path"].lstrip("/")), 0o755)
    for entry in result["files"]["write"]:
        path = os.path.join(str(root), entry["dest"].lstrip("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(entry["content"])
        os.chmod(path, int(entry["mode"], 8))


@pytest.mark.skipif(__import__("os").geteuid() != 0, reason="the files must be root-owned, as the role writes them")
@pytest.mark.parametrize("drift,reason", [
    (None, None),
    ("edit", "/etc/security/limits.d/90-gpuops.conf differs"),
    ("chmod", "/usr/local/libexec/gpuops/cpufreq-governor differs"),
    ("chown", "/etc/sysctl.d/60-gpuops-os-tuning.conf differs"),
    ("disable", "gpuops-thp.service is not enabled (disabled)"),
    ("leftover", "/etc/default/grub.d/90-gpuops.cfg to be removed"),
])
def test_facts_converged_reads_the_files(tmp_path, drift, reason):
    import os
    params = _params(tmp_path)
    (tmp_path / "etc" / "default" / "grub.d").mkdir(parents=True)
    first = oth.facts(params, False, _systemctl({}))
    assert not first["converged"]["converged"]
    _converge(tmp_path, first)
    states = {}
    if drift == "edit":
        with open(str(tmp_path / "etc/security/limits.d/90-gpuops.conf"), "a") as handle:
            handle.write("* - nofile 1024\n")
    elif drift == "chmod":
        os.chmod(str(tmp_path / "usr/local/libexec/gpuops/cpufreq-governor"), 0o644)
    elif drift == "chown":
        os.chown(str(tmp_path / "etc/sysctl.d/60-gpuops-os-tuning.conf"), 1, 0)
    elif drift == "disable":
        states["gpuops-thp.service"] = "disabled"
    elif drift == "leftover":
        (tmp_path / "etc/default/grub.d/90-gpuops.cfg").write_text("GRUB_CMDLINE_LINUX_DEFAULT=x\n")
    again = oth.facts(params, False, _systemctl(states))
    assert again["converged"]["converged"] is (drift is None), again["converged"]["reasons"]
    if reason:
        assert any(reason in line for line in again["converged"]["reasons"]), again["converged"]["reasons"]


class _Module(object):
    """What write() uses of AnsibleModule."""

    def __init__(self, check_mode, states):
        self.check_mode = check_mode
        self.run_command = _systemctl(states)

    def atomic_move(self, src, dest):
        __import__("os").rename(src, dest)


@pytest.mark.skipif(__import__("os").geteuid() != 0, reason="the files are written root-owned")
def test_write_renders_and_writes_on_the_host_once(tmp_path):
    params = _params(tmp_path)
    for entry in oth.facts(params, False, _systemctl({}))["files"]["write"]:   # the host's directories
        (tmp_path / entry["dest"].lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    checked = oth.write(params, _Module(True, {}))
    assert checked["changed"] and all(w["changed"] for w in checked["written"])
    assert not (tmp_path / "etc/sysctl.d/60-gpuops-os-tuning.conf").exists(), "check mode wrote"
    assert [d["before"] for d in checked["diff"]] == [""] * len(checked["written"])
    first = oth.write(params, _Module(False, {}))
    assert [w["key"] for w in first["written"] if w["changed"]] == [w["key"] for w in checked["written"]]
    again = oth.write(params, _Module(False, {}))
    assert not again["changed"] and again["diff"] == []
    assert oth.facts(params, False, _systemctl({}))["converged"]["converged"]
