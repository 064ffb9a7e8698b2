# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The storage role's inputs: what its argument spec cannot check, before any host is asked.

``input_problems(inputs)`` takes the role's converted inputs (``__storage``: ``volumes``,
``fstrim``, ``cachefilesd``, ``status_file``) and returns one problem per wrong value, each naming
the variable (``storage_volumes[1].mount_point``). It runs on the controller for every host
(``host_plan``, and the role's preflight through ``role_inputs``' VALUE_CHECKS), so a layout that
could only be wrong is refused before any drive is looked at. What needs the host (a drive that
is missing, holds data or is the boot drive, a size too small for the filesystem) is decided by
``storage/plan.py`` on the host, still before any change.

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import sources

VARIABLE = 'storage_volumes'
FILESYSTEMS = ('ext4', 'xfs')
RAID_LEVELS = (0, 1, 5, 6, 10)
# the fewest members mdadm --create accepts for each level without --force (storage/sources.py RAID_MIN_ROWS)
RAID_MIN_MEMBERS = dict((row['level'], row['members']) for row in sources.RAID_MIN_ROWS)
SCHEDULERS = ('', 'none', 'mq-deadline', 'kyber', 'bfq')
READ_AHEAD_MAX_KB = 65536
# A dataset volume is mounted at one of these trees (or below them); the system's own
# directories (/, /usr, /etc, /boot, /var, /proc ...) never.
ALLOWED_ROOTS = ('/raid', '/data', '/datasets', '/scratch')
ALLOWED_BELOW = ('/mnt', '/srv')
# a volume's name is its filesystem label: XFS labels hold at most 12 characters
NAME = re.compile(r'[a-z][a-z0-9_]{0,11}')
MOUNT_POINT = re.compile(r'(/[A-Za-z0-9_.@+-]+)+')
# one mount option: no comma (it would smuggle another option), no blank or control character
MOUNT_OPTION = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.:+/@-]{0,63}(=[A-Za-z0-9_.:+/@-]{1,128})?')
DEVICE_PATH = re.compile(r'/dev/[A-Za-z0-9_.:@+-]+(/[A-Za-z0-9_.:@+-]+)*')
# options whose effect belongs to the role, or that make the mount something else
REFUSED_OPTIONS = ('defaults', 'remount', 'bind', 'rbind', 'move', 'loop', 'owner', 'user', 'users')
SELECTORS = ('paths', 'model', 'serial', 'empty_nvme')
KEYS = ('name', 'drives', 'raid_level', 'filesystem', 'mount_point', 'mount_options', 'read_ahead_kb',
        'scheduler')


def _where(index, key=None):
    return '%s[%d]%s' % (VARIABLE, index, ('.' + key) if key else '')


def _regex_problem(where, value):
    if not isinstance(value, str) or not value or '\n' in value or len(value) > 128:
        return '%s must be a one-line regular expression of 1-128 characters, matched against the whole ' \
               'value (full match), got %r' % (where, value)
    try:
        re.compile(value)
    except re.error as exc:
        return '%s is not a regular expression (%s): %r' % (where, exc, value)
    return None


def mount_point_problem(where, value):
    """Why ``value`` cannot be a dataset volume's mount point (None: it can)."""
    if not isinstance(value, str) or not MOUNT_POINT.fullmatch(value):
        return '%s must be an absolute path of letters, digits and _ . @ + - without a trailing slash, ' \
               'blanks or newlines, got %r' % (where, value)
    if posixpath.normpath(value) != value or '/./' in value + '/' or '/../' in value + '/':
        return '%s must not hold . or .. segments, got %r' % (where, value)
    if any(value == root or value.startswith(root + '/') for root in ALLOWED_ROOTS) or any(
            value.startswith(root + '/') for root in ALLOWED_BELOW):
        return None
    return '%s: %s is not a place for a dataset volume (the system\'s own directories such as /, /usr, /etc, ' \
           '/boot, /var, /home and /proc are never mounted over); use %s or a directory below %s' % (
               where, value, ', '.join(ALLOWED_ROOTS), ' or '.join(ALLOWED_BELOW))


def _option_problems(where, options):
    if not isinstance(options, list):
        return ['%s must be a list of mount options, got %r' % (where, options)]
    found = []
    for position, option in enumerate(options):
        here = '%s[%d]' % (where, position)
        if not isinstance(option, str) or not MOUNT_OPTION.fullmatch(option):
            found.append('%s must be one mount option (letters, digits, _ . : + / @ -, an optional =value; no '
                         'comma, blank or newline, which would add options of its own), got %r' % (here, option))
        elif option.split('=', 1)[0] in REFUSED_OPTIONS:
            found.append('%s: %r is not a dataset volume\'s option (the role mounts the filesystem it made)'
                         % (here, option))
    return found


def _selector_problems(where, drives):
    if not isinstance(drives, dict):
        return ['%s must be a dict with one of %s, got %r' % (where, ', '.join(SELECTORS), drives)]
    unknown = sorted(set(drives) - set(SELECTORS))
    given = [k for k in SELECTORS if drives.get(k) not in (None, '', [], False)]
    if unknown:
        return ['%s: unknown key(s) %s; a drive is chosen by one of %s' % (
            where, ', '.join(unknown), ', '.join(SELECTORS))]
    if len(given) != 1:
        return ['%s must choose drives by exactly one of %s (paths: device paths; model, serial: full-match '
                'regular expressions; empty_nvme: true for every empty NVMe drive that is not the boot drive), '
                'got %s' % (where, ', '.join(SELECTORS), ', '.join(given) or 'none')]
    key = given[0]
    if key == 'paths':
        paths = drives['paths']
        if not isinstance(paths, list):
            return ['%s.paths must be a list of device paths, got %r' % (where, paths)]
        bad = [p for p in paths if not isinstance(p, str) or not DEVICE_PATH.fullmatch(p) or '/../' in p + '/']
        if bad:
            return ['%s.paths: %r is not a device path (/dev/nvme0n1, /dev/disk/by-id/...; no blanks, newlines '
                    'or ..)' % (where, bad[0])]
        if len(set(paths)) != len(paths):
            return ['%s.paths names a drive twice' % where]
        return []
    if key == 'empty_nvme':
        return [] if drives['empty_nvme'] is True else ['%s.empty_nvme must be true (or left out)' % where]
    problem = _regex_problem('%s.%s' % (where, key), drives[key])
    return [problem] if problem else []


def _volume_problems(index, volume):
    where = _where(index)
    if not isinstance(volume, dict):
        return ['%s must be a dict (name, drives, filesystem, mount_point ...), got %r' % (where, volume)]
    found = []
    unknown = sorted(set(volume) - set(KEYS))
    if unknown:
        found.append('%s: unknown key(s) %s (known: %s)' % (where, ', '.join(unknown), ', '.join(KEYS)))
    name = volume.get('name')
    if not isinstance(name, str) or not NAME.fullmatch(name):
        found.append('%s must be 1-12 of a-z, 0-9 and _ starting with a letter (it is the filesystem label), '
                     'got %r' % (_where(index, 'name'), name))
    found.extend(_selector_problems(_where(index, 'drives'), volume.get('drives')))
    level = volume.get('raid_level')
    if level is not None and (isinstance(level, bool) or level not in RAID_LEVELS):
        found.append('%s must be one of %s or null (one drive, no array), got %r' % (
            _where(index, 'raid_level'), ', '.join(str(x) for x in RAID_LEVELS), level))
        level = 'invalid'
    paths = (volume.get('drives') or {}).get('paths') if isinstance(volume.get('drives'), dict) else None
    if isinstance(paths, list) and level in RAID_MIN_MEMBERS and len(paths) < RAID_MIN_MEMBERS[level]:
        found.append('%s: RAID %s needs at least %d drives, %s names %d' % (
            _where(index, 'raid_level'), level, RAID_MIN_MEMBERS[level], _where(index, 'drives.paths'),
            len(paths)))
    if isinstance(paths, list) and volume.get('raid_level') is None and len(paths) > 1:
        found.append('%s names %d drives: set %s (0, 1, 5, 6 or 10) to make one array of them' % (
            _where(index, 'drives.paths'), len(paths), _where(index, 'raid_level')))
    if volume.get('filesystem', 'ext4') not in FILESYSTEMS:
        found.append('%s must be one of %s, got %r' % (
            _where(index, 'filesystem'), ', '.join(FILESYSTEMS), volume.get('filesystem')))
    problem = mount_point_problem(_where(index, 'mount_point'), volume.get('mount_point'))
    found.extend([problem] if problem else [])
    found.extend(_option_problems(_where(index, 'mount_options'), volume.get('mount_options', ['noatime'])))
    ahead = volume.get('read_ahead_kb')
    if ahead is not None and (isinstance(ahead, bool) or not isinstance(ahead, int)
                              or not 0 <= ahead <= READ_AHEAD_MAX_KB):
        found.append('%s must be a whole number of KiB from 0 to %d (or null: leave it), got %r' % (
            _where(index, 'read_ahead_kb'), READ_AHEAD_MAX_KB, ahead))
    if volume.get('scheduler', '') not in SCHEDULERS:
        found.append('%s must be one of %s ("": leave it), got %r' % (
            _where(index, 'scheduler'), ', '.join(repr(s) for s in SCHEDULERS), volume.get('scheduler')))
    return found


def volume_defaults(volume):
    """The volume with its defaults filled in (filesystem ext4, mount_options [noatime], no RAID,
    read-ahead and scheduler left alone)."""
    out = {'raid_level': None, 'filesystem': 'ext4', 'mount_options': ['noatime'], 'read_ahead_kb': None,
           'scheduler': ''}
    out.update(dict((k, v) for k, v in volume.items() if v is not None or k not in out))
    return out


def input_problems(inputs):
    """Every problem of the storage role's converted inputs, each naming its variable."""
    volumes = inputs.get('volumes')
    if volumes in (None, ''):
        return []
    if not isinstance(volumes, list):
        return ['%s must be a list of volumes, got %r' % (VARIABLE, volumes)]
    found = []
    for index, volume in enumerate(volumes):
        found.extend(_volume_problems(index, volume))
    if found:
        return found
    for key, what in (('name', 'name'), ('mount_point', 'mount point')):
        seen = {}
        for index, volume in enumerate(volumes):
            if volume[key] in seen:
                found.append('%s and %s have the same %s %r' % (
                    _where(seen[volume[key]], key), _where(index, key), what, volume[key]))
            seen.setdefault(volume[key], index)
    points = sorted((v['mount_point'], i) for i, v in enumerate(volumes))
    for (outer, first), (inner, second) in zip(points, points[1:]):
        if inner.startswith(outer + '/'):
            found.append('%s (%s) lies inside %s (%s): mount them side by side' % (
                _where(second, 'mount_point'), inner, _where(first, 'mount_point'), outer))
    paths = {}
    for index, volume in enumerate(volumes):
        for path in (volume['drives'].get('paths') or []):
            if path in paths and paths[path] != index:
                found.append('%s and %s both name %s' % (
                    _where(paths[path], 'drives.paths'), _where(index, 'drives.paths'), path))
            paths.setdefault(path, index)
    return found
