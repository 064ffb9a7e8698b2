"""Bad input fails before any change, naming what to change (docs/architecture.md §7).

Real ansible-playbook runs against localhost: the platform check with the facts of other
systems, and os_tuning with wrong variables, NOT in check mode. Where the kernel allows it
(root, mount namespaces, overlayfs) each run happens in a private mount namespace whose /etc,
/usr/local and /run are overlays on a scratch tmpfs: whatever the run writes there lands in
the overlay's upper directory, which the test lists afterwards, and the real host is never
touched. A control run with good input shows that the harness does see the role's writes.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
OVERLAID = ("/etc", "/usr/local", "/run")

# Runs ansible-playbook with /etc, /usr/local and /run as overlays; lists what was written.
ISOLATE = r"""
set -eu
scratch=$1; shift
mount -t tmpfs gpuops-test "$scratch"
for dir in %s; do
    name=$(echo "$dir" | tr / _)
    mkdir -p "$scratch/$name/upper" "$scratch/$name/work"
    mount -t overlay overlay -o "lowerdir=$dir,upperdir=$scratch/$name/upper,workdir=$scratch/$name/work" "$dir"
done
rc=0
"$@" || rc=$?
( cd "$scratch" && find . -path '*/upper/*' ! -type d ) > "$scratch.written"
exit $rc
""" % " ".join(OVERLAID)


def _isolation_works(tmp_path):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    res = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", ISOLATE, "sh", str(probe), "true"],
                         capture_output=True, text=True, check=False)
    return res.returncode == 0


def playbook(tmp_path, tasks, extra=None, check=False, isolate=False):
    pb = tmp_path / "pb.yml"
    pb.write_text("- hosts: localhost\n  gather_facts: false\n  tasks:\n" + tasks)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    args = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(pb),
            "-e", "ansible_python_interpreter=%s" % sys.executable]
    if check:
        args.append("--check")
    if extra:
        args += ["-e", json.dumps(extra)]
    if isolate:
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        args = ["unshare", "-m", "--propagation", "private", "sh", "-c", ISOLATE, "sh", str(scratch)] + args
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path), check=False)


# The platform check is role_inputs' first step (common's preflight passes it the table of
# roles/common/vars/main.yml); the cases are in tests/unit/plugins/module_utils/core/test_platforms.py.
# Here the action itself, with the real table and the facts of other systems.
PLATFORM_TASK = """    - name: Check the platform and convert the variables of os_tuning
      gpuops.dlserver.__private.role_inputs:
        role: os_tuning
        platforms: "{{ (lookup('ansible.builtin.file', '%s') | from_yaml).__common_supported_platforms }}"
      vars:
        ansible_facts: {distribution: "%%s", distribution_major_version: "%%s", distribution_version: "%%s"}
""" % os.path.join(REPO, "roles", "common", "vars", "main.yml")


@pytest.mark.parametrize("distro,major,version", [("Ubuntu", "24", "24.04"), ("Rocky", "9", "9.5")])
def test_supported_platforms_pass(tmp_path, distro, major, version):
    res = playbook(tmp_path, PLATFORM_TASK % (distro, major, version), check=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "ok=1 " in res.stdout and "failed=0" in res.stdout


@pytest.mark.parametrize("distro,major,version", [("Fedora", "40", "40"), ("Ubuntu", "20", "20.04")])
def test_unsupported_platform_fails_with_the_list(tmp_path, distro, major, version):
    res = playbook(tmp_path, PLATFORM_TASK % (distro, major, version), check=True)
    assert res.returncode != 0
    assert "os_tuning does not support %s %s" % (distro, version if distro == "Ubuntu" else major) in res.stdout
    assert "Supported platforms: Debian 12/13, Ubuntu 22.04/24.04, Rocky 9, RedHat 9." in res.stdout


ROLE_TASK = "    - ansible.builtin.include_role: {name: gpuops.dlserver.os_tuning}\n"
# The steps that may refuse bad input, in the order they run; all three are read-only.
SPEC = "Validating arguments against arg spec 'main'"
INPUTS = "Check the platform and convert the variables by the argument spec of os_tuning"
DECIDE = "Read the host and decide what os_tuning applies"
# The first task that changes anything: never reached on bad input.
FIRST_CHANGE = "Stop and disable the units no longer wanted"


def _failed_task(out):
    """The name of the task whose result was 'fatal'."""
    task = None
    for line in out.splitlines():
        if line.startswith("TASK ["):
            task = line[len("TASK ["):].split("]")[0]
        if line.startswith("fatal:"):
            return task
    return None


@pytest.mark.parametrize("variables,step,needles", [
    ({"os_tuning_thp_enabled": "sometimes"}, SPEC, ["os_tuning_thp_enabled"]),
    ({"os_tuning_cpu_governor": "turbo"}, SPEC, ["os_tuning_cpu_governor"]),
    ({"os_tuning_reboot": "maybe"}, SPEC, ["os_tuning_reboot"]),
    # argument validation splits a string into a list on commas; the typed inputs refuse it.
    ({"os_tuning_kernel_cmdline": "pcie_aspm=off"}, INPUTS, ["os_tuning_kernel_cmdline must be a list, got a string"]),
    ({"os_tuning_unattended_blacklist": "nvidia-*"}, INPUTS, ["os_tuning_unattended_blacklist must be a list"]),
    # the role's own value checks (os_tuning_inputs) run on the controller first (role_inputs, value_kinds)
    ({"os_tuning_sysctl_overwrite": {"not a key": 1}}, INPUTS,
     ["os_tuning_sysctl_overwrite: keys must be dotted sysctl names", "bad input, nothing was changed"]),
    ({"os_tuning_kernel_cmdline": ["iommu=pt quiet"]}, INPUTS, ["os_tuning_kernel_cmdline: one parameter per entry"]),
    ({"os_tuning_reboot_timeout": 5}, INPUTS, ["os_tuning_reboot_timeout must be between 60 and 86400"]),
    ({"os_tuning_limits_extra": [{"domain": "a b", "type": "-", "item": "nofile", "value": 1}]}, INPUTS,
     ["os_tuning_limits_extra[0].domain"]),
], ids=["thp-choice", "governor-choice", "reboot-not-bool", "cmdline-string", "blacklist-string", "sysctl-key",
        "cmdline-space", "reboot-timeout", "limits-domain"])
def test_os_tuning_bad_input_fails_before_any_change(tmp_path, variables, step, needles):
    isolate = _isolation_works(tmp_path)
    status_file = tmp_path / "status" / "os_tuning.json"
    marker = tmp_path / "reboot-required"
    extra = dict(variables, os_tuning_status_file=str(status_file), __common_reboot_marker=str(marker))
    res = playbook(tmp_path, ROLE_TASK, extra, check=not isolate, isolate=isolate)
    out = res.stdout + res.stderr
    assert res.returncode != 0, out[-4000:]
    assert step in (_failed_task(out) or ""), out[-4000:]
    for needle in needles:
        assert needle in out, out[-4000:]
    assert FIRST_CHANGE not in out
    assert "changed=0" in out and "failed=1" in out, out[-4000:]
    assert not status_file.exists() and not marker.exists()
    if isolate:
        written = (tmp_path / "scratch.written").read_text().split()
        assert written == [], written


def test_the_harness_sees_what_a_good_run_writes(tmp_path):
    """Control: with good input the same harness finds the role's files (so an empty list means something)."""
    if not _isolation_works(tmp_path):
        pytest.skip("needs root, unshare and overlayfs to run the role outside check mode safely")
    status_file = tmp_path / "status" / "os_tuning.json"
    extra = {"os_tuning_status_file": str(status_file), "os_tuning_apply_live": "never",
             "__common_reboot_marker": str(tmp_path / "reboot-required"), "os_tuning_reboot": "false"}
    real = "/etc/sysctl.d/60-gpuops-os-tuning.conf"
    before = os.path.exists(real)
    res = playbook(tmp_path, ROLE_TASK, extra, isolate=True)
    out = res.stdout + res.stderr
    assert DECIDE in out, out
    written = (tmp_path / "scratch.written").read_text().split()
    assert "./_etc/upper/sysctl.d/60-gpuops-os-tuning.conf" in written, (written, out)
    assert os.path.exists(real) is before  # the real /etc was not written
