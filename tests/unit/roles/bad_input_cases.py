"""Careless values for every variable of every role, and the role's own checks to run them through.

Used by test_bad_input.py. ``cases()`` yields ``(role, variable, kind, value)`` from each role's
meta/argument_specs.yml (so a new variable is covered without editing anything);
``outcome(role, variable, value)`` converts the variable with the role's argument spec
(core/role_inputs.py, what the preflight of every role does first) and runs the role's
preflight checks - the same Python functions its preflight reaches - and returns
``('refused', message)``, ``('accepted', None)`` or ``('crashed', error)``.

``semantic_cases()`` (issue 37) yields the careless values whose form is fine but whose meaning is
wrong: for every variable each module of ``SEMANTIC`` classifies (``VARIABLES``: name -> (kind,
params)), every value its ``CARELESS`` table lists for that kind, with the expected outcome and
its reason; ``semantic_outcome()`` runs them through the role's checks and what the controller
runs on every host before any change (role_inputs.value_problems; the playbooks' variables
through the modules' ``problems('gpuops', ...)``, as host_plan does).
"""
import copy
import os

import yaml

from ansible_collections.gpuops.dlserver.plugins.action.__private.role_inputs import value_problems
from ansible_collections.gpuops.dlserver.plugins.module_utils.core import value_kinds, value_posture
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import InputError, convert_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import toolkit as cuda_toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes import volcano
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm, ipmi_exporter, node_exporter, prometheus_config
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import mirror_inputs, nvidia_repo
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import python_stack
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import inputs as storage_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import inputs as validate_inputs

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ROLES_DIR = os.path.join(REPO, "roles")

HUGE = "a" * 5000
SCALAR = [
    ("newline", lambda good: good + "\n"),
    ("newline_directive", lambda good: good + "\nExecStartPre=/bin/sh -c id"),
    ("carriage_return", lambda good: good + "\r"),
    ("shell", lambda good: "x; rm -rf /"),
    ("substitution", lambda good: "$(touch /tmp/pwned)"),
    ("traversal", lambda good: "../../etc/passwd"),
    ("empty", lambda good: ""),
    ("huge", lambda good: HUGE),
    ("unicode", lambda good: "n\u00f6de-\u00ebxp\u2028"),
    ("list", lambda good: [good]),
    ("dict", lambda good: {"a": good}),
]
BOOL = [("word", "maybe"), ("two", 2), ("list", []), ("newline", "yes\n"), ("empty", "")]
INT = [("word", "abc"), ("negative", -1), ("huge", 10 ** 12), ("bool", True), ("empty", ""), ("list", [1]),
       ("newline", "5\n")]
LIST = [("string", "x; rm -rf /"), ("none_item", [None]), ("newline_item", ["a\nb"]), ("nested", [["x"]]),
        ("dict", {"a": 1}), ("shell_item", ["x; rm -rf /"]), ("traversal_item", ["../../etc/passwd"]),
        ("empty_item", [""])]
DICT = [("string", "k=v"), ("list", ["k"]), ("newline_key", {"k\n": "v"}), ("newline_value", {"k": "v\nx"}),
        ("shell_key", {"x; rm -rf /": "y"}), ("nested_newline", {"k": {"deep": ["x\ny"]}})]


_SPECS = {}


def load_spec(role):
    if role not in _SPECS:
        _SPECS[role] = _read_spec(role)
    return _SPECS[role]


def _read_spec(role):
    with open(os.path.join(ROLES_DIR, role, "meta", "argument_specs.yml")) as handle:
        data = yaml.safe_load(handle) or {}
    return ((data.get("argument_specs") or {}).get("main") or {}).get("options") or {}


def roles():
    return sorted(r for r in os.listdir(ROLES_DIR) if load_spec(r))


def values_for(spec):
    """``[(kind, value)]`` for a variable; kinds of typed variables start with their type (bool_newline)."""
    kind = spec.get("type", "str")
    table = {"bool": BOOL, "int": INT, "list": LIST, "dict": DICT}.get(kind)
    if table:
        return [("%s_%s" % (kind, name), value) for name, value in table]
    default = spec.get("default")
    good = default if isinstance(default, str) and default else "x"
    return [(name, make(good)) for name, make in SCALAR]


def cases():
    for role in roles():
        for variable, spec in sorted(load_spec(role).items()):
            for kind, value in values_for(spec or {}):
                yield role, variable, kind, value


# What makes a variable's checks run: the variables that select the code path that reads it.
CONTEXT = {
    "dcgm_exporter": {
        ("dcgm_exporter_image_registry", "dcgm_exporter_image_name", "dcgm_exporter_image_tag",
         "dcgm_exporter_container_engine", "dcgm_exporter_container_gpu_access"): {"dcgm_exporter_mode": "container"},
    },
    "node_exporter": {
        ("node_exporter_tls_cert_file",): {"node_exporter_tls_key_file": "/etc/node_exporter/tls.key"},
        ("node_exporter_tls_key_file",): {"node_exporter_tls_cert_file": "/etc/node_exporter/tls.crt"},
        ("node_exporter_basic_auth_users",): {"node_exporter_basic_auth_allow_http": True},
    },
    "python_stack": {
        ("python_stack_uv_sha256", "python_stack_uv_version"): {"python_stack_installer": "uv"},
    },
    "volcano": {
        ("volcano_manifest_src",): {"volcano_install_method": "manifest"},
        ("volcano_manifest_checksum",): {"volcano_install_method": "manifest",
                                         "volcano_manifest_src": "https://example.org/volcano-development.yaml"},
    },
}

_DCGM_PLAN = {"roles": {"dcgm_exporter": {"run": True, "reason": "GPUs"}},
              "dcgm": {"profiling": {"value": True, "reason": "data-centre GPUs"}}, "mig": {}}
_DCGM_PLATFORM = {"repo_name": "debian12", "repo_arch": "x86_64", "config_dir": "/etc/dcgm-exporter"}
_NE_PLATFORM = {"name": "Debian 12", "package": "prometheus-node-exporter",
                "package_binary": "/usr/bin/prometheus-node-exporter", "package_service": "prometheus-node-exporter"}


def _dcgm(inputs):
    # the route: the registered checks (core/input_checks.py), then the decision (the counters and
    # devices against the plan) on what they accept - decide() does not check the values again
    return value_problems("dcgm_exporter", inputs, [], "main", dict(CHECK_CONTEXT)) or \
        [e["message"] for e in dcgm.decide(inputs, copy.deepcopy(_DCGM_PLAN), {}, dict(_DCGM_PLATFORM))["errors"]]


def _node_exporter(inputs):
    # the route: the registered input check, then the decision (what needs the host) on good input
    return node_exporter.input_problems(inputs) or \
        node_exporter.decide(inputs, dict(_NE_PLATFORM), "gpu-01", "x86_64", {})["errors"]


# The Python checks each role's preflight runs (through its module or filter).
VALIDATORS = {
    "cuda_toolkit": cuda_toolkit.input_problems,
    "dcgm_exporter": _dcgm,
    # the validate_inputs filter of its preflight
    "gpu_validate": validate_inputs.input_problems,
    # the ipmi_exporter_plan filter of its preflight (and value_kinds.ROLE_CHECKS on every host)
    "ipmi_exporter": ipmi_exporter.problems,
    "node_exporter": _node_exporter,
    "nvidia_container_toolkit": container_toolkit.input_problems,
    "nvidia_driver": nvidia_repo.input_problems,
    "os_tuning": os_tuning_inputs.problems,
    "prometheus": prometheus_config.check_inputs,
    # the registered check (python_stack_host's plan only fills in the entries' defaults)
    "python_stack": python_stack.input_problems,
    # role_inputs' VALUE_CHECKS (the role's first task and host_plan)
    "storage": storage_inputs.input_problems,
    "volcano": volcano.input_errors,
}


def context(role, variable):
    for variables, extra in CONTEXT.get(role, {}).items():
        if variable in variables:
            return dict(extra)
    return {}


def verdict(role, variable, errors):
    """``(result, detail)`` of the problems the checks found for ``variable``: refused with the first
    message naming it (volcano's messages use the short name), crashed when refused by messages that
    do not name it, else accepted."""
    short = variable[len(role) + 1:]
    named = [e for e in errors if variable in e or (role == "volcano" and short in e)]
    if named:
        return "refused", named[0]
    if errors:
        return "crashed", "refused, but no message names %s: %s" % (variable, errors)
    return "accepted", None


def outcome(role, variable, value):
    """``(result, detail)``: refused (a message naming the variable), accepted, or crashed."""
    prefix = role + "_"
    values = context(role, variable)
    values[variable] = copy.deepcopy(value)
    try:
        inputs = convert_inputs(load_spec(role), values, prefix)
    except InputError as exc:
        named = [p for p in exc.problems if variable in p]
        return ("refused", named[0]) if named else ("crashed", "InputError not naming it: %s" % exc.problems)
    try:
        # the role's own checks, then what the controller runs on every host before any change
        errors = list(VALIDATORS[role](inputs)) + value_problems(role, inputs, [], "main", dict(CHECK_CONTEXT))
    except Exception as exc:  # pylint: disable=broad-except
        return "crashed", "%s: %s" % (type(exc).__name__, exc)
    return verdict(role, variable, errors)


# The modules of issue 37's semantic classes: VARIABLES, CARELESS, CLASS_OF_KIND (optional) and
# PLAYBOOK_VARIABLES (optional). A module added here is covered for every variable it classifies.
SEMANTIC = {
    "value_kinds": value_kinds,
    "value_posture": value_posture,
    # playbooks/mirror.yml's variables (checked by mirror_index's validate step, its first task)
    "mirror_inputs": mirror_inputs,
}
# What the controller's checks read besides the inputs (role_inputs and host_plan build it).
CHECK_CONTEXT = {"groups": {"all": ["gpu-01"], "gpu_nodes": ["gpu-01"]}, "insecure_hosts": []}


def _common_entry(variable):
    """The options of the entry point of common that declares ``variable``, and its name (or None)."""
    with open(os.path.join(ROLES_DIR, "common", "meta", "argument_specs.yml")) as handle:
        specs = (yaml.safe_load(handle) or {}).get("argument_specs") or {}
    for entry, body in sorted(specs.items()):
        if variable in ((body or {}).get("options") or {}):
            return body["options"], entry
    return None, None


def owner(variable, module):
    """The role whose main entry point declares ``variable``; common for common's entry points;
    gpuops for the playbooks' variables."""
    for role in roles():
        if variable in load_spec(role):
            return role
    if _common_entry(variable)[0] is not None:
        return "common"
    if variable in getattr(module, "PLAYBOOK_VARIABLES", ()):
        return "gpuops"
    raise AssertionError("%s: no role, common entry point or playbook declares it" % variable)


def semantic_cases():
    """``(role, variable, case kind, value, expected, reason, class)`` for every classified variable."""
    for name, module in sorted(SEMANTIC.items()):
        classes = getattr(module, "CLASS_OF_KIND", {})
        for variable, (kind, params) in sorted(module.VARIABLES.items()):
            role = owner(variable, module)
            careless = module.careless_values(variable) if hasattr(module, "careless_values") else module.CARELESS[kind]
            for index, (value, expected, reason) in enumerate(careless):
                if params.get("key"):
                    value = {params["key"]: value}  # one key of a dict (gpuops_rolling_drain_options)
                elif params.get("list"):
                    value = [value]  # one entry of a list (prometheus_rules_files)
                yield (role, variable, "%s_%s_%d" % (name, kind, index), value, expected, reason,
                       classes.get(kind, name))


def semantic_outcome(role, variable, value, kind=""):
    """``(result, detail)`` of a semantic careless value: the role's own checks, then what the
    controller checks on every host (role_inputs.value_problems, or host_plan's playbook check).
    value_posture's values are tried with the roles' defaults around them (CONTEXT's companions,
    such as node_exporter_basic_auth_allow_http, are the opt-ins its values test)."""
    values = {} if kind.startswith("value_posture_") else context(role, variable)
    values[variable] = copy.deepcopy(value)
    try:
        if role == "gpuops":
            inputs, entry = values, None
        elif role == "common":
            options, entry = _common_entry(variable)
            inputs = convert_inputs(options, values, "")
        else:
            inputs, entry = convert_inputs(load_spec(role), values, role + "_"), "main"
    except InputError as exc:
        named = [p for p in exc.problems if variable in p]
        return ("refused", named[0]) if named else ("crashed", "InputError not naming it: %s" % exc.problems)
    try:
        errors = list(VALIDATORS[role](inputs)) if role in VALIDATORS else []
        if role == "gpuops":
            for module in SEMANTIC.values():
                errors.extend(module.problems("gpuops", inputs, dict(CHECK_CONTEXT)))
        else:
            errors.extend(value_problems(role, inputs, [], entry, dict(CHECK_CONTEXT)))
    except Exception as exc:  # pylint: disable=broad-except
        return "crashed", "%s: %s" % (type(exc).__name__, exc)
    return verdict(role, variable, errors)
