"""gpuops.dlserver.__private.role_inputs through a real ansible-playbook run with -e key=value strings."""
import json
import os
import subprocess
import sys

import pytest

from ansible_collections.gpuops.dlserver.plugins.action.__private.role_inputs import ROLES_DIR, platform_var_files

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)

PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - gpuops.dlserver.__private.role_inputs:
        role: os_tuning
      register: result
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ result.inputs | to_json }}"
"""


@pytest.fixture
def run(tmp_path, run_play):
    return lambda *extra: run_play(tmp_path, PLAY, None, *extra)


def test_extra_vars_strings_become_typed_values(run, tmp_path):
    res = run("os_tuning_reboot=false", "os_tuning_reboot_timeout=900", "os_tuning_hold_kernel=yes")
    assert res.returncode == 0, res.stdout + res.stderr
    values = json.loads((tmp_path / "out.json").read_text())
    assert values["reboot"] is False
    assert values["reboot_timeout"] == 900
    assert values["hold_kernel"] is True
    assert values["thp_enabled"] == "madvise"  # defaults come through converted too
    assert values["kernel_cmdline"] == []


def test_a_string_for_a_list_fails_naming_the_variable(run, tmp_path):
    res = run("os_tuning_kernel_cmdline=pcie_aspm=off")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "os_tuning_kernel_cmdline must be a list, got a string ('pcie_aspm=off')" in out
    assert not (tmp_path / "out.json").exists()


def test_the_driver_checks_the_spec_cannot_make_run_here(tmp_path, run_play):
    """nvidia_driver's value checks (a newline in a path, a range) fail in this controller step,
    naming the variable: the role makes no round trip of its own for them."""
    play = PLAY.replace("role: os_tuning", "role: nvidia_driver")
    res = run_play(tmp_path, play, None, json.dumps({"nvidia_driver_status_file": "/etc/gpuops/x.json\nExecStart=/bin/sh",
                                                     "nvidia_driver_reboot_timeout": 5}))
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "nvidia_driver_status_file must be an absolute file path" in out
    assert "nvidia_driver_reboot_timeout must be between 60 and 86400 seconds, got 5" in out
    assert not (tmp_path / "out.json").exists()
    res = run_play(tmp_path, play, None)
    assert res.returncode == 0, res.stdout + res.stderr


def test_json_extra_vars_keep_their_types(run, tmp_path):
    res = run(json.dumps({"os_tuning_kernel_cmdline": ["iommu=pt"], "os_tuning_reboot": True}))
    assert res.returncode == 0, res.stdout + res.stderr
    values = json.loads((tmp_path / "out.json").read_text())
    assert values["kernel_cmdline"] == ["iommu=pt"]
    assert values["reboot"] is True


def test_a_secret_variable_keeps_the_published_fact_out_of_the_output(run, tmp_path):
    # common's preflight.yml as every role runs it: the action, then the set_fact of __node_exporter
    play = ("- hosts: localhost\n  gather_facts: false\n  tasks:\n"
            "    - ansible.builtin.include_role:\n        name: gpuops.dlserver.common\n"
            "        tasks_from: preflight.yml\n      vars:\n        __common_role: node_exporter\n"
            "    - ansible.builtin.copy:\n        dest: \"{{ out }}\"\n"
            "        content: \"{{ __node_exporter.basic_auth_users | to_json }}\"\n")
    (tmp_path / "pb.yml").write_text(play)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1")
    res = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-v", "-i", "localhost,", "-c", "local",
                          str(tmp_path / "pb.yml"), "-e", "ansible_python_interpreter=%s" % sys.executable,
                          "-e", "out=%s" % (tmp_path / "out.json"),
                          # no TLS here: the role's opt-in (value_posture.py refuses it else)
                          "-e", json.dumps({"node_exporter_basic_auth_users": {"prometheus": "s3cr3t-value"},
                                            "node_exporter_basic_auth_allow_http": True})],
                         capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path), check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == {"prometheus": "s3cr3t-value"}
    assert "s3cr3t-value" not in res.stdout.split("TASK [ansible.builtin.copy]")[0]


# platform_vars: the files of a role's vars/ that apply to a host, in the order they are read.
ROLES = os.path.join(REPO, "roles")


@pytest.mark.parametrize("role,facts,files", [
    ("nvidia_driver", {"os_family": "Debian", "distribution": "Debian", "distribution_major_version": "12"},
     ["Debian.yml", "Debian_12.yml"]),
    # Ubuntu: the family file, then Ubuntu.yml (no Ubuntu_24.yml)
    ("nvidia_driver", {"os_family": "Debian", "distribution": "Ubuntu", "distribution_major_version": "24"},
     ["Debian.yml", "Ubuntu.yml"]),
    # Debian is its own family: Debian.yml once
    ("os_tuning", {"os_family": "Debian", "distribution": "Debian", "distribution_major_version": "13"},
     ["Debian.yml"]),
    ("os_tuning", {"os_family": "RedHat", "distribution": "Rocky", "distribution_major_version": "9"},
     ["RedHat.yml"]),
    # no file for the platform: nothing (the platform check refuses such a host first)
    ("os_tuning", {"os_family": "Suse", "distribution": "SLES", "distribution_major_version": "15"}, []),
], ids=["debian12-specific", "ubuntu-distribution", "debian-once", "rocky-family", "none"])
def test_platform_var_files(role, facts, files):
    found = platform_var_files(os.path.join(ROLES, role, "vars"), facts)
    assert [os.path.basename(path) for path in found] == files


PLATFORM_PLAY = """- hosts: localhost
  gather_facts: false
  vars:
    ansible_facts: {os_family: Debian, distribution: Debian, distribution_major_version: "12",
                    distribution_version: "12.8"}
  tasks:
    - gpuops.dlserver.__private.role_inputs:
        role: %s
        platform_vars: true
      register: result
    - ansible.builtin.include_vars:
        file: "{{ item }}"
      loop: "{{ result.platform_files | default([]) }}"
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ %s | to_json }}"
"""


def test_platform_files_load_in_order_rendered_and_the_specific_file_wins(tmp_path, run_play):
    res = run_play(tmp_path, PLATFORM_PLAY % ("nvidia_driver", "[__nvidia_driver_backend, __nvidia_driver_distro_branch]"),
                   None)
    assert res.returncode == 0, res.stdout + res.stderr
    # Debian.yml (the family) and Debian_12.yml (the release) both read
    assert json.loads((tmp_path / "out.json").read_text()) == ["apt", "535"]
    res = run_play(tmp_path, PLATFORM_PLAY % ("node_exporter", "__node_exporter_platform.name"), None)
    assert res.returncode == 0, res.stdout + res.stderr
    # the template of the platform file rendered with the host's facts
    assert json.loads((tmp_path / "out.json").read_text()) == "Debian 12"


def test_without_platform_vars_nothing_of_vars_is_published(tmp_path, run_play):
    play = PLATFORM_PLAY.replace("        platform_vars: true\n", "") % (
        "nvidia_driver", "__nvidia_driver_backend | default('unset')")
    res = run_play(tmp_path, play, None)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == "unset"


@pytest.mark.parametrize("role", sorted(r for r in os.listdir(ROLES_DIR)
                                        if os.path.isfile(os.path.join(ROLES_DIR, r, "meta", "argument_specs.yml"))))
def test_the_fast_yaml_loader_reads_every_argument_spec_as_safe_load_does(role):
    import yaml
    from ansible_collections.gpuops.dlserver.plugins.action.__private import role_inputs as ri
    path = os.path.join(ROLES_DIR, role, "meta", "argument_specs.yml")
    with open(path) as fast, open(path) as slow:
        assert ri.read_yaml(fast) == yaml.safe_load(slow)
    assert ri.SAFE_LOADER is getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def test_lists_and_posture_are_checked_here_with_the_inventorys_groups(tmp_path, run_play):
    """Issue 37 (value_posture.py): the role's own step refuses a group the play's inventory
    (localhost,) does not have and a kernel parameter given twice differently, naming each."""
    play = PLAY.replace("role: os_tuning", "role: volcano")
    res = run_play(tmp_path, play, None, "volcano_node_group=gpus")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "volcano_node_group: group 'gpus' is not in the inventory" in out
    assert not (tmp_path / "out.json").exists()
    res = run_play(tmp_path, PLAY, None, json.dumps({"os_tuning_kernel_cmdline": ["iommu=pt", "iommu=off"]}))
    assert res.returncode != 0
    assert "os_tuning_kernel_cmdline: kernel parameter 'iommu' is given twice, differently" in res.stdout + res.stderr
    res = run_play(tmp_path, play, None, "volcano_node_group=ungrouped")
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_group_that_matches_no_host_is_said_in_the_run(tmp_path, run_play):
    """Issue 37: volcano_node_group at its default (gpu_nodes), which the play's inventory (localhost,)
    does not have, is accepted - a fleet without GPU nodes - but the run says it configures nothing."""
    play = PLAY.replace("role: os_tuning", "role: volcano").replace(
        "content: \"{{ result.inputs | to_json }}\"", "content: \"{{ result.notices | to_json }}\"")
    res = run_play(tmp_path, play, None)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    notices = json.loads((tmp_path / "out.json").read_text())
    assert notices == ["volcano_node_group: group 'gpu_nodes' (the default) is not in the inventory, so it matches "
                       "no host and configures nothing; add the group to the inventory, or set volcano_node_group "
                       "to a group of it"]
    assert "[WARNING]: volcano_node_group: group 'gpu_nodes' (the default) is not in the inventory" in out
    # a group of the inventory with a host: nothing to say
    res = run_play(tmp_path, play.replace("result.notices", "result.notices | default([])"), None,
                   "volcano_node_group=ungrouped")
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == []
