# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.driver_rollback: what the rolling driver upgrade does with a host after
its upgrade and validation. The code is ``plugins/module_utils/plan/rollback.py``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: driver_rollback
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Decide whether an upgraded host goes back into service, is rolled back, or is held
description:
  - Used by C(playbooks/rolling_driver_upgrade.yml) after a host's driver upgrade and its
    C(gpuops.dlserver.gpu_validate) run.
  - C(uncordon) when validation passed (or warned); when it failed (or did not run), C(rollback) to
    the version recorded before the upgrade when the repository still carries it, else C(hold).
    A host whose validation failed is never uncordoned.
positional: _input, target, verdict, carried, summary
options:
  _input:
    description: The driver version recorded before the upgrade (C("") when the role had not installed one).
    type: str
    required: true
  target:
    description: The driver version the upgrade installed.
    type: str
    required: true
  verdict:
    description: The verdict of gpu_validate (C(pass), C(warn), C(fail)) or C(not_run).
    type: str
    required: true
  carried:
    description: The driver versions the repository carries (C(repository_versions) of the nvidia_driver status file).
    type: list
    elements: str
    required: true
  summary:
    description: The summary line of gpu_validate, quoted in the reason.
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: Decide what happens to the host
  ansible.builtin.debug:
    msg: "{{ '580.95.05' | gpuops.dlserver.driver_rollback('580.105.08', 'fail', ['580.105.08', '580.95.05']) }}"
  # action: rollback, version: 580.95.05, uncordon: false, reason: "validation failed on driver 580.105.08; ..."
"""

RETURN = r"""
_value:
  description: C(action) (C(uncordon), C(rollback) or C(hold)), C(version) (what the host runs after it),
    C(uncordon) (bool) and C(reason).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.rollback import decide


def driver_rollback(previous, target, verdict, carried, summary=''):
    try:
        return decide(previous, target, verdict, carried, summary)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.driver_rollback: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.driver_rollback."""

    def filters(self):
        return {'driver_rollback': driver_rollback}
