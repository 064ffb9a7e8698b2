# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.validate_fleet_table: the fleet table at the end of playbooks/validate.yml.

One filter per file; the code is ``plugins/module_utils/validate/report.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: validate_fleet_table
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: The fleet's gpu_validate verdicts as a table (node, verdict, device, worst check, measured/peak)
description:
  - One line per host of the list, from its C(gpu_validate_report) fact; a host without it is C(not run).
positional: _input, hostvars
options:
  _input:
    description: The hosts (C(ansible_play_hosts_all)).
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Fleet table
  ansible.builtin.debug:
    msg: "{{ ansible_play_hosts_all | gpuops.dlserver.__private.validate_fleet_table(hostvars) }}"
"""

RETURN = r"""
_value:
  description: Text lines, the header first.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.report import fleet_inputs, fleet_table


def validate_fleet_table(hosts, hostvars):
    try:
        hosts = fleet_inputs(hosts, hostvars)
        return fleet_table(hosts, hostvars)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.validate_fleet_table: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.validate_fleet_table."""

    def filters(self):
        return {'validate_fleet_table': validate_fleet_table}
