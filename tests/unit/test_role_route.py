"""One route from a variable to a task (issue 38, docs/role-pattern.md): every role's preflight
starts with common's preflight (the role_inputs action: the argument spec's conversion, then the
registry of input checks), and every role, and every entry point of common that host_plan checks
on every host, has its entry in that registry (plugins/module_utils/core/input_checks.py).

A role added without a registry entry, or whose preflight does something before common's, fails
here; so does a registry entry for a role that no longer exists."""
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
