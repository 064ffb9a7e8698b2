# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state of dpkg before a role installs anything: an interrupted run, half-installed
packages, who holds a dpkg/apt lock and a bounded wait for it; and whether the install step has
anything to do at all (a converged host is not asked again).

Pure functions (the module passes in what it read), standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

_OK_STATES = ('n', 'i', 'c')  # not installed, installed, config-files


def dpkg_problems(audit_text, status_rows):
    """A half-installed package or an interrupted dpkg, with the command that repairs it.

    ``audit_text``: the output of ``dpkg --audit``; ``status_rows``: (package, Status-Abbrev)
    of the packages of interest (driver family). Empty list when dpkg is consistent.
    """
    broken = []
    for name, abbrev in status_rows:
        state = abbrev[1:2]
        error = abbrev[2:3].strip()
        if (state and state not in _OK_STATES) or error:
            broken.append('%s (%s)' % (name, abbrev.strip()))
    audit = [line.strip() for line in (audit_text or '').splitlines() if line.startswith(' ')]
    audit_names = [line.split()[0] for line in audit if line]
    problems = []
    if broken or (audit_text or '').strip():
        names = broken + [n for n in audit_names if not any(b.startswith(n + ' ') for b in broken)]
        problems.append('dpkg was interrupted or left packages half-installed (%s): nothing was changed. Repair it '
                        'with `dpkg --configure -a` (then `apt-get -f install`) as root and run the role again'
                        % (', '.join(names) or (audit_text or '').strip().splitlines()[0]))
    return problems


def lock_holder_text(lock, pid, cmdline):
    """Who holds a dpkg/apt lock, for the failure after the bounded wait."""
    if pid:
        return '%s is held by pid %s (%s)' % (lock, pid, cmdline or 'command unknown')
    return '%s is held by another process' % lock


def proc_locks_holders(proc_locks_text, inode):
    """Pids that hold a lock on ``inode`` according to /proc/locks."""
    pids = []
    for line in (proc_locks_text or '').splitlines():
        fields = line.split()
        if '->' in fields:
            continue
        for index, field in enumerate(fields):
            if field.count(':') == 2 and index > 0:
                try:
                    if int(field.rsplit(':', 1)[1]) == inode and fields[index - 1].isdigit():
                        pids.append(int(fields[index - 1]))
                except ValueError:
                    pass
                break
    return sorted(set(pids))


def wait_for_locks(probe, locks, timeout, sleep, clock, interval=2.0):
    """Wait (bounded) until none of ``locks`` is held; ``probe(lock)`` returns None when the lock is
    free, else a description of the holder. Returns {'ok', 'waited', 'holder'}."""
    start = clock()
    while True:
        held = [(lock, probe(lock)) for lock in locks]
        held = [(lock, who) for lock, who in held if who]
        waited = clock() - start
        if not held:
            return {'ok': True, 'waited': round(waited, 1), 'holder': None}
        if waited >= timeout:
            return {'ok': False, 'waited': round(waited, 1), 'holder': held[0][1],
                    'error': '%s after waiting %d s: let it finish (or stop it) and run the role again'
                             % (held[0][1], int(timeout))}
        sleep(min(interval, max(0.1, timeout - waited)))


def install_state(pinned, other, installed, change):
    """What the install step still has to do, from the package state the resolve read once.

    ``pinned``: {package: exact version}; ``other``: packages wanted by name; ``installed``:
    {package: {version, held}} (fully installed packages only); ``change``: a pinned version
    differs from the installed one. ``install``: the package manager must run (a version
    change, or a wanted package not installed) - when False the converged host is not asked
    again; ``hold``: the pinned packages to hold afterwards (every one after an install, whose
    release step let go of the holds, else only those not held yet).
    """
    missing = sorted(set(n for n in list(pinned) + list(other) if n not in installed))
    install = bool(change) or bool(missing)
    hold = sorted(pinned) if install else sorted(n for n in pinned if not installed[n].get('held'))
    return {'install': install, 'missing': missing, 'hold': hold}
