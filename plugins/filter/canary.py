# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.canary: the host of the first batch of a batched play, chosen on purpose.
The code is ``plugins/module_utils/plan/canary.py``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: canary
author: gpuops.dlserver contributors
version_added: 0.3.0
short_description: The canary of a batched play - a GPU host with driver work, gpu_canary's first
description:
  - Used by the first play of C(playbooks/site.yml) and C(playbooks/rolling_driver_upgrade.yml), once; the
    playbook puts the host in the group C(gpuops_canary), which the batched play lists first, so the first
    batch (one host) is that host.
  - In order - the first by name of the group C(gpu_canary) (when the inventory has it) that is in this run
    and is a GPU host the plan gives driver work (C(gpuops_plan.host.gpu_count) > 0,
    C(gpuops_plan.roles.nvidia_driver.run)); else the first such host by name (with a warning when
    C(gpu_canary) has hosts in this run, none of which qualifies); else the first host (C(gpu_canary)'s
    first) that runs one of the play's roles; else none.
  - Names sort as strings, so the choice is the same in every run, whatever the order of the inventory's groups.
positional: _input, hostvars, canary_group, roles
options:
  _input:
    description: The hosts of the run (C(ansible_play_hosts)).
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars); per host C(gpuops_plan) is read.
    type: dict
    required: true
  canary_group:
    description: The hosts of the inventory group C(gpu_canary) (C([]) when it has none).
    type: list
    elements: str
    required: true
  roles:
    description: The roles the batched play runs.
    type: list
    elements: str
    default: [nvidia_driver]
"""

EXAMPLES = r"""
- name: Choose the canary of the rebooting play
  ansible.builtin.debug:
    msg: "{{ (ansible_play_hosts | gpuops.dlserver.canary(hostvars, groups.gpu_canary | default([]),
              ['os_tuning', 'nvidia_driver'])).message }}"
  run_once: true
"""

RETURN = r"""
_value:
  description: C(host) (the canary, or None), C(reason), C(warning) (None, or why C(gpu_canary) was passed
    over) and C(message) (the line to print).
  type: dict
"""

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.canary import choose_canary

display = Display()


def canary(hosts, hostvars, canary_group, roles=('nvidia_driver',)):
    try:
        if isinstance(hosts, str) or isinstance(canary_group, str):
            raise ValueError('hosts and canary_group must be lists of host names')
        records = [{'host': str(name), 'plan': plain(hostvars[name].get('gpuops_plan'))}
                   for name in hosts]
        result = choose_canary(records, [str(h) for h in canary_group or []], plain(roles))
    except ValueError as exc:
        raise AnsibleFilterError('gpuops.dlserver.canary: %s' % exc)
    except (TypeError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.canary: hostvars must map every host of the run to its variables '
                                 '(%s: %s)' % (type(exc).__name__, exc))
    if result['warning']:
        display.warning('gpuops.dlserver.canary: %s' % result['warning'])
    return result


class FilterModule(object):
    """gpuops.dlserver.canary."""

    def filters(self):
        return {'canary': canary}
