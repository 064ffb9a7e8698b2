# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every decision of the os_tuning role, in one place.

The role's YAML only orchestrates: the module ``gpuops.dlserver.__private.os_tuning_host`` reads the
host once and hands what it read, with the role's converted inputs (``__os_tuning``), to
``decide()``. Each step is a small pure function returning a value and the reason for it:

- ``problems()`` (os_tuning_inputs.py): bad input, each problem naming the variable (checked before
  any change);
- ``merge_sysctl()`` / ``sysctl()``: the three sysctl layers merged, live drift;
- ``live()``: whether the running kernel, systemd and boot loader are this host's to change;
- ``thp()``, ``cpufreq()``, ``limits()``: what is persisted and what applies now;
- ``kernel_cmdline()`` and ``reboot()``: what the boot loader configuration lacks, what waits
  for a reboot, and the reboot decision (``module_utils/reboot.py``'s vocabulary);
- ``unattended()``, ``kernel_hold()``, ``held_back()``: the unattended-upgrade blacklist and
  kernel holds (kernel packages only where the hardware plan installs a driver) and the
  kernel updates, security ones apart, that the hold keeps back;
- ``files()`` and ``units()``: the files and units the role writes, removes, enables;
- ``render()`` (os_tuning_files.py): the text of each file the role writes (what the role's templates rendered,
  byte for byte), so that the module compares it with the host's;
- ``converged()``: whether the host already is what the role's change phases would leave
  (the converged fast path: the role then skips them with one skipped include);
- ``status()``: the record written to the status file.

Pure functions, standard library only (the module imports this on the target).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import posixpath
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.host.os_tuning_files import CPUFREQ_SCRIPT, render
from ansible_collections.gpuops.dlserver.plugins.module_utils.host.os_tuning_inputs import SYSCTL_LAYERS
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.reboot import decide as reboot_decide

ROLE = 'gpuops.dlserver.os_tuning'
THP_UNIT = 'gpuops-thp.service'
CPUFREQ_UNIT = 'gpuops-cpufreq.service'
UNIT_DIR = '/etc/systemd/system'
CPUFREQ_PROBE = '/sys/devices/system/cpu/cpu0/cpufreq'

# Package names a kernel glob of the blacklist is recognised by (Debian, Ubuntu, EL): a glob
# that matches one of them keeps kernels back, so it applies only where a driver is installed.
# Each name's source: host/os_tuning_sources.py KERNEL_SAMPLE_ROWS.
KERNEL_SAMPLES = tuple(row['name'] for row in os_tuning_sources.KERNEL_SAMPLE_ROWS)
# Kernel packages of the running release, besides the platform's metapackages (RELEASE_PACKAGE_ROWS).
RELEASE_PACKAGES = tuple(row['pattern'] for row in os_tuning_sources.RELEASE_PACKAGE_ROWS)


# ---------------------------------------------------------------------------------------
# What applies now
# ---------------------------------------------------------------------------------------
def live(apply_live, in_container, virtualization_type=''):
    """Whether settings act on the running system now, and whether the kernel and boot loader are this host's."""
    host_owned = apply_live == 'always' or not in_container
    if apply_live == 'always' or (apply_live == 'auto' and not in_container):
        return {'live': True, 'host_owned': host_owned, 'reason': ''}
    if apply_live == 'never':
        return {'live': False, 'host_owned': host_owned,
                'reason': 'os_tuning_apply_live is never: persisted only, the next boot applies it'}
    return {'live': False, 'host_owned': host_owned,
            'reason': 'container (%s): the running kernel belongs to the host, persisted only'
                      % (virtualization_type or 'unknown')}


def merge_sysctl(inputs):
    """defaults < group < overwrite; null in a later layer drops the key."""
    merged = {}
    for layer in SYSCTL_LAYERS:
        merged.update(inputs.get(layer) or {})
    return dict((k, v) for k, v in merged.items() if v is not None)


def _norm(value):
    return ' '.join(str(value).split())


def sysctl(inputs, now, live_values):
    """The merged settings, and the keys whose live value differs from it (corrected where live)."""
    settings = merge_sysctl(inputs)
    drift = sorted(k for k, v in settings.items()
                   if now['live'] and k in (live_values or {}) and _norm(live_values[k]) != _norm(v))
    return {'file': inputs['sysctl_file'] if settings else None, 'settings': settings, 'live': now['live'],
            'drift': drift, 'reason': now['reason']}


def thp(inputs, now):
    wanted = bool(inputs.get('thp_enabled') or inputs.get('thp_defrag'))
    return {'enabled': inputs.get('thp_enabled'), 'defrag': inputs.get('thp_defrag'),
            'unit': THP_UNIT if wanted else None, 'live': now['live'] and wanted,
            'reason': now['reason'] if wanted else 'os_tuning_thp_enabled and os_tuning_thp_defrag are empty: left alone'}


def cpufreq(inputs, now, driver):
    governor = inputs.get('cpu_governor') or ''
    if not governor:
        reason = 'os_tuning_cpu_governor is empty: left alone'
    elif not driver:
        reason = 'no cpufreq driver (%s missing)' % CPUFREQ_PROBE
    else:
        reason = now['reason']
    return {'governor': governor, 'unit': CPUFREQ_UNIT if governor else None, 'driver': bool(driver),
            'live': bool(now['live'] and driver and governor), 'reason': reason}


def limits(inputs, now):
    entries = list(inputs.get('limits') or []) + list(inputs.get('limits_extra') or [])
    reason = ('PAM limits apply at the next login; systemd defaults apply to services started after the re-exec'
              if now['live'] else now['reason'] + '; systemd defaults apply at the next boot')
    return {'entries': entries, 'file': inputs['limits_file'] if entries else None,
            'systemd_file': inputs['systemd_limits_file'] if inputs.get('systemd_limits') else None,
            'systemd_reexec': now['live'], 'reason': reason}


# ---------------------------------------------------------------------------------------
# Kernel command line and reboot
# ---------------------------------------------------------------------------------------
def boot_words(backend, text):
    """Words of grub.cfg (grub_dropin) or of ``grubby --info=DEFAULT`` (grubby); [] when unread."""
    if text is None:
        return []
    if backend == 'grubby':
        text = text.replace('"', ' ')
    return text.split()


def kernel_cmdline(inputs, now, platform, running, boot_text, grub_present):
    """What the boot loader configuration lacks and what waits for a reboot.

    ``running``: the text of /proc/cmdline; ``boot_text``: grub.cfg or the grubby output
    (None when not read); ``grub_present``: the boot loader tool exists.
    """
    wanted = [str(p) for p in inputs.get('kernel_cmdline') or []]
    running_words = (running or '').split()
    pending = [p for p in wanted if p not in running_words]
    if not now['host_owned']:
        boot_reason = now['reason']
    elif not grub_present:
        boot_reason = 'boot loader not managed: %s not found (no GRUB on this host)' % platform['grub_tool']
    else:
        boot_reason = ''
    managed = boot_reason == ''
    words = boot_words(platform['cmdline_backend'], boot_text)
    missing = [p for p in wanted if p not in words] if managed else []
    return {'wanted': wanted, 'backend': platform['cmdline_backend'], 'boot_loader_managed': managed,
            'boot_loader_update': managed and bool(wanted), 'boot_loader_reason': boot_reason,
            'boot_missing': missing, 'pending': pending, 'reboot_required': bool(pending)}


def reboot(inputs, now, cmdline):
    """The reboot decision (module_utils/reboot.py): needed when a wanted parameter is not in /proc/cmdline."""
    if not cmdline['wanted']:
        why = 'no kernel parameter wanted'
    elif not cmdline['pending']:
        why = 'every wanted parameter is in /proc/cmdline'
    else:
        why = 'kernel command line parameters not active until reboot: %s' % ' '.join(cmdline['pending'])
    owned = now['live'] and cmdline['boot_loader_managed']
    not_owned = cmdline['boot_loader_reason'] or now['reason']
    return reboot_decide(bool(cmdline['pending']), why, bool(inputs.get('reboot')), 'os_tuning_reboot',
                         host_owned=owned, not_owned_reason=not_owned, timeout=inputs.get('reboot_timeout'))


def reboot_record(decision, marker_text):
    """Whether the role's line in the reboot-required file must be written or cleared."""
    has_line = any(line.startswith('os_tuning:') for line in (marker_text or '').splitlines())
    return bool(decision['needed'] or has_line)


# ---------------------------------------------------------------------------------------
# Unattended upgrades and kernel holds
# ---------------------------------------------------------------------------------------
def is_kernel_glob(glob):
    return any(fnmatch.fnmatchcase(name, glob) for name in KERNEL_SAMPLES)


def glob_to_regex(glob):
    """unattended-upgrades matches Package-Blacklist entries with re.match: anchor the end."""
    return re.sub(r'([.+])', r'[\1]', glob).replace('*', '.*').replace('?', '.') + '$'


def _driver_reason(driver_required):
    if driver_required:
        return 'the hardware plan installs the NVIDIA driver here'
    return 'the hardware plan installs no NVIDIA driver here: kernel updates flow'


def unattended(inputs, platform, driver_required):
    """The blacklist that applies: kernel globs only where a driver is installed."""
    requested = [str(g) for g in inputs.get('unattended_blacklist') or []]
    dropped = [] if driver_required else [g for g in requested if is_kernel_glob(g)]
    globs = [g for g in requested if g not in dropped]
    if not requested:
        reason = 'os_tuning_unattended_blacklist is empty'
    elif dropped:
        reason = 'kernel globs %s left out: %s' % (', '.join(dropped), _driver_reason(False))
    elif any(is_kernel_glob(g) for g in globs):
        reason = 'kernel globs kept: %s' % _driver_reason(True)
    else:
        reason = ''
    return {'backend': platform['unattended_backend'], 'requested': requested, 'globs': globs,
            'kernel_globs': [g for g in globs if is_kernel_glob(g)], 'dropped': dropped,
            'patterns': [{'glob': g, 'regex': glob_to_regex(g)} for g in globs],
            'file': platform['unattended_file'] if globs else None, 'reason': reason}


def kernel_candidates(platform, kernel_release):
    names = list(platform.get('kernel_packages') or [])
    if platform.get('hold_backend') == 'dpkg' and kernel_release:
        names += [pattern % kernel_release for pattern in RELEASE_PACKAGES]
    return names


def kernel_hold(inputs, platform, driver_required, kernel_release, installed):
    """The installed kernel packages to hold (dpkg hold / dnf versionlock), driver hosts only.

    ``installed``: {name: {'version': str, 'held': bool}} of the installed packages.
    """
    installed = installed or {}
    wanted = bool(inputs.get('hold_kernel'))
    present = [n for n in kernel_candidates(platform, kernel_release) if n in installed]
    if not wanted:
        held, reason = [], 'os_tuning_hold_kernel is false'
    elif not driver_required:
        held, reason = [], 'not held: %s' % _driver_reason(False)
    elif not present:
        held, reason = [], 'no kernel package installed'
    else:
        held, reason = present, ''
    return {'backend': platform['hold_backend'], 'hold_kernel': wanted, 'held': held,
            'to_hold': [n for n in held if not installed[n].get('held')], 'reason': reason}


_INST_RE = re.compile(r'^Inst (?P<name>\S+) (?:\[(?P<installed>[^\]]+)\] )?\((?P<candidate>\S+) (?P<origins>.*?)(?: \[[^\]]+\])?\)')


def parse_apt_simulation(text):
    """The upgrades of ``apt-get --simulate`` output: name, installed, candidate, origins, security."""
    result = []
    for line in (text or '').splitlines():
        match = _INST_RE.match(line.strip())
        if not match:
            continue
        origins = [o.strip() for o in match.group('origins').split(',') if o.strip()]
        result.append({'name': match.group('name'), 'installed': match.group('installed'),
                       'candidate': match.group('candidate'), 'origins': origins,
                       'security': any('security' in o.lower() for o in origins)})
    return result


def held_back(unattended_decision, hold_decision, simulation):
    """Kernel updates the blacklist or the hold keeps back, security ones apart.

    ``simulation``: None when it was not run, else the parsed upgrades (simulated now or kept
    since apt's inputs last changed: the same answer, so the status file says the same).
    """
    globs = unattended_decision['kernel_globs']
    held = hold_decision['held']
    if not globs and not held:
        return {'checked': False, 'updates': [], 'security': [],
                'reason': 'no kernel package is kept back on this host'}
    if simulation is None:
        return {'checked': False, 'updates': [], 'security': [],
                'reason': 'not checked: the package manager cannot simulate upgrades here (EL: see docs/roles/os_tuning.md)'}
    updates = [u for u in simulation if u['installed'] and (u['name'] in held or any(
        fnmatch.fnmatchcase(u['name'], g) for g in globs))]
    return {'checked': True, 'updates': updates, 'security': [u for u in updates if u['security']],
            'reason': 'apt-get --simulate --ignore-hold dist-upgrade against the package lists of the last apt update'}


# ---------------------------------------------------------------------------------------
# Files and units the role writes
# ---------------------------------------------------------------------------------------
def files(inputs, platform, decisions):
    """Directories to create, files to write and files to remove, each with a key handlers know
    (``decide()`` adds the text of each file to write, ``render()``)."""
    entries = [
        ('sysctl', inputs['sysctl_file'], 'sysctl.conf.j2', '0644', bool(decisions['sysctl']['settings'])),
        ('limits', inputs['limits_file'], 'limits.conf.j2', '0644', bool(decisions['limits']['entries'])),
        ('systemd_limits', inputs['systemd_limits_file'], 'systemd-limits.conf.j2', '0644',
         bool(inputs.get('systemd_limits'))),
        ('thp_unit', posixpath.join(UNIT_DIR, THP_UNIT), 'gpuops-thp.service.j2', '0644',
         bool(decisions['thp']['unit'])),
        ('cpufreq_script', CPUFREQ_SCRIPT, 'cpufreq-governor.sh.j2', '0755', bool(decisions['cpufreq']['unit'])),
        ('cpufreq_unit', posixpath.join(UNIT_DIR, CPUFREQ_UNIT), 'gpuops-cpufreq.service.j2', '0644',
         bool(decisions['cpufreq']['unit'])),
    ]
    if platform['cmdline_backend'] == 'grub_dropin':
        entries.append(('grub_dropin', platform['grub_dropin'], 'grub.cfg.j2', '0644',
                        bool(decisions['kernel_cmdline']['wanted'])))
    if platform['unattended_backend'] == 'apt':
        entries.append(('unattended', platform['unattended_file'], 'unattended-upgrades.j2', '0644',
                        bool(decisions['unattended']['globs'])))
    directories = []
    for key, path, _src, _mode, wanted in entries:
        parent = posixpath.dirname(path)
        if wanted and key in ('systemd_limits', 'cpufreq_script', 'grub_dropin') and parent not in directories:
            directories.append(parent)
    return {
        'directories': [{'key': 'directory', 'path': d, 'state': 'directory', 'mode': '0755'} for d in directories],
        'write': [{'key': k, 'dest': p, 'mode': m} for k, p, _s, m, w in entries if w],
        'absent': [{'key': k, 'path': p, 'state': 'absent'} for k, p, _s, _m, w in entries if not w],
    }


def units(decisions, present, check_mode):
    """Units to stop and disable (before their files go) and to enable (started where live).

    ``present``: {unit: whether its file exists}. In check mode a unit whose file does not
    exist yet cannot be queried, so it is left out.
    """
    stop, enable = [], []
    for unit, decision in ((THP_UNIT, decisions['thp']), (CPUFREQ_UNIT, decisions['cpufreq'])):
        if decision['unit'] is None:
            if present.get(unit):
                stop.append({'name': unit})
        elif present.get(unit) or not check_mode:
            enable.append({'name': unit, 'state': 'started' if decision['live'] else None})
    return {'stop': stop, 'enable': enable}


# ---------------------------------------------------------------------------------------
# Everything at once
# ---------------------------------------------------------------------------------------
def decide(inputs, platform, context, host):
    """All decisions from the converted inputs, the platform vars, the context and the host state.

    ``context``: in_container, virtualization_type, virtualization_role, driver_required,
    kernel (release), check_mode. ``host``: cmdline, boot_text, grub_tool, cpufreq_driver,
    units ({unit: exists}), packages ({name: {version, held}}), simulation (parsed or None),
    sysctl_live ({key: value}).
    """
    now = live(inputs['apply_live'], bool(context.get('in_container')), context.get('virtualization_type'))
    driver_required = bool(context.get('driver_required'))
    decisions = {
        'live': now,
        'sysctl': sysctl(inputs, now, host.get('sysctl_live')),
        'thp': thp(inputs, now),
        'cpufreq': cpufreq(inputs, now, host.get('cpufreq_driver')),
        'limits': limits(inputs, now),
        'kernel_cmdline': kernel_cmdline(inputs, now, platform, host.get('cmdline'), host.get('boot_text'),
                                         host.get('grub_tool')),
        'unattended': unattended(inputs, platform, driver_required),
        'hold': kernel_hold(inputs, platform, driver_required, context.get('kernel'), host.get('packages')),
    }
    decisions['reboot'] = reboot(inputs, now, decisions['kernel_cmdline'])
    decisions['held_back'] = held_back(decisions['unattended'], decisions['hold'], host.get('simulation'))
    decisions['files'] = files(inputs, platform, decisions)
    for entry in decisions['files']['write']:
        entry['content'] = render(entry['key'], inputs, decisions)
    decisions['units'] = units(decisions, host.get('units') or {}, bool(context.get('check_mode')))
    decisions['status'] = status(inputs, context, decisions)
    return decisions


def status(inputs, context, decisions):
    """The record of what was applied live and why the rest was only persisted."""
    now, cmdline, reboot_decision = decisions['live'], decisions['kernel_cmdline'], decisions['reboot']
    sysctl_decision = dict(decisions['sysctl'])
    sysctl_decision.pop('drift')
    unattended_decision, hold = decisions['unattended'], decisions['hold']
    return {
        'role': ROLE,
        'container': bool(context.get('in_container')),
        'virtualization': '%s/%s' % (context.get('virtualization_type') or '', context.get('virtualization_role') or ''),
        'apply_live': inputs['apply_live'],
        'live': now['live'],
        'reason': now['reason'],
        'sysctl': sysctl_decision,
        'thp': decisions['thp'],
        'cpufreq': decisions['cpufreq'],
        'limits': dict((k, v) for k, v in decisions['limits'].items() if k != 'entries'),
        'kernel_cmdline': {
            'wanted': cmdline['wanted'], 'backend': cmdline['backend'],
            'boot_loader_update': cmdline['boot_loader_update'], 'boot_loader_reason': cmdline['boot_loader_reason'],
            'pending': cmdline['pending'], 'reboot_required': cmdline['reboot_required'],
            'reboot': reboot_decision['action'], 'reboot_reason': reboot_decision['reason'],
        },
        'package_holds': {
            'driver_required': bool(context.get('driver_required')),
            'unattended_blacklist': unattended_decision['globs'],
            'unattended_blacklist_requested': unattended_decision['requested'],
            'unattended_file': unattended_decision['file'],
            'unattended_reason': unattended_decision['reason'],
            'hold_kernel': hold['hold_kernel'],
            'held': hold['held'],
            'reason': hold['reason'],
            'kernel_updates_held_back': decisions['held_back'],
        },
    }


# ---------------------------------------------------------------------------------------
# The converged fast path
# ---------------------------------------------------------------------------------------
def converged(decisions, unit_states, unattended_current=True):
    """Whether the role's change phases (configure, package_holds) would change nothing.

    ``decisions``: decide()'s, each directory, file to write and file to remove marked
    ``current`` (the host has it so: content, mode, owner; directory; no file);
    ``unit_states``: {unit: {UnitFileState, ActiveState}} of the units to enable (systemctl
    show); ``unattended_current``: the dnf-automatic exclusion already is what the role sets
    (EL; True where the platform has no such file). Returns {converged, reasons}: each reason
    names what the change phases would act on.
    """
    reasons = []
    found = decisions['files']
    for entry in found['directories']:
        if not entry.get('current'):
            reasons.append('directory %s missing or not root-owned %s' % (entry['path'], entry['mode']))
    for entry in found['write']:
        if not entry.get('current'):
            reasons.append('%s differs (content, mode %s or root ownership)' % (entry['dest'], entry['mode']))
    for entry in found['absent']:
        if not entry.get('current'):
            reasons.append('%s to be removed' % entry['path'])
    for unit in decisions['units']['stop']:
        reasons.append('%s to be stopped and disabled' % unit['name'])
    for unit in decisions['units']['enable']:
        state = (unit_states or {}).get(unit['name']) or {}
        if state.get('UnitFileState') != 'enabled':
            reasons.append('%s is not enabled (%s)' % (unit['name'], state.get('UnitFileState') or 'unknown'))
        if unit.get('state') == 'started' and state.get('ActiveState') != 'active':
            reasons.append('%s is not active (%s)' % (unit['name'], state.get('ActiveState') or 'unknown'))
    if decisions['sysctl']['live'] and decisions['sysctl']['file'] and decisions['sysctl']['drift']:
        reasons.append('sysctl drift: %s' % ', '.join(decisions['sysctl']['drift']))
    if decisions['kernel_cmdline']['boot_missing']:
        reasons.append('the boot loader configuration lacks %s' % ' '.join(decisions['kernel_cmdline']['boot_missing']))
    hold = decisions['hold']
    if hold['backend'] == 'dpkg' and hold['to_hold']:
        reasons.append('not held: %s' % ', '.join(hold['to_hold']))
    if hold['backend'] == 'versionlock' and hold['held']:
        reasons.append('the dnf version locks are not read: the package_holds phase runs')
    if not unattended_current:
        reasons.append('the dnf-automatic exclusion differs')
    return {'converged': not reasons, 'reasons': reasons}


def dnf_automatic_current(text, globs):
    """Whether [base] exclude of dnf-automatic's file (``text``, None when absent) is what the
    role's ini_file task leaves: ``globs`` joined by spaces, or no exclude option without globs."""
    section, value = None, None
    for line in (text or '').splitlines():
        stripped = line.strip()
        if stripped.startswith('['):
            section = stripped.strip('[]').strip()
        elif section == 'base' and '=' in stripped and not stripped.startswith(('#', ';')):
            key, _sep, found = stripped.partition('=')
            if key.strip() == 'exclude':
                value = found.strip()
    if globs:
        return value == ' '.join(globs)
    return value is None
