"""At least 400 careless values across every role's variables (issue 19), in the unit stage.

Each value - newline, a directive after a newline, carriage return, shell metacharacters,
command substitution, path traversal, empty, huge, unicode, wrong types - goes through what
every role's preflight does first: the typed-input conversion of its argument spec, then the
role's own checks (the Python its preflight reaches). Expected: REFUSED, naming the variable,
unless data/bad_input.yml says why the value is harmless where it goes (accepted as intended)
or names the finding another branch fixes (expected_fixed_by_other_branch). Nothing else may
be accepted, so nothing slips into a file, a unit, a user or a command line unnoticed.

The per-role table (refused / accepted as intended / other branch) is printed by
``test_summary`` (``pytest -s``) and written to $GPUOPS_BAD_INPUT_REPORT when that is set.
"""
import collections
import fnmatch
import json
import os

import pytest
import yaml

import bad_input_cases as cases_mod

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "bad_input.yml")) as _fh:
    EXPECT = yaml.safe_load(_fh)
SECTIONS = ("accepted_or_refused", "accepted_as_intended", "expected_fixed_by_other_branch")
CASES = list(cases_mod.cases())


def expectation(variable, kind):
    case = "%s.%s" % (variable, kind)
    for section in SECTIONS:
        for pattern, why in (EXPECT.get(section) or {}).items():
            if fnmatch.fnmatchcase(case, pattern):
                return section, why
    return "refused", None


def test_enough_values_across_every_role():
    assert len(CASES) >= 400
    assert set(r for r, _v, _k, _x in CASES) == set(cases_mod.roles()) == set(cases_mod.VALIDATORS)
    kinds = set(k for _r, _v, k, _x in CASES)
    for kind in ("newline", "shell", "substitution", "traversal", "empty", "huge", "unicode", "list", "dict",
                 "int_word", "bool_word", "list_string", "dict_string"):
        assert kind in kinds


@pytest.mark.parametrize("role,variable,kind,value", CASES,
                         ids=["%s.%s" % (v, k) for _r, v, k, _x in CASES])
def test_careless_value(role, variable, kind, value):
    result, detail = cases_mod.outcome(role, variable, value)
    expected, why = expectation(variable, kind)
    if expected == "expected_fixed_by_other_branch":
        assert result in ("refused", "accepted", "crashed")
        return
    assert result != "crashed", "%s: %s" % (variable, detail)
    if expected == "accepted_or_refused":
        return
    if expected == "accepted_as_intended":
        assert result == "accepted", "%s is documented as accepted (%s) but: %s" % (variable, why, detail)
    else:
        assert result == "refused", ("%s = %r was accepted; refuse it in the role's checks, or say in "
                                     "data/bad_input.yml why it is harmless" % (variable, value))
        assert variable in detail or variable[len(role) + 1:] in detail


def test_every_pattern_of_the_table_is_used():
    used = set()
    for _role, variable, kind, _value in CASES:
        case = "%s.%s" % (variable, kind)
        for section in SECTIONS:
            hit = [p for p in EXPECT.get(section) or {} if fnmatch.fnmatchcase(case, p)]
            if hit:
                used.add(hit[0])
                break
    unused = [p for s in SECTIONS for p in EXPECT.get(s) or {} if p not in used]
    assert not unused, "patterns that match no case (stale): %s" % unused


def test_summary():
    table = collections.defaultdict(collections.Counter)
    slipping = collections.defaultdict(list)
    for role, variable, kind, value in CASES:
        result, _detail = cases_mod.outcome(role, variable, value)
        expected, why = expectation(variable, kind)
        if result == "refused":
            label = "refused"
        elif expected == "expected_fixed_by_other_branch":
            label = "expected_fixed_by_other_branch"
        else:
            label = "accepted_as_intended" if result == "accepted" else result
        table[role][label] += 1
        if label == "expected_fixed_by_other_branch":
            slipping[role].append("%s.%s: %s" % (variable, kind, why))
    lines = ["careless values per role (%d in all)" % len(CASES)]
    for role in sorted(table):
        lines.append("  %-26s %s" % (role, ", ".join("%s %d" % kv for kv in sorted(table[role].items()))))
    print("\n" + "\n".join(lines))
    report = os.environ.get("GPUOPS_BAD_INPUT_REPORT")
    if report:
        with open(report, "w") as handle:
            json.dump({"table": table, "expected_fixed_by_other_branch": slipping}, handle, indent=1, sort_keys=True)
    assert sum(sum(c.values()) for c in table.values()) == len(CASES)
