#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: status_file
short_description: Record a role's status and the host's plan under /etc/gpuops
version_added: 0.2.0
description:
  - Writes a role's status record (what it decided and did, and why) as JSON to O(path), and the
    host's hardware plan to O(plan_path), in one round trip. The last step of every role of the
    collection (C(roles/common/tasks/status.yml)) and of the first play of C(playbooks/site.yml).
  - Each file is written only when its bytes, owner (root), group (root) or mode (0644) differ
    from what would be written, atomically (a temporary file in the same directory, then a
    rename), so a run that changes nothing rewrites nothing. The directory of a file is created
    (root, 0755) when it is missing.
  - The JSON is the text C(to_nice_json(sort_keys=true)) gives, plus a newline
    (C(plugins/module_utils/core/status.py)).
  - An action plugin runs first on the controller. The first call of a run for a host asks the
    host (this module), which also returns the digest, mode and owner of every C(*.json) file in
    the directories it wrote to. Later calls of the same run (same C(ansible-playbook) process)
    whose files would get exactly those bytes and already have root's 0644 are answered on the
    controller (RV(asked_host) false), so a no-op run of C(playbooks/site.yml) asks each host once,
    not once per role. The digests are kept in the fact C(__gpuops_status_files) with the run
    they belong to; a later run does not trust them.
  - A plan that leaves the driver branch open (C(driver.branch.from) is C(source) - the branches
    of the driver source are not known for the host's platform) is not recorded; the
    C(gpuops.dlserver.nvidia_driver) role refuses such a plan, naming C(nvidia_driver_branch).
  - Only a plan that was accepted is recorded - a plan that runs the C(gpuops.dlserver.nvidia_driver)
    role is recorded once that role has chosen the driver to install in this run (O(driver_target)),
    so a run refused before it acted (a branch the source does not carry) leaves the record as it was.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - gpuops.dlserver.attributes.action_plugin
attributes:
  diff_mode:
    support: full
  platform:
    platforms: posix
options:
  path:
    description:
      - The role's status file, an absolute path (the roles use C(/etc/gpuops/<role>.json)).
      - Left out, only the plan is recorded.
    type: path
  status:
    description: The role's status record. Required with O(path).
    type: dict
  plan:
    description: The host's plan (C(gpuops_plan), from M(gpuops.dlserver.host_plan)), recorded at O(plan_path).
    type: dict
  plan_path:
    description: Where the plan is recorded.
    type: path
    default: /etc/gpuops/plan.json
  driver_target:
    description:
      - The driver version the C(gpuops.dlserver.nvidia_driver) role chose in this run (the C(target) of
        its read of the host and repositories). Left out or empty, a plan that runs the driver role is
        not recorded (the role has not accepted it yet); a plan that does not run it is recorded.
    type: str
    version_added: 0.2.0
  fact:
    description:
      - Also publish O(status) as a fact of this name (the roles publish C(<role>_status) so), in
        the same task. Handled by the action plugin.
    type: str
    version_added: 0.2.0
  known_files:
    description:
      - The digest and attributes of the host's status files as another module read them earlier in this
        run - RV(gpuops.dlserver.gpu_facts#module:status_files), which the probe of C(playbooks/site.yml)'s
        first play returns - by path, each with C(sha256) and C(attrs) (root's, mode 0644). Handled by the
        action plugin.
      - Used only while this run has no digests of its own, so that its first call, too, is answered on the
        controller when every file it would write already holds those bytes. A value of another shape is
        ignored (the host is asked).
    type: dict
    version_added: 0.2.0
"""

EXAMPLES = r"""
- name: Write the status file and record the host's plan
  gpuops.dlserver.__private.status_file:
    path: /etc/gpuops/node_exporter.json
    status:
      run: true
      reason: every host runs node_exporter
    plan: "{{ gpuops_plan }}"
"""

RETURN = r"""
written:
  description: The files written (or, in check mode, that would be written).
  returned: always
  type: list
  elements: str
  sample: [/etc/gpuops/node_exporter.json]
asked_host:
  description:
    - Whether the host was asked (false when this run's digests showed that the files already hold
      what would be written).
  returned: always
  type: bool
  sample: false
plan_recorded:
  description: Whether the plan on the host is the one given (written now or already there).
  returned: always
  type: bool
  sample: true
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.core import status_module


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path'),
            status=dict(type='dict'),
            plan=dict(type='dict'),
            plan_path=dict(type='path', default='/etc/gpuops/plan.json'),
            driver_target=dict(type='str'),
            fact=dict(type='str'),
            known_files=dict(type='dict'),
        ),
        required_by=dict(path=['status']),
        supports_check_mode=True,
    )
    status_module.run(module)


if __name__ == '__main__':
    main()
