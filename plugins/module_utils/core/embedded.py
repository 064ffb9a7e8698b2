# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Scripts that run INSIDE a user's Python environment: a module_utils file whose own text is
handed to the environment's python with ``-c`` (nothing is copied to the host; the environment
has neither Ansible nor the collection), and that prints one JSON object after a marker.

The caller's side of that contract, in one place: ``script_argv`` builds the command from the
file's own source (read from disk, or through its loader when the module is shipped in a zip),
``marked_json`` reads the result back. Used by python_env/python_stack_verify.py and
validate/measure.py, which import it inside the functions that run on the caller's side only, so
that their text still runs as a plain script.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import sys


def own_source(module_name):
    """The text of the module ``module_name`` (already imported): from its file, or its loader."""
    module = sys.modules[module_name]
    path = module.__file__
    if os.path.isfile(path):
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8')
    return module.__loader__.get_data(path).decode('utf-8')


def script_argv(python, module_name, args):
    """``[python, '-c', <source of module_name>] + args``."""
    return [python, '-c', own_source(module_name)] + list(args)


def marked_json(out, marker):
    """The JSON object printed after ``marker`` at the start of a line of ``out``; None when there
    is none or it does not parse."""
    for line in (out or '').splitlines():
        if line.startswith(marker):
            try:
                return json.loads(line[len(marker):])
            except ValueError:
                return None
    return None
