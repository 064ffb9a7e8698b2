# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decisions of playbooks/rolling_driver_upgrade.yml, value plus reason.

- :func:`k8s_node`: whether a host is a Kubernetes node to cordon and drain, and its node name
  (the inventory's ``gpuops_k8s_node_name``, else the host's name as the system reports it).
- :func:`decide`: after the upgrade, what happens to one host: ``uncordon`` (validation passed),
  ``rollback`` to the version recorded before the upgrade (validation failed and the repository
  still carries that version), ``restored`` (the driver change failed and nvidia_driver put the
  node back as it was, read back) or ``hold`` (the node stays as it is, with the reason). A host
  whose validation failed is never uncordoned, rolled back or not. Every reason is built from
  what happened (drained or not, upgraded or not, restored or not, rebooted or not), never from
  what was planned.
- :func:`rolled_back`: the decision after its rollback ran, from the status file read back.
- A reboot that failed (the collection's reboot handler, ``failed_action`` the reboot module) is
  said as such, whatever else happened: the reboot comes after the driver's change, so the node is
  not as before; whether it came back, and which driver it runs, is unknown (``hold``).

Pure functions, standard library only, Python 3.8+. Tested from
``tests/unit/plugins/module_utils/data/rollback_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.versions import numeric

# RFC 1123 subdomain: what Kubernetes accepts as a node name.
_NODE_NAME = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
VERDICTS = ('pass', 'warn', 'fail', 'not_run')


def _version(value, what):
    """A driver version as text ('' for none); ValueError naming ``what`` for anything else."""
    if value in (None, ''):
        return ''
    text = str(value)
    if text != text.strip():
        raise ValueError('%s %r has blanks or a line break around it' % (what, value))
    numeric(text, what)
    return text


def k8s_node(node_name, hostname, in_k8s_group):
    """{'drain': bool, 'name': str, 'reason': str}.

    A host is drained when the inventory names its Kubernetes node (``node_name``) or puts it in
    the Kubernetes group (``in_k8s_group``); the name is ``node_name``, else ``hostname``.
    """
    name = str(node_name or '')
    if not name and not in_k8s_group:
        return {'drain': False, 'name': '', 'reason': 'not a Kubernetes node (no gpuops_k8s_node_name and not in '
                                                      'the Kubernetes group): nothing to drain'}
    source = 'gpuops_k8s_node_name'
    if not name:
        name, source = str(hostname or ''), "the host's name"
    if len(name) > 253 or not _NODE_NAME.fullmatch(name):
        raise ValueError('gpuops_k8s_node_name: %r (%s) is not a Kubernetes node name (lower-case letters, '
                         'digits, "-" and "."; at most 253 characters)' % (name, source))
    return {'drain': True, 'name': name, 'reason': 'Kubernetes node %s (from %s)' % (name, source)}


DRAIN_STATES = ('none', 'started', 'done')
EVENTS = {'node': '', 'drain': 'done', 'upgraded': True, 'role_started': True, 'change_began': True,
          'failed_task': '', 'failed_action': '', 'failure': '', 'transaction': None, 'rebooted': None,
          'reboot_issued': None, 'failed_checks': None}
# The check groups of gpu_validate that judge the hardware, not the driver: the BMC's System Event
# Log. A validation that failed only there holds the node on the new driver (a driver does not
# cause an uncorrectable memory error or a thermal trip the BMC logged), never rolls it back.
HARDWARE_GROUPS = ('sel',)
# The task names of the reboot module: a failure there is a reboot that did not happen or did not return.
REBOOT_ACTIONS = ('ansible.builtin.reboot', 'ansible.legacy.reboot', 'reboot')


def _flag(value, what, unknown=False):
    """A bool from a bool or its text ('true'/'false'); None where ``unknown`` allows it."""
    if isinstance(value, bool):
        return value
    if unknown and value in (None, '', 'None', 'null'):
        return None
    text = str(value).strip().lower()
    if text in ('true', 'yes', '1'):
        return True
    if text in ('false', 'no', '0'):
        return False
    raise ValueError('%s %r is not true or false' % (what, value))


def _events(events):
    """The events of one host's upgrade, checked: what actually happened (see decide)."""
    out = dict(EVENTS, **(events or {}))
    if out['drain'] not in DRAIN_STATES:
        raise ValueError('drain %r is not one of %s' % (out['drain'], ', '.join(DRAIN_STATES)))
    if out['transaction'] not in (None, '', 'None') and not isinstance(out['transaction'], dict):
        raise ValueError('transaction must be the restore record of nvidia_driver or null, not %r' % (out['transaction'],))
    for key in ('upgraded', 'role_started', 'change_began'):
        out[key] = _flag(out[key], key)
    out['rebooted'] = _flag(out['rebooted'], 'rebooted', unknown=True)
    out['reboot_issued'] = _flag(out['reboot_issued'], 'reboot_issued', unknown=True)
    out['failed_checks'] = _failed_groups(out['failed_checks'])
    # only nvidia_driver's restore record counts: a failed resolve also returns a `transaction` (its
    # snapshot before any change), which says nothing was restored because nothing had changed
    if out['transaction'] in ('', 'None') or (isinstance(out['transaction'], dict)
                                              and 'restored' not in out['transaction']):
        out['transaction'] = None
    return out


def _failed_groups(checks):
    """The sorted groups of the failed checks in gpu_validate's ``checks`` (its report's list, each
    with ``group`` and ``status``); None where the report gave no list (unknown)."""
    if checks in (None, '', 'None'):
        return None
    if not isinstance(checks, (list, tuple)) or not all(isinstance(c, dict) for c in checks):
        raise ValueError("failed_checks must be gpu_validate's list of checks, not %r" % (checks,))
    return sorted(set(str(c.get('group') or '?') for c in checks if c.get('status') == 'fail'))


def cordon_text(events, uncordon):
    """What became of the node in the scheduler, from what happened (never what was only planned)."""
    node = events['node'] or 'the node'
    if events['drain'] == 'none':
        return 'it was not drained (no Kubernetes node to drain)'
    if events['drain'] == 'started':
        return ('the drain of Kubernetes node %s failed; it may be cordoned with workloads left on it: check '
                '`kubectl get node %s`' % (node, node))
    if uncordon:
        return 'Kubernetes node %s goes back into service' % node
    return 'Kubernetes node %s stays cordoned' % node


def decide(previous, target, verdict, carried, summary='', events=None):
    """What to do with a host after its upgrade and validation, said from what happened.

    ``previous``: the driver version recorded before the upgrade ('' when the role had not installed
    one); ``target``: the version the upgrade installed (or was to install); ``verdict``:
    gpu_validate's verdict (``pass``, ``warn``, ``fail``) or ``not_run``; ``carried``: the driver
    versions the repository carries (the role's status file); ``summary``: gpu_validate's summary
    line or the failure, quoted in reasons; ``events`` (see EVENTS): ``node`` (the Kubernetes node),
    ``drain`` (``none``: not a node, ``started``: the drain failed, ``done``), ``upgraded`` (the
    role finished), ``role_started``, ``change_began`` (the role passed its read-only preflight and
    began its one-step change), ``failed_task``/``failed_action``/``failure`` (where the host
    failed), ``transaction`` (nvidia_driver's restore record where its change failed and was put
    back), ``rebooted`` (the boot id changed; None = unknown) and ``reboot_issued`` (where the
    reboot module failed: its ``rebooted``, true once the reboot command ran; None = unknown) and
    ``failed_checks`` (gpu_validate's list of checks; None = unknown): a failed validation whose
    failed checks are all of HARDWARE_GROUPS holds the node on the new driver instead of rolling back.

    Returns {'action': 'uncordon'|'rollback'|'restored'|'hold', 'version': str, 'uncordon': bool,
    'restored': bool, 'reason': str}. ``version`` is what the host runs after it ('unknown' where this
    run does not know).
    """
    previous = _version(previous, 'previous driver version')
    target = _version(target, 'target driver version')
    if verdict not in VERDICTS:
        raise ValueError('verdict %r is not one of %s' % (verdict, ', '.join(VERDICTS)))
    if not isinstance(carried, (list, tuple)):
        raise ValueError('carried must be the list of versions the repository carries, not %r' % (carried,))
    carried = [_version(v, 'repository version') for v in carried]
    ev = _events(events)
    said = (': %s' % summary) if summary else ''
    was = ('driver %s' % previous) if previous else 'no driver installed by the role'
    if ev['failed_action'] in REBOOT_ACTIONS:
        return _reboot_failed(previous, target, ev, was)
    if not ev['upgraded']:
        return _not_upgraded(previous, target, ev, was)
    boot = '' if ev['rebooted'] is None else ('; rebooted' if ev['rebooted'] else '; not rebooted')
    if verdict in ('pass', 'warn'):
        return {'action': 'uncordon', 'version': target, 'uncordon': True, 'restored': False,
                'reason': 'driver %s validated (%s)%s%s: the node goes back into service%s' % (
                    target, verdict, said, boot, '' if ev['drain'] == 'none' else ' (%s)' % cordon_text(ev, True))}
    failed = ('validation failed on driver %s%s' % (target, said)) if verdict == 'fail' else \
        'validation did not run after the upgrade to driver %s%s' % (target, said)
    failed += boot
    stays = cordon_text(ev, False)
    groups = ev['failed_checks']
    if verdict == 'fail' and groups and all(g in HARDWARE_GROUPS for g in groups):
        return {'action': 'hold', 'version': target, 'uncordon': False, 'restored': False,
                'reason': '%s; only the BMC event log check (%s) failed: hardware events a driver does not '
                          'cause, so driver %s stays (no rollback) and the node is held until someone looks at '
                          'the hardware: %s' % (failed, ', '.join(groups), target, stays)}
    if not previous:
        return {'action': 'hold', 'version': target, 'uncordon': False, 'restored': False,
                'reason': '%s; no previous version was recorded before the upgrade (the role had not installed a '
                          'driver), so there is nothing to roll back to: %s' % (failed, stays)}
    if numeric(previous) == numeric(target):
        return {'action': 'hold', 'version': target, 'uncordon': False, 'restored': False,
                'reason': '%s; it was already the version before the upgrade, so there is nothing to roll back '
                          'to: %s' % (failed, stays)}
    if previous not in carried:
        return {'action': 'hold', 'version': target, 'uncordon': False, 'restored': False,
                'reason': '%s; the previous version %s is no longer in the repository (it carries %s), so it '
                          'cannot be rolled back: %s on %s' % (
                              failed, previous, ', '.join(carried) or 'nothing', stays, target)}
    return {'action': 'rollback', 'version': previous, 'uncordon': False, 'restored': False,
            'reason': '%s; rolling back to the previous version %s, which the repository still carries: %s '
                      'until someone looks at it' % (failed, previous, stays), 'failed': failed, 'stays': stays}


def _reboot_failed(previous, target, ev, was):
    """The collection's reboot failed: it did not go down, or went down and did not come back in time."""
    where = ' at "%s"' % ev['failed_task'] if ev['failed_task'] else ''
    failure = (': %s' % str(ev['failure']).strip().rstrip('.')) if ev['failure'] else ''
    if ev['reboot_issued'] is False:
        what = ('the reboot to load driver %s failed before the host went down%s%s, so it was not rebooted and driver '
                '%s is not loaded' % (target, where, failure, target))
    elif ev['reboot_issued'] is True:
        what = ('the host was rebooted to load driver %s and did not come back within the reboot timeout%s%s; whether '
                'it comes back, and which driver it then runs, is unknown to this run' % (target, where, failure))
    else:
        what = ('the reboot to load driver %s failed%s%s; whether the host went down and which driver it runs is '
                'unknown to this run' % (target, where, failure))
    if ev['change_began'] and previous and numeric(previous) == numeric(target):
        changed = ('the driver\'s one-step change had finished before the reboot, on the version the host already had '
                   '(%s): its pins, holds and packages are for that version' % target)
    elif ev['change_began']:
        changed = ('the reboot came after the driver\'s one-step change to %s had finished: its pins, holds and '
                   'packages were changed (the node is not as before) and were not rolled back' % target)
    else:
        changed = 'the driver\'s change had not begun, so its pins, holds and packages are as before (%s)' % was
    record = ('the role\'s status file was written before the reboot' if ev['upgraded'] else
              'the role\'s status file was not rewritten by this run (it says what the run before wrote)')
    return {'action': 'hold', 'version': 'unknown', 'uncordon': False, 'restored': False,
            'reason': '%s; %s; %s; %s; no rollback was tried: bring the host back, check what it has (`apt-mark '
                      'showhold` or `dnf versionlock list`, `nvidia-smi`) and run the upgrade again' % (
                          what, changed, record, cordon_text(ev, False))}


def _not_upgraded(previous, target, ev, was):
    """The host failed before the driver role finished: refused, restored, or unknown."""
    where = ' at "%s"' % ev['failed_task'] if ev['failed_task'] else ''
    failure = (': %s' % str(ev['failure']).strip().rstrip('.')) if ev['failure'] else ''
    stays = cordon_text(ev, False)
    record = ev['transaction']
    if record is not None:
        if record.get('step'):
            where = ' at "%s"' % record['step']
        if record.get('restored'):
            return {'action': 'restored', 'version': previous or 'none', 'uncordon': False, 'restored': True,
                    'reason': 'the upgrade to driver %s failed%s and its change was undone: restored to %s (%s), read '
                              'back as before, so there is no rollback to do; %s' % (
                                  target, where, was, '; '.join(record.get('items') or []) or 'nothing had changed yet',
                                  stays)}
        return {'action': 'hold', 'version': 'unknown', 'uncordon': False, 'restored': False,
                'reason': 'the upgrade to driver %s failed%s and the restore to %s did NOT complete (still different: '
                          '%s); the node is half-changed (it has %s): repair it by hand; %s' % (
                              target, where, was, '; '.join(record.get('remaining') or []) or 'unknown',
                              record.get('now') or 'unknown', stays)}
    if not ev['role_started'] or not ev['change_began']:
        return {'action': 'hold', 'version': previous or 'none', 'uncordon': False, 'restored': False,
                'reason': 'the upgrade to driver %s was refused before any change of the driver%s%s; the node still '
                          'has %s; %s' % (target, where, failure, was, stays)}
    return {'action': 'hold', 'version': 'unknown', 'uncordon': False, 'restored': False,
            'reason': 'the driver\'s one-step change to %s (pins, holds, packages) finished, then the role failed%s%s '
                      'before it verified the driver: no rollback was tried and what the node runs is unknown to this '
                      'run (check `nvidia-smi`, `dpkg -l \'*nvidia*\'` and `apt-mark showhold` on the host; '
                      'the driver\'s status file was not rewritten by this run and still describes the run before); '
                      '%s' % (
                          target, where, failure, stays)}


def rolled_back(decision, status_version, failure=''):
    """The decision after its rollback ran, said from what the rollback did: ``status_version`` is
    the version the driver status file reads after it ('' where it could not be read), ``failure``
    the rollback's failure ('' when it finished)."""
    if decision.get('action') != 'rollback':
        return decision
    want, failed, stays = decision['version'], decision['failed'], decision['stays']
    if failure:
        return dict(decision, version='unknown',
                    reason='%s; the rollback to the previous version %s FAILED: %s; %s' % (failed, want, failure, stays))
    if str(status_version or '') != want:
        return dict(decision, version=str(status_version or 'unknown'),
                    reason='%s; the rollback to the previous version %s ran, but the status file reads %s: the node '
                           'is not on %s; %s' % (failed, want, status_version or 'nothing', want, stays))
    return dict(decision, reason='%s; rolled back to the previous version %s (the status file reads %s): %s until '
                                 'someone looks at it' % (failed, want, want, stays))
