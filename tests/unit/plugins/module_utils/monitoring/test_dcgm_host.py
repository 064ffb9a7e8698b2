"""The converged fast path of dcgm_exporter (module_utils/monitoring/dcgm_host.py), from
data/dcgm_host_cases.yml: a converged host and each drift that must reopen the role's steps."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm_host

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "dcgm_host_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_converged(case):
    result = dcgm_host.converged(case["config"], case["state"])
    assert result["current"] is case["current"], result["reasons"]
    assert len(result["reasons"]) == len(case["reasons"]), result["reasons"]
    for text, reason in zip(case["reasons"], result["reasons"]):
        assert text in reason


def test_running_units_by_mode():
    assert dcgm_host.running_units({"mode": "host"}) == ["nvidia-dcgm", "dcgm-exporter"]
    assert dcgm_host.running_units({"mode": "container"}, service="x") == ["x"]
