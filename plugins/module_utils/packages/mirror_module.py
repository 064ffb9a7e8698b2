# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one call of gpuops.dlserver.mirror_index: ``run(module)`` checks the mirror playbook's inputs
(validate_only) or indexes the mirror directory (packages/mirror.py) and writes SHA256SUMS where it changed."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.mirror import (
    SUMS_NAME,
    index_mirror,
    write_index,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.mirror_inputs import problems as mirror_problems


def run(module):
    """The module's whole call, ended with exit_json or fail_json."""
    params = module.params
    if params['validate_only']:
        # the mirror playbook's variables by what they mean (module_utils/packages/mirror_inputs.py)
        problems = mirror_problems('gpuops', {'gpuops_mirror_dir': params['path'],
                                              'gpuops_mirror_artifacts': params['artifacts'],
                                              'gpuops_mirror_url': params['mirror_url'],
                                              'gpuops_mirror_host': params['host']})
        if problems:
            module.fail_json(msg='gpuops.dlserver.mirror: bad input, nothing was fetched or written '
                                 '(gpuops_mirror_artifacts entries need `path` (relative, no ..), `url` and '
                                 '`checksum: sha256:<64 hex>`): ' + '; '.join(problems), problems=problems)
        module.exit_json(changed=False, problems=[])

    mirror_dir = params['path']
    if not os.path.isdir(mirror_dir):
        module.fail_json(msg='the mirror directory %s does not exist' % mirror_dir, problems=[])
    old_text, new_text, changes, problems = index_mirror(mirror_dir, params['artifacts'], params['scan'])
    if problems:
        module.fail_json(msg='cannot index the mirror %s: %s' % (mirror_dir, '; '.join(problems)),
                         problems=problems)
    changed = new_text != old_text
    result = dict(changed=changed, index=os.path.join(mirror_dir, SUMS_NAME), problems=[], **changes)
    if module._diff and changed:
        result['diff'] = dict(before=old_text, after=new_text,
                              before_header=result['index'], after_header=result['index'])
    if changed and not module.check_mode:
        try:
            write_index(mirror_dir, new_text, module=module)
        except OSError as exc:
            module.fail_json(msg='cannot write %s: %s' % (result['index'], exc), problems=[str(exc)])
    module.exit_json(**result)
