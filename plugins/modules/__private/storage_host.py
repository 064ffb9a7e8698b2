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
    (C(plugins/module_utils/storage/plan.py)) - the drives each volume takes, the C(mdadm --create)
    command line, the filesystem to make or why none is made, the mount, the queue values, the udev rule.
  - A drive that holds a partition table, a filesystem, an md or LVM signature, partitions, a holder or a
    mount, and the boot drive, are refused (C(problems), naming the variable, the drive and what is on it)
    unless what is on it is what this role made (its UUID). The module fails with them before any change.
  - C(action=apply_queue) writes the planned read-ahead and scheduler values to sysfs where they differ.
  - C(action=verify) reads the host again and fails with what does not hold (in check mode it skips, as
    nothing was made).
  - Changes nothing in C(plan) and C(verify); in check mode C(apply_queue) only says what it would write.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpuops.dlserver.attributes.host_check_mode
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
- name: Read the storage role's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: storage
  register: storage_inputs

- name: Read the drives and plan the volumes
  gpuops.dlserver.__private.storage_host:
    inputs: "{{ storage_inputs.inputs }}"
    in_container: "{{ storage_inputs.in_container }}"
  register: storage_plan
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


from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import module as storage_module


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
    storage_module.run(module)


if __name__ == '__main__':
    main()
