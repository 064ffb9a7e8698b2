# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Updates of the driver and its companions that the collection's pin or hold keeps back.

The nvidia_driver role pins every package of the driver's family at one version (priority 1001)
and holds them (``apt-mark hold``): neither ``apt upgrade`` nor unattended-upgrades moves them.
That also keeps back a security update the distribution publishes for the driver (Debian's
security archive carries ``nvidia-graphics-drivers`` updates such as ``535.309.01-0+deb12u1``).
``held_back`` reads ``apt-cache policy <packages>`` (the version table) and ``apt-cache policy``
(the "Package files" section: each source's Release fields) and returns, per installed package, the
newest version newer than the installed one that the pin or the hold keeps from being installed,
whether it is a security update and what would take it. "Security" is decided from where the
version comes from (``is_security``: the Release file's label ``Debian-Security``, an archive or
codename ending in ``-security``, or a ``<suite>-security`` pocket), never from the version string.

This is the driver's counterpart of os_tuning's held-back kernel updates
(plugins/module_utils/host/os_tuning.py ``held_back``). ``read`` runs the two commands through the
caller's edge (``repo_trust.Host``); everything else is pure. Standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_policy
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import pkgversion

# " 500 <url> <suite/component> <arch> Packages" or " 500 <url>  Packages" (flat), then its release line.
_FILES_SOURCE = re.compile(r' *(-?\d+) (\S+) (?:(\S*) (\S+) Packages|\s*Packages)\Z')
_FILES_RELEASE = re.compile(r' +release (.*)\Z')
# The labels Release files give the distributions' security archives (Ubuntu's security pocket is labelled
# "Ubuntu" like the rest: its suite name tells it, see _SECURITY_SUITE). Each row with its source and read date.
SECURITY_LABEL_ROWS = (
    {'label': 'Debian-Security', 'read': '2026-12-07',
     'source': 'the InRelease file of deb.debian.org/debian-security bookworm-security as apt fetched it on the '
               'build host (Date: Sat, 05 Dec 2026): "Origin: Debian", "Label: Debian-Security", "Codename: '
               'bookworm-security"; mvo5/unattended-upgrades data/50unattended-upgrades.Debian (2.13): '
               '"origin=Debian,codename=${distro_codename}-security,label=Debian-Security"'},
)
SECURITY_LABELS = tuple(row['label'] for row in SECURITY_LABEL_ROWS)
_SECURITY_SUITE = re.compile(r'[a-z0-9.+-]+-security\Z')
# What would take an update, per role: the variable that names the version, and how to roll it out.
TAKE = {
    'nvidia_driver': ('nvidia_driver_version', 'run the rolling upgrade (playbooks/rolling_driver_upgrade.yml '
                                               '-e gpuops_rolling_version=%s)'),
    'nvidia_container_toolkit': ('nvidia_container_toolkit_version', 'run the nvidia_container_toolkit role'),
}

NOT_CHECKED = {'checked': False, 'updates': [], 'security': [], 'reason': 'not checked', 'take': None}


def parse_package_files(text):
    """``{(url, dist): {release field: value}}`` from ``apt-cache policy`` without arguments.

    ``dist`` is ``suite/component`` ('' for a flat repository and dpkg's status); the fields are
    those of the source's ``release`` line (``v``, ``o``, ``a``, ``n``, ``l``, ``c``, ``b``).
    """
    result, current = {}, None
    for line in (text or '').splitlines():
        line = line.rstrip('\r')
        match = _FILES_SOURCE.fullmatch(line)
        if match:
            current = (match.group(2), match.group(3) or '')
            result[current] = {}
            continue
        match = _FILES_RELEASE.fullmatch(line)
        if match and current is not None:
            result[current] = dict(part.split('=', 1) for part in match.group(1).split(',') if '=' in part)
    return result


def is_security(source, releases):
    """(bool, reason): whether a version table source (``{url, dist}``) is a security archive.

    From the source's Release fields where ``apt-cache policy`` printed them (label
    ``Debian-Security``; archive ``a`` or codename ``n`` ending in ``-security``), else from the
    suite of ``dist`` (``bookworm-security/non-free``, ``jammy-security/restricted``)."""
    fields = releases.get((source.get('url'), source.get('dist') or ''))
    suite = (source.get('dist') or '').split('/')[0]
    if fields:
        if fields.get('l') in SECURITY_LABELS:
            return True, 'the Release file of %s %s is labelled %s' % (source['url'], suite, fields['l'])
        for key in ('a', 'n'):
            if _SECURITY_SUITE.fullmatch(fields.get(key) or ''):
                return True, 'the Release file of %s %s names the security pocket %s' % (
                    source['url'], suite, fields[key])
        return False, '%s %s is not a security archive (label %s, archive %s)' % (
            source['url'], suite or '(flat)', fields.get('l') or '-', fields.get('a') or '-')
    if _SECURITY_SUITE.fullmatch(suite):
        return True, '%s %s is a security pocket (suite name; no Release fields read)' % (source['url'], suite)
    return False, '%s %s is not a security pocket' % (source.get('url'), suite or '(flat)')


def upstream(version):
    """The upstream part of a Debian version: ``535.309.01`` of ``535.309.01-0+deb12u1``,
    ``1.19.1`` of ``1:1.19.1-1``; what the roles' version variables take."""
    without_epoch = (version or '').split(':', 1)[-1]
    return without_epoch.rsplit('-', 1)[0] if '-' in without_epoch else without_epoch


def take_hint(role, version):
    """What takes a held-back ``version`` for ``role``: the variable to set and the run."""
    variable, run = TAKE.get(role, TAKE['nvidia_driver'])
    wanted = upstream(version)
    return 'set %s=%s and %s' % (variable, wanted, run % wanted if '%s' in run else run)


def held_back(policy_text, files_text, watched, holds=(), role='nvidia_driver', base=None):
    """The updates the pin or the hold keeps back among the installed ``watched`` packages.

    ``policy_text``: ``apt-cache policy <watched...>``; ``files_text``: ``apt-cache policy``;
    ``holds``: the packages dpkg holds (or that the role holds); ``base``: ``{package: version}`` the
    role pins, compared instead of the installed version (``installed`` in the result is then that
    version): the record describes the host as the role leaves it, so that a run that installs or
    upgrades (it reads the host before its install) records the same as the run after it. Returns ``{checked, updates, security, reason, take}``:
    ``updates`` one entry per package with a newer version than the installed one that apt
    would not install as things are (newer than apt's candidate, or the package is held) - ``{name, installed,
    available, candidate, kept_by, security, source}`` with ``source`` the reason of
    ``is_security``; ``security`` those whose newest newer version comes from a security archive
    (the newest such version when a newer non-security one also exists); ``take``: what would
    take the security updates (None when there are none)."""
    table = apt_policy.parse(policy_text, strict=False)  # lenient: a line it does not know is skipped
    releases = parse_package_files(files_text)
    updates = []
    for name in sorted(set(watched)):
        row = table.get(name)
        installed = (base or {}).get(name) or (row or {}).get('installed')
        if not row or not installed:
            continue
        candidate = row['candidate']
        held = name in holds
        newer = [v for v in row['versions'] if pkgversion.dpkg_compare(v['version'], installed) > 0]
        # not held: kept back only where apt's candidate does not reach the version (the pin);
        # a newer candidate means apt installs at least as much on its own
        kept = [v for v in newer if held or not candidate or pkgversion.dpkg_compare(candidate, v['version']) < 0]
        if not kept:
            continue
        order = pkgversion.sort_desc([v['version'] for v in kept])
        kept = sorted(kept, key=lambda v: order.index(v['version']))
        security_row, reasons = None, {}
        for version in kept:
            for source in version['sources']:
                if source['url'] == apt_policy.DPKG_STATUS:
                    continue
                flag, reason = is_security(source, releases)
                reasons.setdefault(version['version'], reason)
                if flag and security_row is None:
                    security_row = version
                    reasons[version['version']] = reason
        chosen = security_row or kept[0]
        updates.append({'name': name, 'installed': installed, 'available': chosen['version'],
                        'candidate': candidate, 'security': security_row is not None,
                        'kept_by': 'the dpkg hold' if held else 'the version pin (candidate %s)' % candidate,
                        'source': reasons.get(chosen['version']) or 'no repository source listed'})
    security = [u for u in updates if u['security']]
    newest = pkgversion.sort_desc([u['available'] for u in security])[0] if security else None
    return {'checked': True, 'updates': updates, 'security': security,
            'reason': "apt-cache policy against the host's package lists of the last apt update",
            'take': take_hint(role, newest) if newest else None}


def read(host, watched, holds=(), role='nvidia_driver', base=None):
    """``held_back`` of the host's own apt state (two ``apt-cache policy`` runs through
    ``host.run``); ``checked: false`` with the reason when apt-cache fails or nothing is watched."""
    watched = sorted(set(watched))
    if not watched:
        return {'checked': False, 'updates': [], 'security': [], 'reason': 'no installed package to check',
                'take': None}
    rc, policy, err = host.run(['apt-cache', 'policy'] + watched, check=False)
    rc_files, files, err_files = host.run(['apt-cache', 'policy'], check=False) if rc == 0 else (rc, '', err)
    if rc != 0 or rc_files != 0:
        return {'checked': False, 'updates': [], 'security': [], 'take': None,
                'reason': 'not checked: apt-cache policy failed (rc %s): %s' % (
                    rc or rc_files, ((err or err_files) or '').strip()[-300:])}
    return held_back(policy, files, watched, holds, role, base)


def summary_line(record):
    """One line for reports: the security updates kept back and what would take them ('' when none)."""
    security = (record or {}).get('security') or []
    if not security:
        return ''
    return 'security updates held back: %s (%s)' % (
        ', '.join('%s %s -> %s' % (u['name'], u['installed'], u['available']) for u in security),
        record.get('take') or 'set the version variable and run the role')
