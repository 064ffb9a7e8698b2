# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.bmc_recovery: whether a host whose collection reboot failed is power-cycled
through its BMC.

One filter per file, so that the file name is the filter name; the documentation is below, the
code is ``plugins/module_utils/bmc/recovery.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: bmc_recovery
author: gpuops.dlserver contributors
version_added: 0.3.0
short_description: Whether a host that did not come back from the collection reboot is power-cycled through its BMC
description:
  - From the failed reboot (the module's C(rebooted) and message) and common's converted C(bmc) inputs,
    says C(power_cycle) or C(none) with the reason. Only a host the play took down whose reboot timed out,
    once per run, with a valid C(bmc_address), user and password. Used by common's C(tasks/bmc_recover.yml).
positional: _input
options:
  _input:
    description:
      - C(enabled), C(reboot_issued), C(failure), C(timeout), C(attempts), C(host), C(inputs) (full names).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Decide whether to power-cycle the host through its BMC
  ansible.builtin.set_fact:
    bmc_decision: >-
      {{ {'enabled': true, 'reboot_issued': true, 'failure': 'Timed out waiting for last boot time check',
          'timeout': 600, 'attempts': 0, 'host': inventory_hostname, 'inputs': {}} | gpuops.dlserver.__private.bmc_recovery }}
"""

RETURN = r"""
_value:
  description: C(action) (C(power_cycle) or C(none)) and C(reason); never the password.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc.recovery import decide


def bmc_recovery(state):
    if not isinstance(state, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.bmc_recovery: the input must be a dict, got %s'
                                 % type(state).__name__)
    return decide(state)


class FilterModule(object):
    """gpuops.dlserver.__private.bmc_recovery."""

    def filters(self):
        return {'bmc_recovery': bmc_recovery}
