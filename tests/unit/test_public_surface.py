"""The public surface is on purpose: docs/public-surface.md's table is exactly what ansible-doc lists.

A plugin file directly in plugins/modules, plugins/filter or plugins/callback is public (a filter
file's public names are the ones it declares); each must have a row in the table, and each row a
plugin. Every internal step lives in the plugin type's ``__private`` directory and is called as
``gpuops.dlserver.__private.<name>``: ansible-doc skips a directory whose name starts with ``__``,
while Galaxy's name rule (galaxy-importer's CONTENT_NAME_REGEXP) reads only file names, which must
not hold ``__`` (Galaxy refused the earlier ``__<name>.py`` files). ``ansible-doc -l`` itself is run
on the collection and on a small collection made here, so that a change of how ansible-core lists
plugins fails here too. Each public module and filter has EXAMPLES: YAML tasks, one of which names it.
"""
import ast
import glob
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
PUBLISH_VENV = os.path.join(REPO, ".cache", "publish-venv")
ROW = re.compile(r"\| `gpuops\.dlserver\.(\w+)` \| (module|filter|callback) \| \S")
TYPES = {"module": "modules", "filter": "filter", "callback": "callback"}
PRIVATE_DIR = "__private"
# galaxy-importer's CONTENT_NAME_REGEXP (constants.py): a plugin file's or role's name Galaxy accepts
GALAXY_NAME = r"^(?!.*__)[a-z_][0-9a-z_]*$"
LISTED_TYPES = ("module", "filter", "callback", "test", "lookup")


def documented(text):
    """{(type, name)} of the table's rows; a row that does not match ROW fails (nothing is skipped)."""
    rows = set()
    for line in text.splitlines():
        if line.startswith("| `gpuops.dlserver."):
            match = ROW.match(line)
            assert match, "docs/public-surface.md: a row that is not | `gpuops.dlserver.<name>` | <type> | <line> |: %r" % line
            rows.add((match.group(2), match.group(1)))
    return rows


def galaxy_refuses(name):
    """Whether Galaxy refuses a plugin file or role named ``name`` (the file name without .py)."""
    return re.match(GALAXY_NAME, name) is None


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
    """{(type, name): path} of every public plugin: the files directly in the plugin directories."""
    found = {}
    for kind, sub in TYPES.items():
        directory = os.path.join(REPO, "plugins", sub)
        for entry in sorted(os.listdir(directory)):
            if not entry.endswith(".py") or entry == "__init__.py":
                continue
            path = os.path.join(directory, entry)
            for name in (filter_names(path) if kind == "filter" else [entry[:-3]]):
                found[(kind, name)] = path
    return found


def private_names():
    """{(type, name)} of every private plugin: modules, actions and the filters their files declare."""
    found = set()
    for kind, sub in (("module", "modules"), ("action", "action"), ("filter", "filter")):
        for path in glob.glob(os.path.join(REPO, "plugins", sub, PRIVATE_DIR, "*.py")):
            for name in (filter_names(path) if kind == "filter" else [os.path.basename(path)[:-3]]):
                found.add((kind, name))
    return found


def ansible_doc_lists(collections_path, collection="gpuops.dlserver"):
    """{(type, name)} that ansible-doc -l of the running ansible-core lists for the collection."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path, ANSIBLE_NOCOLOR="1")
    doc = os.path.join(os.path.dirname(sys.executable), "ansible-doc")
    listed = set()
    for kind in LISTED_TYPES:
        res = subprocess.run([doc, "-l", "-j", "-t", kind, collection], capture_output=True, text=True,
                             env=env, timeout=120, check=False)
        assert res.returncode == 0, res.stderr
        for fqcn in json.loads(res.stdout):
            assert fqcn.startswith(collection + "."), fqcn
            listed.add((kind, fqcn[len(collection) + 1:]))
    return listed


def test_documented_rows_need_a_full_row():
    with pytest.raises(AssertionError):
        documented("| `gpuops.dlserver.gpu_facts` | module |\n")
    with pytest.raises(AssertionError):
        documented("| `gpuops.dlserver.gpu_facts` | lookup | the probe |\n")
    assert documented("| `gpuops.dlserver.gpu_facts` | module | the probe |\n") == {("module", "gpu_facts")}


def test_plugin_directories_match_the_documented_list():
    rows = documented(open(DOC, encoding="utf-8").read())
    files = set(public_files())
    assert sorted(files - rows) == [], "public plugins not in docs/public-surface.md (document them, or move them to __private/)"
    assert sorted(rows - files) == [], "docs/public-surface.md lists plugins that are not public plugins"


def test_a_plugin_directory_holds_public_files_and_one_private_directory():
    for sub in os.listdir(os.path.join(REPO, "plugins")):
        if sub == "module_utils" or not os.path.isdir(os.path.join(REPO, "plugins", sub)):
            continue
        directory = os.path.join(REPO, "plugins", sub)
        for entry in os.listdir(directory):
            if os.path.isdir(os.path.join(directory, entry)):
                assert entry in (PRIVATE_DIR, "__pycache__"), "plugins/%s/%s: only %s/ may be a directory" % (sub, entry, PRIVATE_DIR)
            else:
                assert entry == "__init__.py" or re.fullmatch(r"[a-z][a-z0-9_]*\.py", entry), (sub, entry)
        if os.path.isdir(os.path.join(directory, PRIVATE_DIR)):
            for entry in os.listdir(os.path.join(directory, PRIVATE_DIR)):
                assert entry == "__pycache__" or re.fullmatch(r"[a-z][a-z0-9_]*\.py", entry), (sub, PRIVATE_DIR, entry)


def test_ansible_lint_ignores_the_deep_directory_for_exactly_the_private_files():
    lines = [line.split() for line in open(os.path.join(REPO, ".ansible-lint-ignore"), encoding="utf-8")
             if "fqcn[deep]" in line and not line.startswith("#")]
    assert all(len(words) == 2 and words[1] == "fqcn[deep]" for words in lines), lines
    files = sorted(os.path.relpath(p, REPO) for p in glob.glob(os.path.join(REPO, "plugins", "*", PRIVATE_DIR, "*.py")))
    assert files and sorted(words[0] for words in lines) == files


def test_docs_link_no_private_plugin():
    """antsibull-docs lint (make publish-check) refuses M(), O(), P() and seealso of a plugin that
    ansible-doc does not list: documentation names a private plugin as code, C(...)."""
    link = re.compile(r"[MOP]\(gpuops\.dlserver\.%s\.|module: gpuops\.dlserver\.%s\." % (PRIVATE_DIR, PRIVATE_DIR))
    assert link.search("M(gpuops.dlserver.__private.status_file)") and not link.search("C(gpuops.dlserver.__private.x)")
    paths = glob.glob(os.path.join(REPO, "plugins", "*", "*.py")) + \
        glob.glob(os.path.join(REPO, "plugins", "*", PRIVATE_DIR, "*.py")) + \
        glob.glob(os.path.join(REPO, "roles", "*", "meta", "argument_specs.yml"))
    assert [p for p in paths if link.search(open(p, encoding="utf-8").read())] == []


def test_an_action_is_the_code_of_a_module_of_its_name():
    for directory, modules in ((os.path.join(REPO, "plugins", "action"), os.path.join(REPO, "plugins", "modules")),
                               (os.path.join(REPO, "plugins", "action", PRIVATE_DIR),
                                os.path.join(REPO, "plugins", "modules", PRIVATE_DIR))):
        for entry in os.listdir(directory):
            if entry.endswith(".py") and entry != "__init__.py":
                assert os.path.isfile(os.path.join(modules, entry)), "action %s has no module stub beside it" % entry


def test_galaxy_accepts_every_plugin_file_and_role_name():
    assert galaxy_refuses("__status_file") and galaxy_refuses("status__file") and galaxy_refuses("Status")
    assert not galaxy_refuses("status_file") and not galaxy_refuses("_common")
    names = [os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPO, "plugins", "**", "*.py"), recursive=True)
             if os.path.basename(p) != "__init__.py"]
    names += os.listdir(os.path.join(REPO, "roles"))
    assert len(names) > 100
    assert [n for n in names if galaxy_refuses(n)] == []


@pytest.mark.skipif(not os.path.isdir(PUBLISH_VENV), reason="make publish-setup installs galaxy-importer")
def test_the_galaxy_name_rule_is_the_importers():
    constants = glob.glob(os.path.join(PUBLISH_VENV, "lib", "python*", "site-packages", "galaxy_importer", "constants.py"))
    assert constants
    match = re.search(r'CONTENT_NAME_REGEXP = re\.compile\(r"([^"]+)"\)', open(constants[0], encoding="utf-8").read())
    assert match and match.group(1) == GALAXY_NAME


def test_call_sites_name_private_plugins_that_exist():
    private = private_names()
    assert ("module", "role_inputs") in private and ("action", "role_inputs") in private
    seen = 0
    for path in glob.glob(os.path.join(REPO, "roles", "**", "*.yml"), recursive=True) + \
            glob.glob(os.path.join(REPO, "playbooks", "*.yml")):
        text = open(path, encoding="utf-8").read()
        for name in re.findall(r"gpuops\.dlserver\.%s\.(\w+)" % PRIVATE_DIR, text):
            seen += 1
            assert ("module", name) in private or ("filter", name) in private, (path, name)
        for kind, name in private:
            assert not re.search(r"gpuops\.dlserver\.%s\b" % name, text), "%s: private %s %s called without %s" % (
                path, kind, name, PRIVATE_DIR)
    assert seen > 40


@pytest.mark.skipif(not os.path.isdir(COLLECTIONS), reason="make setup links the collection under .cache/collections")
def test_ansible_doc_lists_only_the_documented_plugins():
    rows = documented(open(DOC, encoding="utf-8").read())
    assert sorted(ansible_doc_lists(COLLECTIONS)) == sorted(rows)


def test_ansible_doc_lists_an_undocumented_plugin_and_skips_the_private_directory(tmp_path):
    """What the test above relies on, with this ansible-core: a plugin outside __private is listed
    (documented or not, so the comparison above fails on it); one inside is not, yet runs."""
    root = tmp_path / "ansible_collections" / "exp" / "coll"
    (root / "meta").mkdir(parents=True)
    (root / "meta" / "runtime.yml").write_text('requires_ansible: ">=2.16.0"\n')
    (root / "galaxy.yml").write_text("namespace: exp\nname: coll\nversion: 0.1.0\nauthors: [x]\nreadme: README.md\n")
    module = "#!/usr/bin/python\nfrom ansible.module_utils.basic import AnsibleModule\n" \
             "if __name__ == '__main__':\n    AnsibleModule(argument_spec={}).exit_json(changed=False, who=%r)\n"
    for rel in ("modules/undocumented.py", "modules/%s/step.py" % PRIVATE_DIR):
        (root / "plugins" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "plugins" / rel).write_text(module % rel)
    (root / "plugins" / "filter" / PRIVATE_DIR).mkdir(parents=True)
    (root / "plugins" / "filter" / PRIVATE_DIR / "steps.py").write_text(
        "class FilterModule(object):\n    def filters(self):\n        return {'step': lambda x: 'step:%s' % x}\n")
    assert ansible_doc_lists(str(tmp_path), "exp.coll") == {("module", "undocumented")}
    (tmp_path / "pb.yml").write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - exp.coll.%s.step: {}\n      register: result\n"
        "    - ansible.builtin.assert:\n        that:\n          - result.who == 'modules/%s/step.py'\n"
        "          - (1 | exp.coll.%s.step) == 'step:1'\n" % (PRIVATE_DIR, PRIVATE_DIR, PRIVATE_DIR))
    res = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                          "-c", "local", str(tmp_path / "pb.yml"), "-e", "ansible_python_interpreter=%s" % sys.executable],
                         capture_output=True, text=True, timeout=300, check=False,
                         env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path), ANSIBLE_NOCOLOR="1"))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


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
