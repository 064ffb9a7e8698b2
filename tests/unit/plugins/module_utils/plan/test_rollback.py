"""The rolling upgrade's decisions (module_utils/plan/rollback.py), from rollback_cases.yml."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.rollback import decide, k8s_node, rolled_back

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "rollback_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_decide_table(case):
    result = decide(case["previous"], case["target"], case["verdict"], case["carried"],
                    case.get("summary", "summary line"), case.get("events"))
    assert result["action"] == case["action"]
    assert result["version"] == case["version"]
    assert result["uncordon"] is (case["action"] == "uncordon")
    assert result["restored"] is (case["action"] == "restored")
    for fragment in case.get("reasons", [case.get("reason")]):
        assert fragment in result["reason"], result["reason"]
    for fragment in case.get("absent", []):
        assert fragment not in result["reason"], result["reason"]


ROLLBACK = decide("580.95.05", "580.105.08", "fail", ["580.105.08", "580.95.05"], "GPU3 x8",
                  {"node": "roll-b", "drain": "done"})


@pytest.mark.parametrize("status,failure,version,says,not_says", [
    ("580.95.05", "", "580.95.05", "rolled back to the previous version 580.95.05 (the status file reads 580.95.05)",
     "FAILED"),
    ("580.105.08", "", "580.105.08", "ran, but the status file reads 580.105.08: the node is not on 580.95.05",
     "rolled back to"),
    ("", "apt failed", "unknown", "the rollback to the previous version 580.95.05 FAILED: apt failed", "rolled back to"),
])
def test_rolled_back_says_what_the_rollback_did(status, failure, version, says, not_says):
    result = rolled_back(ROLLBACK, status, failure)
    assert result["version"] == version
    assert says in result["reason"], result["reason"]
    assert not_says not in result["reason"]
    assert "Kubernetes node roll-b stays cordoned" in result["reason"]
    assert result["uncordon"] is False


def test_rolled_back_leaves_other_decisions():
    done = decide("580.95.05", "580.105.08", "pass", ["580.105.08"])
    assert rolled_back(done, "580.105.08") is done


@pytest.mark.parametrize("events,word", [
    ({"drain": "maybe"}, "drain"),
    ({"transaction": "restored"}, "transaction"),
    ({"upgraded": "perhaps"}, "upgraded"),
    ({"rebooted": "maybe"}, "rebooted"),
    ({"reboot_issued": "true\n yes"}, "reboot_issued"),
    ({"failed_checks": "sel"}, "failed_checks"),
    ({"failed_checks": ["sel"]}, "failed_checks"),
])
def test_decide_refuses_bad_events(events, word):
    with pytest.raises(ValueError) as info:
        decide("580.95.05", "580.105.08", "fail", [], "", events)
    assert word in str(info.value)


@pytest.mark.parametrize("args,word", [
    (("580.95.05\n", "580.105.08", "fail", []), "previous driver version"),
    (("580.95.05", "580.105.08; reboot", "fail", []), "target driver version"),
    (("580.95.05", "580.105.08", "failed", []), "verdict"),
    (("580.95.05", "580.105.08", "fail", "580.95.05"), "carried"),
    (("580.95.05", "580.105.08", "fail", ["x"]), "repository version"),
])
def test_decide_refuses_what_is_not_a_version(args, word):
    with pytest.raises(ValueError) as info:
        decide(*args)
    assert word in str(info.value)


def test_k8s_node_name_from_inventory_then_hostname():
    assert k8s_node("gpu-07.dc1", "ignored", False) == {
        "drain": True, "name": "gpu-07.dc1", "reason": "Kubernetes node gpu-07.dc1 (from gpuops_k8s_node_name)"}
    assert k8s_node("", "roll-a", True)["name"] == "roll-a"
    assert k8s_node(None, "roll-a", False)["drain"] is False


@pytest.mark.parametrize("name", ["gpu-07\n", "GPU-07", "gpu 07", "-gpu", "a" * 254, "gpu;reboot"])
def test_k8s_node_refuses_names_kubernetes_refuses(name):
    with pytest.raises(ValueError) as info:
        k8s_node(name, "x", True)
    assert "gpuops_k8s_node_name" in str(info.value)
