# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side of gpuops.dlserver.__private.os_tuning_host: the one read of the host the os_tuning
role makes (no more than its decisions need), and the module's result.

``facts(params, check_mode, run_command)`` checks the inputs, reads the host under
``params['root']`` and returns the result of the module (the decisions of ``host/os_tuning.py``
and the reboot record); a problem raises ``HostError`` with the message and the details
(``rc``, ``stdout``, ``stderr``, ``problems``) for ``fail_json``. Commands run with a C locale
through ``run_command`` (``AnsibleModule.run_command``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import directory_current, file_current, put_files
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import parse_unit_states
from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_simulation

C_ENV = {'LANG': 'C', 'LC_ALL': 'C', 'LC_MESSAGES': 'C'}
REQUIRED_INPUTS = ('apply_live', 'sysctl_file', 'limits_file', 'systemd_limits_file', 'status_file',
                   'reboot_timeout')


class HostError(Exception):
    """The module fails: ``msg`` and the keyword arguments of fail_json in ``details``."""

    def __init__(self, msg, **details):
        super(HostError, self).__init__(msg)
        self.msg = msg
        self.details = details


class HostReader(object):
    """Reads the host state os_tuning decides on, under ``root``."""

    def __init__(self, run_command, root):
        self.run_command = run_command
        self.root = root

    def path(self, path):
        return os.path.join(self.root, path.lstrip('/'))

    def exists(self, path):
        return os.path.exists(self.path(path))

    def read(self, path):
        try:
            with open(self.path(path)) as handle:
                return handle.read()
        except (IOError, OSError) as exc:
            raise HostError('os_tuning_host: cannot read %s: %s' % (path, exc), rc=1, stderr=str(exc))

    def run(self, argv, what):
        rc, out, err = self.run_command(argv, environ_update=C_ENV)
        if rc != 0:
            raise HostError('os_tuning_host: %s failed (%s)' % (what, ' '.join(argv)), rc=rc, stdout=out, stderr=err)
        return out

    def unit_states(self, units):
        """{unit: {UnitFileState, ActiveState}} of ``units`` (the enable list), one systemctl call;
        {} where systemctl is missing or fails (the units then count as not current)."""
        names = [unit['name'] for unit in units]
        if not names:
            return {}
        try:
            rc, out, _err = self.run_command(['systemctl', 'show', '-p', 'Id,UnitFileState,ActiveState']
                                             + names, environ_update=C_ENV)
        except (IOError, OSError):
            return {}
        return parse_unit_states(out) if rc == 0 else {}

    def sysctl_live(self, keys):
        values = {}
        for key in keys:
            # sysctl names use '.' between components and '/' for a '.' inside one.
            path = '/proc/sys/' + key.translate(str.maketrans('./', '/.'))
            if self.exists(path):
                values[key] = self.read(path).strip()
        return values

    def packages(self, backend):
        if backend == 'dpkg':
            out = self.run(['dpkg-query', '-W', '-f', '${Package}\\t${Version}\\t${db:Status-Abbrev}\\n'],
                           'listing the installed packages')
            result = {}
            for line in out.splitlines():
                fields = line.split('\t')
                if len(fields) == 3 and fields[2][1:2] == 'i':
                    result[fields[0]] = {'version': fields[1], 'held': fields[2][:1] == 'h'}
            return result
        out = self.run(['rpm', '-qa', '--qf', '%{NAME}\\t%{VERSION}-%{RELEASE}\\n'], 'listing the installed packages')
        return dict((f[0], {'version': f[1], 'held': False})
                    for f in (line.split('\t') for line in out.splitlines()) if len(f) == 2)


def read_host(reader, inputs, platform, context):
    """Everything the decisions need, read once, no more than they need."""
    now = os_tuning.live(inputs['apply_live'], context['in_container'], context['virtualization_type'])
    wanted_cmdline = bool(inputs.get('kernel_cmdline'))
    grub_tool = reader.exists(platform['grub_tool'])
    host = {
        'cmdline': reader.read('/proc/cmdline') if wanted_cmdline else '',
        'boot_text': None,
        'grub_tool': grub_tool,
        'cpufreq_driver': reader.exists(os_tuning.CPUFREQ_PROBE),
        'units': dict((unit, reader.exists(os.path.join(os_tuning.UNIT_DIR, unit)))
                      for unit in (os_tuning.THP_UNIT, os_tuning.CPUFREQ_UNIT)),
        'packages': {},
        'simulation': None,
        'sysctl_live': reader.sysctl_live(sorted(os_tuning.merge_sysctl(inputs))) if now['live'] else {},
    }
    if wanted_cmdline and now['host_owned'] and grub_tool:
        if platform['cmdline_backend'] == 'grubby':
            host['boot_text'] = reader.run([platform['grub_tool'], '--info=DEFAULT'], 'reading the default boot entry')
        elif reader.exists(platform['grub_cfg']):
            host['boot_text'] = reader.read(platform['grub_cfg'])
    if context['driver_required'] and inputs.get('hold_kernel'):
        host['packages'] = reader.packages(platform['hold_backend'])
    kernel_globs = os_tuning.unattended(inputs, platform, context['driver_required'])['kernel_globs']
    holds = os_tuning.kernel_hold(inputs, platform, context['driver_required'], context['kernel'], host['packages'])
    if platform['unattended_backend'] == 'apt' and (kernel_globs or holds['held']):
        argv = ['apt-get', '--simulate', '--ignore-hold', '-o', 'Debug::NoLocking=true', 'dist-upgrade']
        host['simulation'], host['simulation_cached'] = apt_simulation.cached_simulation(
            argv, lambda: os_tuning.parse_apt_simulation(reader.run(argv, 'simulating the upgrades')),
            context.get('simulation_cache'), reader.root, write=not context['check_mode'])
    return host


def check_params(inputs, platform):
    """The module's inputs, before anything is read: raises HostError naming what is wrong."""
    missing = [name for name in REQUIRED_INPUTS if name not in inputs]
    if missing:
        raise HostError('os_tuning_host: inputs lacks %s; pass the converted role inputs (__os_tuning)'
                        % ', '.join(missing))
    if platform['cmdline_backend'] == 'grub_dropin' and not platform.get('grub_dropin'):
        raise HostError('os_tuning_host: platform.grub_dropin is required with the grub_dropin backend')
    # The values themselves were checked on the controller before any change by the registry of
    # input checks (core/input_checks.py runs os_tuning_inputs.problems in the role's preflight and in
    # host_plan on every host); only what needs this host is checked from here on.


def facts(params, check_mode, run_command):
    """The result of os_tuning_host (``changed``, ``ansible_facts`` and the decisions)."""
    inputs, platform = params['inputs'], params['platform']
    check_params(inputs, platform)
    context = {
        'in_container': params['in_container'], 'virtualization_type': params['virtualization_type'],
        'virtualization_role': params['virtualization_role'], 'driver_required': params['driver_required'],
        'kernel': params['kernel'], 'check_mode': check_mode,
        'simulation_cache': params.get('simulation_cache'),
    }
    reader = HostReader(run_command, params['root'])
    host = read_host(reader, inputs, platform, context)
    decisions = os_tuning.decide(inputs, platform, context, host)
    marker = reader.read(params['reboot_marker']) if reader.exists(params['reboot_marker']) else ''
    decisions['reboot_record'] = os_tuning.reboot_record(decisions['reboot'], marker)
    mark_files_current(reader, decisions.get('files'))
    decisions['converged'] = os_tuning.converged(decisions, reader.unit_states(decisions['units']['enable']),
                                                 unattended_current(reader, platform, decisions['unattended']))
    result = dict(decisions)
    # outside the status: a kept answer and a new one say the same there
    result.update(changed=False, ansible_facts={'os_tuning_status': decisions['status']},
                  simulation_cached=bool(host.get('simulation_cached')))
    return result


def write(params, module):
    """``write: true``: the same read and decisions as facts(), then the files the role writes
    (sysctl, limits, units, GRUB drop-in, blacklist) made so on the host by core/files.put_files
    - rendered and written here, never sent through the controller. Returns ``changed``, ``written``
    ([{key, dest, changed}]) and the ``diff`` of each file that changed (check mode writes nothing)."""
    decisions = facts(params, module.check_mode, module.run_command)
    reader = HostReader(None, params['root'])
    wanted = [dict(entry, dest=reader.path(entry['dest'])) for entry in (decisions.get('files') or {}).get('write') or []]
    done, diffs = put_files(wanted, module)
    return {'changed': bool(diffs), 'diff': diffs,
            'written': [{'key': entry['key'], 'dest': entry['dest'], 'changed': entry['changed']} for entry in done]}


def mark_files_current(reader, files):
    """The converged fast path: each directory and each file to remove says whether the host
    has it so already (``current``); the role's file task acts only on the others."""
    if not files:
        return
    for entry in files.get('directories') or []:
        entry['current'] = directory_current(reader.path(entry['path']), int(entry['mode'], 8))
    for entry in files.get('absent') or []:
        entry['current'] = file_current(reader.path(entry['path']), '')
    for entry in files.get('write') or []:
        entry['current'] = file_current(reader.path(entry['dest']), entry['content'], int(entry['mode'], 8))


def unattended_current(reader, platform, decision):
    """dnf-automatic's exclusion (EL) is what the role's ini_file task leaves: content and, where
    globs are set, the file's mode and owner; True on platforms without it (apt: a file of the role)."""
    if platform['unattended_backend'] != 'dnf_automatic':
        return True
    path = platform['unattended_file']
    if not reader.exists(path):
        return not decision['globs']
    info = os.stat(reader.path(path))
    if decision['globs'] and ((info.st_mode & 0o7777) != 0o644 or info.st_uid != 0 or info.st_gid != 0):
        return False
    return os_tuning.dnf_automatic_current(reader.read(path), decision['globs'])
