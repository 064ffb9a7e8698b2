"""Contracts every public role keeps (DESIGN.md §1, §5; STYLE.md).

- every public variable sits in defaults/main.yml AND in meta/argument_specs.yml (main entry
  point), with the same default, a type and a description;
- public variables carry the role's prefix;
- a role's tasks never read another role's private variables.
"""
import os
import re

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLES_DIR = os.path.join(REPO, "roles")
PUBLIC_ROLES = sorted(r for r in os.listdir(ROLES_DIR) if r != "common" and  # common: the private helper
                      os.path.isdir(os.path.join(ROLES_DIR, r)))


def load(path):
    with open(path) as fh:
        return yaml.safe_load(fh) or {}


@pytest.mark.parametrize("role", PUBLIC_ROLES)
def test_defaults_and_argument_specs_agree(role):
    defaults = load(os.path.join(ROLES_DIR, role, "defaults", "main.yml"))
    specs = load(os.path.join(ROLES_DIR, role, "meta", "argument_specs.yml"))["argument_specs"]["main"]["options"]
    assert sorted(defaults) == sorted(specs), "defaults/main.yml and meta/argument_specs.yml list different variables"
    for name, spec in specs.items():
        assert spec.get("type"), "%s: no type in argument_specs" % name
        assert spec.get("description"), "%s: no description in argument_specs" % name
        if spec.get("required"):
            continue
        assert "default" in spec, "%s: no default in argument_specs" % name
        assert spec["default"] == defaults[name], "%s: argument_specs default %r != defaults/main.yml %r" % (
            name, spec["default"], defaults[name])


@pytest.mark.parametrize("role", PUBLIC_ROLES)
def test_public_variables_are_prefixed(role):
    defaults = load(os.path.join(ROLES_DIR, role, "defaults", "main.yml"))
    bad = [v for v in defaults if not v.startswith(role + "_")]
    assert not bad, "variables without the %s_ prefix: %s" % (role, bad)


@pytest.mark.parametrize("role", PUBLIC_ROLES)
def test_no_reads_of_other_roles_private_vars(role):
    others = [r for r in PUBLIC_ROLES if r != role]
    pattern = re.compile(r"__(%s)_" % "|".join(map(re.escape, others))) if others else None
    if pattern is None:
        return
    for root, _dirs, files in os.walk(os.path.join(ROLES_DIR, role)):
        for name in files:
            if name.endswith((".yml", ".yaml", ".j2")):
                with open(os.path.join(root, name)) as fh:
                    hit = pattern.search(fh.read())
                assert not hit, "%s uses another role's private variable %s" % (os.path.join(root, name), hit.group(0))


ALL_ROLES = sorted(r for r in os.listdir(ROLES_DIR) if os.path.isfile(os.path.join(ROLES_DIR, r, "meta", "argument_specs.yml")))
PLUGINS = sorted(os.path.join(kind, f) for kind in ("modules", "filter", "callback", "action")
                 for f in os.listdir(os.path.join(REPO, "plugins", kind)) if f.endswith(".py") and f != "__init__.py")


@pytest.mark.parametrize("role", ALL_ROLES)
def test_every_role_says_when_it_was_added(role):
    """A release lists a role as new only from version_added in its main entry point (docs/release.md)."""
    main = load(os.path.join(ROLES_DIR, role, "meta", "argument_specs.yml"))["argument_specs"]["main"]
    assert main.get("version_added"), "roles/%s/meta/argument_specs.yml: the main entry point has no version_added" % role


@pytest.mark.parametrize("plugin", PLUGINS)
def test_every_plugin_says_when_it_was_added(plugin):
    with open(os.path.join(REPO, "plugins", plugin)) as fh:
        text = fh.read()
    if "DOCUMENTATION" not in text:
        # the action plugin role_inputs is documented by its module stub (plugins/modules/role_inputs.py)
        assert plugin.startswith("action/"), "plugins/%s has no DOCUMENTATION" % plugin
        return
    assert re.search(r"^version_added: ", text, re.M), "plugins/%s: DOCUMENTATION has no version_added" % plugin
