"""Bad input fails before any change, naming what to change (DESIGN.md §5).

These run real ansible-playbook against localhost: the platform check with the facts of
other systems, and os_tuning with wrong variables in check mode (validation fails on the
first task, so nothing could change even outside check mode).
"""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)


def playbook(tmp_path, tasks, extra=None):
    pb = tmp_path / "pb.yml"
    pb.write_text("- hosts: localhost\n  gather_facts: false\n  tasks:\n" + tasks)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1")
    args = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", "--check", str(pb),
            "-e", "ansible_python_interpreter=%s" % sys.executable]
    if extra:
        args += ["-e", json.dumps(extra)]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path), check=False)


PLATFORM_TASK = """    - ansible.builtin.include_role: {name: gpuops.dlserver._common, tasks_from: platform.yml}
      vars:
        __common_role: os_tuning
        ansible_facts: {distribution: "%s", distribution_major_version: "%s", distribution_version: "%s"}
"""


@pytest.mark.parametrize("distro,major,version", [
    ("Debian", "12", "12.8"), ("Debian", "13", "13.1"), ("Ubuntu", "24", "24.04"), ("Ubuntu", "22", "22.04"),
    ("Rocky", "9", "9.5"), ("RedHat", "9", "9.4"),
])
def test_supported_platforms_pass(tmp_path, distro, major, version):
    res = playbook(tmp_path, PLATFORM_TASK % (distro, major, version))
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("distro,major,version", [
    ("Fedora", "40", "40"), ("Debian", "11", "11.9"), ("Ubuntu", "20", "20.04"), ("Rocky", "8", "8.10"),
])
def test_unsupported_platform_fails_with_the_list(tmp_path, distro, major, version):
    res = playbook(tmp_path, PLATFORM_TASK % (distro, major, version))
    assert res.returncode != 0
    assert "os_tuning does not support %s" % distro in res.stdout
    assert "Supported platforms: Debian 12/13, Ubuntu 22.04/24.04, Rocky 9, RedHat 9." in res.stdout


ROLE_TASK = "    - ansible.builtin.include_role: {name: gpuops.dlserver.os_tuning}\n"


@pytest.mark.parametrize("variables,needle", [
    ({"os_tuning_thp_enabled": "sometimes"}, "os_tuning_thp_enabled"),
    ({"os_tuning_cpu_governor": "turbo"}, "os_tuning_cpu_governor"),
    ({"os_tuning_reboot": "maybe"}, "os_tuning_reboot"),
    ({"os_tuning_sysctl_overwrite": {"not a key": 1}}, "os_tuning_sysctl"),
    ({"os_tuning_kernel_cmdline": ["iommu=pt quiet"]}, "os_tuning_kernel_cmdline"),
])
def test_os_tuning_bad_input_fails_first(tmp_path, variables, needle):
    res = playbook(tmp_path, ROLE_TASK, variables)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out
    assert needle in out
    assert "changed=0" in out
