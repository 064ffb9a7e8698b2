# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side of the module gpuops.dlserver.__private.storage_host: its one read of the host and
the sysfs writes of the queue values (the module file keeps only its interface).

Python 3.8+, the standard library and Ansible's module_utils.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import read_text
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import host as storage_host
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import lsblk
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import plan as storage_plan


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def read(module):
    """The one read of the host (storage/host.py read_host) for the drives the volumes name."""
    paths = [p for v in module.params['inputs'].get('volumes') or [] for p in (v.get('drives') or {}).get('paths') or []]

    def run(argv):
        return module.run_command(argv, environ_update={'LC_ALL': 'C'})
    return storage_host.read_host(run, read_text, os.path.exists, os.path.realpath, _listdir, shutil.which, paths,
                                  module.params['in_container'])


def apply_queue(module, plan):
    """Write each planned read-ahead and scheduler value that differs (none in check mode); the paths written."""
    written = []
    for entry in plan.get('queue') or []:
        current = read_text(entry['path'])
        if current is None:
            module.fail_json(msg='storage: %s cannot be read: is %s a block device here?' % (entry['path'], entry['drive']))
        now = storage_host.parse_scheduler(current)[0] if entry['attribute'] == 'scheduler' else current.strip()
        if now == entry['value']:
            continue
        written.append(entry['path'])
        if module.check_mode:
            continue
        try:
            with open(entry['path'], 'w') as handle:
                handle.write(entry['value'])
        except (IOError, OSError) as exc:
            module.fail_json(msg='storage: writing %s to %s failed: %s (read-only sysfs in a container?)' % (
                entry['value'], entry['path'], exc), written=written)
    return written


def run(module):
    """The module's actions: ``plan`` (read and decide), ``apply_queue``, ``verify``; exits the module."""
    action = module.params['action']
    if action == 'verify' and module.check_mode:
        module.exit_json(changed=False, skipped=True, msg='storage verify: check mode made nothing to verify',
                         problems=[], plan=module.params['plan'], status={}, drives=[], written=[])
    if action == 'apply_queue':
        written = apply_queue(module, module.params['plan'])
        module.exit_json(changed=bool(written), written=written, plan=module.params['plan'], status={}, drives=[],
                         problems=[])
    try:
        host = read(module)
    except lsblk.LsblkError as exc:
        module.fail_json(msg='storage: the block devices cannot be read: %s' % exc)
    if action == 'verify':
        problems = storage_host.verify(module.params['plan'], host)
        result = dict(changed=False, problems=problems, plan=module.params['plan'], status={},
                      drives=host['drives'], written=[])
        if problems:
            module.fail_json(msg='storage verify: %s' % '; '.join(problems), **result)
        module.exit_json(**result)
    plan = storage_plan.decide(module.params['inputs'], host)
    result = dict(changed=False, plan=plan, status=storage_plan.status_record(plan, host['source']),
                  drives=host['drives'], written=[], problems=plan['problems'])
    if plan['problems']:
        module.fail_json(msg='gpuops.dlserver storage: bad input, nothing was changed: %s.' % '; '.join(
            plan['problems']), **result)
    module.exit_json(**result)
