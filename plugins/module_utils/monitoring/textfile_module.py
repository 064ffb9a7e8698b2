# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one call of gpuops.dlserver.__private.node_exporter_textfile: ``run(module)`` renders the GPU
textfile (monitoring/gpu_textfile.render) and writes it where it changed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import read_text, write_atomic
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.gpu_textfile import parse_reboot_marker, render


def run(module):
    """The module's whole call, ended with exit_json or fail_json."""
    params = module.params
    path = params['path']
    directory = os.path.dirname(path)
    if not re.match(r'0?[0-7]{3}\Z', params['mode']):
        module.fail_json(msg='mode: %r is not an octal file mode such as 0644' % params['mode'])
    mode = int(params['mode'], 8)
    if not path.endswith('.prom'):
        module.fail_json(msg='path: %s must end in .prom, or the textfile collector ignores it' % path)
    if not os.path.isdir(directory) and not module.check_mode:
        module.fail_json(msg='path: the directory %s does not exist (the textfile collector directory)' % directory)
    marker = read_text(params['reboot_marker'])
    status = None
    status_text = read_text(params['os_tuning_status_file'])
    if status_text:
        try:
            status = json.loads(status_text)
        except ValueError as exc:
            module.fail_json(msg='os_tuning_status_file: %s is not JSON: %s' % (params['os_tuning_status_file'], exc))
    content = render(params['gpu'], params['plan'], marker, status)
    before = read_text(path)
    changed = before != content
    result = dict(changed=changed, content=content, reboot_pending_roles=parse_reboot_marker(marker),
                  diff=dict(before=before or '', after=content, before_header=path, after_header=path))
    if changed and not module.check_mode:
        try:
            write_atomic(path, content, mode, module=module)
        except (IOError, OSError) as exc:
            module.fail_json(msg='path: cannot write %s: %s' % (path, exc))
    if not changed or module.check_mode:
        if before is not None and not module.check_mode:
            result['changed'] = module.set_fs_attributes_if_different(
                module.load_file_common_arguments(dict(path=path, mode=params['mode'])), False)
    module.exit_json(**result)
