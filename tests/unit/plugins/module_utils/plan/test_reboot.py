"""The collection's reboot vocabulary and its single request per host (module_utils/reboot.py)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.reboot import add_request, decide, lab_container, served

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "reboot_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


@pytest.mark.parametrize("case", CASES, ids=[c["action"] + "-" + str(i) for i, c in enumerate(CASES)])
def test_decide_table(case):
    result = decide(case["needed"], case["why"], case["allowed"], "x_reboot", case["host_owned"],
                    case.get("not_owned_reason", ""), timeout=600)
    assert result["action"] == case["action"]
    assert result["needed"] is case["needed"]
    assert case["reason"] in result["reason"]
    assert result["timeout"] == 600


def test_two_roles_make_one_request_with_both_reasons():
    first = decide(True, "iommu=pt is not active", True, "os_tuning_reboot", timeout=900)
    second = decide(True, "driver 535 is loaded, 550 installed", True, "nvidia_driver_reboot", timeout=1800)
    request = add_request(add_request({}, "os_tuning", first), "nvidia_driver", second)
    assert sorted(request["roles"]) == ["nvidia_driver", "os_tuning"]
    assert "os_tuning: iommu=pt is not active" in request["message"]
    assert "nvidia_driver: driver 535 is loaded, 550 installed" in request["message"]
    assert request["message"].count("gpuops.dlserver reboot for") == 1
    assert request["timeout"] == 1800
    assert sorted(request["pending"]) == ["nvidia_driver", "os_tuning"]


def test_deferred_and_skipped_are_pending_but_not_rebooted():
    request = add_request({}, "os_tuning", decide(True, "iommu=pt", False, "os_tuning_reboot"))
    request = add_request(request, "nvidia_driver", decide(True, "driver", True, "nvidia_driver_reboot",
                                                           host_owned=False))
    assert request["roles"] == {}
    assert request["message"] == ""
    assert request["pending"]["os_tuning"]["action"] == "deferred"
    assert request["pending"]["nvidia_driver"]["action"] == "skipped"


def test_a_role_that_no_longer_needs_a_reboot_leaves_the_request():
    request = add_request({}, "os_tuning", decide(True, "iommu=pt", True, "os_tuning_reboot"))
    request = add_request(request, "os_tuning", decide(False, "active", True, "os_tuning_reboot"))
    assert request["roles"] == {} and request["pending"] == {}


def test_served_clears_and_remembers():
    request = add_request({}, "os_tuning", decide(True, "iommu=pt", True, "os_tuning_reboot"))
    after = served(request)
    assert after["served"] == ["os_tuning"]
    assert after["roles"] == {} and after["pending"] == {} and after["message"] == ""


def test_bad_decision_is_refused():
    with pytest.raises(ValueError):
        add_request({}, "os_tuning", {"action": "later"})


with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "reboot_lab_cases.yml")) as _fh:
    LAB_CASES = yaml.safe_load(_fh)


@pytest.mark.parametrize("case", LAB_CASES, ids=[c["name"] for c in LAB_CASES])
def test_lab_container_table(case):
    d = case["decide"]
    decision = decide(d["needed"], d["why"], d["allowed"], "x_reboot", d["host_owned"], d.get("not_owned_reason", ""))
    result = lab_container(decision, case["seconds"], case["in_container"], case["lab_node"])
    assert result["action"] == case["action"]
    assert result["timeout"] == case["timeout"]
    assert result.get("command", "") == case["command"]
    assert result["needed"] is d["needed"]
    for text in case["reasons"]:
        assert text in result["reason"]
    for text in case.get("absent", []):
        assert text not in result["reason"]


@pytest.mark.parametrize("seconds", [True, -1, 3601, "20", "20\n", None, 1.5])
def test_lab_container_refuses_what_is_not_seconds(seconds):
    decision = decide(True, "driver", True, "x_reboot", host_owned=False)
    with pytest.raises(ValueError, match="gpuops_lab_container_reboot"):
        lab_container(decision, seconds, True, True)


def test_lab_reboot_request_carries_the_command_and_timeout_and_served_clears_them():
    lab = lab_container(decide(True, "driver", True, "nvidia_driver_reboot", host_owned=False), 20, True, True)
    request = add_request({}, "nvidia_driver", lab)
    assert request["command"] == "systemctl reboot"
    assert request["timeout"] == 20
    assert "TEST-ONLY switch gpuops_lab_container_reboot" in request["message"]
    assert served(request)["command"] == ""


def test_a_request_without_a_lab_decision_has_no_command():
    request = add_request({}, "os_tuning", decide(True, "iommu=pt", True, "os_tuning_reboot"))
    assert request["command"] == ""
