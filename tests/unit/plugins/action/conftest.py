"""Shared by the action plugins' tests: one real ``ansible-playbook`` run of a test play on localhost.

``run_play(tmp_path, play, fixture, *extra)`` writes ``play`` and the facts of the case file
``fixture`` (``tests/unit/plugins/module_utils/data/``; None for none) into ``tmp_path``, passes
the facts as ``facts``, the output path as ``out`` and every ``extra`` as one ``-e`` argument, and returns the
finished process.
"""
import json
import os
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
DATA = os.path.join(REPO, "tests", "unit", "plugins", "module_utils", "data")


def _run_play(tmp_path, play, fixture, *extra):
    (tmp_path / "pb.yml").write_text(play)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1")
    args = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(tmp_path / "pb.yml"),
            "-e", "ansible_python_interpreter=%s" % sys.executable, "-e", "out=%s" % (tmp_path / "out.json")]
    if fixture is not None:
        with open(os.path.join(DATA, fixture)) as handle:
            facts = yaml.safe_load(handle)["facts"]
        (tmp_path / "facts.json").write_text(json.dumps({"facts": facts}))
        args += ["-e", "@%s" % (tmp_path / "facts.json")]
    for item in extra:
        args += ["-e", item]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path), check=False)


@pytest.fixture
def run_play():
    return _run_play
