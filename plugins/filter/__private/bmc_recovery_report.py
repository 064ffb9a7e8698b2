# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.bmc_recovery_report: the line reported after a
power cycle through the BMC (or why there was none).

One filter per file, so that the file name is the filter name; the documentation is below, the
code is ``plugins/module_utils/bmc/recovery.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: bmc_recovery_report
author: gpuops.dlserver contributors
version_added: 0.3.0
short_description: What the BMC power cycle after a failed reboot did, as one line
description:
  - The decision of C(gpuops.dlserver.__private.bmc_recovery) and what followed - whether the BMC took
    the request, whether the host answered again, the error - as one line, the password scrubbed from any
    error text. Used by common's C(tasks/bmc_recover.yml), which registers its two steps (they may fail
    without failing the host) and passes their results here.
positional: _input, power, wait, secret
options:
  _input:
    description: The decision.
    type: dict
    required: true
  power:
    description: The registered result of the power cycle (M(community.general.ipmi_power)); skipped or empty - it did not run.
    type: dict
    required: true
  wait:
    description: The registered result of the wait for the host (M(ansible.builtin.wait_for_connection)); skipped or empty - it did not run.
    type: dict
    required: true
  secret:
    description: Text to scrub from the error (the BMC password).
    type: str
    default: ''
"""

EXAMPLES = r"""
- name: Say what the BMC recovery did
  ansible.builtin.debug:
    msg: "{{ (bmc_decision | gpuops.dlserver.__private.bmc_recovery_report(bmc_power, bmc_wait, bmc_password)).message }}"
"""

RETURN = r"""
_value:
  description: C(power_cycled), C(back), C(message).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc.recovery import outcome, report


def bmc_recovery_report(decision, power, wait, secret=''):
    if not isinstance(decision, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.bmc_recovery_report: the decision must be a dict, got %s'
                                 % type(decision).__name__)
    try:
        powered, back, error = outcome(power, wait)
    except ValueError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.bmc_recovery_report: %s' % exc)
    return report(decision, powered, back, error, secret)


class FilterModule(object):
    """gpuops.dlserver.__private.bmc_recovery_report."""

    def filters(self):
        return {'bmc_recovery_report': bmc_recovery_report}
