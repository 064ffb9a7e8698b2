"""The canary of a batched play (module_utils/plan/canary.py), from canary_cases.yml
(issue 34 item 3: a canary chosen on purpose, not whichever host Ansible lists first)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.canary import choose_canary

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "canary_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)

SITE_ROLES = ["os_tuning", "nvidia_driver"]


def plan(kind):
    if kind == "none":
        return None
    gpus = 0 if kind == "cpu" else 4
    return {"host": {"gpu_count": gpus},
            "roles": {"os_tuning": {"run": True, "reason": "every host"},
                      "nvidia_driver": {"run": kind == "gpu", "reason": "x"}}}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_choose_canary_table(case):
    records = [{"host": host, "plan": plan(kind)} for host, kind in case["hosts"].items()]
    result = choose_canary(records, case.get("canary_group", []), case.get("roles", SITE_ROLES))
    assert result["host"] == case["host"], result
    assert case.get("reason", "") in result["reason"], result
    if case.get("warning"):
        assert case["warning"] in (result["warning"] or ""), result
        assert "WARNING: " + result["warning"] in result["message"]
    else:
        assert result["warning"] is None, result
    if result["host"]:
        assert result["message"].startswith("canary (the first batch, alone): %s - " % result["host"])


def test_the_choice_does_not_depend_on_the_order_of_the_hosts():
    names = ["gpu-%02d" % i for i in range(12)] + ["cpu-01", "cpu-02"]
    chosen = set()
    for shift in range(len(names)):
        order = names[shift:] + names[:shift]
        records = [{"host": h, "plan": plan("cpu" if h.startswith("cpu") else "gpu")} for h in order]
        chosen.add(choose_canary(records, [], SITE_ROLES)["host"])
    assert chosen == {"gpu-00"}


@pytest.mark.parametrize("records,roles,word", [
    ("gpu-01", SITE_ROLES, "records"),
    ([{"host": "gpu-01", "plan": {"host": {}}}], SITE_ROLES, "gpuops_plan"),
    ([{"host": "gpu-01", "plan": {"roles": {}, "host": {"gpu_count": "4"}}}], SITE_ROLES, "gpu_count"),
    ([{"plan": None}], SITE_ROLES, "each record"),
    ([], "nvidia_driver", "roles"),
])
def test_bad_records_are_refused(records, roles, word):
    with pytest.raises(ValueError) as info:
        choose_canary(records, [], roles)
    assert word in str(info.value)
