# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""core/embedded.py: a module_utils file handed to an environment's python as its own source, and
the JSON it prints after a marker read back (python_stack_verify.py and validate/measure.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import subprocess
import sys
import zipfile

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import embedded
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import python_stack_verify
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import measure


def test_script_argv_carries_the_module_source():
    cmd = embedded.script_argv("/env/bin/python", embedded.__name__, ["--x", "1"])
    with open(embedded.__file__) as handle:
        assert cmd == ["/env/bin/python", "-c", handle.read(), "--x", "1"]


def test_own_source_through_a_zip_loader(tmp_path):
    # AnsiballZ ships module_utils in a zip: the source is read through the module's loader
    archive = tmp_path / "payload.zip"
    with zipfile.ZipFile(str(archive), "w") as handle:
        handle.writestr("gpuops_embedded_probe.py", "MARKER = 'PROBE '\n")
    sys.path.insert(0, str(archive))
    try:
        import gpuops_embedded_probe  # noqa: F401 pylint: disable=import-error,unused-import
        assert embedded.own_source("gpuops_embedded_probe") == "MARKER = 'PROBE '\n"
    finally:
        sys.path.remove(str(archive))
        sys.modules.pop("gpuops_embedded_probe", None)


def test_marked_json():
    assert embedded.marked_json('noise\nM {"a": 1}\n', "M ") == {"a": 1}
    assert embedded.marked_json('M {"a": 1}\r\n', "M ") == {"a": 1}
    assert embedded.marked_json("M {broken", "M ") is None
    assert embedded.marked_json(' M {"a": 1}', "M ") is None  # only at the start of a line
    assert embedded.marked_json(None, "M ") is None


def test_both_scripts_use_it_and_still_run_as_plain_scripts():
    # the text handed over with -c imports nothing of the collection at its top level
    for module, cmd in ((python_stack_verify, python_stack_verify.argv(sys.executable, [])),
                        (measure, measure.argv(sys.executable, "devices"))):
        assert cmd[:2] == [sys.executable, "-c"]
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                             timeout=60, cwd="/", env={"PATH": "/usr/bin:/bin"}, check=False).stdout
        assert module.parse(out) is not None, (module.__name__, out)
