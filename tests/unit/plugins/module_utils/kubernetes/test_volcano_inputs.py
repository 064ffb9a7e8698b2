"""kubernetes/volcano_inputs.py through volcano.input_errors (what the role's preflight calls):
the values that reach files, Helm, the kubeconfig and the smoke job (issue 19), from
data/volcano_inputs_cases.yml - newline cases included."""
import copy
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes import volcano, volcano_inputs

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", ".."))
with open(os.path.join(HERE, "..", "data", "volcano_inputs_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


def _defaults():
    with open(os.path.join(REPO, "roles", "volcano", "defaults", "main.yml")) as handle:
        data = yaml.safe_load(handle)
    return dict((k[len("volcano_"):], v) for k, v in data.items())


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_input_errors(case):
    inputs = _defaults()
    inputs.update(copy.deepcopy(case["set"]))
    for key, count in (case.get("pad") or {}).items():
        inputs[key] += "a" * count
    found = volcano.input_errors(inputs)
    assert len(found) == case["count"], found
    for needle in case.get("problems", []):
        assert any(needle in problem for problem in found), (needle, found)


def test_every_message_names_its_variable():
    inputs = dict(_defaults(), kubeconfig="x\n", context="x\n", status_file="x\n", node_group="x\n",
                  node_names={"x\n": "y"}, helm_values={"x\n": 1}, smoke_command=["x\n"], smoke_workers=10 ** 6)
    found = volcano_inputs.access_errors(inputs)
    assert len(found) == 8, found
    assert all(problem.startswith("volcano_") for problem in found), found
