#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: storage_host
short_description: Read the block devices and decide the dataset volume layout of gpuops.dlserver.storage
version_added: 0.1.0
description:
  - C(action=plan) is the one read of the host the C(gpuops.dlserver.storage) role makes - C(lsblk -J -b -O)
    (sysfs where lsblk fails), C(blkid -p) of each whole drive, the mounts, each drive's read-ahead and
    scheduler, the machine id, the md driver, the mkfs and mdadm tools - and every decision
    (C(plugins/module_utils/storage/plan.py)): the drives each volume takes, the C(mdadm --create)
    command line, the filesystem to make or why none is made, the mount, the queue values, the udev rule.
  - A drive that holds a partition table, a filesystem, an md or LVM signature, partitions, a holder or a
    mount, and the boot drive, are refused (C(problems), naming the variable, the drive and what is on it)
    unless what is on it is what this role made (its UUID). The module fails with them before any change.
  - C(action=apply_queue) writes the planned read-ahead and scheduler values to sysfs where they differ.
  - C(action=verify) reads the host again and fails with what does not hold (in check mode it skips:
    nothing was made).
  - Changes nothing in C(plan) and C(verify); in check mode C(apply_queue) only says what it would write.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  action:
    description: What to do.
    type: str
    choices: [plan, apply_queue, verify]
    default: plan
  inputs:
    description: The storage role's typed inputs (C(__storage)).
    type: dict
    required: true
  in_container:
    description: Whether the host is a container (arrays are then only planned).
    type: bool
    default: false
  plan:
    description: The plan C(action=plan) returned (for C(apply_queue) and C(verify)).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Read the drives and plan the volumes
  gpuops.dlserver.__private.storage_host:
    inputs: "{{ __storage }}"
    in_container: "{{ gpuops_in_container }}"
  register: __storage_facts
"""

RETURN = r"""
plan:
  description: The plan (C(volumes), C(apply), C(queue), C(udev_rule), C(udev_rule_path), C(packages),
    C(fstrim), C(cachefilesd), C(problems), C(reason)).
  returned: always
  type: dict
status:
  description: The status file's record.
  returned: always
  type: dict
drives:
  description: The whole drives read (name, path, size, model, serial, rotational, nvme, contents, system).
  returned: always
  type: list
  elements: dict
written:
  description: The sysfs files written (C(apply_queue)).
  returned: always
  type: list
  elements: str
problems:
  description: What does not hold (C(verify)) or what was refused (C(plan)).
  returned: always
  type: list
  elements: str
"""

import os
import shutil

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import host as storage_host
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import lsblk
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import plan as storage_plan


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _host(module):
    paths = [p for v in module.params['inputs'].get('volumes') or [] for p in (v.get('drives') or {}).get('paths') or []]

    def run(argv):
        return module.run_command(argv, environ_update={'LC_ALL': 'C'})
    return storage_host.read_host(run, _read, os.path.exists, os.path.realpath, _listdir, shutil.which, paths,
                                  module.params['in_container'])


def _apply_queue(module, plan):
    written = []
    for entry in plan.get('queue') or []:
        current = _read(entry['path'])
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


def main():
    module = AnsibleModule(
        argument_spec=dict(
            action=dict(type='str', default='plan', choices=['plan', 'apply_queue', 'verify']),
            inputs=dict(type='dict', required=True),
            in_container=dict(type='bool', default=False),
            plan=dict(type='dict', default={}),
        ),
        supports_check_mode=True,
    )
    action = module.params['action']
    if action == 'verify' and module.check_mode:
        module.exit_json(changed=False, skipped=True, msg='storage verify: check mode made nothing to verify',
                         problems=[], plan=module.params['plan'], status={}, drives=[], written=[])
    if action == 'apply_queue':
        written = _apply_queue(module, module.params['plan'])
        module.exit_json(changed=bool(written), written=written, plan=module.params['plan'], status={}, drives=[],
                         problems=[])
    try:
        host = _host(module)
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


if __name__ == '__main__':
    main()
