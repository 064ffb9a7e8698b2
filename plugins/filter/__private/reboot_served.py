# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.reboot_served: the host's reboot request after the reboot ran.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is below, the code is
``plugins/module_utils/plan/reboot.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: reboot_served
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: The host's reboot request after the collection's handler rebooted it
description:
  - Clears the pending roles of C(gpuops_reboot) and keeps the names of the roles the reboot
    served in C(served). Used by the private role's reboot handler.
positional: _input
options:
  _input:
    description: The host's request (C(gpuops_reboot)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Forget the served requests
  ansible.builtin.set_fact:
    gpuops_reboot: "{{ gpuops_reboot | gpuops.dlserver.__private.reboot_served }}"
"""

RETURN = r"""
_value:
  description: The request with C(roles) and C(pending) empty and C(served) listing the roles.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.reboot import served


def reboot_served(current):
    if not isinstance(current, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.reboot_served: gpuops_reboot must be a dict, got %r'
                                 % type(current).__name__)
    try:
        return served(current)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.reboot_served: gpuops_reboot: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.reboot_served."""

    def filters(self):
        return {'reboot_served': reboot_served}
