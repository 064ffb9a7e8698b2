# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.validate_peers: the cross-node group of gpu_validate.

One filter per file; the code is ``plugins/module_utils/validate/report.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: validate_peers
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: The hosts of a group as gpu_validate's cross-node peers (name and address)
description:
  - For each host of the list, in order, its name and address - C(gpu_validate_address), else
    C(ansible_host), else the inventory name. An address with whitespace or a newline fails.
positional: _input, hostvars
options:
  _input:
    description: The hosts of the group (C(groups[gpu_validate_peer_group])).
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Peers of the cross-node tests
  ansible.builtin.set_fact:
    peers: "{{ groups['gpu_nodes'] | gpuops.dlserver.__private.validate_peers(hostvars) }}"
"""

RETURN = r"""
_value:
  description: A list of C(name), C(address).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.report import peers


def validate_peers(hosts, hostvars):
    try:
        return peers(hosts, hostvars)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    """gpuops.dlserver.__private.validate_peers."""

    def filters(self):
        return {'validate_peers': validate_peers}
