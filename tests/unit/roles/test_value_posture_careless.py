"""The careless values of value_posture.CARELESS (lists by their meaning, security posture; issue 37)
for every variable of value_posture.VARIABLES, through what the actions run: the variable converted
by its role's argument spec with every other variable at its default, then
role_inputs.value_problems (the playbook's variables through value_posture.problems, as host_plan
runs them). Each value is refused naming the variable, or accepted, as its row says; the count of
values tried, refused and accepted (each with its reason) is printed (pytest -s)."""
import collections
import copy
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.action.__private.role_inputs import value_problems
from ansible_collections.gpuops.dlserver.plugins.module_utils.core import value_posture
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import convert_inputs

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
GROUPS = {"all": ["gpu-01", "cpu-01"], "ungrouped": ["cpu-01"], "gpu_nodes": ["gpu-01"]}


def _owners():
    """variable -> (role, entry point, options of that entry point)."""
    owners = {}
    roles_dir = os.path.join(REPO, "roles")
    for role in sorted(os.listdir(roles_dir)):
        path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
        if not os.path.isfile(path):
            continue
        with open(path) as handle:
            specs = yaml.safe_load(handle)["argument_specs"]
        for entry, body in specs.items():
            options = (body or {}).get("options") or {}
            for name in options:
                owners[name] = (role, entry, options)
    return owners


OWNERS = _owners()
CASES = [(name, value, expected, why) for name in sorted(value_posture.VARIABLES)
         for value, expected, why in value_posture.careless_values(name)]


def outcome(name, value):
    context = value_posture.context_of(GROUPS, [])
    if name in value_posture.PLAYBOOK_VARIABLES:
        return value_posture.problems("playbook", {name: copy.deepcopy(value)}, context)
    role, entry, options = OWNERS[name]
    inputs = convert_inputs(options, {name: copy.deepcopy(value)}, "%s_" % role)
    return value_problems(role, inputs, [], entry, context)


@pytest.mark.parametrize("name,value,expected,why", CASES,
                         ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_careless_value(name, value, expected, why):
    found = outcome(name, value)
    named = [p for p in found if name in p]
    if expected == "refused":
        assert named, "%s=%r slipped (%s): %s" % (name, value, why, found)
    else:
        assert not found, "%s=%r should be accepted (%s): %s" % (name, value, why, found)


def test_every_variable_but_the_opt_ins_has_a_refused_value():
    bare = [name for name, (kind, _p) in value_posture.VARIABLES.items()
            if kind != "opt_in" and name not in value_posture.REFUSED_THROUGH_OTHERS
            and not any(e == "refused" for _v, e, _w in value_posture.careless_values(name))]
    assert not bare, "no careless value refused for: %s" % bare


def test_the_defaults_pass():
    # every role at its defaults: nothing of these classes refused (the documented defaults are safe)
    context = value_posture.context_of(GROUPS, [])
    for role in sorted(set(r for r, _e, _o in OWNERS.values())):
        for entry in sorted(set(e for r, e, _o in OWNERS.values() if r == role)):
            options = next(o for r, e, o in OWNERS.values() if r == role and e == entry)
            if any(n.startswith("__") for n in options):
                continue
            inputs = convert_inputs(options, {}, "%s_" % role)
            assert value_posture.problems(role, inputs, context) == [], (role, entry)


def test_summary():
    counts = collections.Counter()
    lines = []
    for name, value, expected, why in CASES:
        counts["tried"] += 1
        counts[expected] += 1
        lines.append("  %-50s %-8s %r: %s" % (name, expected, value, why))
    print("\nvalue_posture careless values: %d tried, %d refused, %d accepted as intended\n%s"
          % (counts["tried"], counts["refused"], counts["accepted"], "\n".join(lines)))
    assert counts["tried"] == counts["refused"] + counts["accepted"] == len(CASES)
