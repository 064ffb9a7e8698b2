# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reboots, one vocabulary for every role of the collection.

``decide()`` turns what a role found (does its change need a reboot, may it reboot, is the
kernel this host's) into one decision: ``{needed, action, reason, timeout}`` with ``action``
one of ``none`` (nothing pending), ``reboot`` (the collection's handler reboots), ``deferred``
(the user's ``<role>_reboot`` is false: recorded, the run after the reboot converges) or
``skipped`` (the kernel or boot loader is not this host's, e.g. a container).
``add_request()`` merges one role's decision into the host's single request
(``gpuops_reboot``), so a host that needs several roles' reboots reboots once with every
reason. ``lab_container()`` is TEST-ONLY: the lab's switch ``gpuops_lab_container_reboot`` turns
a reboot a lab container would skip into a real one (the failure injection of
molecule/rolling_upgrade). Pure functions, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ACTIONS = ('none', 'reboot', 'deferred', 'skipped')
DEFAULT_TIMEOUT = 1800
NOT_OWNED = '; not rebooted: '
# TEST-ONLY (lab_container): the lab's switch, the longest wait it accepts, and the command its
# containers reboot with (`shutdown -r 0`, the reboot module's default, needs logind, which the
# lab's containers do not run; systemd's reboot stops a container, and nothing restarts it).
LAB_SWITCH = 'gpuops_lab_container_reboot'
LAB_MAX_SECONDS = 3600
LAB_COMMAND = 'systemctl reboot'


def decide(needed, why, allowed, allowed_variable, host_owned=True, not_owned_reason='', timeout=DEFAULT_TIMEOUT):
    """One role's reboot decision.

    ``needed``: the role's change takes effect only after a reboot, because ``why``.
    ``allowed``: the user's ``<role>_reboot`` (named by ``allowed_variable``).
    ``host_owned``: the running kernel and boot loader are this host's (false in containers,
    where ``not_owned_reason`` says why). A reboot the user defers is ``deferred`` wherever it
    would happen; otherwise one that cannot happen here is ``skipped``.
    """
    if not needed:
        return {'needed': False, 'action': 'none', 'reason': why or 'no reboot needed', 'timeout': timeout}
    if not allowed:
        return {'needed': True, 'action': 'deferred', 'timeout': timeout,
                'reason': '%s; deferred: %s is false, reboot when convenient and run the play again'
                          % (why, allowed_variable)}
    if not host_owned:
        return {'needed': True, 'action': 'skipped', 'timeout': timeout,
                'reason': '%s%s%s' % (why, NOT_OWNED, not_owned_reason or 'the kernel is not this host\'s')}
    return {'needed': True, 'action': 'reboot', 'timeout': timeout,
            'reason': '%s; rebooting once every role of the play has asked (%s is true)' % (why, allowed_variable)}


def lab_container(decision, seconds, in_container, lab_node):
    """TEST-ONLY: ``decision`` as the lab's switch ``gpuops_lab_container_reboot`` makes it.

    ``seconds``: the switch (0: off; else how long the handler waits for the container to come
    back, 1 to LAB_MAX_SECONDS). ``in_container``: the host is a container guest;
    ``lab_node``: it is in the lab's group ``lab_nodes`` (inventories/lab). Only on such a host is
    a ``skipped`` reboot (the kernel is not the container's) turned into ``reboot``, with
    ``timeout`` = ``seconds`` and ``command`` = LAB_COMMAND: the container's systemd reboots,
    which stops the container. Elsewhere the switch is ignored and a needed reboot's reason says
    so; every other action is left as it is (a deferred reboot stays deferred).
    """
    _check(decision)
    if isinstance(seconds, bool) or not isinstance(seconds, int) or not 0 <= seconds <= LAB_MAX_SECONDS:
        raise ValueError('%s is a number of seconds from 0 (off) to %d, got %r' % (LAB_SWITCH, LAB_MAX_SECONDS, seconds))
    if not seconds:
        return decision
    if not (in_container is True and lab_node is True):
        if not decision['needed']:
            return decision
        return dict(decision, reason='%s; %s is TEST-ONLY and ignored here (not a container of the lab\'s group '
                                     'lab_nodes)' % (decision['reason'], LAB_SWITCH))
    if decision['action'] != 'skipped':
        return decision
    why, _sep, not_owned = decision['reason'].partition(NOT_OWNED)
    reason = ('%s; rebooting the lab container although %s: TEST-ONLY switch %s (`%s` stops the container; the '
              'handler waits %d s for it)' % (why, not_owned or 'the kernel is not its own', LAB_SWITCH, LAB_COMMAND,
                                              seconds))
    return dict(decision, action='reboot', timeout=seconds, command=LAB_COMMAND, reason=reason)


def _check(decision):
    if not isinstance(decision, dict) or decision.get('action') not in ACTIONS:
        raise ValueError('a reboot decision is a dict with action one of %s, got %r' % (', '.join(ACTIONS), decision))


def add_request(current, role, decision):
    """The host's reboot request with ``role``'s decision added.

    ``pending`` lists every role whose reboot is outstanding (any action but none);
    ``roles`` the ones the handler reboots for now; ``message`` and ``timeout`` (the largest
    asked for) are what the handler uses.
    """
    _check(decision)
    request = {'pending': {}, 'roles': {}, 'served': []}
    request.update(dict(current or {}))
    pending = dict(request.get('pending') or {})
    roles = dict(request.get('roles') or {})
    if decision['needed']:
        pending[role] = {'action': decision['action'], 'reason': decision['reason']}
    else:
        pending.pop(role, None)
    if decision['action'] == 'reboot':
        roles[role] = {'reason': decision['reason'], 'timeout': int(decision.get('timeout') or DEFAULT_TIMEOUT)}
        if decision.get('command'):
            roles[role]['command'] = decision['command']
    else:
        roles.pop(role, None)
    request.update(pending=pending, roles=roles)
    request['timeout'] = max([r['timeout'] for r in roles.values()] or [DEFAULT_TIMEOUT])
    # the reboot command the handler runs: '' for the reboot module's own (a TEST-ONLY lab decision names one)
    request['command'] = ([r['command'] for _n, r in sorted(roles.items()) if r.get('command')] or [''])[0]
    request['message'] = 'gpuops.dlserver reboot for %s' % '; '.join(
        '%s: %s' % (name, roles[name]['reason']) for name in sorted(roles)) if roles else ''
    return request


def served(current):
    """The request after the handler rebooted: nothing pending, the served roles kept for the record."""
    request = dict(current or {})
    request['served'] = sorted(request.get('roles') or {})
    request['roles'] = {}
    request['pending'] = {}
    request['message'] = ''
    request['command'] = ''
    return request
