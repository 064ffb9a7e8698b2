"""Every plugin's EXAMPLES is a standalone task list a user can paste: valid YAML, named tasks, and no
private ``__`` variables (those exist only inside the collection's roles). A private plugin's own
FQCN (``gpuops.dlserver.__private.<name>``, docs/public-surface.md) is a plugin name, not a variable."""
import ast
import glob
import os
import re

import pytest
import yaml

# a private variable: __name not preceded by a word character or a dot (gpuops.dlserver.__private.x is a plugin)
PRIVATE = r"(?<![A-Za-z0-9_.])__[A-Za-z][A-Za-z0-9_]*"

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PLUGINS = sorted(p for p in glob.glob(os.path.join(REPO, "plugins", "*", "*.py"))
                 + glob.glob(os.path.join(REPO, "plugins", "*", "__private", "*.py"))
                 # doc fragments are parts of other plugins' documentation, with no EXAMPLES of their own
                 if os.path.basename(p) != "__init__.py" and "/module_utils/" not in p and "/doc_fragments/" not in p)


def examples(path):
    with open(path) as handle:
        tree = ast.parse(handle.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EXAMPLES" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def documented(path):
    with open(path) as handle:
        return "DOCUMENTATION" in handle.read()


@pytest.mark.parametrize("path", [p for p in PLUGINS if documented(p)], ids=lambda p: os.path.relpath(p, REPO))
def test_examples_are_standalone_tasks(path):
    text = examples(path)
    if text is None:
        assert "/callback/" in path, "a documented plugin without EXAMPLES: %s" % path
        return
    private = sorted(set(re.findall(PRIVATE, text)))
    assert not private, "EXAMPLES use private names a user does not have: %s" % private
    tasks = yaml.safe_load(text)
    assert isinstance(tasks, list) and tasks, "EXAMPLES must be a list of tasks"
    for task in tasks:
        assert isinstance(task, dict) and task.get("name"), "every example task has a name: %r" % (task,)


def test_the_check_sees_private_names():
    text = '- name: x\n  ansible.builtin.debug:\n    msg: "{{ __os_tuning.reboot }}"\n'
    assert re.findall(PRIVATE, text) == ["__os_tuning"]
    plugin = '- name: x\n  gpuops.dlserver.__private.status_file:\n    status: "{{ __common_status }}"\n'
    assert re.findall(PRIVATE, plugin) == ["__common_status"]
    assert examples(os.path.join(REPO, "plugins", "modules", "gpu_facts.py"))
