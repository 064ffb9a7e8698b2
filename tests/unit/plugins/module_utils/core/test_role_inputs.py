"""Typed role inputs (module_utils/role_inputs.py): the case table, and every variable of every role.

The sweep reads each role's meta/argument_specs.yml and feeds every bool, int, list and dict
variable what `-e VAR=value` and a careless inventory give: the strings "false"/"true"/"8",
a string where a list is expected, a list where a mapping is expected. A role added later is
covered without editing this file.
"""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import (
    InputError,
    convert_inputs,
    convert_value,
)

HERE = os.path.dirname(os.path.dirname(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
ROLES = os.path.join(REPO, "roles")

with open(os.path.join(HERE, "data", "role_inputs_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


@pytest.mark.parametrize("case", CASES, ids=["%s:%r" % (c["spec"].get("type"), c["value"]) for c in CASES])
def test_convert_value_table(case):
    if "error" in case:
        with pytest.raises(InputError) as info:
            convert_value("v", case["spec"], case["value"])
        assert case["error"] in str(info.value)
    else:
        result = convert_value("v", case["spec"], case["value"])
        assert result == case["expected"]
        assert type(result) is type(case["expected"])  # pylint: disable=unidiomatic-typecheck


def _role_options():
    found = []
    for role in sorted(os.listdir(ROLES)):
        path = os.path.join(ROLES, role, "meta", "argument_specs.yml")
        if role == "common" or not os.path.isfile(path):
            continue
        with open(path) as fh:
            options = yaml.safe_load(fh)["argument_specs"]["main"]["options"]
        for name, spec in sorted(options.items()):
            found.append((role, name, spec))
    return found


OPTIONS = _role_options()


def _of_type(kind):
    return [pytest.param(r, n, s, id=n) for r, n, s in OPTIONS if s.get("type") == kind]


def _convert_one(role, name, spec, value):
    return convert_inputs({name: spec}, {name: value}, role + "_")[name[len(role) + 1:]]


def test_every_role_is_swept():
    roles = set(r for r, _n, _s in OPTIONS)
    assert {"os_tuning", "nvidia_driver"} <= roles
    assert len(OPTIONS) > 40


@pytest.mark.parametrize("role,name,spec", _of_type("bool"))
def test_bool_variables_from_extra_vars_strings(role, name, spec):
    assert _convert_one(role, name, spec, "false") is False
    assert _convert_one(role, name, spec, "False") is False
    assert _convert_one(role, name, spec, "no") is False
    assert _convert_one(role, name, spec, "true") is True
    assert _convert_one(role, name, spec, "yes") is True
    with pytest.raises(InputError) as info:
        _convert_one(role, name, spec, "maybe")
    assert name in str(info.value)


@pytest.mark.parametrize("role,name,spec", _of_type("int"))
def test_int_variables_from_extra_vars_strings(role, name, spec):
    sample = spec.get("default")
    sample = 120 if sample is None else sample
    assert _convert_one(role, name, spec, str(sample)) == sample
    assert isinstance(_convert_one(role, name, spec, str(sample)), int)
    with pytest.raises(InputError) as info:
        _convert_one(role, name, spec, "soon")
    assert name in str(info.value)
    with pytest.raises(InputError):
        _convert_one(role, name, spec, True)


@pytest.mark.parametrize("role,name,spec", _of_type("list"))
def test_list_variables_refuse_a_string(role, name, spec):
    for value in ("pcie_aspm=off", "nvidia", "a,b"):
        with pytest.raises(InputError) as info:
            _convert_one(role, name, spec, value)
        assert "%s must be a list" % name in str(info.value)
    with pytest.raises(InputError) as info:
        _convert_one(role, name, spec, {"not": "a list"})
    assert name in str(info.value)
    default = spec.get("default") or []
    assert _convert_one(role, name, spec, default) == default


@pytest.mark.parametrize("role,name,spec", _of_type("dict"))
def test_dict_variables_refuse_other_shapes(role, name, spec):
    for value in ("key=value", ["a"], 3):
        with pytest.raises(InputError) as info:
            _convert_one(role, name, spec, value)
        assert "%s must be a mapping" % name in str(info.value)


def test_defaults_convert_to_themselves():
    for role, name, spec in OPTIONS:
        if "default" in spec:
            assert _convert_one(role, name, spec, spec["default"]) == spec["default"], name


def test_every_problem_is_reported_at_once():
    options = {"r_a": {"type": "bool"}, "r_b": {"type": "list", "elements": "str"}, "r_c": {"type": "int"}}
    with pytest.raises(InputError) as info:
        convert_inputs(options, {"r_a": "perhaps", "r_b": "x", "r_c": "y"}, "r_")
    assert len(info.value.problems) == 3


def test_missing_variables_take_the_default_and_required_ones_fail():
    options = {"r_a": {"type": "bool", "default": True}, "r_b": {"type": "str", "required": True}}
    with pytest.raises(InputError) as info:
        convert_inputs(options, {}, "r_")
    assert "r_b is required" in str(info.value)
    assert convert_inputs(options, {"r_b": "x"}, "r_") == {"a": True, "b": "x"}
