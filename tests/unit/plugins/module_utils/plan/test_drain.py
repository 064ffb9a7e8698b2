"""Which hosts the rolling driver upgrade drains (module_utils/plan/drain.py), from drain_cases.yml
(issue 34 item 2: a drain that cannot be skipped by accident)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.drain import drain_flag, fleet_nodes, host_node

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "drain_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_fleet_nodes_table(case):
    records = [dict(values, host=host) for host, values in case["hosts"].items()]
    result = fleet_nodes(records, case.get("kubeconfig", ""), "k8s_nodes", case.get("group_hosts", []),
                         case.get("control_hosts", []))
    assert result["configured"] is case["configured"]
    assert result["ok"] is case["ok"], result["message"]
    if "unmapped" in case:
        assert result["unmapped"] == case["unmapped"]
    if "drained" in case:
        assert dict((h, d["name"]) for h, d in result["nodes"].items() if d["drain"]) == case["drained"]
    assert sorted(h for h, d in result["nodes"].items() if d["opted_out"]) == case.get("opted_out", [])
    for fragment in case.get("message", []):
        assert fragment in result["message"], result["message"]


def test_host_node_opt_out_and_mapping():
    assert host_node("", "gpu-01", False, False)["opted_out"] is True
    assert host_node("", "gpu-01", False, "no")["drain"] is False
    assert host_node("", "gpu-01", False, True) == {
        "drain": True, "name": "gpu-01", "reason": "Kubernetes node gpu-01 (from the host's name)",
        "mapped": True, "opted_out": False}
    assert host_node(None, "gpu-01", False)["mapped"] is False


@pytest.mark.parametrize("value", ["maybe", "true\n", " false", 2, ["false"]])
def test_a_drain_flag_that_is_no_boolean_is_refused(value):
    with pytest.raises(ValueError) as info:
        drain_flag(value)
    assert "gpuops_k8s_drain" in str(info.value)


def test_records_must_be_a_list():
    with pytest.raises(ValueError):
        fleet_nodes("gpu-01")
