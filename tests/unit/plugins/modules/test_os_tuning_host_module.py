# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.dlserver.__private.os_tuning_host through AnsibleModule: what it reads, failures, check mode.

The host is a temporary root (option ``root``) and ``run_command`` is the only thing mocked.
"""
import os

import pytest
import yaml
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks
from ansible_collections.gpuops.dlserver.plugins.modules.__private import os_tuning_host
from module_harness import ExitJson, FailJson  # noqa: E402 pylint: disable=wrong-import-order

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "os_tuning"))
APT_SIMULATION = """Inst linux-image-amd64 [6.1.76-1] (6.1.85-1 Debian-Security:12/stable-security [amd64])
Inst linux-headers-amd64 [6.1.76-1] (6.1.85-1 Debian:12.5/stable [amd64])
Inst tzdata [2024a-0+deb12u1] (2025b-0+deb12u1 Debian-Security:12/stable-security [all])
"""
DPKG = "linux-image-amd64\t6.1.76-1\thi \nlinux-headers-amd64\t6.1.76-1\tii \nlibc6\t2.36-9\tii \nold\t1\trc \n"


@pytest.fixture(name="commands")
def fixture_commands(monkeypatch):
    """run_command answers by the program name; calls are recorded."""
    # systemctl: the units to enable, not enabled yet (one `systemctl show` for all of them)
    answers = {"dpkg-query": (0, DPKG, ""), "apt-get": (0, APT_SIMULATION, ""),
               "systemctl": (0, "Id=gpuops-thp.service\nUnitFileState=disabled\nActiveState=inactive\n", "")}
    calls = []

    def run_command(self, argv, **kwargs):
        calls.append(list(argv))
        assert kwargs.get("environ_update", {}).get("LC_ALL") == "C"
        return answers[os.path.basename(argv[0])]

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    return answers, calls


def _inputs(**extra):
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        data = yaml.safe_load(handle)
    inputs = dict((k[len("os_tuning_"):], v) for k, v in data.items())
    inputs.update(extra)
    return inputs


def _platform():
    with open(os.path.join(ROLE, "vars", "Debian.yml")) as handle:
        return yaml.safe_load(handle)["__os_tuning_platform"]


def _root(tmp_path, cmdline="ro quiet", grub_cfg="linux /vmlinuz ro quiet", swappiness="60"):
    root = tmp_path / "root"
    (root / "proc" / "sys" / "vm").mkdir(parents=True)
    (root / "proc" / "cmdline").write_text(cmdline + "\n")
    (root / "proc" / "sys" / "vm" / "swappiness").write_text(swappiness + "\n")
    (root / "boot" / "grub").mkdir(parents=True)
    (root / "boot" / "grub" / "grub.cfg").write_text(grub_cfg)
    (root / "usr" / "sbin").mkdir(parents=True)
    (root / "usr" / "sbin" / "update-grub").write_text("")
    (root / "etc" / "systemd" / "system").mkdir(parents=True)
    (root / "etc" / "systemd" / "system" / "gpuops-thp.service").write_text("")
    return root


def _run(args, check_mode=False):
    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as info:
            os_tuning_host.main()
    return info.value.args[0]


def _args(root, inputs, **extra):
    args = {"inputs": inputs, "platform": _platform(), "root": str(root), "kernel": "6.1.0-18-amd64",
            "virtualization_type": "kvm", "virtualization_role": "host"}
    args.update(extra)
    return args


def test_bad_input_is_the_registrys_to_refuse_before_the_host_is_read():
    """The route (issue 38): the preflight's registry of input checks refuses bad input on the
    controller, naming each variable, before this module runs; the module does not check it again."""
    found = input_checks.problems("os_tuning", _inputs(kernel_cmdline=["a b"], reboot_timeout=1), "main", {})
    assert [p.split(":")[0].split(" ")[0] for p in found] == ["os_tuning_kernel_cmdline", "os_tuning_reboot_timeout"]


def test_bare_metal_driver_host_reads_everything_once(tmp_path, commands):
    root = _root(tmp_path)
    result = _run(_args(root, _inputs(kernel_cmdline=["iommu=pt"], hold_kernel=True),
                        driver_required=True))
    assert result["changed"] is False
    assert result["live"]["live"] is True
    assert result["sysctl"]["drift"] == ["vm.swappiness"]
    assert result["kernel_cmdline"]["pending"] == ["iommu=pt"]
    assert result["kernel_cmdline"]["boot_missing"] == ["iommu=pt"]
    assert result["hold"]["held"] == ["linux-image-amd64", "linux-headers-amd64"]
    assert result["hold"]["to_hold"] == ["linux-headers-amd64"]  # linux-image-amd64 is on hold already
    assert [u["name"] for u in result["held_back"]["security"]] == ["linux-image-amd64"]
    assert [u["name"] for u in result["held_back"]["updates"]] == ["linux-image-amd64", "linux-headers-amd64"]
    assert result["ansible_facts"]["os_tuning_status"] == result["status"]
    # one read each: the packages, the kernel updates kept back, the units' state (the fast path)
    assert [c[0] for c in commands[1]] == ["dpkg-query", "apt-get", "systemctl"]
    assert commands[1][2][:4] == ["systemctl", "show", "-p", "Id,UnitFileState,ActiveState"]
    assert result["converged"]["converged"] is False
    assert "--ignore-hold" in commands[1][1] and "--simulate" in commands[1][1]


def test_the_kept_simulation_answers_the_next_read_until_apt_changes(tmp_path, commands):
    root = _root(tmp_path)
    args = _args(root, _inputs(hold_kernel=True), driver_required=True)
    first = _run(args)
    assert "apt-get" in [c[0] for c in commands[1]]
    assert (root / "var/cache/gpuops/apt-simulation.json").is_file()
    del commands[1][:]
    again = _run(args)
    assert "apt-get" not in [c[0] for c in commands[1]]
    assert again["held_back"]["updates"] == first["held_back"]["updates"]
    assert (first["simulation_cached"], again["simulation_cached"]) == (False, True)
    assert again["status"] == first["status"]  # the status file does not change with the cache
    (root / "var/lib/dpkg").mkdir(parents=True, exist_ok=True)
    (root / "var/lib/dpkg/status").write_text("Package: linux-image-amd64\n")   # an install or a hold
    del commands[1][:]
    _run(args)
    assert "apt-get" in [c[0] for c in commands[1]]


def test_check_mode_writes_no_simulation_cache(tmp_path, commands):
    root = _root(tmp_path)
    _run(_args(root, _inputs(hold_kernel=True), driver_required=True), check_mode=True)
    assert not (root / "var/cache/gpuops").exists()


def test_reboot_false_defers(tmp_path, commands):
    """The module takes the converted inputs (role_inputs turns -e "false" into False)."""
    root = _root(tmp_path)
    result = _run(_args(root, _inputs(kernel_cmdline=["iommu=pt"], reboot=False)))
    assert result["reboot"]["action"] == "deferred"


def test_container_without_driver_runs_no_command(tmp_path, commands):
    root = _root(tmp_path)
    result = _run(_args(root, _inputs(kernel_cmdline=["iommu=pt"], reboot=True, hold_kernel=True),
                        in_container=True, virtualization_type="docker"))
    assert result["reboot"]["action"] == "skipped"
    assert result["sysctl"]["drift"] == []
    assert result["unattended"]["dropped"] == ["linux-image-*", "linux-headers-*", "linux-modules-*", "kernel",
                                               "kernel-*"]
    # no package command; the one read of the units' state (the fast path)
    assert [c[:2] for c in commands[1]] == [["systemctl", "show"]]


def test_check_mode_leaves_out_units_not_installed(tmp_path, commands):
    root = _root(tmp_path)
    result = _run(_args(root, _inputs()), check_mode=True)
    assert [u["name"] for u in result["units"]["enable"]] == ["gpuops-thp.service"]


def test_a_failing_command_fails_with_rc_and_stderr(tmp_path, commands):
    commands[0]["apt-get"] = (100, "", "E: dpkg was interrupted, you must manually run 'dpkg --configure -a'")
    root = _root(tmp_path)
    result = _run(_args(root, _inputs(), driver_required=True))
    assert result["failed"] and result["rc"] == 100
    assert "dpkg was interrupted" in result["stderr"]
    assert "simulating the upgrades" in result["msg"]


def test_reboot_record_follows_the_marker_file(tmp_path, commands):
    root = _root(tmp_path)
    assert _run(_args(root, _inputs()))["reboot_record"] is False
    (root / "run" / "gpuops").mkdir(parents=True)
    (root / "run" / "gpuops" / "reboot-required").write_text("os_tuning: kernel command line parameters ...\n")
    assert _run(_args(root, _inputs()))["reboot_record"] is True


@pytest.mark.skipif(os.geteuid() != 0, reason="the directories the role makes are root's")
def test_directories_and_files_to_remove_say_whether_the_host_has_them_so(tmp_path, commands):
    """The converged fast path: the role's file task acts only on entries not ``current``."""
    root = _root(tmp_path)
    # a kernel command line (the GRUB drop-in's directory), no CPU governor (its files removed)
    inputs = _inputs(kernel_cmdline=["iommu=pt"], cpu_governor=None)
    first = _run(_args(root, inputs))
    dirs, absent = first["files"]["directories"], first["files"]["absent"]
    assert dirs and all(d["current"] is False for d in dirs)     # the fake root has none of them
    assert absent and all(a["current"] is True for a in absent)  # nor any file to remove
    for d in dirs:                                               # what the role's file task leaves
        path = root / d["path"].lstrip("/")
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(str(path), 0o755)
    stale = root / absent[0]["path"].lstrip("/")
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("left by an earlier run\n")
    second = _run(_args(root, inputs))
    assert all(d["current"] is True for d in second["files"]["directories"])
    assert [a["current"] for a in second["files"]["absent"]] == [False] + [True] * (len(absent) - 1)
    os.chmod(str(root / dirs[0]["path"].lstrip("/")), 0o700)    # a mode changed by hand is set again
    third = _run(_args(root, inputs))
    assert third["files"]["directories"][0]["current"] is False
