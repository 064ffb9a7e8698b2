"""Every plugin's DOCUMENTATION, EXAMPLES and RETURN is YAML that parses (read from the source,
as ansible-doc does, without importing the plugin). ansible-test sanity and the publish stage
find a broken block too, minutes later; this finds it in the unit stage, naming the plugin and
the block - most often a ': ' inside a plain (unquoted) description line."""
import ast
import glob
import os

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLUGINS = sorted(p for p in glob.glob(os.path.join(REPO, "plugins", "*", "*.py"))
                 + glob.glob(os.path.join(REPO, "plugins", "*", "__private", "*.py"))
                 if os.sep + "module_utils" + os.sep not in p and not p.endswith("__init__.py"))
BLOCKS = ("DOCUMENTATION", "EXAMPLES", "RETURN")


def doc_blocks(path):
    """{name: text} of the module-level string assignments named in BLOCKS."""
    with open(path) as handle:
        tree = ast.parse(handle.read(), path)
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in BLOCKS and isinstance(node.value, ast.Constant):
            found[node.targets[0].id] = node.value.value
    return found


@pytest.mark.parametrize("path", PLUGINS, ids=[os.path.relpath(p, REPO) for p in PLUGINS])
def test_doc_blocks_parse(path):
    for name, text in doc_blocks(path).items():
        try:
            yaml.safe_load(text)
        except yaml.YAMLError as exc:
            pytest.fail("%s: %s is not valid YAML: %s" % (os.path.relpath(path, REPO), name, exc))


def test_every_module_and_filter_has_its_documentation():
    for path in PLUGINS:
        if os.sep + "modules" + os.sep in path or os.sep + "filter" + os.sep in path:
            assert "DOCUMENTATION" in doc_blocks(path), os.path.relpath(path, REPO)


def test_a_colon_in_a_plain_line_is_caught():
    bad = "description:\n  - The platforms, C({distribution: [versions]}) each.\n"
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(bad)
