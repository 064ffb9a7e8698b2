"""python_env/stack_inputs.py: python_stack's role-wide values that reach files, shell lines and
URLs (issue 19), from data/python_stack_inputs_cases.yml - newline cases included."""
import copy
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_inputs

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", ".."))
with open(os.path.join(HERE, "..", "data", "python_stack_inputs_cases.yml")) as _fh:
    TABLE = yaml.safe_load(_fh)


def _defaults():
    with open(os.path.join(REPO, "roles", "python_stack", "defaults", "main.yml")) as handle:
        data = yaml.safe_load(handle)
    return dict((k[len("python_stack_"):], v) for k, v in data.items())


@pytest.mark.parametrize("case", TABLE["checks"], ids=[c["id"] for c in TABLE["checks"]])
def test_checks(case):
    value = case["value"] + "a" * case["pad"] if "pad" in case else case["value"]
    error = getattr(stack_inputs, case["call"])(copy.deepcopy(value), "VAR")
    if case["error"] is None:
        assert error is None
    else:
        assert error and error.startswith("VAR") and case["error"] in error, error


@pytest.mark.parametrize("case", TABLE["options"], ids=[c["id"] for c in TABLE["options"]])
def test_option_input_problems(case):
    inputs = _defaults()
    inputs.update(copy.deepcopy(case["set"]))
    found = stack_inputs.option_input_problems(inputs)
    assert len(found) == case["count"], found
    for needle in case.get("problems", []):
        assert any(needle in problem for problem in found), (needle, found)
