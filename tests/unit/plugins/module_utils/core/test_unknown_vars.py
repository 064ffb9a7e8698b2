"""Variables with a role's prefix that the role does not declare (module_utils/core/unknown_vars.py),
from unknown_vars_cases.yml (issue 34 item 8)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.unknown_vars import (
    check_mode, role_of, unknown_variables, verdict)

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "unknown_vars_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_unknown_variables_table(case):
    found = unknown_variables(case["names"], case["declared"])
    assert dict((f["name"], f["closest"]) for f in found) == case["reported"]
    assert all(f["name"] in f["message"] and f["role"] in f["message"] for f in found)
    result = verdict(case["mode"], found)
    assert len(result["warnings"]) == case["warnings"], result
    assert len(result["problems"]) == case["problems"], result
    text = " ".join(result["warnings"] + result["problems"])
    for fragment in case.get("contains") or []:
        assert fragment in text, text


@pytest.mark.parametrize("value", ["loud", "warn\n", " warn", "", None, True, ["warn"]])
def test_a_mode_that_is_none_of_the_choices_is_refused_naming_the_variable(value):
    with pytest.raises(ValueError) as info:
        check_mode(value)
    assert "gpuops_unknown_variables must be one of warn, error, ignore" in str(info.value)
    with pytest.raises(ValueError):
        verdict(value, [])


def test_role_of_takes_the_longest_prefix():
    roles = ["nvidia", "nvidia_driver", "nvidia_container_toolkit"]
    assert role_of("nvidia_driver_branch", roles) == "nvidia_driver"
    assert role_of("nvidia_container_toolkit_engines", roles) == "nvidia_container_toolkit"
    assert role_of("nvidia_x", roles) == "nvidia"
    assert role_of("nvidia_driver_", roles) == "nvidia"
    assert role_of("gpuops_x", roles) is None


def test_declared_must_be_a_mapping():
    with pytest.raises(ValueError):
        unknown_variables(["nvidia_driver_x"], ["nvidia_driver"])
