"""The public surface is on purpose: docs/public-surface.md's table is exactly what ansible-doc lists.

Every plugin file of plugins/modules, plugins/filter and plugins/callback that does not start with
``__`` is public (a filter file's public names are the ones it declares); each must have a row in
the table, and each row a plugin. ``ansible-doc -l`` itself is run once per type, so that a change
of how ansible-core lists plugins (the ``__`` files it skips) fails here too. Each public module
and filter has EXAMPLES: YAML tasks, one of which names it.
"""
import ast
import json
import os
import re
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DOC = os.path.join(REPO, "docs", "public-surface.md")
COLLECTIONS = os.path.join(REPO, ".cache", "collections")
ROW = re.compile(r"\| `gpuops\.dlserver\.(\w+)` \| (module|filter|callback) \| \S")
TYPES = {"module": "modules", "filter": "filter", "callback": "callback"}


def documented(text):
    """{(type, name)} of the table's rows; a row that does not match ROW fails (nothing is skipped)."""
    rows = set()
    for line in text.splitlines():
        if line.startswith("| `gpuops.dlserver."):
            match = ROW.match(line)
            assert match, "docs/public-surface.md: a row that is not | `gpuops.dlserver.<name>` | <type> | <line> |: %r" % line
            rows.add((match.group(2), match.group(1)))
    return rows


def _assigned(path, name):
    for node in ast.parse(open(path, encoding="utf-8").read()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def filter_names(path):
    """The filter names a filter file declares (its FilterModule.filters() dict literal)."""
    names = re.findall(r"""['"](\w+)['"]\s*:\s*\w+""", open(path, encoding="utf-8").read().split("def filters", 1)[1])
    assert names, path
    return names


def public_files():
    """{(type, name): path} of every public plugin in the plugin directories."""
    found = {}
    for kind, sub in TYPES.items():
        directory = os.path.join(REPO, "plugins", sub)
        for entry in sorted(os.listdir(directory)):
            if not entry.endswith(".py") or entry.startswith("__"):
                continue
            path = os.path.join(directory, entry)
            for name in (filter_names(path) if kind == "filter" else [entry[:-3]]):
                found[(kind, name)] = path
    return found


def test_documented_rows_need_a_full_row():
    with pytest.raises(AssertionError):
        documented("| `gpuops.dlserver.gpu_facts` | module |\n")
    with pytest.raises(AssertionError):
        documented("| `gpuops.dlserver.gpu_facts` | lookup | the probe |\n")
    assert documented("| `gpuops.dlserver.gpu_facts` | module | the probe |\n") == {("module", "gpu_facts")}


def test_plugin_directories_match_the_documented_list():
    rows = documented(open(DOC, encoding="utf-8").read())
    files = set(public_files())
    assert sorted(files - rows) == [], "public plugins not in docs/public-surface.md (document them, or name the file __<name>.py)"
    assert sorted(rows - files) == [], "docs/public-surface.md lists plugins that are not public plugins"


def test_private_plugin_files_are_named_so():
    for sub in ("modules", "filter", "action", "callback"):
        for entry in os.listdir(os.path.join(REPO, "plugins", sub)):
            if entry.startswith("_") and entry != "__init__.py":
                assert entry.startswith("__") and re.fullmatch(r"__[a-z][a-z0-9_]*\.py", entry), (sub, entry)


@pytest.mark.skipif(not os.path.isdir(COLLECTIONS), reason="make setup links the collection under .cache/collections")
def test_ansible_doc_lists_only_the_documented_plugins():
    rows = documented(open(DOC, encoding="utf-8").read())
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR="1")
    doc = os.path.join(os.path.dirname(sys.executable), "ansible-doc")
    listed = set()
    for kind in ("module", "filter", "callback", "test", "lookup"):
        res = subprocess.run([doc, "-l", "-j", "-t", kind, "gpuops.dlserver"], capture_output=True, text=True,
                             env=env, timeout=120, check=False)
        assert res.returncode == 0, res.stderr
        for fqcn in json.loads(res.stdout):
            assert fqcn.startswith("gpuops.dlserver."), fqcn
            listed.add((kind, fqcn[len("gpuops.dlserver."):]))
    assert sorted(listed) == sorted(rows)


@pytest.mark.parametrize("kind,name", sorted(k for k in public_files() if k[0] in ("module", "filter")))
def test_public_plugin_has_examples_naming_it(kind, name):
    examples = _assigned(public_files()[(kind, name)], "EXAMPLES")
    assert examples, "%s %s has no EXAMPLES" % (kind, name)
    tasks = yaml.safe_load(examples)
    assert isinstance(tasks, list) and tasks and all(isinstance(t, dict) for t in tasks), "EXAMPLES are not a list of tasks"
    fqcn = "gpuops.dlserver." + name
    if kind == "module":
        assert [t for t in tasks if fqcn in t], "no task of the EXAMPLES calls %s" % fqcn
    else:
        assert re.search(r"\|\s*%s\b" % re.escape(fqcn), examples), "no expression of the EXAMPLES applies %s" % fqcn
