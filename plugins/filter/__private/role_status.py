# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.role_status.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: role_status
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: The status record of a role (what it decided, did and skipped, and why)
description:
- Builds the record that a role's C(tasks/status.yml) writes through C(roles/common/tasks/status.yml) to its
  status file, from the facts and registered results the role passes in
  (C(plugins/module_utils/core/status.py), one builder per role).
- A part that is absent, or the registered result of a skipped task, records what a run that never got there
  says (C(not read (check mode)), C(not verified) with the reason).
- "Roles: C(nvidia_driver) (parts C(plan), C(inputs), C(resolved), C(after), C(verified), C(settings)),
  C(nvidia_container_toolkit) (C(plan), C(inputs), C(keyring), C(resolved), C(verified), C(runtime)),
  C(dcgm_exporter) (C(config), C(inputs), C(verified), C(other_sources))."
- Fails naming the role for an unknown role or a required part that is missing or not a dict.
positional: _input, role
options:
  _input:
    description: The parts, by name.
    type: dict
    required: true
  role:
    description: The role whose record is built.
    type: str
    required: true
    choices: [nvidia_driver, nvidia_container_toolkit, dcgm_exporter]
"""

EXAMPLES = r"""
- name: Read nvidia_driver's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: nvidia_driver
  register: driver_inputs

- name: The status record of the role's decisions
  ansible.builtin.set_fact:
    nvidia_driver_status: "{{ parts | gpuops.dlserver.__private.role_status('nvidia_driver') }}"
  vars:
    parts:
      plan: "{{ gpuops_plan }}"
      inputs: "{{ driver_inputs.inputs }}"
      resolved: {}
"""

RETURN = r"""
_value:
  description: The role's status record (a dict; its keys are described in the role's documentation).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.status import StatusError, build


def role_status(parts, role):
    try:
        return build(str(role), parts)
    except (StatusError, TypeError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError("gpuops.dlserver.__private.role_status: %s" % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.role_status."""

    def filters(self):
        return {"role_status": role_status}
