"""preload: the plugins a run uses are imported in ansible-playbook before the first worker forks."""
import json
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
ENV = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
           ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1")

PROBE = r"""
import json, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader()
from ansible_collections.gpuops.dlserver.plugins.callback import preload
names = preload.wanted()
before = set(sys.modules)
loaded, missed = preload.preload(names)
print(json.dumps({"names": names, "loaded": loaded, "missed": missed,
                  "imported": sorted(m for m in set(sys.modules) - before)}))
"""


def test_every_plugin_of_the_collection_and_ansibles_actions_load():
    res = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=ENV, cwd=REPO,
                         timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    found = json.loads(res.stdout.splitlines()[-1])
    assert found["missed"] == []
    assert found["loaded"] == len(found["names"])
    names = [name for _kind, name in found["names"]]
    for kind in ("action", "filter"):
        # a private plugin is plugins/<kind>/__private/<name>.py, named gpuops.dlserver.__private.<name>
        # (docs/public-surface.md); a filter file declares the filter it is named for
        directory = os.path.join(REPO, "plugins", kind)
        files = [f[:-3] for f in os.listdir(directory) if f.endswith(".py") and f != "__init__.py"]
        files += ["__private." + f[:-3] for f in os.listdir(os.path.join(directory, "__private")) if f.endswith(".py")]
        assert sorted(n for k, n in found["names"] if k == kind and n.startswith("gpuops.dlserver.")) == \
            sorted("gpuops.dlserver." + f for f in files)
        assert [f for f in files if f.startswith("__private.")], kind
    assert "ansible.builtin.normal" in names and "ansible.builtin.set_fact" in names
    # what a worker would otherwise import for itself: the role libraries behind the plugins
    assert "ansible_collections.gpuops.dlserver.plugins.action.__private.role_inputs" in found["imported"]
    assert "ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs" in found["imported"]


def test_a_run_with_the_callback_enabled_says_what_it_loaded(tmp_path):
    (tmp_path / "pb.yml").write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - gpuops.dlserver.__private.role_inputs:\n        role: node_exporter\n      register: result\n"
        "    - ansible.builtin.assert:\n        that: result.inputs.user == 'node-exp'\n")
    res = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-vvv", "-i", "localhost,", "-c", "local",
                          str(tmp_path / "pb.yml"), "-e", "ansible_python_interpreter=%s" % sys.executable],
                         capture_output=True, text=True, timeout=300, cwd=str(tmp_path), check=False,
                         env=dict(ENV, ANSIBLE_CALLBACKS_ENABLED="gpuops.dlserver.preload"))
    assert res.returncode == 0, res.stdout + res.stderr
    line = [text for text in res.stdout.splitlines() if text.startswith("gpuops.dlserver.preload:")]
    assert line and line[0].endswith("not loaded: none"), res.stdout[:3000]
