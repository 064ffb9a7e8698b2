# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing a file so that a reader sees the old content or the new, never half of it.

One helper for every module (and the tools that build the lab's mirror outside Ansible): the
text goes to a temporary file with an unpredictable name in the file's own directory, gets
its mode, and is moved over the file with ``AnsibleModule.atomic_move`` when a module is
given (it keeps the file's owner and SELinux context, and reports failures through the
module), else with ``os.replace``. The file ends with ``mode`` either way.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile


def write_atomic(path, text, mode, module=None):
    """Replace ``path`` by ``text`` (str) with permissions ``mode`` (int, e.g. 0o644)."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), suffix='.tmp', dir=directory)
    try:
        with os.fdopen(handle, 'w') as out:
            out.write(text)
        os.chmod(tmp, mode)
        if module is not None:
            module.atomic_move(tmp, path)
            # atomic_move gives the new file the old file's mode (or the umask's for a new file)
            os.chmod(path, mode)
        else:
            os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
