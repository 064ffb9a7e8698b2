# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.reboot_request: add a role's reboot decision to the host's single request.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is below, the code is
``plugins/module_utils/plan/reboot.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: reboot_request
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Add one role's reboot decision to the host's single reboot request
description:
  - Every role of the collection decides whether its change needs a reboot (in Python, one
    vocabulary - C(none), C(reboot), C(deferred), C(skipped)) and hands that decision to the
    private role's C(reboot.yml), which merges it into C(gpuops_reboot) with this filter.
  - The collection's single handler (C(listen) topic C(gpuops reboot)) then reboots the host
    once, after every role that asked, with every reason in its message and the longest
    timeout asked for.
positional: _input, role, decision
options:
  _input:
    description: The host's request so far (C(gpuops_reboot)), or C({}).
    type: dict
    required: true
  role:
    description: The name of the role the decision comes from.
    type: str
    required: true
  decision:
    description: The role's decision, C({needed, action, reason, timeout}).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Add the reboot of os_tuning to the request
  ansible.builtin.set_fact:
    gpuops_reboot: "{{ gpuops_reboot | default({}) | gpuops.dlserver.__private.reboot_request('os_tuning', decision) }}"
  vars:
    decision: {needed: true, action: reboot, reason: "iommu=pt is not active", timeout: 1800}
"""

RETURN = r"""
_value:
  description:
    - C(pending) (every role with an outstanding reboot, with its action and reason), C(roles)
      (the roles the handler reboots for now), C(message), C(timeout) and C(served).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.reboot import add_request


def reboot_request(current, role, decision):
    try:
        return add_request(current, str(role), dict(decision))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.reboot_request: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.reboot_request."""

    def filters(self):
        return {'reboot_request': reboot_request}
