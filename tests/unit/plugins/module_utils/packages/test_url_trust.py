"""Every URL and key variable classified by what it fetches (plugins/module_utils/packages/url_trust.py,
issue 37): the case table data/url_trust_cases.yml, and a walk over every argument spec that fails
for a URL-ish or key-ish variable the table does not classify."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import url_trust
from value_cases import check_case, spec_options

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "data", "url_trust_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case):
    found = url_trust.problems(case["role"], case["inputs"], case.get("insecure_hosts") or [])
    check_case(case, found)


def test_every_url_or_key_variable_of_every_argument_spec_is_classified():
    # a variable added tomorrow with a URL-ish or key-ish name fails here until the table says what
    # it fetches and what pins it
    missing = []
    for role, entry, name, spec in spec_options():
        if name.startswith("__"):
            continue
        default = spec.get("default")
        looks = url_trust.URLISH.fullmatch(name) or (isinstance(default, str) and "://" in default)
        sub = [k for k in (spec.get("options") or {}) if url_trust.URLISH.fullmatch(k)]
        if (looks or sub) and url_trust.classify(name) is None:
            missing.append("%s (%s, entry point %s)" % (name, role, entry))
    assert not missing, "not classified by url_trust.VARIABLES: %s" % ", ".join(missing)


def test_every_row_names_a_declared_variable_and_a_known_kind():
    declared = set(name for _r, _e, name, _s in spec_options())
    assert set(url_trust.VARIABLES) - declared == set()
    for name, row in url_trust.VARIABLES.items():
        assert row["kind"] in url_trust.KINDS, name
        for pin in row.get("pins") or []:
            assert pin in declared, (name, pin)
        if row.get("opt_in"):
            assert url_trust.VARIABLES[row["opt_in"]]["kind"] == "opt_in", name


@pytest.mark.parametrize("value,problem", [
    (None, None), ([], None), (["mirror.example", "10.0.0.1:8099"], None),
    ("mirror.example", "must be a list"), (["mirror.example/x"], "is not a host[:port]"),
])
def test_the_opt_in(value, problem):
    hosts, error = url_trust.insecure_hosts_problem(value)
    if problem is None:
        assert error is None and hosts == (value or [])
    else:
        assert problem in error and hosts == []


def test_a_problem_a_role_named_first_is_not_said_twice():
    found = ["nvidia_driver_debian_mirror: ftp:// cannot be used", "gpuops_mirror_url has no scheme"]
    already = ['nvidia_driver_debian_mirror must be an http(s):// or file:// URL (or ""), got "ftp://x"']
    assert url_trust.not_yet_named(found, already) == ["gpuops_mirror_url has no scheme"]
