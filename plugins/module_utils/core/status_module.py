# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one call of gpuops.dlserver.__private.status_file: ``run(module)`` renders the status
and plan files (core/status.status_files), writes those that differ with core/files.put_file
(root 0644, the directory root's 0755 where it is created) and ends the module with what the
directories hold now."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import directory_current, file_current, file_states, put_file
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.status import StatusError, status_files

FILE_MODE = 0o644
DIR_MODE = 0o755


def ensure_directory(module, directory):
    """The file's directory, root-owned 0755 when the module creates it; an existing directory
    keeps its attributes unless they are not root's 0755 (then they are set)."""
    if directory_current(directory, DIR_MODE):
        return
    if not os.path.isdir(directory):
        os.makedirs(directory, DIR_MODE)
    module.set_fs_attributes_if_different(
        module.load_file_common_arguments(dict(path=directory, owner='root', group='root', mode='0755')), False)


def write(module, path, text):
    """Writes ``path`` when it is not already ``text`` (root, 0644); returns its diff, or None."""
    if file_current(path, text, FILE_MODE):
        return None
    if not module.check_mode:
        ensure_directory(module, os.path.dirname(path))
    return put_file(path, text, module, FILE_MODE)['diff']


def run(module):
    """The module's whole call, ended with exit_json or fail_json."""
    params = module.params
    files = []
    for name in ('path', 'plan_path'):
        if params[name] is not None and not os.path.isabs(params[name]):
            module.fail_json(msg='%s: %r must be an absolute path' % (name, params[name]))
    try:
        files = status_files(params['path'] or None, params['status'], params['plan'], params['plan_path'],
                             params['driver_target'])
    except StatusError as exc:
        module.fail_json(msg=str(exc))
    plan_recorded = len(files) > (1 if params['path'] else 0)
    diffs, written = [], []
    try:
        for path, text in files:
            diff = write(module, path, text)
            if diff is not None:
                diffs.append(diff)
                written.append(path)
    except (IOError, OSError) as exc:
        module.fail_json(msg='cannot write %s: %s' % (getattr(exc, 'filename', None) or 'the status file', exc))
    # what the directories hold now: the action plugin answers the next status steps of this run
    # from it, without a round trip, while they would write the same bytes
    states = file_states(sorted(set(os.path.dirname(path) for path, _text in files)), mode=FILE_MODE)
    module.exit_json(changed=bool(written), written=written, plan_recorded=plan_recorded, diff=diffs,
                     files=states, asked_host=True)
