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
reason. Pure functions, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

ACTIONS = ('none', 'reboot', 'deferred', 'skipped')
DEFAULT_TIMEOUT = 1800


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
                'reason': '%s; not rebooted: %s' % (why, not_owned_reason or 'the kernel is not this host\'s')}
    return {'needed': True, 'action': 'reboot', 'timeout': timeout,
            'reason': '%s; rebooting once every role of the play has asked (%s is true)' % (why, allowed_variable)}


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
    else:
        roles.pop(role, None)
    request.update(pending=pending, roles=roles)
    request['timeout'] = max([r['timeout'] for r in roles.values()] or [DEFAULT_TIMEOUT])
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
    return request
