"""Every default a document states is the code's default (issue 38, item 4: docs that cannot drift).

The README said ``os_tuning_reboot`` defaults to ``true`` while its argument spec, its defaults and
the guide said ``false``. This test reads every statement of a default in README.md,
CONTRIBUTING.md, bench/README.md and docs/*.md (docs/roles/ feeds the generated role READMEs,
whose variable tables come from the argument specs themselves, so it is left out) and compares it
with where the default really lives:

- a role variable: the ``default`` of its option in ``roles/*/meta/argument_specs.yml`` (any entry
  point: ``common`` declares the collection-wide ``gpuops_*`` variables);
- a module option: the ``default`` in the module's ``DOCUMENTATION``;
- a playbook variable (``gpuops_serial``, the rolling upgrade's): the ``| default(...)`` the
  playbooks apply to it;
- an option of the plan (docs/hardware-gating.md's option table): ``OPTIONS`` in
  ``plugins/module_utils/plan/options.py``.

The forms documents use (found with grep), backticks required around the name and the value:

- prose: "`var` (default `x`", "`var`, default `x`", "`var` defaults to `x`", "`var` is `x` by
  default", "`var` (default 30 s)", "`var`, off by default" (line breaks allowed between the words);
- tables with a ``default`` column: the first cell names the variable(s), the ``default`` cell is
  one backticked value, ``none`` (no default: unset) or ``(required...``; or with a ``values
  (default)`` column, whose cell ends in the default in brackets: "bool (`false`)".

A stated value is read as YAML (``true``, ``0``, ``[1, "20%"]``, ``/sys``) and must equal one of the
variable's defaults. A name with no known default anywhere fails too: a renamed variable leaves
its old name in the docs.
"""
import ast
import glob
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.options import OPTIONS

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOCS = [os.path.join(REPO, p) for p in ("README.md", "CONTRIBUTING.md", os.path.join("bench", "README.md"))] + \
    sorted(glob.glob(os.path.join(REPO, "docs", "*.md")))

UNSET = object()  # default(''), default(none), default(omit): nothing is set
NAME = r"`(?P<var>[a-z][a-z0-9_]*_[a-z0-9_]+)`"
VALUE = r"`(?P<val>[^`\n]+)`"
PROSE = [
    re.compile(NAME + r"(?:,|\s*\()?\s*default:?\s+" + VALUE),
    re.compile(NAME + r"\s+defaults\s+to\s+" + VALUE),
    re.compile(NAME + r"\s+is\s+" + VALUE + r"\s+by\s+default"),
    # "`nvml_init_timeout` (default 30 s)": seconds, the value unquoted
    re.compile(NAME + r"(?:,|\s*\()\s*default\s+(?P<val>[0-9]+)\s*s\b"),
    # "`gpu_validate_resnet50`, off by default"
    re.compile(NAME + r",?\s+(?P<val>on|off)\s+by\s+default"),
]
# A table cell that is neither one value nor "none"/"(required": the exact cell, and the code default
# it describes (asserted too).
EXPLAINED_CELLS = {
    "gpuops_rolling_kubeconfig": ("`K8S_AUTH_KUBECONFIG`, else `~/.kube/config`", UNSET),
}


def read(path):
    with open(path) as handle:
        return handle.read()


def literal(text):
    """A default as written in Jinja (``default(...)``) or in a document, as a Python value."""
    text = {"on": "true", "off": "false"}.get(text.strip(), text.strip())
    if text in ("''", '""', "none", "None", "omit"):
        return UNSET
    return unset_if_empty(yaml.safe_load(text))


def unset_if_empty(value):
    """'' and null both mean "not set" in the code and in the documents."""
    return UNSET if value is None or value == "" else value


def default_arguments(text, var):
    """The argument texts of every ``var | default(...)`` in a playbook, parentheses balanced."""
    found = []
    for match in re.finditer(r"\b%s\s*\|\s*default\(" % re.escape(var), text):
        depth, start = 1, match.end()
        for pos in range(start, len(text)):
            depth += {"(": 1, ")": -1}.get(text[pos], 0)
            if depth == 0:
                found.append(text[start:pos])
                break
    return found


def known_defaults():
    """{name: [default, ...]} from the argument specs, the modules and the playbooks ([]: no default)."""
    known = {}
    for path in glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml")):
        for entry in (yaml.safe_load(read(path)) or {}).get("argument_specs", {}).values():
            for name, spec in (entry.get("options") or {}).items():
                known.setdefault(name, []).append(unset_if_empty(spec.get("default")))
    for path in glob.glob(os.path.join(REPO, "plugins", "modules", "*.py")) + \
            glob.glob(os.path.join(REPO, "plugins", "modules", "__private", "*.py")):
        for node in ast.parse(read(path)).body:
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["DOCUMENTATION"]:
                for name, spec in ((yaml.safe_load(node.value.value) or {}).get("options") or {}).items():
                    known.setdefault(name, []).append(unset_if_empty(spec.get("default")))
    for name, spec in OPTIONS.items():
        known.setdefault(name, []).append(unset_if_empty(spec["default"]))
    plays = "\n".join(read(p) for p in glob.glob(os.path.join(REPO, "playbooks", "*.yml")))
    for var in set(re.findall(r"\b(gpuops_[a-z0-9_]+)\b", plays)):
        known.setdefault(var, [])  # a playbook variable, with no default unless one is found below
    for var in set(re.findall(r"\b(gpuops_[a-z0-9_]+)\s*\|\s*default\(", plays)):
        for arg in default_arguments(plays, var):
            first = arg.split(",")[0] if not arg.lstrip().startswith(("[", "{")) else arg
            try:
                known.setdefault(var, []).append(literal(first))
            except yaml.YAMLError:
                known.setdefault(var, []).append(arg)  # an expression: matches no stated literal
    return known


def stated_defaults(text):
    """[(line, name, stated)]: stated is a value, UNSET ("none"), "required", or ("cell", text)."""
    found = []
    for pattern in PROSE:
        for match in pattern.finditer(text):
            found.append((text.count("\n", 0, match.start()) + 1, match.group("var"), literal(match.group("val"))))
    lines = text.split("\n")
    for i, line in enumerate(lines[:-1]):
        if not (line.startswith("|") and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip())):
            continue
        header = [c.strip().lower() for c in line.strip().strip("|").split("|")]
        columns = [n for n, c in enumerate(header) if c == "default" or c.endswith("(default)")]
        if not columns:
            continue
        col = columns[0]
        in_brackets = header[col] != "default"
        for j in range(i + 2, len(lines)):
            if not lines[j].startswith("|"):
                break
            cells = [c.strip() for c in lines[j].strip().strip("|").split("|")]
            names = re.findall(r"`([a-z][a-z0-9_]*)`", cells[0])
            cell = cells[col]
            if in_brackets:
                last = re.search(r"\((`[^`]+`)[^()]*\)$", cell)
                cell = last.group(1) if last else cell
            if re.fullmatch(r"`[^`]+`", cell):
                stated = literal(cell[1:-1])
            elif cell == "none":
                stated = UNSET
            elif cell.startswith("(required"):
                stated = "required"
            else:
                stated = ("cell", cell)
            found.extend((j + 1, name, stated) for name in names)
    return found


def problems_of(text, known):
    problems = []
    for line, name, stated in stated_defaults(text):
        defaults = known.get(name)
        if defaults is None:
            problems.append("line %d: `%s` is no role variable, module option or playbook variable" % (line, name))
        elif stated == "required" or stated is UNSET:
            if any(d is not UNSET for d in defaults):
                problems.append("line %d: `%s` has no default in the docs, the code says %r" % (line, name, defaults))
        elif isinstance(stated, tuple):
            cell, code = EXPLAINED_CELLS.get(name, (None, None))
            if stated[1] != cell or code not in defaults:
                problems.append("line %d: `%s` default %r is not one value; the code says %r" % (line, name, stated[1], defaults))
        elif not any(d is not UNSET and d == stated and type(d) is type(stated) for d in defaults):
            problems.append("line %d: `%s` default %r, the code says %r" % (line, name, stated, defaults))
    return problems


@pytest.fixture(scope="module")
def known():
    return known_defaults()


@pytest.mark.parametrize("path", DOCS, ids=lambda p: os.path.relpath(p, REPO))
def test_stated_defaults_are_the_code_defaults(path, known):
    problems = problems_of(read(path), known)
    assert not problems, "%s:\n%s" % (os.path.relpath(path, REPO), "\n".join(problems))


def test_the_documents_state_defaults(known):
    """The parser finds the statements the documents make (so a pass is not an empty scan)."""
    found = {(os.path.basename(p), name) for p in DOCS for _line, name, _v in stated_defaults(read(p))}
    # (the role variables' defaults are no longer restated in the guides: their argument specs
    # are the one place, tests/unit/test_defaults_once.py)
    for where in [("getting-started.md", "gpuops_serial"), ("getting-started.md", "gpuops_rolling_serial"),
                  ("gpu_facts.md", "sysfs_root"),
                  ("gpu_facts.md", "nvml_init_timeout"), ("gpu_facts.md", "nvidia_smi_timeout"),
                  ("support-matrix.md", "gpu_validate_resnet50"), ("hardware-gating.md", "driver_force"),
                  ("hardware-gating.md", "strict")]:
        assert where in found, where
    assert known["os_tuning_reboot"] == [False] and known["gpuops_serial"] == [[1, "20%"]]


def test_the_plan_option_table_lists_every_option():
    """docs/hardware-gating.md's option table names every option of the plan, each once."""
    text = read(os.path.join(REPO, "docs", "hardware-gating.md"))
    rows = [n for line, n, _v in stated_defaults(text) if n in OPTIONS]
    assert sorted(rows) == sorted(OPTIONS), sorted(set(OPTIONS) ^ set(rows))


def test_a_wrong_default_fails(known):
    wrong = "\n".join([
        "| variable | default | what |",
        "| --- | --- | --- |",
        "| `nvidia_driver_reboot`, `os_tuning_reboot` | `true` | the old README row |",
        "| `gpuops_rolling_serial` | `2` | |",
        "| `gpuops_rolling_version` | `1.0` | |",
        "| `gpuops_serial` | none | |",
        "| `gpuops_rolling_kubeconfig` | `~/.kube/config` | |",
        "",
        "`nvidia_driver_source` (default",
        "`cuda_repo`) over a line break; `os_tuning_reboot` is `true` by default;",
        "`gpuops_max_fail_percentage` defaults to `0.0`; `nvidia_driver_brnach` (default `535`).",
        "`nvml_init_timeout` (default 60 s), `gpu_validate_resnet50`, on by default.",
        "",
        "| option | values (default) | role variable |",
        "| --- | --- | --- |",
        "| `persistence` | bool (`false`) | `nvidia_driver_persistence` |",
        "| `driver_branch` | a branch (`580`: the newest) | `nvidia_driver_branch` |",
    ])
    problems = problems_of(wrong, known)
    for name in ("os_tuning_reboot", "gpuops_rolling_serial", "gpuops_rolling_version", "gpuops_serial",
                 "gpuops_rolling_kubeconfig", "nvidia_driver_source", "gpuops_max_fail_percentage",
                 "nvidia_driver_brnach", "nvml_init_timeout", "gpu_validate_resnet50", "persistence",
                 "driver_branch"):
        assert any("`%s`" % name in p for p in problems), (name, problems)
    assert not any("`nvidia_driver_reboot`" in p for p in problems), problems
    assert sum("`os_tuning_reboot`" in p for p in problems) == 2, problems
    right = "`nvidia_driver_source` (default\n`distro`), `gpuops_serial`, default `[1, \"20%\"]`; `sysfs_root` (default `/sys`)"
    assert problems_of(right, known) == []
    assert len(stated_defaults(right)) == 3
