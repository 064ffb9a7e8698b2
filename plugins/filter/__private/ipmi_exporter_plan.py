# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.ipmi_exporter_plan.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: ipmi_exporter_plan
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Check the ipmi_exporter role's inputs and decide how the exporter runs on the host
description:
- Every decision of the C(gpuops.dlserver.ipmi_exporter) role
  (C(plugins/module_utils/monitoring/ipmi_exporter.py)) - the listen address, each module (credential set) with
  its user and password (C(plugins/module_utils/bmc/credentials.py)), driver, privilege, collectors, timeout and
  workaround flags, the in-band mode (the plan's decision), the configuration file, the drop-in over the package's unit
  (sandboxed like node_exporter's) and what verify scrapes.
- Runs on inputs the registry of input checks (C(plugins/module_utils/core/input_checks.py)) accepted before the
  role's first task. Fails (raises) on a platform without the package, and on inputs that are not the typed
  inputs; the message never contains a password.
positional: _input, platform, bmc
options:
  _input:
    description: The role's typed variables without prefix (C(__ipmi_exporter)).
    type: dict
    required: true
  platform:
    description: The platform variables (C(__ipmi_exporter_platform) of C(vars/Debian.yml)) - C(name), C(package),
      C(package_binary), C(package_service).
    type: dict
    required: true
  bmc:
    description:
      - The host plan's C(bmc) (C(gpuops_plan.bmc)) - C(local) and C(local_reason), whether the exporter serves
        the host's own BMC in-band, decided by the plan from C(ipmi_exporter_local) and the probe's in-band
        device (C(monitoring/ipmi_exporter.py) C(local_mode)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Read ipmi_exporter's variables, converted by its argument spec (the output holds passwords)
  gpuops.dlserver.__private.role_inputs:
    role: ipmi_exporter
  register: ipmi_exporter_inputs
  no_log: true

- name: Decide how ipmi_exporter runs on a Debian host with an in-band BMC device
  ansible.builtin.set_fact:
    ipmi_exporter_plan: >-
      {{ ipmi_exporter_inputs.inputs | gpuops.dlserver.__private.ipmi_exporter_plan(
           {'name': 'Debian 12', 'package': 'prometheus-ipmi-exporter',
            'package_binary': '/usr/bin/prometheus-ipmi-exporter', 'package_service': 'prometheus-ipmi-exporter'},
           gpuops_plan.bmc) }}
  no_log: true
"""

RETURN = r"""
_value:
  description:
  - C(local), C(local_reason), C(remote), C(modules), C(service), C(config_file), C(config_content) (holds the
    passwords), C(unit_file), C(unit_content), C(udev_rule_file), C(udev_rule), C(listen), C(verify),
    C(verify_targets).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import ipmi_exporter as _ipmi


def ipmi_exporter_plan(inputs, platform, bmc):
    if not isinstance(inputs, dict) or not isinstance(platform, dict) or not isinstance(bmc, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.ipmi_exporter_plan: the typed inputs, the platform and the '
                                 'plan\'s bmc must be dicts (got %s, %s, %s)' % (
                                     type(inputs).__name__, type(platform).__name__, type(bmc).__name__))
    try:
        return _ipmi.decide(inputs, platform, bmc)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))
    except (KeyError, TypeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.ipmi_exporter_plan: the typed inputs lack a value '
                                 '(%s: %s); run the role\'s preflight first' % (type(exc).__name__, exc))


class FilterModule(object):
    """gpuops.dlserver.__private.ipmi_exporter_plan."""

    def filters(self):
        return {'ipmi_exporter_plan': ipmi_exporter_plan}
