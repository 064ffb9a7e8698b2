"""The power cycle through the BMC after a failed collection reboot (gpuops_bmc_recovery, opt-in):
roles/common/tasks/bmc_recover.yml, included by the rolling upgrade's rescue (Ansible runs no rescue
inside a handler's tasks; measured on 2.19: a block/rescue in a file a handler includes is flattened
and its rescue never runs).

Loaded as data: the decision goes through the filter (plugins/module_utils/bmc/recovery.py), the
power cycle runs only on that decision, from the controller, throttled like the reboot (no more
hosts at once than reboot at once: the batch), with the wait after it; a BMC that refuses is caught
and reported; the BMC inputs are converted with their output hidden.

Run for real with ansible-playbook on the local connection: a failure the play's reboot did not
issue is not power-cycled; a reboot that timed out is power-cycled through ipmi_power, which fails
here (no BMC on 127.0.0.1, or no pyghmi on this controller) - one line, no traceback, the run goes
on; the password appears nowhere in the output.
"""
import os
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
PASSWORD = "Zq9-unique.Pw"

PLAY = """- hosts: localhost
  gather_facts: false
  vars:
    __common: {{gpuops_bmc_recovery: true, gpuops_reboot_throttle: 0}}
    gpuops_reboot: {{timeout: 30}}
  tasks:
    - ansible.builtin.include_role: {{name: gpuops.dlserver.common, tasks_from: bmc_recover.yml}}
      vars:
        __common_bmc_failed: {{action: ansible.builtin.reboot, rebooted: {rebooted}, msg: "{msg}"}}
    - ansible.builtin.debug:
        msg: "RESULT {{{{ __common_bmc_report | to_json }}}} ATTEMPTS {{{{ __common_bmc_attempts | default(0) }}}}"
"""


def _load(*parts):
    with open(os.path.join(REPO, *parts)) as fh:
        return yaml.safe_load(fh)


def _walk(tasks):
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _walk(task.get(key))


def test_the_recovery_decides_power_cycles_once_from_the_controller_waits_and_reports():
    tasks = _load("roles", "common", "tasks", "bmc_recover.yml")
    every = list(_walk(tasks))
    convert = [t for t in every if "gpuops.dlserver.__private.role_inputs" in t]
    assert len(convert) == 1 and convert[0]["no_log"] is True
    assert convert[0]["gpuops.dlserver.__private.role_inputs"] == {"role": "common", "entry_point": "bmc"}
    decide = [t for t in every if "__common_bmc_decision" in (t.get("ansible.builtin.set_fact") or {})]
    assert "gpuops.dlserver.__private.bmc_recovery" in decide[0]["ansible.builtin.set_fact"]["__common_bmc_decision"]
    cycle = [t for t in tasks if t.get("block")]
    assert len(cycle) == 1 and cycle[0]["when"] == "__common_bmc_decision.action == 'power_cycle'"
    power = [t for t in _walk(cycle[0]["block"]) if "community.general.ipmi_power" in t]
    assert len(power) == 1
    args = power[0]["community.general.ipmi_power"]
    assert args["state"] == "boot" and args["name"] == "{{ __common_bmc_inputs.inputs.bmc_address }}"
    assert args["password"] == "{{ __common_bmc_inputs.inputs.gpuops_bmc_password }}"
    assert power[0]["delegate_to"] == "localhost"
    # no more hosts power-cycled at once than reboot at once (the handler's throttle: the batch by default)
    handlers = _load("roles", "common", "handlers", "main.yml")
    reboot = [h for h in handlers if "ansible.builtin.reboot" in h][0]
    assert power[0]["throttle"] == reboot["throttle"]
    assert "run_once" not in power[0] and "loop" not in power[0]
    waits = [t for t in _walk(cycle[0]["block"]) if "ansible.builtin.wait_for_connection" in t]
    assert waits and waits[0]["ansible.builtin.wait_for_connection"]["timeout"] == "{{ gpuops_reboot.timeout }}"
    # no rescue (Ansible runs none inside a handler's tasks, and this file runs from one): a BMC that
    # refuses, or a host that stays down, is registered and reported, not a traceback and not fatal here
    assert not cycle[0].get("rescue")
    assert power[0]["register"] == "__common_bmc_power" and power[0]["ignore_errors"] is True
    assert waits[0]["register"] == "__common_bmc_wait" and waits[0]["ignore_errors"] is True
    assert waits[0]["when"] == "__common_bmc_power is succeeded"
    report = [t for t in every if "__common_bmc_report" in (t.get("ansible.builtin.set_fact") or {})]
    said = report[0]["ansible.builtin.set_fact"]["__common_bmc_report"]
    for part in ("__common_bmc_power", "__common_bmc_wait", "__common_bmc_inputs.inputs.gpuops_bmc_password"):
        assert part in said
    for task in every:
        if task not in (power[0], waits[0]):
            assert "ignore_errors" not in task and task.get("failed_when") is not False


def test_the_reboot_handler_recovers_then_fails_a_host_that_stayed_down():
    handlers = _load("roles", "common", "handlers", "main.yml")
    names = [h["name"] for h in handlers]
    reboot = [h for h in handlers if "ansible.builtin.reboot" in h][0]
    assert reboot["register"] == "__common_reboot_result"
    # only with the opt-in, and not where the rolling upgrade's own rescue recovers
    assert reboot["ignore_errors"] == ("{{ __common.gpuops_bmc_recovery and "
                                       "(__common_bmc_recover_in_handler | default(true)) }}")
    recover = [h for h in handlers if "ansible.builtin.include_tasks" in h][0]
    assert recover["ansible.builtin.include_tasks"] == "{{ role_path }}/tasks/bmc_recover.yml"
    assert recover["when"] == "__common_reboot_result is failed"
    assert recover["vars"]["__common_bmc_failed"]["rebooted"] == "{{ __common_reboot_result.rebooted | default(none) }}"
    fail = [h for h in handlers if "ansible.builtin.fail" in h][0]
    assert fail["when"] == "__common_reboot_result is failed and not (__common_bmc_report.back | default(false))"
    assert names.index(reboot["name"]) < names.index(recover["name"]) < names.index(fail["name"])
    assert all(h.get("listen") == "gpuops reboot" for h in handlers)
    plays = _load("playbooks", "rolling_driver_upgrade.yml")
    assert plays[1]["vars"]["__common_bmc_recover_in_handler"] is False


def test_the_rolling_upgrade_recovers_in_the_rescue_of_its_reboot():
    plays = _load("playbooks", "rolling_driver_upgrade.yml")
    upgrade = [t for t in plays[1]["tasks"] if t.get("name") == "Upgrade one host"][0]
    inner = [t for t in upgrade["block"] if t.get("name") == "Upgrade, reboot, probe and validate"][0]
    assert any(t.get("ansible.builtin.meta") == "flush_handlers" for t in inner["block"])
    names = [t["name"] for t in inner["rescue"]]
    first = names.index("Keep what failed (and nvidia_driver's restore record, where its change failed)")
    include = [t for t in inner["rescue"] if "ansible.builtin.include_role" in t]
    assert len(include) == 1 and names.index(include[0]["name"]) > first
    assert include[0]["ansible.builtin.include_role"]["tasks_from"] == "bmc_recover.yml"
    assert include[0]["when"] == "__common.gpuops_bmc_recovery"
    failed = include[0]["vars"]["__common_bmc_failed"]
    assert failed == {"action": "{{ __rolling_failed_action }}", "msg": "{{ __rolling_failure }}",
                      "rebooted": "{{ __rolling_reboot_issued }}"}
    # the line reaches the decision's reason (and the run's record) through __rolling_failure
    assert names.index("Add what the recovery through the BMC did to the failure") > names.index(include[0]["name"])


HANDLER_PLAY = """- hosts: localhost
  gather_facts: false
  vars:
    __common: {{gpuops_bmc_recovery: {recovery}, gpuops_reboot_throttle: 0, gpuops_lab_container_reboot: 0}}
    __common_role: test_role
    __common_reboot: {{needed: true, action: reboot, reason: "a test asked", timeout: 60}}
    __common_reboot_marker: "{{{{ playbook_dir }}}}/reboot-required"
  tasks:
    - ansible.builtin.import_role: {{name: gpuops.dlserver.common, tasks_from: reboot.yml}}
    - ansible.builtin.meta: flush_handlers
    - ansible.builtin.debug: {{msg: "AFTER THE HANDLERS"}}
"""


def _run(tmp_path, rebooted, msg, password=PASSWORD, address="127.0.0.1", play=None):
    (tmp_path / "pb.yml").write_text(play or PLAY.format(rebooted=rebooted, msg=msg))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1")
    argv = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", "-v",
            "-e", "ansible_python_interpreter=%s" % sys.executable, "-e", "gpuops_bmc_recovery=true",
            "-e", "bmc_address=%s" % address, "-e", "gpuops_bmc_user=gpuops", "-e", "gpuops_bmc_port=62399",
            "-e", "gpuops_bmc_password=%s" % password, str(tmp_path / "pb.yml")]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path), check=False)
    return res.returncode, res.stdout + res.stderr


def test_a_failure_the_play_did_not_issue_is_not_power_cycled(tmp_path):
    rc, out = _run(tmp_path, "false", "Running reboot with local connection would reboot the control node.")
    assert rc == 0, out
    assert ("localhost: not power-cycled through its BMC: the reboot command did not run (Running reboot with local "
            "connection would reboot the control node.), so this play did not take the host down") in out, out
    assert '"power_cycled": false' in out and "ATTEMPTS 0" in out
    assert "TASK [gpuops.dlserver.common : Power-cycle the host through its BMC (from the controller; a refusal is reported below)]" in out
    assert "skipping: [localhost]" in out
    assert PASSWORD not in out


def test_a_reboot_that_timed_out_is_power_cycled_once_and_a_bmc_that_fails_is_one_line(tmp_path):
    rc, out = _run(tmp_path, "true", "Timed out waiting for last boot time check (timeout=600)")
    assert rc == 0, out
    assert "localhost was rebooted by this play and did not come back within 30 s" in out, out
    assert "power-cycling it once through its BMC at 127.0.0.1; the BMC did not power-cycle it: " in out
    assert '"power_cycled": false' in out and '"back": false' in out and "ATTEMPTS 1" in out
    assert "Traceback" not in out.split("Keep what failed")[-1]
    assert PASSWORD not in out


def test_a_bad_password_is_refused_and_never_shown(tmp_path):
    bad = "pw;rm-rf"
    rc, out = _run(tmp_path, "true", "Timed out waiting for last boot time check (timeout=600)", password=bad)
    assert rc != 0
    assert bad not in out


@pytest.mark.parametrize("recovery", [True, False])
def test_a_reboot_that_fails_in_the_handler_is_reported_and_fails_the_host(tmp_path, recovery):
    # the reboot module refuses the local connection (its command never runs): with the opt-in the
    # handler's recovery runs, decides no power cycle (the play did not take the host down), says why
    # and fails the host; without it the reboot's own failure ends the host as before
    play = HANDLER_PLAY.format(recovery="true" if recovery else "false")
    rc, out = _run(tmp_path, None, None, play=play)
    assert rc != 0, out
    assert "AFTER THE HANDLERS" not in out
    assert "would reboot the control node" in out, out
    if recovery:
        assert ("the collection's reboot failed: localhost: not power-cycled through its BMC: the reboot command did "
                "not run") in out, out
        assert "...ignoring" in out
    else:
        assert "not power-cycled through its BMC" not in out and "...ignoring" not in out, out
    assert PASSWORD not in out
