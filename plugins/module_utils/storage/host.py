# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What ``__private.storage_host`` reads on the host (one round trip), and what verify compares.

``read_host(run, read, exists, realpath, listdir, which, paths)`` gathers everything ``storage/plan.py`` needs:
``lsblk -J -b -O`` (sysfs under /sys/block where lsblk is missing), ``blkid -p -o export`` of each
whole drive whose node exists (what is on it, read from the drive itself: lsblk has no udev
database in a container), the mounts of /proc/self/mountinfo, each drive's queue (read-ahead,
scheduler), the machine id, whether the kernel has the md driver, and which mkfs/mdadm tools
exist. ``run(argv)`` returns (rc, stdout, stderr); ``read(path)`` the text or None. ``verify``
compares the host read again after the run with the plan and returns what does not hold.

Standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import lsblk

LSBLK_ARGV = ['lsblk', '-J', '-b', '-O']
_SCHED = re.compile(r'\[([a-z0-9_-]+)\]')


def parse_mountinfo(text):
    """/proc/self/mountinfo as records: mount_point, source, fstype, options (per-mount and
    superblock options together)."""
    out = []
    for line in (text or '').splitlines():
        left, sep, right = line.partition(' - ')
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 6 or len(tail) < 2:
            continue
        point = fields[4].replace('\\040', ' ')
        options = fields[5].split(',') + (tail[2].split(',') if len(tail) > 2 else [])
        out.append({'mount_point': point, 'source': tail[1], 'fstype': tail[0], 'options': options})
    return out


def parse_scheduler(text):
    """(current, available) of a queue/scheduler file ("none [mq-deadline] kyber")."""
    text = (text or '').strip()
    found = _SCHED.search(text)
    available = [w.strip('[]') for w in text.split()]
    return (found.group(1) if found else (available[0] if len(available) == 1 else None)), available


def _sysfs_entries(read, listdir):
    entries = {}
    for name in listdir('/sys/block'):
        base = '/sys/block/%s' % name
        entries[name] = {
            'size_sectors': (read(base + '/size') or '').strip(),
            'rotational': (read(base + '/queue/rotational') or '').strip(),
            'model': (read(base + '/device/model') or '').strip(),
            'serial': (read(base + '/device/serial') or '').strip(),
            'partitions': [p for p in listdir(base) if p.startswith(name)],
            'holders': listdir(base + '/holders'),
        }
    return entries


def read_host(run, read, exists, realpath, listdir, which, paths=(), in_container=False):
    """The host as storage/plan.py reads it (see the module docstring); ``paths``: the device paths
    the volumes name (each resolved, for /dev/disk/by-id links). Raises lsblk.LsblkError where
    lsblk printed something that is not its JSON."""
    rc, out, err = run(LSBLK_ARGV)
    source = 'lsblk'
    if rc == 0:
        devices = lsblk.parse_lsblk(out)
    else:
        devices = lsblk.sysfs_devices(_sysfs_entries(read, listdir))
        source = 'sysfs (lsblk failed: %s)' % (err.strip().splitlines() or ['rc %d' % rc])[-1]
    mounts = parse_mountinfo(read('/proc/self/mountinfo'))
    by_source = {}
    for mount in mounts:
        if mount['source'].startswith('/dev/'):
            by_source.setdefault(realpath(mount['source']), []).append(mount['mount_point'])
    present = set()
    for index, device in enumerate(devices):
        extra = [m for m in by_source.get(device['path'], []) if m not in device['mountpoints']]
        device['mountpoints'] = device['mountpoints'] + extra
        if device.get('parent') is None and exists(device['path']):
            present.add(device['name'])
            brc, bout, _berr = run(['blkid', '-p', '-o', 'export', device['path']])
            if brc == 0:
                devices[index] = lsblk.merge_blkid(device, lsblk.parse_blkid_export(bout))
    drives = lsblk.drives(devices, present)
    queues = {}
    for drive in drives:
        base = '/sys/block/%s/queue/' % drive['name']
        current, available = parse_scheduler(read(base + 'scheduler'))
        ahead = (read(base + 'read_ahead_kb') or '').strip()
        queues[drive['name']] = {'scheduler': current, 'schedulers': available,
                                 'read_ahead_kb': ahead or None}
    tools = dict((tool, bool(which(tool))) for tool in ('mkfs.ext4', 'mkfs.xfs', 'mdadm'))
    return {'source': source, 'drives': drives, 'mounts': mounts, 'queues': queues,
            'resolved': dict((p, realpath(p)) for p in paths),
            'machine_id': (read('/etc/machine-id') or '').strip() or None,
            'md_driver': exists('/proc/mdstat'), 'in_container': bool(in_container), 'tools': tools}


def verify(plan, host):
    """What does not hold after the run (a list of sentences; empty: every applied volume is mounted
    where the plan says, with its filesystem, the options the kernel shows, and the queue values)."""
    problems = []
    mounts = dict((m['mount_point'], m) for m in host.get('mounts') or [])
    by_uuid = dict((lsblk_uuid(d), d) for d in host.get('drives') or [] if d.get('uuid'))
    for volume in plan.get('apply') or []:
        mount = mounts.get(volume['mount_point'])
        if mount is None:
            problems.append('%s: nothing is mounted at %s' % (volume['name'], volume['mount_point']))
            continue
        if mount['fstype'] != volume['filesystem']:
            problems.append('%s: %s is %s, not %s' % (volume['name'], volume['mount_point'], mount['fstype'],
                                                      volume['filesystem']))
        drive = by_uuid.get(volume['uuid'].lower())
        if volume['raid_level'] is None and (drive is None or drive['path'] not in volume['drives']):
            problems.append('%s: no drive of %s holds the filesystem with UUID %s' % (
                volume['name'], ', '.join(volume['drives']), volume['uuid']))
        missing = [o for o in volume['mount']['verify_options'] if o not in mount['options']]
        if missing:
            problems.append('%s: %s is mounted without %s (it has %s)' % (
                volume['name'], volume['mount_point'], ', '.join(missing), ','.join(mount['options'])))
    for entry in plan.get('queue') or []:
        current = (host.get('queues') or {}).get(entry['drive']) or {}
        if str(current.get(entry['attribute'])) != entry['value']:
            problems.append('%s: %s is %s, not %s' % (entry['drive'], entry['attribute'],
                                                      current.get(entry['attribute']), entry['value']))
    return problems


def lsblk_uuid(drive):
    return (drive.get('uuid') or '').lower()
