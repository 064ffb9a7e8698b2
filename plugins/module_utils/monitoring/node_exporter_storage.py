# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Storage health of the node_exporter role: where the NVMe health program and its systemd units
live, their text, and the converged fast path's part for them (controller and target side,
Python 3.8).

md arrays need nothing here: node_exporter's ``mdadm`` collector (on by default, from
/proc/mdstat) exports ``node_md_*``; the role refuses nothing about it, and the docs say that
disabling it silences the md alerts. NVMe wear and media errors come from ``nvme_health.py``,
run by ``gpuops-nvme-health.timer`` as a oneshot service (root: nvme-cli's admin commands need
it) that may write only the textfile directory.

- ``layout(inputs)``: paths and unit texts (``node_exporter.layout()`` carries it as ``storage``).
- ``state(storage, show, program_source)``: what the host has (target side, node_exporter_host).
- ``drift(storage, state, wanted)``: what the fast path finds not as the role would leave it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import file_current
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import quote_arg
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import nvme_health

PROGRAM_DIR = '/usr/local/libexec/gpuops'
PROGRAM = PROGRAM_DIR + '/nvme_health.py'
SERVICE = 'gpuops-nvme-health.service'
TIMER = 'gpuops-nvme-health.timer'
UNIT_DIR = '/etc/systemd/system'
# How often the drives are read: wear and media errors change slowly; a smart-log read is cheap.
INTERVAL = '5min'

_SERVICE_TEXT = (
    '# Ansible managed (gpuops.dlserver.node_exporter)\n'
    '[Unit]\n'
    'Description=NVMe wear and media errors into node_exporter\'s textfile collector (gpuops.dlserver)\n'
    'Documentation=man:nvme-smart-log(1)\n'
    '\n'
    '[Service]\n'
    'Type=oneshot\n'
    'ExecStart={exec_start}\n'
    '# root: nvme-cli\'s admin commands need CAP_SYS_ADMIN. Everything else is read-only or absent.\n'
    'NoNewPrivileges=yes\n'
    'ProtectSystem=strict\n'
    'ReadWritePaths={textfile_dir}\n'
    'ProtectHome=yes\n'
    'PrivateTmp=yes\n'
    'ProtectKernelTunables=yes\n'
    'ProtectKernelModules=yes\n'
    'ProtectControlGroups=yes\n'
    'RestrictSUIDSGID=yes\n'
    'RestrictRealtime=yes\n'
    'LockPersonality=yes\n'
    'RestrictAddressFamilies=AF_UNIX AF_NETLINK\n'
    'SystemCallArchitectures=native\n'
    'TimeoutStartSec=5min\n')
_TIMER_TEXT = (
    '# Ansible managed (gpuops.dlserver.node_exporter)\n'
    '[Unit]\n'
    'Description=Read NVMe wear and media errors every {interval} (gpuops.dlserver)\n'
    '\n'
    '[Timer]\n'
    'OnBootSec=1min\n'
    'OnUnitActiveSec={interval}\n'
    'Unit={service}\n'
    '\n'
    '[Install]\n'
    'WantedBy=timers.target\n')


def layout(inputs):
    """Paths, unit texts and whether the role wants them (``node_exporter_storage_health``)."""
    textfile_dir = inputs['textfile_dir']
    exec_start = ' '.join(quote_arg(a) for a in ('/usr/bin/python3', PROGRAM, '--textfile-dir', textfile_dir))
    return {
        'wanted': bool(inputs['storage_health']),
        'program': PROGRAM, 'program_dir': PROGRAM_DIR,
        'service': SERVICE, 'timer': TIMER,
        'service_file': '%s/%s' % (UNIT_DIR, SERVICE), 'timer_file': '%s/%s' % (UNIT_DIR, TIMER),
        'service_content': _SERVICE_TEXT.format(exec_start=exec_start, textfile_dir=quote_arg(textfile_dir)),
        'timer_content': _TIMER_TEXT.format(interval=INTERVAL, service=SERVICE),
        'textfile': '%s/%s' % (textfile_dir, nvme_health.TEXTFILE),
    }


def program_source():
    """The text of nvme_health.py as this collection ships it (read from the package, so that it
    works from Ansible's module zip too): what the role installs and the fast path compares."""
    import pkgutil  # pylint: disable=import-outside-toplevel
    try:
        data = pkgutil.get_data('ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring', 'nvme_health.py')
    except (OSError, ImportError):
        # Not readable here: the fast path sees the program as not current, and the role's copy runs.
        return None
    return data.decode('utf-8') if data is not None else None


def state(storage, show=None, source=None, root=(0, 0)):
    """What the host has (target side): each file current or not, the textfile there or not,
    the timer's systemctl show properties (``show(unit)`` -> ``{property: value}``)."""
    uid, gid = root
    if storage['wanted']:
        return {'program': source is not None and file_current(storage['program'], source, 0o755, uid, gid),
                'service_file': file_current(storage['service_file'], storage['service_content'], 0o644, uid, gid),
                'timer_file': file_current(storage['timer_file'], storage['timer_content'], 0o644, uid, gid),
                'textfile': os.path.isfile(storage['textfile']),
                'timer': show(storage['timer']) if show else {}}
    paths = (storage['program'], storage['service_file'], storage['timer_file'], storage['textfile'])
    return {'absent': not any(os.path.lexists(p) for p in paths),
            'timer_file': os.path.lexists(storage['timer_file'])}


def drift(storage, host_state):
    """Names of what is not as the role would leave it ([] : converged)."""
    host_state = host_state or {}
    if not storage['wanted']:
        return [] if host_state.get('absent') else ['storage health files (to remove)']
    out = ['storage health %s' % what for what in ('program', 'service_file', 'timer_file', 'textfile')
           if not host_state.get(what)]
    timer = host_state.get('timer') or {}
    if timer.get('UnitFileState') != 'enabled' or timer.get('ActiveState') != 'active' \
            or timer.get('NeedDaemonReload') != 'no':
        out.append('storage health timer (%s, %s)' % (timer.get('UnitFileState'), timer.get('ActiveState')))
    return out
