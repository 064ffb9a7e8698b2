"""Lists by their meaning and security posture (plugins/module_utils/core/value_posture.py, issue 37):
the case table data/value_posture_cases.yml, and a walk over every argument spec that fails for a
list, group, account, image, package, pip, credential or TLS variable neither table names."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import value_posture
from value_cases import check_case, spec_options

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
with open(os.path.join(HERE, "data", "value_posture_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)["cases"]
GROUPS = {"all": ["gpu-01", "cpu-01"], "ungrouped": ["cpu-01"], "gpu_nodes": ["gpu-01"], "k8s_nodes": []}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case):
    groups = case["groups"] if "groups" in case else GROUPS
    context = value_posture.context_of(groups, [], case.get("allow"))
    found = value_posture.problems(case["role"], case["inputs"], context)
    check_case(case, found)
    # a group that matches no host is accepted, but said in the run (never silently)
    notices = value_posture.notices(case["role"], case["inputs"], context)
    assert len(notices) == case.get("notice_count", len(case.get("notices", []))), notices
    for want in case.get("notices", []):
        assert any(want in n for n in notices), (want, notices)


def test_every_variable_of_these_classes_in_every_argument_spec_is_classified():
    # a list, group, account, image, package, pip, credential or TLS variable added tomorrow fails
    # here until VARIABLES checks it or NOT_THIS_CLASS says why not
    missing = []
    for role, entry, name, spec in spec_options():
        if name.startswith("__"):
            continue
        shaped = spec.get("type") == "list" or value_posture.SHAPES.fullmatch(name)
        if shaped and name not in value_posture.VARIABLES and name not in value_posture.NOT_THIS_CLASS:
            missing.append("%s (%s, entry point %s)" % (name, role, entry))
    assert not missing, "classified neither in value_posture.VARIABLES nor in NOT_THIS_CLASS: %s" % ", ".join(missing)


def test_every_row_names_a_declared_or_playbook_variable_and_a_known_kind():
    declared = dict((name, spec) for _r, _e, name, spec in spec_options())
    for name, (kind, params) in value_posture.VARIABLES.items():
        assert name in declared or name in value_posture.PLAYBOOK_VARIABLES, name
        assert kind in value_posture.CARELESS, (name, kind)
        for other in params.get("with", []) + params.get("image", []):
            assert other in declared, (name, other)
        if kind == "inventory_group" and name in declared:
            # the default name is the one whose absence is legitimate: kept in step with the spec
            assert params["default"] == declared[name].get("default"), name
    assert not set(value_posture.NOT_THIS_CLASS) & set(value_posture.VARIABLES)
    assert set(value_posture.NOT_THIS_CLASS) <= set(declared)
    for short, name in value_posture.OPT_INS.items():
        assert declared[name]["type"] == "bool" and declared[name]["default"] is False, name


def test_the_playbook_variables_are_the_playbooks():
    with open(os.path.join(ROOT, "playbooks", "rolling_driver_upgrade.yml")) as handle:
        text = handle.read()
    for name in value_posture.PLAYBOOK_VARIABLES:
        assert name in text, name


@pytest.mark.parametrize("value", ["root\n", "docker\n", "root\nUser=x"])
def test_a_newline_in_an_account_is_not_taken_for_a_safe_one(value):
    # the account is a full match of a name: 'root\n' is not 'root', and it is no account either;
    # the argument's shape is value_kinds' (i37-b) - here it must at least not pass as unprivileged
    # by accident of a table lookup: it is refused by the role's own account check on the host
    found = value_posture.problems("node_exporter", {"user": value}, value_posture.context_of())
    assert found == [] or "node_exporter_user" in found[0]


def test_an_opt_in_accepts_only_its_own_risk():
    context = value_posture.context_of(GROUPS, [], {"moving_image_tags": True})
    found = value_posture.problems("node_exporter", {"user": "root"}, context)
    assert found and "node_exporter_user" in found[0]
    found = value_posture.problems("volcano", {"smoke_image": "nvcr.io/nvidia/cuda:latest"}, context)
    assert found == []
