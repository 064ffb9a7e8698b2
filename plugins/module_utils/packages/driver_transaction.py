# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver change as one step per node: what it must release first, and how a failed change
is put back and said.

The role nvidia_driver writes its apt pin (and repository files), releases holds, installs and
holds again in several tasks; ``apt`` is atomic per call, not across them. So the resolve
(``action=resolve`` of gpuops.dlserver.__private.nvidia_driver_host) reads a *snapshot* of what the change
can touch before anything changes: the text of the role's repository and pin files, and every
installed package of the driver's family with its version and hold. Where a task of the change
fails, ``action=restore`` reads the host again, puts back what differs (files, packages at their
previous versions, holds), reads it back once more and fails with a message that says what was
restored and what the node now has.

- :func:`stale_holds`: the held packages of the installed driver that the new package set does
  not contain (the other kernel-module flavour after an open -> proprietary switch). They are
  released in the same change, else apt cannot replace them ("held broken packages").
- :func:`restore_plan`: from the snapshot before and the state now, what to write, remove,
  install (or remove) and hold again.
- :func:`differences`: what still differs between two snapshots (the read-back).
- :func:`outcome`: the record and the message of a failed change.

Snapshots are ``{'files': {path: text or None}, 'packages': {name: {'version', 'held'}}}``.
Pure functions, standard library only, Python 3.8+. Tested from
``tests/unit/plugins/module_utils/data/driver_transaction_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# What may reach apt-get's and dpkg's argument lists (no shell): Debian policy's package names
# and versions, full matches (a line break or a blank is refused).
_PACKAGE = re.compile(r'[a-z0-9][a-z0-9.+-]+')
_VERSION = re.compile(r'[A-Za-z0-9.+~:-]+')
_PATH = re.compile(r'/[A-Za-z0-9._/+-]+')
_PIN = re.compile(r'Pin: version (\S+)\s*')


def _name(value):
    text = str(value)
    if not _PACKAGE.fullmatch(text):
        raise ValueError('package name %r is not a Debian package name' % (value,))
    return text


def _version(value):
    text = str(value)
    if not _VERSION.fullmatch(text):
        raise ValueError('package version %r is not a Debian package version' % (value,))
    return text


def _path(value):
    text = str(value)
    if not _PATH.fullmatch(text) or '/../' in text + '/':
        raise ValueError('file %r is not an absolute path of the role\'s files' % (value,))
    return text


def check_snapshot(snap):
    """``snap`` with every name, version and path checked (ValueError naming the bad one)."""
    if not isinstance(snap, dict):
        raise ValueError('a snapshot is a dict with files and packages, not %r' % (snap,))
    files = dict((_path(k), v) for k, v in (snap.get('files') or {}).items())
    packages = {}
    for name, row in (snap.get('packages') or {}).items():
        packages[_name(name)] = {'version': _version(row.get('version')), 'held': bool(row.get('held'))}
    return {'files': files, 'packages': packages}


def stale_holds(family, pinned, previous):
    """{'release': [names], 'reason': str}: the held packages of the installed driver
    (``previous``, its upstream version) that the new set ``pinned`` ({name: version}) does not
    contain. Only packages at the previous driver's version count (a held nvidia-container-toolkit
    has a version of its own and is the user's)."""
    previous = str(previous or '')
    if not previous:
        return {'release': [], 'reason': 'no driver installed before: no hold of an earlier driver to release'}
    _version(previous)
    family = check_snapshot({'packages': family})['packages']
    stale = sorted(n for n, row in family.items()
                   if row['held'] and n not in (pinned or {})
                   and (row['version'] == previous or row['version'].split(':', 1)[-1].startswith(previous + '-')))
    if not stale:
        return {'release': [], 'reason': 'every held package of driver %s is in the new package set' % previous}
    return {'release': stale,
            'reason': '%s of driver %s %s held and not in the new package set (another kernel-module flavour or '
                      'package name): released in the same change, so that apt can replace %s' % (
                          ', '.join(stale), previous, 'is' if len(stale) == 1 else 'are',
                          'it' if len(stale) == 1 else 'them')}


def restore_plan(before, now):
    """What puts the host back to ``before``: {'write': [{dest, content}], 'remove': [paths],
    'install': ['name=version', 'name-'], 'hold': [names], 'unhold': [names], 'items': [str]}."""
    before, now = check_snapshot(before), check_snapshot(now)
    plan = {'write': [], 'remove': [], 'install': [], 'hold': [], 'unhold': [], 'items': []}
    for path in sorted(set(before['files']) | set(now['files'])):
        old, new = before['files'].get(path), now['files'].get(path)
        if old == new:
            continue
        if old is None:
            plan['remove'].append(path)
            plan['items'].append('removed %s (the change had created it)' % path)
        else:
            plan['write'].append({'dest': path, 'content': old})
            plan['items'].append('rewrote %s as it was%s' % (path, pin_text(old)))
    b, n = before['packages'], now['packages']
    for name in sorted(set(b) | set(n)):
        old, new = b.get(name), n.get(name)
        if old and (not new or new['version'] != old['version']):
            plan['install'].append('%s=%s' % (name, old['version']))
            plan['items'].append('reinstalled %s %s' % (name, old['version']))
        elif new and not old:
            plan['install'].append('%s-' % name)
            plan['items'].append('removed the package %s (the change had installed it)' % name)
        if old and old['held'] and not (new and new['held'] and new['version'] == old['version']):
            plan['hold'].append(name)
            plan['items'].append('held %s again' % name)
        elif old and not old['held'] and new and new['held']:
            plan['unhold'].append(name)
            plan['items'].append('released the hold on %s' % name)
    return plan


def differences(before, after):
    """What differs between the snapshot before the change and the read-back (list of str)."""
    before, after = check_snapshot(before), check_snapshot(after)
    out = []
    for path in sorted(set(before['files']) | set(after['files'])):
        old, new = before['files'].get(path), after['files'].get(path)
        if old != new:
            out.append('%s: %s before, %s now' % (path, 'absent' if old is None else 'its content%s' % pin_text(old),
                                                  'absent' if new is None else 'other content%s' % pin_text(new)))
    b, a = before['packages'], after['packages']
    for name in sorted(set(b) | set(a)):
        if b.get(name) != a.get(name):
            out.append('%s: %s before, %s now' % (name, package_text(b.get(name)), package_text(a.get(name))))
    return out


def pin_text(content):
    """' (Pin: version X)' of an apt preferences text, '' when it pins no version."""
    for line in (content or '').splitlines():
        found = _PIN.fullmatch(line)
        if found:
            return ' (Pin: version %s)' % found.group(1)
    return ''


def package_text(row):
    if not row:
        return 'not installed'
    return '%s%s' % (row['version'], ' held' if row['held'] else ' not held')


def describe(snap, pin_path=None):
    """What the node has, in one line: the driver packages with versions and holds, and the pin."""
    snap = check_snapshot(snap)
    pkgs = ', '.join('%s %s' % (n, package_text(r)) for n, r in sorted(snap['packages'].items())) or \
        'no package of the driver installed'
    if pin_path:
        content = snap['files'].get(pin_path)
        pin = ('; %s absent' % pin_path) if content is None else ('; %s%s' % (pin_path, pin_text(content) or
                                                                              ' (no version pinned)'))
    else:
        pin = ''
    return pkgs + pin


def failure_message(failure):
    """The error of the failed task of a change, from the rescue's ``failure`` ({task, msg, results}):
    a loop task's own ``msg`` only says that an item failed ("One or more items failed"), so the
    failed items' messages follow it, each with its label (the file or package it was about)."""
    failure = failure or {}
    msg = str(failure.get('msg') or '').strip() or 'no message'
    items = []
    for res in failure.get('results') or []:
        if not isinstance(res, dict) or not res.get('failed'):
            continue
        label = res.get('_ansible_item_label', res.get('item'))
        if isinstance(label, dict):
            label = label.get('dest') or label.get('name') or label
        items.append('%s: %s' % (label, str(res.get('msg') or 'no message').strip()))
    return '%s (%s)' % (msg, '; '.join(items)) if items else msg


def outcome(step, error, target, previous, plan, remaining, now, pin_path=None, check_mode=False, restore_error=''):
    """The record and message of a failed driver change.

    ``step``/``error``: the task that failed and its message; ``target``/``previous``: the
    version the change installed and the one before ('' when none); ``plan``: restore_plan's
    result that was carried out; ``remaining``: differences() after the restore (the read-back);
    ``now``: the read-back snapshot; ``restore_error``: a restore command that failed.
    Returns {'restored': bool, 'changed': bool, 'step': str, 'items': [...], 'remaining': [...], 'now': str,
    'msg': str}.
    """
    result = _outcome(step, error, target, previous, plan, remaining, now, pin_path, check_mode, restore_error)
    result['step'] = str(step)
    return result


def _outcome(step, error, target, previous, plan, remaining, now, pin_path, check_mode, restore_error):
    head = 'The NVIDIA driver change to %s failed at "%s": %s' % (target, step, str(error).strip() or 'no message')
    node = describe(now, pin_path)
    was = ('driver %s' % previous) if previous else 'no driver installed by the role'
    if check_mode:
        return {'restored': True, 'changed': False, 'items': [], 'remaining': [], 'now': node, 'msg':
                '%s. Check mode: nothing on the host was changed, so nothing was restored; it has %s.' % (head, node)}
    if remaining or restore_error:
        return {'restored': False, 'changed': bool(plan['items']), 'items': plan['items'], 'remaining': remaining,
                'now': node, 'msg': '%s. The restore to %s did NOT complete%s; still different from before: %s. '
                                    'The node is half-changed: it now has %s. Repair it by hand (dpkg '
                                    '--set-selections, the pin file) before the next run.' % (
                                        head, was, (' (%s)' % restore_error) if restore_error else '',
                                        '; '.join(remaining) or 'nothing read back differs', node)}
    done = '; '.join(plan['items']) if plan['items'] else 'nothing had changed yet'
    return {'restored': True, 'changed': bool(plan['items']), 'items': plan['items'], 'remaining': [], 'now': node,
            'msg': '%s. Restored to %s (%s), read back: the pins, holds and packages are as before the change. '
                   'The node now has %s.' % (head, was, done, node)}
