"""Paths, numbers and values that reach a file the kernel or a tool reads, by what they mean
(plugins/module_utils/core/value_kinds.py, issue 37): the case table data/value_kinds_cases.yml,
the careless values of every kind, the ports of one host, and a walk over every argument spec that
fails for a path, number, duration, port, limit, clock, sysctl or environment variable the table
does not classify (or list as not of these classes, saying why)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import file_values, input_checks, value_kinds
from value_cases import check_case
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import convert_inputs

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
with open(os.path.join(HERE, "data", "value_kinds_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)["cases"]


def _specs(role):
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
        return yaml.safe_load(handle)["argument_specs"]


def _inputs(role, values):
    """The inputs as role_inputs and host_plan hand them over: converted, defaults filled."""
    if role == "gpuops":
        return dict(values)
    entry = "gpu" if role == "common" else "main"
    prefix = "" if role == "common" else role + "_"
    return convert_inputs(_specs(role)[entry]["options"], dict(values), prefix)


OWN_FIRST = ("os_tuning", "dcgm_exporter", "python_stack")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case):
    context = {"groups": {}, "insecure_hosts": []}
    if "facts" in case:
        context["facts"] = case["facts"]
    inputs = _inputs(case["role"], case["values"])
    # the roles whose own checks of these values run before the kinds' (core/input_checks.py
    # REGISTRY) as the route runs them; the others by the kinds alone
    if case["role"] in OWN_FIRST:
        found = input_checks.problems(case["role"], inputs, "main", context)
    else:
        found = value_kinds.problems(case["role"], inputs, context)
    check_case(case, found)
    # what the checks could not check is said in the run (notices), never silently accepted
    notices = value_kinds.notices(case["role"], inputs, context)
    assert len(notices) == len(case.get("notices", [])), notices
    for want in case.get("notices", []):
        assert any(want in n for n in notices), (want, notices)


ROLES = sorted(r for r in os.listdir(os.path.join(ROOT, "roles"))
               if os.path.isfile(os.path.join(ROOT, "roles", r, "meta", "argument_specs.yml")))


def _options():
    """(role, entry point, name, spec) of every option of every argument spec."""
    for role in ROLES:
        for entry, body in _specs(role).items():
            for name, spec in ((body or {}).get("options") or {}).items():
                yield role, entry, name, spec or {}


def _of_these_classes(name, spec):
    default = spec.get("default")
    return (value_kinds.CLASS_NAME.fullmatch(name) or spec.get("type") in value_kinds.CLASS_TYPES
            or (isinstance(default, str) and default.startswith(("/", "~/"))))


def test_every_path_number_limit_sysctl_or_environment_variable_is_classified():
    # a variable added tomorrow whose name or type says path, number, duration, port, limit,
    # clock, sysctl or environment fails here until VARIABLES classifies it (or NOT_THIS_CLASS says why)
    missing = ["%s (%s, entry point %s)" % (name, role, entry) for role, entry, name, spec in _options()
               if _of_these_classes(name, spec) and name not in value_kinds.VARIABLES
               and name not in value_kinds.NOT_THIS_CLASS
               and not (name.startswith("__") and spec.get("type") != "path")]
    assert not missing, "not classified by value_kinds.VARIABLES: %s" % ", ".join(missing)


def test_every_row_names_a_declared_or_playbook_variable_and_a_known_kind():
    declared = set(name for _r, _e, name, _s in _options())
    for name, (kind, params) in value_kinds.VARIABLES.items():
        assert name in declared or name in value_kinds.PLAYBOOK_VARIABLES, name
        assert kind in value_kinds.KINDS, name
        assert isinstance(params, dict), name
        if kind == "int":
            assert "low" in params and "high" in params, name
    for name, why in value_kinds.NOT_THIS_CLASS.items():
        assert name in declared and why, name
    assert set(value_kinds.CARELESS) == set(value_kinds.KINDS)


def test_the_playbook_variables_are_read_by_the_playbooks():
    text = ""
    for name in os.listdir(os.path.join(ROOT, "playbooks")):
        with open(os.path.join(ROOT, "playbooks", name)) as handle:
            text += handle.read()
    for name in value_kinds.PLAYBOOK_VARIABLES:
        assert name in text, name


@pytest.mark.parametrize("kind", sorted(value_kinds.CARELESS))
def test_the_careless_values_of_each_kind_come_out_as_listed(kind):
    # one variable of the kind, each careless value alone (the bad-input suite gives them to all)
    name = sorted(n for n, (k, _p) in value_kinds.VARIABLES.items() if k == kind)[0]
    for value, expected, reason in value_kinds.CARELESS[kind]:
        found = value_kinds.variable_problems(name, value, {}, {})
        assert (found != []) == (expected == "refused"), (name, value, reason, found)
        assert all(name in p for p in found), found


@pytest.mark.parametrize("inputs,expect", [
    ({}, []),
    ({"node_exporter": {"listen_address": "0.0.0.0:9100"},
      "dcgm_exporter": {"listen_address": ":9400", "hostengine_address": "localhost:5555"},
      "gpu_validate": {"port": 29511, "iperf3_port": 5201, "ib_port": 18515}}, []),
    ({"node_exporter": {"listen_address": "0.0.0.0:9400"}, "dcgm_exporter": {"listen_address": ":9400"}},
     ["dcgm_exporter_listen_address: port 9400 is also node_exporter_listen_address's on this host"]),
    ({"dcgm_exporter": {"listen_address": ":9400"}, "gpu_validate": {"port": 9400, "iperf3_port": 9400}},
     ["gpu_validate_port: port 9400 is also dcgm_exporter_listen_address's",
      "gpu_validate_iperf3_port: port 9400 is also dcgm_exporter_listen_address's"]),
])
def test_two_services_of_one_host_on_one_port(inputs, expect):
    found = value_kinds.host_problems(inputs)
    assert len(found) == len(expect), found
    for part, problem in zip(expect, found):
        assert part in problem


def test_every_check_is_a_full_match_a_trailing_newline_never_passes():
    for name, value in (("gpuops_serial", "2\n"), ("gpuops_max_fail_percentage", "10\n"),
                        ("prometheus_scrape_interval", "30s\n"), ("node_exporter_status_file", "/etc/x.json\n"),
                        ("prometheus_rules_files", ["x.yml\n"]), ("gpuops_report_path", "/tmp/r.json\n")):
        assert value_kinds.variable_problems(name, value, {}, {}), name
    assert file_values.sysctl_value_problem("l", "vm.swappiness", "1\n") is None  # the kernel strips it ...
    assert input_checks.problems("os_tuning", _inputs("os_tuning", {"os_tuning_sysctl_group": {"vm.swappiness": "1\n"}}),
                                 "main", {})  # ... but the role's own check refuses the newline before it is written
    assert value_kinds.env_problems("e", {"A": "x\n"})


def test_the_doc_names_every_classified_variable():
    with open(os.path.join(ROOT, "docs", "input-checks.md")) as handle:
        text = handle.read()
    missing = [name for name in value_kinds.VARIABLES if "`%s" % name not in text]
    assert not missing, "docs/input-checks.md does not name %s" % ", ".join(missing)


@pytest.mark.parametrize("value", [{"graphics_mhz": "1410\n"}, {"graphics_mhz": "1410\nx"}, {"memory_mhz": "1215 "},
                                   {"graphics_mhz": True}, {"graphics_mhz": -1}])
def test_a_clock_that_is_no_whole_number_is_refused_unconverted(value):
    # the playbooks' path (no argument spec): a clock with a newline or a blank is no number of MHz
    from ansible_collections.gpuops.dlserver.plugins.module_utils.core.value_numbers import clocks_notices, clocks_problems
    facts = {"gpus": [{"index": 0, "pci_bus_id": "0000:01:00.0", "name": "GPU", "max_clocks": {}}]}
    found = clocks_problems("nvidia_driver_application_clocks", value, {"facts": facts})
    assert len(found) == 1 and "must be a whole number of MHz" in found[0], found
    assert clocks_notices("nvidia_driver_application_clocks", value, {"facts": facts}) == []
