# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The storage role's plan for one host: which drives each declared volume takes, and what is done.

``decide(inputs, host)`` takes the role's converted inputs (``storage/inputs.py`` has refused
what is wrong by form) and what ``__private.storage_host`` read in one round trip (``host``:
``drives`` from ``storage/lsblk.py``, ``resolved`` device paths, ``machine_id``, ``md_driver``,
``in_container``, ``tools``, ``queues``) and returns the plan: per volume the drives, each choice
with its reason, the ``mdadm --create`` command line, the filesystem to make (or why none is
made), the mount, and the read-ahead and scheduler values; plus the udev rule that keeps those
after a reboot, the packages missing, and ``problems``. A drive is never taken while it holds
anything - a partition table, a filesystem, an md or LVM signature, partitions, a holder or a
mount - unless it is what this plan made (the filesystem or array with the volume's own UUID,
derived from the host's machine id and the volume's name, so a run interrupted between mkfs and
mount finds its filesystem and does not format again). The boot drive is never taken.

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import shlex
import uuid

from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage.inputs import (
    RAID_MIN_MEMBERS, VARIABLE, volume_defaults)

# the smallest device each filesystem is made on (XFS 300 MiB, ext4 2 MiB: with its journal), and the
# tool and Debian package each step needs; the rows, their sources and what was run: storage/sources.py
MIN_BYTES = dict((row['filesystem'], row['bytes']) for row in sources.FILESYSTEM_MIN_ROWS)
PACKAGES = dict((row['for'], (row['tool'], row['package'])) for row in sources.PACKAGE_ROWS)
UDEV_RULE = '/etc/udev/rules.d/60-gpuops-storage.rules'
# options the kernel shows in /proc/self/mountinfo as they are written (verify compares these)
KERNEL_SHOWN = ('noatime', 'nodiratime', 'relatime', 'strictatime', 'lazytime', 'ro', 'nodev', 'nosuid',
                'noexec')
_NAMESPACE = uuid.UUID('6f1c2a7e-40b5-4c43-9a52-2d5b0f0c4d21')
_UDEV_VALUE = re.compile(r'[A-Za-z0-9_.:-]{1,64}')


def volume_uuid(machine_id, name, kind='filesystem'):
    """The UUID the role gives a volume's filesystem (or array) on this host: the same on every run."""
    return str(uuid.uuid5(_NAMESPACE, '%s/%s/%s' % (machine_id or 'unknown', kind, name)))


def _hex(value):
    return re.sub(r'[^0-9a-f]', '', (value or '').lower())


def _where(index, key=None):
    return '%s[%d]%s' % (VARIABLE, index, ('.' + key) if key else '')


def array_size(level, sizes):
    """Usable bytes of an md array of ``level`` over members of ``sizes`` (md(4): RAID 0 the sum,
    1 the smallest, 5 and 6 one and two members fewer, 10 half)."""
    if not sizes or any(s is None for s in sizes):
        return None
    smallest, count = min(sizes), len(sizes)
    return {0: sum(sizes), 1: smallest, 5: smallest * (count - 1), 6: smallest * (count - 2),
            10: smallest * count // 2}.get(level)


def mdadm_argv(volume, members, array_uuid):
    """The mdadm --create command of a volume's array (argv list)."""
    return ['mdadm', '--create', '/dev/md/%s' % volume['name'], '--run', '--metadata=1.2',
            '--level=%d' % volume['raid_level'], '--raid-devices=%d' % len(members),
            '--name=%s' % volume['name'], '--uuid=%s' % array_uuid] + list(members)


def command_line(argv):
    """argv as one shell line, each word quoted for the shell."""
    return ' '.join(shlex.quote(word) for word in argv)


def _select(index, volume, host):
    """(drives, problems): the drives the volume's selector names, in a stable order."""
    drives = list(host.get('drives') or [])
    by_path = dict((d['path'], d) for d in drives)
    selector = volume['drives']
    where = _where(index, 'drives')
    if selector.get('paths'):
        chosen, problems = [], []
        for path in selector['paths']:
            real = (host.get('resolved') or {}).get(path, path)
            drive = by_path.get(real)
            if drive is None or not drive.get('present', True):
                problems.append('%s.paths: %s is missing on this host (no such whole drive%s)' % (
                    where, path, '' if real == path else ', it resolves to %s' % real))
            else:
                chosen.append(drive)
        return chosen, problems
    if selector.get('empty_nvme'):
        chosen = [d for d in drives if d.get('present', True) and d.get('nvme') and not d.get('system')
                  and (not d['contents'] or _ours(volume, d, host))]
        return chosen, [] if chosen else ['%s.empty_nvme: no empty NVMe drive that is not the boot drive on '
                                          'this host' % where]
    key = 'model' if selector.get('model') else 'serial'
    pattern = re.compile(selector[key])
    chosen = [d for d in drives if d.get('present', True) and d.get(key) and pattern.fullmatch(d[key])]
    return chosen, [] if chosen else ['%s.%s: no drive on this host whose %s matches %r in full' % (
        where, key, key, selector[key])]


def _ours(volume, drive, host):
    """Whether what is on the drive is what this plan makes for the volume (its UUID)."""
    kinds = set(kind for kind, _words in drive.get('contents') or [])
    if volume.get('raid_level') is None:
        mine = volume_uuid(host.get('machine_id'), volume['name'])
        return (drive.get('fstype') == volume.get('filesystem', 'ext4') and _hex(drive.get('uuid')) == _hex(mine)
                and kinds <= set(['filesystem', 'mounted'])
                and set(drive.get('mountpoints') or []) <= set([volume['mount_point']]))
    mine = volume_uuid(host.get('machine_id'), volume['name'], 'array')
    return (drive.get('fstype') == 'linux_raid_member' and _hex(drive.get('uuid')) == _hex(mine)
            and kinds <= set(['md', 'holder', 'mounted']))


def _refusals(index, volume, chosen, host):
    problems = []
    for drive in chosen:
        if drive.get('system'):
            problems.append('%s: %s is the boot drive (it holds %s): never taken' % (
                _where(index, 'drives'), drive['path'], ', '.join(drive['system'])))
        elif drive['contents'] and not _ours(volume, drive, host):
            problems.append('%s: %s holds data (%s): refused, nothing was changed; wipe it yourself if it is '
                            'meant for this volume' % (_where(index, 'drives'), drive['path'],
                                                       '; '.join(words for _kind, words in drive['contents'])))
    return problems


def _queue(volume, chosen, host):
    """The read-ahead and scheduler values of the volume's drives (sysfs path, wanted, current)."""
    entries, problems = [], []
    queues = host.get('queues') or {}
    for drive in chosen:
        current = queues.get(drive['name']) or {}
        if volume['read_ahead_kb'] is not None:
            entries.append({'drive': drive['name'], 'attribute': 'read_ahead_kb',
                            'path': '/sys/block/%s/queue/read_ahead_kb' % drive['name'],
                            'value': str(volume['read_ahead_kb']), 'current': current.get('read_ahead_kb')})
        if volume['scheduler']:
            available = current.get('schedulers') or []
            if available and volume['scheduler'] not in available:
                problems.append('%s: the kernel offers %s no %s scheduler (it has %s)' % (
                    volume['_where'] + '.scheduler', drive['name'], volume['scheduler'], ', '.join(available)))
            entries.append({'drive': drive['name'], 'attribute': 'scheduler',
                            'path': '/sys/block/%s/queue/scheduler' % drive['name'],
                            'value': volume['scheduler'], 'current': current.get('scheduler')})
    return entries, problems


def udev_rule(queue, drives):
    """The udev rule text that sets the queue values again at every boot and hot-plug ('' when none):
    a drive is matched by its serial where it has one a udev rule can quote, else by its kernel name."""
    by_name = dict((d['name'], d) for d in drives)
    attrs = {}
    for entry in queue:
        attrs.setdefault(entry['drive'], []).append('ATTR{queue/%s}="%s"' % (entry['attribute'], entry['value']))
    lines = []
    for name in sorted(attrs):
        serial = by_name.get(name, {}).get('serial')
        match = ('ENV{ID_SERIAL_SHORT}=="%s"' % serial) if serial and _UDEV_VALUE.fullmatch(serial) and \
            not name.startswith('loop') else 'KERNEL=="%s"' % name
        lines.append('ACTION=="add|change", SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", %s, %s' % (
            match, ', '.join(attrs[name])))
    if not lines:
        return ''
    return '# Managed by gpuops.dlserver.storage: read-ahead and I/O scheduler of the dataset drives.\n' + \
        '\n'.join(lines) + '\n'


def _plan_volume(index, raw, host):
    volume = volume_defaults(raw)
    volume['_where'] = _where(index)
    chosen, problems = _select(index, volume, host)
    problems += _refusals(index, volume, chosen, host)
    level, fstype = volume['raid_level'], volume['filesystem']
    if level is not None and chosen and len(chosen) < RAID_MIN_MEMBERS[level]:
        problems.append('%s: RAID %s needs at least %d drives, the selector found %d (%s)' % (
            _where(index, 'raid_level'), level, RAID_MIN_MEMBERS[level], len(chosen),
            ', '.join(d['path'] for d in chosen)))
    if level is None and len(chosen) > 1:
        problems.append('%s found %d drives (%s): set %s to make one array of them, or choose one drive' % (
            _where(index, 'drives'), len(chosen), ', '.join(d['path'] for d in chosen), _where(index, 'raid_level')))
    size = array_size(level, [d.get('size') for d in chosen]) if level is not None else (
        chosen[0].get('size') if len(chosen) == 1 else None)
    if chosen and size is not None and size < MIN_BYTES[fstype]:
        problems.append('%s: %s bytes cannot hold %s (at least %d MiB)' % (
            _where(index), size, fstype, MIN_BYTES[fstype] // (1024 * 1024)))
    fs_uuid = volume_uuid(host.get('machine_id'), volume['name'])
    members = [d['path'] for d in chosen]
    made = [d for d in chosen if d['contents'] and _ours(volume, d, host)]
    record = {'name': volume['name'], 'drives': members, 'filesystem': fstype, 'uuid': fs_uuid,
              'label': volume['name'], 'mount_point': volume['mount_point'], 'size_bytes': size,
              'raid_level': level, 'array': None}
    if level is not None:
        array_uuid = volume_uuid(host.get('machine_id'), volume['name'], 'array')
        argv = mdadm_argv(volume, members, array_uuid)
        runnable = bool(host.get('md_driver')) and not host.get('in_container')
        record['array'] = {
            'device': '/dev/md/%s' % volume['name'], 'uuid': array_uuid, 'argv': argv,
            'command': command_line(argv), 'exists': bool(made) and len(made) == len(chosen),
            'run': runnable,
            'reason': 'the kernel has the md driver: the array is created' if runnable else (
                'planned only: %s, so mdadm is not run and the volume is not formatted or mounted here' % (
                    'inside a container the kernel is the host\'s' if host.get('in_container')
                    else 'this kernel has no md driver (/proc/mdstat is missing)'))}
        device = record['array']['device']
        record['apply'] = runnable
    else:
        device = members[0] if members else None
        record['apply'] = True
    formatted = level is None and bool(made)
    record['format'] = {
        'needed': not formatted, 'device': device,
        'reason': ('%s already holds the %s filesystem this role made (UUID %s): not formatted again' % (
            device, fstype, fs_uuid)) if formatted else 'empty drive%s: a new %s filesystem, label %s, UUID %s' % (
                's' if len(members) > 1 else '', fstype, volume['name'], fs_uuid),
        'opts': ('-L %s -U %s' % (volume['name'], fs_uuid)) if fstype == 'ext4' else (
            '-L %s -m uuid=%s' % (volume['name'], fs_uuid))}
    record['mount'] = {'path': volume['mount_point'], 'src': 'UUID=%s' % fs_uuid, 'fstype': fstype,
                       'opts': ','.join(volume['mount_options']) or 'defaults',
                       'verify_options': [o for o in volume['mount_options'] if o in KERNEL_SHOWN]}
    queue, queue_problems = _queue(volume, chosen, host)
    record['queue'] = queue
    return record, problems + queue_problems


def decide(inputs, host):
    """The plan: volumes (each as _plan_volume records it), queue, udev_rule, packages, fstrim,
    cachefilesd, problems (each naming its variable), and a one-line reason."""
    volumes, problems, queue = [], [], []
    for index, raw in enumerate(inputs.get('volumes') or []):
        record, found = _plan_volume(index, raw, host)
        volumes.append(record)
        problems.extend(found)
        queue.extend(record['queue'])
    taken = {}
    for index, record in enumerate(volumes):
        for path in record['drives']:
            if path in taken:
                problems.append('%s and %s both take %s' % (_where(taken[path], 'drives'), _where(index, 'drives'),
                                                            path))
            taken.setdefault(path, index)
    tools = host.get('tools') or {}
    wanted = set(v['filesystem'] for v in volumes if v['apply']) | set(
        'md' for v in volumes if v['array'] and v['array']['run'])
    packages = sorted(set(PACKAGES[k][1] for k in wanted if not tools.get(PACKAGES[k][0])))
    applied = [v for v in volumes if v['apply']]
    reason = 'no storage_volumes: nothing to lay out' if not volumes else '%d volume(s): %s' % (
        len(volumes), '; '.join('%s on %s at %s%s' % (
            v['name'], ', '.join(v['drives']) or '?', v['mount_point'],
            '' if v['apply'] else ' (%s)' % v['array']['reason']) for v in volumes))
    return {'volumes': volumes, 'apply': applied, 'queue': queue,
            'udev_rule': udev_rule(queue, host.get('drives') or []), 'udev_rule_path': UDEV_RULE,
            'packages': packages, 'fstrim': bool(inputs.get('fstrim')),
            # Debian's fstrim.timer does not start in a container (ConditionVirtualization=!container): enabled only
            'fstrim_start': bool(inputs.get('fstrim')) and not host.get('in_container'),
            'cachefilesd': _cachefilesd(inputs, host), 'problems': problems, 'reason': reason}


def _cachefilesd(inputs, host):
    if not inputs.get('cachefilesd'):
        return {'run': False, 'reason': 'storage_cachefilesd is false'}
    if host.get('in_container'):
        return {'run': False, 'reason': 'inside a container FS-Cache (/dev/cachefiles) is the host kernel\'s: '
                                        'cachefilesd is not installed'}
    return {'run': True, 'reason': 'storage_cachefilesd is true: NFS mounts with the fsc option cache on this host'}


def status_record(plan, source):
    """The status file's record of the plan (no secrets are involved): per volume what was chosen and why."""
    return {
        'reason': plan['reason'], 'read_from': source,
        'volumes': [dict((k, v[k]) for k in ('name', 'drives', 'filesystem', 'uuid', 'label', 'mount_point',
                                             'size_bytes', 'raid_level', 'apply'))
                    for v in plan['volumes']],
        'arrays': dict((v['name'], {'command': v['array']['command'], 'run': v['array']['run'],
                                    'reason': v['array']['reason']}) for v in plan['volumes'] if v['array']),
        'queue': [dict((k, e[k]) for k in ('drive', 'attribute', 'value')) for e in plan['queue']],
        'udev_rule': plan['udev_rule_path'] if plan['udev_rule'] else None,
        'fstrim_timer': plan['fstrim'], 'cachefilesd': plan['cachefilesd'],
    }
