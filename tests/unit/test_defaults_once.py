"""Each default stated once (issue 38): a variable's default lives in its role's argument spec
(meta/argument_specs.yml, mirrored by defaults/main.yml, which test_role_contracts.py keeps in
step). Nothing else restates it - not a module's argument spec, not a fallback in module_utils or a
filter, not a task file's ``| default(...)``, not a doc:

- YAML and Jinja (task files, handlers, templates, playbooks, EXAMPLES): a variable a spec declares,
  by its name or as ``__<role>.<short>``, followed by ``| default(<literal>)`` (a quoted string, a
  number, true/false, [] or {}); ``default(omit)`` and ``default(none)`` state nothing;
- Python (modules, module_utils, filters, actions): ``.get('<name>', <literal>)``,
  ``.get('<name>') or <literal>`` and a module option ``<name>=dict(..., default=<literal>)`` where
  ``<name>`` is a declared variable's name or its name without the role's prefix and the literal is
  that variable's spec default (an empty string, list or dict, False and 0 stand for "nothing given",
  not for a default the user would look up, and are not counted);
- docs: a table with a "default" column that lists a declared variable, and a line that names a
  declared variable, says "default" and gives the spec's default in backticks.

There is no allow-list: a finding is fixed where it is (read the spec's value through the typed
inputs, ``__private.role_inputs``' load_spec, or an action that fills the options from the spec,
as plugins/action/gpu_validate.py does)."""
import ast
import os
import re

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLES = sorted(r for r in os.listdir(os.path.join(ROOT, "roles"))
               if os.path.isfile(os.path.join(ROOT, "roles", r, "meta", "argument_specs.yml")))


def _defaults():
    """{full name: (role, default)} of every option with a default, every entry point."""
    found = {}
    for role in ROLES:
        with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
            specs = yaml.safe_load(handle)["argument_specs"]
        for body in specs.values():
            for name, spec in ((body or {}).get("options") or {}).items():
                if isinstance(spec, dict) and "default" in spec:
                    found[name] = (role, spec["default"])
    return found


DEFAULTS = _defaults()
SHORT = {}
for _name, (_role, _default) in DEFAULTS.items():
    SHORT.setdefault(_name[len(_role) + 1:] if _name.startswith(_role + "_") else _name, []).append(_default)
    SHORT.setdefault(_name, []).append(_default)

_LITERAL = r"""(?:'[^']*'|"[^"]*"|-?\d+(?:\.\d+)?|true|false|True|False|\[\]|\{\})"""
_JINJA = re.compile(r"(?<![\w.])(__[a-z_]+\.[a-z0-9_]+|[a-z][a-z0-9_]*)\s*\|\s*default\(\s*(%s)" % _LITERAL)
# the dicts that hold a role's typed inputs or a module's parameters (a per-entry key of the same
# name, such as an environment's ``verify``, is not the role's variable)
_HOLDERS = r"(?:\binputs|\binp|\bparams|\bvalues|\btask_vars)"
_PY_GET = re.compile(_HOLDERS + r"""\.get\(\s*'([a-z0-9_]+)'\s*,\s*('[^']*'|-?\d+|True|False|\[[^\]]*\]|\{\})\s*\)""")
_PY_OR = re.compile(_HOLDERS + r"""\.get\(\s*'([a-z0-9_]+)'\s*\)\s*or\s*('[^']*'|-?\d+|\[[^\]]*\])""")
_PY_OPTION = re.compile(r"""\b([a-z0-9_]+)=dict\([^)]*?\bdefault=('[^']*'|-?\d+|True|False|\[[^\]]*\])""")


def _files(folders, suffixes, skip=()):
    for folder in folders:
        for base, dirs, names in os.walk(os.path.join(ROOT, folder)):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in skip]
            for name in sorted(names):
                if name.endswith(suffixes):
                    yield os.path.join(base, name)


def _where(path, text, start):
    return "%s:%d" % (os.path.relpath(path, ROOT), text.count("\n", 0, start) + 1)


def _declared(name):
    """Whether ``name`` (a full name, or ``__<role>.<short>``) is a variable a spec declares."""
    if name.startswith("__"):
        role, short = name[2:].split(".", 1)
        return short in DEFAULTS or "%s_%s" % (role, short) in DEFAULTS
    return name in DEFAULTS


def _says_something(value):
    """False for the values that mean "nothing given" rather than a default: '', [], {}, False, 0."""
    return not (value in ("", None, [], {}) or value is False or (isinstance(value, int) and value == 0))


def test_no_task_file_template_or_playbook_restates_a_default():
    found = []
    for path in _files(("roles", "playbooks", "plugins"), (".yml", ".yaml", ".j2", ".py"), skip=("molecule",)):
        with open(path) as handle:
            text = handle.read()
        for match in _JINJA.finditer(text):
            if _declared(match.group(1)):
                found.append("%s: %s" % (_where(path, text, match.start()), match.group(0)))
    assert found == [], "restated defaults (read the typed inputs instead):\n" + "\n".join(found)


def test_no_module_module_util_filter_or_action_restates_a_default():
    found = []
    for path in _files(("plugins",), (".py",)):
        with open(path) as handle:
            text = handle.read()
        for pattern in (_PY_GET, _PY_OR, _PY_OPTION):
            for match in pattern.finditer(text):
                try:
                    value = ast.literal_eval(match.group(2))
                except (ValueError, SyntaxError):
                    continue
                if _says_something(value) and any(value == d and type(value) is type(d)
                                                  for d in SHORT.get(match.group(1), [])):
                    found.append("%s: %s" % (_where(path, text, match.start()), match.group(0)[:100]))
    assert found == [], "restated defaults (the spec is the one place):\n" + "\n".join(found)


def _shown(value):
    if isinstance(value, bool):
        return ["true", "false"][not value]
    if isinstance(value, list):
        return "[%s]" % ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _docs():
    for folder in ("docs", os.path.join("docs", "roles")):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(".md"):
                yield os.path.join(ROOT, folder, name)
    yield os.path.join(ROOT, "README.md")


def test_no_doc_restates_a_default():
    found = []
    for path in _docs():
        with open(path) as handle:
            lines = handle.read().split("\n")
        column = None
        for number, line in enumerate(lines, 1):
            where = "%s:%d" % (os.path.relpath(path, ROOT), number)
            if line.startswith("|"):
                cells = [c.strip().lower() for c in line.strip().strip("|").split("|")]
                if column is None and "default" in cells:
                    column = True
                    continue
                named = re.match(r"`([a-z0-9_]+)`", cells[0]) if cells else None
                if column and named and named.group(1) in DEFAULTS:
                    found.append("%s: a default column beside %s" % (where, named.group(1)))
                continue
            column = None
            for match in re.finditer(r"`([a-z][a-z0-9_]+)`[^`\n]{0,40}?\bdefault", line):
                name = match.group(1)
                if name in DEFAULTS and _says_something(DEFAULTS[name][1]) \
                        and ("`%s`" % _shown(DEFAULTS[name][1]) in line[match.end():]
                             or " %s)" % _shown(DEFAULTS[name][1]) in line[match.end():]):
                    found.append("%s: %s" % (where, line.strip()[:100]))
    assert found == [], "defaults restated in the docs (the role's README lists the spec's):\n" + "\n".join(found)


def test_the_gpu_validate_module_states_no_default_of_a_role_variable():
    """Its action fills them from the spec (plugins/action/gpu_validate.py)."""
    from ansible_collections.gpuops.dlserver.plugins.action.gpu_validate import FROM_SPEC, SCALED, spec_defaults
    with open(os.path.join(ROOT, "plugins", "modules", "gpu_validate.py")) as handle:
        text = handle.read()
    for option in list(FROM_SPEC) + list(SCALED):
        assert re.search(r"\n        %s=dict\((?![^)]*default=)" % option, text), option
        block = re.search(r"\n  %s:\n((?:    .*\n)+)" % option, text).group(1)
        assert "    default:" not in block, option
    filled = spec_defaults()
    assert filled["port"] == DEFAULTS["gpu_validate_port"][1]
    assert filled["groups"] == DEFAULTS["gpu_validate_checks"][1]
    assert filled["refresh_seconds"] == DEFAULTS["gpu_validate_refresh_days"][1] * 86400
