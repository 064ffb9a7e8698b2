# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's block devices, from ``lsblk -J -b -O`` (or sysfs where lsblk is missing).

``parse_lsblk`` turns lsblk's JSON into flat device records; ``drives`` turns those into the
whole drives (``disk`` and ``loop``) the storage plan chooses from, each with what is on it
(partition table, filesystem, md or LVM signature, partitions, mount points) and whether it holds
the running system (root, /boot, swap). ``merge_blkid`` adds what ``blkid -p -o export`` read from
the drive itself, where lsblk had no udev database to ask (containers, early boot). lsblk's
output differs by version and options: ``mountpoint`` (older) or ``mountpoints`` (2.37+), sizes as
numbers, digit strings (2.38 with ``-b``) or human-readable strings (without ``-b``: unknown
here), booleans as JSON booleans or ``"0"``/``"1"``. Tested on published output
(tests/fixtures/lsblk/, each file with its SOURCE line).

Pure functions, standard library only, Python 3.8+: the storage_host module imports this on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

# filesystem types that are a membership, not a filesystem of their own
MEMBER_TYPES = {'linux_raid_member': 'md', 'isw_raid_member': 'md', 'ddf_raid_member': 'md',
                'LVM2_member': 'lvm', 'zfs_member': 'zfs', 'crypto_LUKS': 'luks'}
# mount points that make a drive the one the system runs from
SYSTEM_MOUNTS = ('/', '/boot', '/boot/efi', '/usr', '/var', '[SWAP]')
WHOLE_TYPES = ('disk', 'loop')
_DIGITS = re.compile(r'[0-9]{1,20}')


class LsblkError(ValueError):
    """lsblk's output is not the JSON this parser reads."""


def _text(value):
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _int(value):
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = _text(value)
    return int(text) if text and _DIGITS.fullmatch(text) else None


def _bool(value):
    if isinstance(value, bool):
        return value
    text = _text(value)
    return {'1': True, '0': False, 'true': True, 'false': False}.get((text or '').lower())


def _mounts(entry):
    found = entry.get('mountpoints')
    if found is None:
        found = [entry.get('mountpoint')]
    return [m for m in (found or []) if _text(m)]


def _record(entry, parent):
    name = _text(entry.get('kname')) or _text(entry.get('name'))
    if not name:
        raise LsblkError('a block device without a name: %r' % (entry,))
    tran = _text(entry.get('tran'))
    return {
        'name': name,
        'path': _text(entry.get('path')) or '/dev/%s' % name,
        'type': _text(entry.get('type')),
        'parent': parent,
        'size': _int(entry.get('size')),
        'model': _text(entry.get('model')),
        'serial': _text(entry.get('serial')),
        'rotational': _bool(entry.get('rota')),
        'transport': tran,
        'nvme': tran == 'nvme' or name.startswith('nvme'),
        'pttype': _text(entry.get('pttype')),
        'fstype': _text(entry.get('fstype')),
        'label': _text(entry.get('label')),
        'uuid': _text(entry.get('uuid')),
        'mountpoints': _mounts(entry),
        'scheduler': _text(entry.get('sched')),
        'read_ahead_kb': _int(entry.get('ra')),
        'children': [],
    }


def parse_lsblk(text):
    """Flat device records (dicts) of lsblk's JSON ``text``, parents before children; a device that
    sits under several parents (an md array over two drives) is listed once per parent, as lsblk
    prints it. Raises LsblkError for text that is not lsblk's JSON."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LsblkError('lsblk printed no JSON: %s' % exc)
    if not isinstance(data, dict) or not isinstance(data.get('blockdevices'), list):
        raise LsblkError('lsblk JSON without a "blockdevices" list')
    out = []

    def walk(entries, parent):
        for entry in entries:
            if not isinstance(entry, dict):
                raise LsblkError('a block device that is not an object: %r' % (entry,))
            record = _record(entry, parent)
            out.append(record)
            children = entry.get('children') or []
            record['children'] = [_text(c.get('kname')) or _text(c.get('name')) for c in children
                                  if isinstance(c, dict)]
            walk(children, record['name'])
    walk(data['blockdevices'], None)
    return out


def parse_blkid_export(text):
    """``blkid -p -o export DEVICE``'s KEY=VALUE lines as a dict (empty where blkid found nothing)."""
    found = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition('=')
        if sep and re.fullmatch(r'[A-Z_]{1,32}', key):
            found[key] = value
    return found


def merge_blkid(device, blkid):
    """The device record with what blkid read from the device itself where lsblk had nothing."""
    merged = dict(device)
    for key, field in (('TYPE', 'fstype'), ('PTTYPE', 'pttype'), ('LABEL', 'label'), ('UUID', 'uuid')):
        if not merged.get(field) and blkid.get(key):
            merged[field] = blkid[key]
    return merged


def _descendants(by_parent, name, seen=None):
    seen = set() if seen is None else seen
    for child in by_parent.get(name, []):
        if child['name'] not in seen:
            seen.add(child['name'])
            yield child
            yield from _descendants(by_parent, child['name'], seen)


def _a(word):
    """'a' or 'an' before one of blkid's type names, as it is read aloud: 'an ext4', 'an xfs',
    'an md', 'an lvm', 'a gpt', 'a zfs', 'a luks', 'a vfat'. Names said letter by letter whose first
    letter's name starts with a vowel sound (ef, aitch, el, em, en, ess, ex) take 'an' too."""
    said_an = ('xfs', 'md', 'lvm', 'ntfs', 'f2fs', 'hfs', 'hfsplus', 'hpfs', 'sgi', 'mbr')
    name = str(word).lower()
    return 'an' if name[:1] in ('a', 'e', 'i', 'o') or name in said_an else 'a'


def contents(drive, below):
    """What is on a whole drive: a list of (kind, words) - kinds partition_table, filesystem,
    md, lvm, zfs, luks, partitions, holder, mounted - from the drive's own record and the records
    below it (``below``: its descendants)."""
    found = []
    if drive.get('pttype'):
        found.append(('partition_table', '%s %s partition table' % (_a(drive['pttype']), drive['pttype'])))
    fstype = drive.get('fstype')
    if fstype in MEMBER_TYPES:
        kind = MEMBER_TYPES[fstype]
        found.append((kind, '%s %s signature (%s)' % (_a(kind), kind, fstype)))
    elif fstype:
        label = (' labelled %s' % drive['label']) if drive.get('label') else ''
        found.append(('filesystem', '%s %s filesystem%s' % (_a(fstype), fstype, label)))
    parts = [d['name'] for d in below if d.get('type') == 'part' and d.get('parent') == drive['name']]
    if parts:
        found.append(('partitions', 'partitions %s' % ', '.join(parts)))
    holders = sorted(set(d['name'] for d in below if d.get('type') not in ('part', None)
                         and d.get('parent') == drive['name']))
    if holders:
        found.append(('holder', 'used by %s' % ', '.join(holders)))
    mounts = sorted(set(m for d in [drive] + list(below) for m in d.get('mountpoints') or []))
    if mounts:
        found.append(('mounted', 'mounted at %s' % ', '.join(mounts)))
    return found


def drives(devices, present=None):
    """The whole drives of ``devices`` (parse_lsblk's records): name, path, size, model, serial,
    rotational, nvme, scheduler, read-ahead, fstype/label/uuid of the drive itself, ``contents``
    (what contents() found), ``system`` (the mount points of the running system on it or below
    it: it is the boot drive) and ``present`` (its device node exists: ``present`` is the set of
    names whose node exists; None: all)."""
    by_parent = {}
    for device in devices:
        if device.get('parent'):
            by_parent.setdefault(device['parent'], []).append(device)
    out, seen = [], set()
    for device in devices:
        # lsblk -f prints no TYPE: a top-level device without one is a whole drive
        if device.get('parent') or (device.get('type') or 'disk') not in WHOLE_TYPES or device['name'] in seen:
            continue
        seen.add(device['name'])
        below = list(_descendants(by_parent, device['name']))
        mounts = set(m for d in [device] + below for m in d.get('mountpoints') or [])
        drive = dict((k, device.get(k)) for k in (
            'name', 'path', 'type', 'size', 'model', 'serial', 'rotational', 'nvme', 'transport',
            'scheduler', 'read_ahead_kb', 'fstype', 'pttype', 'label', 'uuid', 'mountpoints'))
        drive['contents'] = contents(device, below)
        drive['system'] = sorted(m for m in mounts if m in SYSTEM_MOUNTS)
        drive['present'] = True if present is None else device['name'] in present
        out.append(drive)
    return out


def sysfs_devices(entries):
    """parse_lsblk-shaped records from what the module read under /sys/block where lsblk is missing:
    ``entries`` maps a drive name to {size_sectors, rotational, model, serial, partitions: [names],
    holders: [names]}. Filesystems and mounts are not in sysfs (blkid and /proc/self/mounts add them)."""
    out = []
    for name in sorted(entries):
        entry = entries[name] or {}
        sectors = _int(entry.get('size_sectors'))
        record = _record({'name': name, 'model': entry.get('model'), 'serial': entry.get('serial'),
                          'rota': entry.get('rotational'),
                          'size': sectors * 512 if sectors is not None else None,
                          'type': 'loop' if name.startswith('loop') else 'disk'}, None)
        record['children'] = list(entry.get('partitions') or []) + list(entry.get('holders') or [])
        out.append(record)
        for part in entry.get('partitions') or []:
            out.append(_record({'name': part, 'type': 'part'}, name))
        for holder in entry.get('holders') or []:
            out.append(_record({'name': holder, 'type': 'md' if holder.startswith('md') else 'dm'}, name))
    return out
