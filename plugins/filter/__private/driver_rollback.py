# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.driver_rollback: what the rolling driver upgrade does with a host after
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
  - Where the driver change itself failed, C(restored) when nvidia_driver put the node back (read back),
    else C(hold) saying whether the change was refused before anything changed, or what is unknown.
    Reasons say what happened (drained, upgraded, restored, rebooted), never what was only planned.
  - Where the collection's reboot failed (C(failed_action) the reboot module), C(hold) saying that the
    driver's change had finished before the reboot (the node is not as before), whether the host went
    down and did not come back (C(reboot_issued)), and that what it runs is unknown.
positional: _input, target, verdict, carried, summary, events
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
    description: The summary line of gpu_validate (or the failure), quoted in the reason.
    type: str
    default: ""
  events:
    description:
      - What actually happened to the host (C(plugins/module_utils/plan/rollback.py) EVENTS) - C(node),
        C(drain) (C(none), C(started) for a drain that failed, C(done)), C(upgraded), C(role_started),
        C(failed_task), C(failed_action), C(failure), C(transaction) (nvidia_driver's restore record, or
        null), C(rebooted) (null when unknown) and C(reboot_issued) (where the reboot module failed, its
        C(rebooted), true once the reboot command ran; null when unknown).
      - Left out, the host counts as drained, upgraded and not known to have rebooted.
    type: dict
  rolled_back:
    description:
      - With C(rolled_back=true), C(_input) is the decision and C(target) the version the status file reads
        after the rollback, C(verdict) the rollback's failure (C("") when it finished) - the decision said
        again from what the rollback did.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Decide what happens to the host
  ansible.builtin.debug:
    msg: "{{ '580.95.05' | gpuops.dlserver.__private.driver_rollback('580.105.08', 'fail', ['580.105.08', '580.95.05']) }}"
  # action: rollback, version: 580.95.05, uncordon: false, reason: "validation failed on driver 580.105.08; ..."
- name: The same host after its rollback, read back from the status file
  ansible.builtin.debug:
    msg: "{{ decision | gpuops.dlserver.__private.driver_rollback('580.95.05', '', rolled_back=true) }}"
  # reason: "...; rolled back to the previous version 580.95.05 (the status file reads 580.95.05): ..."
"""

RETURN = r"""
_value:
  description: C(action) (C(uncordon), C(rollback), C(restored) or C(hold)), C(version) (what the host runs
    after it, C(unknown) where the run does not know), C(uncordon) (bool), C(restored) (bool) and C(reason).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.rollback import decide, rolled_back as _rolled_back


def driver_rollback(previous, target, verdict='', carried=None, summary='', events=None, rolled_back=False):
    try:
        if rolled_back:
            if not isinstance(previous, dict):
                raise ValueError('with rolled_back=true the input is the decision, not %r' % (previous,))
            return _rolled_back(previous, target, verdict)
        return decide(previous, target, verdict, carried if carried is not None else [], summary, events)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.driver_rollback: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.driver_rollback."""

    def filters(self):
        return {'driver_rollback': driver_rollback}
