"""Issue 34: the rolling driver upgrade says what happened, read from the playbook (the facts its
decision is built from are set where the thing happened, never before) and the filter's two modes
(decide, then the rollback said again from the status file read back)."""
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.__private.driver_rollback import driver_rollback

PLAYBOOK = os.path.join(os.path.dirname(__file__), "..", "..", "playbooks", "rolling_driver_upgrade.yml")


def _tasks(node):
    for task in node:
        yield task
        for key in ("block", "rescue", "always"):
            if key in task:
                yield from _tasks(task[key])


def _upgrade_tasks():
    with open(PLAYBOOK) as handle:
        plays = yaml.safe_load(handle)
    play = next(p for p in plays if any(t.get("name") == "Upgrade one host" for t in p.get("tasks") or []))
    return list(_tasks(play["tasks"]))


def _index(names, name):
    assert name in names, name
    return names.index(name)


def test_facts_are_set_where_things_happen():
    tasks = _upgrade_tasks()
    names = [t.get("name") for t in tasks]
    drain = _index(names, "Cordon and drain the Kubernetes node")
    role = _index(names, "Upgrade the driver (nvidia_driver releases the hold, installs, holds again)")
    assert _index(names, "Note that the drain begins") < drain < _index(names, "Note that the node is drained") < role
    assert _index(names, "Note that the driver role starts") < role < _index(names, "Note that the upgrade ran")
    rescue = tasks[_index(names, "Keep what failed (and nvidia_driver's restore record, where its change failed)")]
    kept = rescue["ansible.builtin.set_fact"]
    assert "ansible_failed_result.transaction" in kept["__rolling_transaction"]
    # the reboot module's own record: true once its reboot command ran (a reboot that did not come back)
    assert "ansible_failed_result.rebooted" in kept["__rolling_reboot_issued"]
    decide = tasks[_index(names, "Decide - back into service, roll back, restored, or hold")]
    events = decide["vars"]["__rolling_events"]
    assert set(events) == {"node", "drain", "upgraded", "role_started", "change_began", "failed_task",
                           "failed_action", "failure", "transaction", "rebooted", "reboot_issued", "failed_checks"}
    # the checks come from gpu_validate's report, kept where the verdict is kept
    assert "gpu_validate_report.checks" in tasks[_index(names, "Keep the verdict")]["ansible.builtin.set_fact"]["__rolling_checks"]
    # a host that was not upgraded is decided against the version asked for, never the previous one
    assert "else {'version': gpuops_rolling_version" in decide["vars"]["__rolling_after"]
    stats = tasks[_index(names, "Publish the host's outcome for the run summary")]["ansible.builtin.set_stats"]
    assert "__rolling_drain == 'done'" in stats["data"]["gpuops_rolling"]["cordoned"]
    for key in ("drained", "upgraded", "restored", "rebooted"):
        assert key in stats["data"]["gpuops_rolling"], key
    # the stop message claims no cordon of its own: the reason says what became of the node
    stop = tasks[_index(names, "Stop the rolling upgrade at a host that did not pass (its batch ends the run)")]
    assert "__rolling_node" not in stop["ansible.builtin.fail"]["msg"]


def test_filter_decides_then_says_what_the_rollback_did():
    decision = driver_rollback("580.95.05", "580.105.08", "fail", ["580.105.08", "580.95.05"], "x8",
                               {"node": "roll-b", "drain": "done"})
    assert decision["action"] == "rollback" and "rolling back to the previous version 580.95.05" in decision["reason"]
    done = driver_rollback(decision, "580.95.05", "", rolled_back=True)
    assert "rolled back to the previous version 580.95.05 (the status file reads 580.95.05)" in done["reason"]
    failed = driver_rollback(decision, "", 'at "Install": E: broken', rolled_back=True)
    assert failed["version"] == "unknown" and "FAILED: at \"Install\": E: broken" in failed["reason"]


@pytest.mark.parametrize("args,kwargs,word", [
    (("580.95.05", "580.95.05", ""), {"rolled_back": True}, "the decision"),
    (("580.95.05", "580.105.08", "fail", [], "", {"drain": "perhaps"}), {}, "drain"),
    (("580.95.05", "580.105.08", "fail", [], "", {"upgraded": "maybe"}), {}, "upgraded"),
])
def test_filter_refuses(args, kwargs, word):
    with pytest.raises(AnsibleFilterError) as info:
        driver_rollback(*args, **kwargs)
    assert word in str(info.value)
