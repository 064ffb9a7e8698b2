"""The rolling upgrade's decisions (module_utils/plan/rollback.py), from rollback_cases.yml."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.rollback import decide, k8s_node

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "rollback_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_decide_table(case):
    result = decide(case["previous"], case["target"], case["verdict"], case["carried"], "summary line")
    assert result["action"] == case["action"]
    assert result["version"] == case["version"]
    assert result["uncordon"] is (case["action"] == "uncordon")
    assert case["reason"] in result["reason"], result["reason"]


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
