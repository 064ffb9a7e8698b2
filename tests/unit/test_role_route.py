"""One route from a variable to a task (issue 38, docs/role-pattern.md): every role's preflight
starts with common's preflight (the role_inputs action: the argument spec's conversion, then the
registry of input checks), and every role, and every entry point of common that host_plan checks
on every host, has its entry in that registry (plugins/module_utils/core/input_checks.py).

A role added without a registry entry, or whose preflight does something before common's, fails
here; so does a registry entry for a role that no longer exists, and a module, action or filter
that calls a registered check again after the registry (a scan of plugins/)."""
import ast
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.action.host_plan import COMMON_CHECKED, public_roles
from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import convert_inputs

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLES = sorted(r for r in os.listdir(os.path.join(ROOT, "roles")) if r != "common"
               and os.path.isdir(os.path.join(ROOT, "roles", r)))


def _spec(role, entry="main"):
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
        return (yaml.safe_load(handle)["argument_specs"][entry] or {}).get("options") or {}


@pytest.mark.parametrize("role", ROLES)
def test_every_role_has_a_registry_entry(role):
    assert role in input_checks.REGISTRY, (
        "role %s has no entry in plugins/module_utils/core/input_checks.py REGISTRY: name the checks of its "
        "converted inputs there (input_checks.EVERY at least)" % role)


@pytest.mark.parametrize("role", ROLES)
def test_every_preflight_starts_with_commons(role):
    path = os.path.join(ROOT, "roles", role, "tasks", "preflight.yml")
    assert os.path.isfile(path), "role %s has no tasks/preflight.yml" % role
    with open(path) as handle:
        tasks = yaml.safe_load(handle) or []
    assert tasks, "%s is empty" % path
    first = tasks[0]
    call = first.get("ansible.builtin.import_role") or first.get("import_role") or {}
    assert call.get("name") == "gpuops.dlserver.common" and call.get("tasks_from") == "preflight.yml", (
        "%s: the first task must import common's preflight.yml (the typed inputs and the registry of input "
        "checks, before anything else); it is %r" % (path, first.get("name")))
    assert (first.get("vars") or {}).get("__common_role") == role, "%s: __common_role must be %s" % (path, role)


def test_every_entry_point_host_plan_checks_is_registered_and_nothing_else():
    wanted = set(public_roles()) | set(input_checks.key(r, e) for r, e in COMMON_CHECKED) | {"playbooks"}
    assert set(ROLES) <= wanted
    assert sorted(set(input_checks.REGISTRY) - wanted) == [], "registry entries for nothing host_plan checks"
    assert sorted(wanted - set(input_checks.REGISTRY)) == []


def test_an_unregistered_role_is_an_error_not_a_silent_pass():
    with pytest.raises(KeyError):
        input_checks.problems("no_such_role", {})


@pytest.mark.parametrize("role", ROLES)
def test_every_role_accepts_its_own_defaults(role):
    """The defaults the spec states pass every registered check (on each supported platform family)."""
    inputs = convert_inputs(_spec(role), {}, role + "_")
    for platform in ({"distribution": "Debian", "major": "12"}, {"distribution": "Ubuntu", "major": "24"}):
        context = {"groups": {}, "insecure_hosts": [], "allow": {}, "platform": platform}
        assert input_checks.problems(role, inputs, "main", context) == [], (role, platform)


def test_host_modules_and_filters_do_not_import_the_registry():
    """The registry runs in the two actions only (role_inputs, host_plan): a module or filter that ran
    it again would check the same inputs twice."""
    for folder in ("plugins/modules", "plugins/modules/__private", "plugins/filter", "plugins/filter/__private"):
        for name in os.listdir(os.path.join(ROOT, folder)):
            if name.endswith(".py"):
                with open(os.path.join(ROOT, folder, name)) as handle:
                    imports = [line for line in handle if line.startswith(("from ", "import "))]
                assert not any("input_checks" in line for line in imports), os.path.join(folder, name)


# ---------------------------------------------------------------------------------------------
# No second check after the registry (issue 38): a function the registry runs (every
# ``<module>.<function>`` that core/input_checks.py names) is called nowhere else under plugins/,
# except on this list, each with the reason it is not a check of what the registry accepted.
# A module, action or filter that checked the inputs again would refuse nothing the registry let
# through, and would be a second definition to keep in step; a public plugin a user may call
# without the role guards itself with the same functions' parts (validate/inputs.py
# ``module_problems``), not by calling the registered entry. docs/input-checks.md says so.
# ---------------------------------------------------------------------------------------------
PACKAGE = "ansible_collections.gpuops.dlserver."
REGISTRY_FILE = "plugins/module_utils/core/input_checks.py"
ALLOWED_CALLS = {}


def _imports(tree):
    """({alias: module}, {alias: (module, function)}) of the collection's imports of ``tree``."""
    modules, functions = {}, {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            base = node.module[len(PACKAGE):]
            for name in node.names:
                full = base + "." + name.name
                if os.path.isfile(os.path.join(ROOT, full.replace(".", os.sep) + ".py")):
                    modules[name.asname or name.name] = full
                else:
                    functions[name.asname or name.name] = (base, name.name)
    return modules, functions


def registered_functions():
    """Every (module, function) core/input_checks.py names: the checks its REGISTRY and HOST_CHECKS run."""
    with open(os.path.join(ROOT, REGISTRY_FILE)) as handle:
        tree = ast.parse(handle.read())
    modules = _imports(tree)[0]
    return set((modules[node.value.id], node.attr) for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
               and not node.attr.isupper() and node.attr != "not_yet_named")


def registered_calls(path, source, registered):
    """[(path, 'module.function', line)] of each use of a registered function in ``source``: as
    ``alias.function`` of an imported module, a function imported by name, or a call of the
    defining module's own function."""
    tree = ast.parse(source)
    modules, functions = _imports(tree)
    own = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            key = (modules.get(node.value.id), node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            key = functions.get(node.func.id) or (own, node.func.id)
        else:
            continue
        if key in registered:
            found.append((os.path.relpath(path, ROOT), "%s.%s" % key, node.lineno))
    return found


def test_no_registered_check_runs_again_outside_the_registry():
    registered = registered_functions()
    assert ("plugins.module_utils.engines.container_toolkit", "input_problems") in registered
    found = {}
    for folder, dummy, names in os.walk(os.path.join(ROOT, "plugins")):
        for name in sorted(n for n in names if n.endswith(".py")):
            path = os.path.join(folder, name)
            if os.path.relpath(path, ROOT) == REGISTRY_FILE:
                continue
            with open(path) as handle:
                for where, function, line in registered_calls(path, handle.read(), registered):
                    found.setdefault((where, function), []).append(line)
    unexpected = ["%s:%s calls %s" % (where, found[(where, function)], function)
                  for where, function in sorted(set(found) - set(ALLOWED_CALLS))]
    assert not unexpected, (
        "a registered input check runs again after the registry (core/input_checks.py) accepted the values: %s. "
        "Remove the second check (the registry runs before the role's first task), or, for a public plugin or a "
        "check that needs the host, add it to ALLOWED_CALLS with the reason" % "; ".join(unexpected))
    assert sorted(set(ALLOWED_CALLS) - set(found)) == [], "ALLOWED_CALLS lists calls that are gone: remove them"


@pytest.mark.parametrize("source", [
    "from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_toolkit as ctk\n"
    "def resolve(inp):\n    return ctk.input_problems(inp)\n",
    "from ansible_collections.gpuops.dlserver.plugins.module_utils.engines.container_toolkit import version_problems\n"
    "def resolve(inp):\n    return version_problems(inp)\n",
])
def test_the_scan_finds_a_second_check(source):
    path = os.path.join(ROOT, "plugins", "module_utils", "engines", "toolkit_host.py")
    found = registered_calls(path, source, registered_functions())
    assert len(found) == 1 and found[0][1].startswith("plugins.module_utils.engines.container_toolkit."), found


def test_the_scan_finds_a_defining_module_checking_again():
    source = "def input_problems(inputs, platform=None):\n    return []\n\n" \
             "def plan(inputs, platform):\n    problems = input_problems(inputs, platform)\n    return problems\n"
    path = os.path.join(ROOT, "plugins", "module_utils", "cuda", "toolkit.py")
    assert [f[1] for f in registered_calls(path, source, registered_functions())] == \
        ["plugins.module_utils.cuda.toolkit.input_problems"]
