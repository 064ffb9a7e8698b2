# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a host that did not come back from the collection's reboot is power-cycled through its BMC, and what is said.

Where the collection's reboot (the handler ``gpuops reboot``) failed, roles/common/tasks/bmc_recover.yml
runs: from the next handler of ``gpuops reboot`` (playbooks/site.yml and every role run on its own:
with gpuops_bmc_recovery the reboot's failure is kept, not fatal, and the host fails after the
recovery unless it came back), or from the rescue of playbooks/rolling_driver_upgrade.yml, which
holds the host either way. The file has no rescue of its own (Ansible runs none inside a handler's
tasks): each step that may fail is registered and judged by ``outcome``. ``decide`` says whether the host is power-cycled through its
BMC (community.general.ipmi_power, ``state: boot``), once, and waited for again, or left as it is,
and why; ``report`` says what came of it. Never on a host the play did not take down (the reboot
module's ``rebooted`` is true once its reboot command ran), never twice in a run, never on a
failure a power cycle does not mend. The power cycle is throttled like the reboot (at most
``gpuops_reboot_throttle`` hosts, else the play's batch), so no more hosts than the batch are
power-cycled at once.

Pure functions; tested from ``tests/unit/plugins/module_utils/data/bmc_recovery_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc.credentials import scrub

# What the reboot module says when the host went down and did not answer again in time.
TIMED_OUT = ('timed out waiting for',)


def decide(state):
    """``{'action': 'power_cycle' | 'none', 'reason'}`` from ``state``: ``enabled`` (gpuops_bmc_recovery),
    ``reboot_task`` (what failed was the collection's reboot), ``reboot_issued`` (the reboot module's ``rebooted``: its reboot command ran; None when unknown),
    ``failure`` (its message), ``timeout`` (seconds it waited), ``attempts`` (power cycles of this
    host in this run), ``inputs`` (common's ``bmc`` entry point, converted; full names), ``host``."""
    host = state.get('host') or 'the host'
    failure = str(state.get('failure') or 'no message').strip()
    timeout = state.get('timeout')
    inputs = state.get('inputs') or {}

    def none(why):
        return {'action': 'none', 'reason': '%s: not power-cycled through its BMC: %s' % (host, why)}

    if state.get('enabled') is not True:
        return none('gpuops_bmc_recovery is false (the reboot failed: %s)' % failure)
    if state.get('reboot_task') is not True:
        return none('what failed was not the collection\'s reboot (%s)' % failure)
    if state.get('reboot_issued') is not True:
        return none('the reboot command did not run (%s), so this play did not take the host down: a power cycle '
                    'is only for a host the play rebooted' % failure)
    if not any(word in failure.lower() for word in TIMED_OUT):
        return none('the host went down but the reboot failed in a way a power cycle does not mend (%s)' % failure)
    if (state.get('attempts') or 0) >= 1:
        return none('it was power-cycled once in this run already, and one is all the collection does')
    # The BMC inputs were checked by the registry of input checks (core/input_checks.py, common.bmc:
    # required and well-formed where gpuops_bmc_recovery is true) in this very step's conversion
    # (bmc_recover.yml runs __private.role_inputs for common's bmc entry point first), and at the play's start.
    return {'action': 'power_cycle',
            'reason': '%s was rebooted by this play and did not come back within %s s (%s): power-cycling it once '
                      'through its BMC at %s' % (host, '?' if timeout is None else timeout, failure,
                                                 inputs.get('bmc_address'))}


def _result(name, value):
    """A registered task result as a dict (None: the step did not run); ValueError naming ``name`` for anything else."""
    if value in (None, ''):
        return None
    if not isinstance(value, dict):
        raise ValueError('%s must be the registered result of its task, not %r' % (name, value))
    return None if value.get('skipped') else value


def outcome(power, wait):
    """``(powered, back, error)`` from the registered results of the power cycle (``power``,
    community.general.ipmi_power) and of the wait for the host (``wait``, wait_for_connection):
    a step counts only where it ran and did not fail; ``error`` is the message of the first that
    failed ('' when none did)."""
    power, wait = _result('power', power), _result('wait', wait)
    powered = power is not None and not power.get('failed')
    back = powered and wait is not None and not wait.get('failed')
    error = ''
    for step in (power, wait):
        if step is not None and step.get('failed'):
            error = str(step.get('msg') or 'no message')
            break
    return powered, back, error


def report(decision, powered, back, error, secret=None):
    """``{'power_cycled', 'back', 'message'}``: the one line the run reports for the host.
    ``powered``: the BMC took the power-cycle request; ``back``: the host answered again after it;
    ``error``: what failed (the BMC's answer, or the wait), scrubbed of ``secret`` (the password,
    should a library echo it)."""
    error = scrub(error, secret).strip().replace('\n', ' ')[:400]
    if decision.get('action') != 'power_cycle':
        return {'power_cycled': False, 'back': False, 'message': decision.get('reason', '')}
    if not powered:
        return {'power_cycled': False, 'back': False,
                'message': '%s; the BMC did not power-cycle it: %s' % (
                    decision['reason'], error or 'no answer from the BMC')}
    if back:
        return {'power_cycled': True, 'back': True,
                'message': '%s; it came back after the power cycle' % decision['reason']}
    return {'power_cycled': True, 'back': False,
            'message': '%s; it did not come back after the power cycle either: %s' % (
                decision['reason'], error or 'no answer')}
