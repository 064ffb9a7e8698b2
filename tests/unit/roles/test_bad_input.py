"""At least 400 careless values across every role's variables (issue 19), in the unit stage.

Each value - newline, a directive after a newline, carriage return, shell metacharacters,
command substitution, path traversal, empty, huge, unicode, wrong types - goes through what
every role's preflight does first: the typed-input conversion of its argument spec, then the
role's own checks (the Python its preflight reaches). Expected: REFUSED, naming the variable,
unless data/bad_input.yml says why the value is harmless where it goes (accepted as intended)
or names the finding another branch fixes (expected_fixed_by_other_branch). Nothing else may
be accepted, so nothing slips into a file, a unit, a user or a command line unnoticed.

Issue 37 adds the values whose form is fine but whose meaning is wrong (a relative path used as an
absolute one, / as an environment prefix, a 0s scrape interval, a negative limit, a sysctl word the
kernel does not read ...): for every variable a module of bad_input_cases.SEMANTIC classifies, every
careless value of its kind, expected as the module's CARELESS table says (refused, or accepted with
its reason), through the role's checks and what the controller runs on every host.

The per-role table (refused / accepted as intended / other branch) is printed by
``test_summary`` (``pytest -s``) and written to $GPUOPS_BAD_INPUT_REPORT when that is set; the
semantic values' counts (tried / refused / accepted as intended) per role and per class by
``test_semantic_summary``.
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
SEMANTIC_SECTIONS = ("semantic_refused_by_the_role", "expected_fixed_by_other_branch")
CASES = list(cases_mod.cases())
SEMANTIC = list(cases_mod.semantic_cases())


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
    for _role, variable, kind, _value, _expected, _reason, _class in SEMANTIC:
        case = "%s.%s" % (variable, kind)
        for section in SEMANTIC_SECTIONS:
            hit = [p for p in EXPECT.get(section) or {} if fnmatch.fnmatchcase(case, p)]
            if hit:
                used.add(hit[0])
                break
    unused = [p for s in SECTIONS + SEMANTIC_SECTIONS for p in EXPECT.get(s) or {} if p not in used]
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


def semantic_expectation(variable, kind, expected, reason):
    """(expected, reason) of a semantic case: the module's CARELESS, unless data/bad_input.yml says
    a role refuses it by a stricter rule of its own, or another branch fixes it."""
    case = "%s.%s" % (variable, kind)
    for section in SEMANTIC_SECTIONS:
        for pattern, why in (EXPECT.get(section) or {}).items():
            if fnmatch.fnmatchcase(case, pattern):
                return ("refused" if section == "semantic_refused_by_the_role" else section), why
    return expected, reason


def test_semantic_values_cover_every_role_playbook_and_class():
    assert len(SEMANTIC) >= 300
    roles = set(r for r, _v, _k, _x, _e, _w, _c in SEMANTIC)
    assert roles == set(cases_mod.roles()) | {"common", "gpuops"}, roles
    for module in cases_mod.SEMANTIC.values():
        assert set(module.CARELESS) == set(k for k, _p in module.VARIABLES.values()) | set(module.CARELESS)
        for kind, values in module.CARELESS.items():
            if not values and hasattr(module, "careless_values"):
                continue  # built per variable (value_posture's kind "scrape"): checked below
            assert any(e == "refused" for _v, e, _r in values), kind
            assert all(e in ("refused", "accepted") and r for _v, e, r in values), kind
        if hasattr(module, "careless_values"):
            for variable in module.VARIABLES:
                values = module.careless_values(variable)
                assert all(e in ("refused", "accepted") and r for _v, e, r in values), variable


@pytest.mark.parametrize("role,variable,kind,value,expected,reason,klass", SEMANTIC,
                         ids=["%s.%s" % (v, k) for _r, v, k, _x, _e, _w, _c in SEMANTIC])
def test_semantic_careless_value(role, variable, kind, value, expected, reason, klass):
    result, detail = cases_mod.semantic_outcome(role, variable, value, kind)
    expected, why = semantic_expectation(variable, kind, expected, reason)
    if expected == "expected_fixed_by_other_branch":
        assert result in ("refused", "accepted", "crashed")
        return
    assert result != "crashed", "%s: %s" % (variable, detail)
    if expected == "accepted":
        assert result == "accepted", "%s = %r is listed as accepted (%s) but: %s" % (variable, value, why, detail)
    else:
        assert result == "refused", "%s = %r was accepted; it is %s (%s)" % (variable, value, why, klass)
        assert variable in detail or variable[len(role) + 1:] in detail


def test_semantic_summary():
    by_role = collections.defaultdict(collections.Counter)
    by_class = collections.defaultdict(collections.Counter)
    accepted = collections.defaultdict(list)
    for role, variable, kind, value, expected, reason, klass in SEMANTIC:
        result, _detail = cases_mod.semantic_outcome(role, variable, value, kind)
        expected, why = semantic_expectation(variable, kind, expected, reason)
        label = "refused" if result == "refused" else (
            "accepted_as_intended" if result == "accepted" and expected == "accepted" else
            "other_branch" if expected == "expected_fixed_by_other_branch" else "slipped")
        for table, key in ((by_role, role), (by_class, klass)):
            table[key]["tried"] += 1
            table[key][label] += 1
        if label == "accepted_as_intended":
            accepted[role].append("%s = %r: %s" % (variable, value, why))
    lines = ["semantic careless values (issue 37): %d tried" % len(SEMANTIC)]
    for title, table in (("per role", by_role), ("per class", by_class)):
        lines.append(" " + title)
        for key in sorted(table):
            counts = table[key]
            lines.append("  %-52s tried %d, refused %d, accepted as intended %d%s" % (
                key, counts["tried"], counts["refused"], counts["accepted_as_intended"],
                "".join(", %s %d" % (k, counts[k]) for k in ("other_branch", "slipped") if counts[k])))
    print("\n" + "\n".join(lines))
    report = os.environ.get("GPUOPS_BAD_INPUT_REPORT")
    if report:
        with open(report + ".semantic.json", "w") as handle:
            json.dump({"per_role": by_role, "per_class": by_class, "accepted_as_intended": accepted}, handle,
                      indent=1, sort_keys=True)
    assert sum(c["tried"] for c in by_role.values()) == len(SEMANTIC)
    assert not any(c["slipped"] for c in by_role.values()), dict(by_role)
