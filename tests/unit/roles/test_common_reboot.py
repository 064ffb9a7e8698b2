"""The collection's single reboot handler, through a real ansible-playbook run.

Two roles hand a reboot decision to common's reboot.yml; the handler "gpuops reboot" must
run once, announcing both reasons. The run uses the local connection, where
ansible.builtin.reboot refuses to reboot the control node: that refusal is the proof that the
one reboot was reached (and nothing is rebooted).
"""
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)

PLAY = """- hosts: localhost
  gather_facts: false
  vars:
    # common's typed inputs, which every role's run has from its probe (common's probe.yml)
    __common: {{gpuops_lab_container_reboot: 0, gpuops_reboot_throttle: 0, gpuops_bmc_recovery: false}}
  tasks:
    - ansible.builtin.include_role: {{name: gpuops.dlserver.common, tasks_from: reboot.yml}}
      vars:
        __common_role: os_tuning
        __common_reboot_marker: "{marker}"
        __common_reboot: {{needed: true, action: {first}, reason: "iommu=pt is not active", timeout: 900}}
    - ansible.builtin.include_role: {{name: gpuops.dlserver.common, tasks_from: reboot.yml}}
      vars:
        __common_role: nvidia_driver
        __common_reboot_marker: "{marker}"
        __common_reboot: {{needed: true, action: reboot, reason: "driver 535 loaded, 550 installed", timeout: 1800}}
"""


def run(tmp_path, first="reboot"):
    marker = tmp_path / "reboot-required"
    (tmp_path / "pb.yml").write_text(PLAY.format(marker=marker, first=first))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1")
    res = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                          "-e", "ansible_python_interpreter=%s" % sys.executable, str(tmp_path / "pb.yml")],
                         capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path), check=False)
    return res, marker


def test_both_roles_one_reboot_with_both_reasons(tmp_path):
    res, marker = run(tmp_path)
    out = res.stdout + res.stderr
    assert out.count("RUNNING HANDLER [gpuops.dlserver.common : Announce the reboot") == 1, out
    assert out.count("RUNNING HANDLER [gpuops.dlserver.common : Reboot the host once") == 1, out
    assert ("gpuops.dlserver reboot for nvidia_driver: driver 535 loaded, 550 installed; "
            "os_tuning: iommu=pt is not active") in out
    assert "would reboot the control node" in out  # the one reboot was reached, and refused locally
    lines = marker.read_text().splitlines()
    assert sorted(lines) == ["nvidia_driver: driver 535 loaded, 550 installed", "os_tuning: iommu=pt is not active"]


def test_a_deferred_role_is_recorded_but_not_in_the_reboot(tmp_path):
    res, marker = run(tmp_path, first="deferred")
    out = res.stdout + res.stderr
    assert "gpuops.dlserver reboot for nvidia_driver: driver 535 loaded, 550 installed\"" in out, out
    assert "os_tuning: iommu=pt is not active" in marker.read_text()
