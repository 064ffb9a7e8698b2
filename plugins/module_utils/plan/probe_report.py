# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The read-only fleet report of ``playbooks/probe.yml``: per host, what the probe saw, what the
plan decided, per role whether a run would change something and whether a reboot would follow.

``host_report()`` builds one host's report from its plan, the driver role's read of the host
and repositories (``nvidia_driver_repo`` action ``resolve``, run in check mode) and the host's
pending reboot marker; ``fleet_report()`` gathers the hosts' reports (a host without one failed
or was unreachable) into the JSON document and the table the playbook prints.

Pure functions, standard library only (reached through the filters gpuops.dlserver.probe_report
and gpuops.dlserver.probe_fleet).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.options import ROLES

REPORT_VERSION = 1
NOT_INSPECTED = 'not inspected by the probe (site.yml --check --diff on a canary shows it)'
_MARKER_LINE = re.compile(r'([a-z_]+): (.*)')


class ReportError(ValueError):
    """An input of the report is missing or of the wrong shape."""


def _dict(value, name):
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ReportError('probe report: %s must be a dict, got %s' % (name, type(value).__name__))
    return value


def pending_reboots(marker_text):
    """``{role: reason}`` from the text of /run/gpuops/reboot-required (one ``role: reason`` a line)."""
    if marker_text is None:
        return {}
    if not isinstance(marker_text, str):
        raise ReportError('probe report: the reboot marker must be text, got %s' % type(marker_text).__name__)
    pending = {}
    for line in marker_text.splitlines():
        match = _MARKER_LINE.fullmatch(line.strip())
        if match:
            pending[match.group(1)] = match.group(2)
    return pending


def driver_change(plan, resolved):
    """What a run of nvidia_driver would do: ``{run, change, reboot, reason, installed, target}``.

    ``resolved`` is the result of ``nvidia_driver_repo`` (action resolve) on this host, or None
    when the role was not inspected (the plan gives the host no driver, or the plan failed).
    """
    driver = _dict(plan.get('driver'), 'plan.driver')
    roles = _dict(plan.get('roles'), 'plan.roles')
    decision = _dict(roles.get('nvidia_driver'), 'plan.roles.nvidia_driver')
    if not decision.get('run'):
        return {'run': False, 'change': False, 'reboot': False, 'reboot_action': 'none',
                'reason': 'skipped: %s' % (decision.get('reason') or driver.get('reason') or 'not needed'),
                'installed': None, 'target': None}
    resolved = _dict(resolved, 'the driver resolve result')
    if 'change' not in resolved:
        return {'run': True, 'change': None, 'reboot': None, 'reboot_action': None,
                'reason': 'not inspected: the driver role did not read the host (its preflight failed)',
                'installed': None, 'target': None}
    installed = resolved.get('installed_version')
    if installed is None:
        first = ((resolved.get('packages') or {}).get('versioned') or [None])[0]
        have = ((resolved.get('installed') or {}).get(first) or {}).get('version') if first else None
        installed = have
    target = resolved.get('target')
    activation = _dict(resolved.get('activation'), 'the driver resolve result activation')
    reboot = _dict(activation.get('reboot'), 'the driver resolve result activation.reboot')
    branch = _dict(driver.get('branch'), 'plan.driver.branch')
    if resolved.get('change'):
        reason = 'installs driver %s%s (branch %s: %s)' % (
            target, ' over %s' % installed if installed else '', branch.get('value'), branch.get('reason'))
    else:
        reason = 'no change: driver %s is installed at the pinned version' % target
    needed = bool(reboot.get('needed'))
    if needed:
        reason += '; reboot %s: %s' % (reboot.get('action'), reboot.get('reason'))
    return {'run': True, 'change': bool(resolved.get('change')), 'reboot': needed,
            'reboot_action': reboot.get('action') if needed else 'none', 'reason': reason,
            'installed': installed, 'target': target}


def host_report(host, plan, resolved=None, marker_text=None):
    """One host's report: GPUs, driver, plan, per role ``{run, change, reboot, reason}``, reboots."""
    if not isinstance(host, str) or not host:
        raise ReportError('probe report: the host name must be a non-empty string, got %r' % (host,))
    plan = _dict(plan, 'plan (gpuops_plan)')
    if not plan:
        raise ReportError('probe report: %s has no plan (gpuops_plan): run the probe and the plan first' % host)
    hw = _dict(plan.get('host'), 'plan.host')
    driver = _dict(plan.get('driver'), 'plan.driver')
    loaded = _dict(driver.get('loaded'), 'plan.driver.loaded')
    plan_roles = _dict(plan.get('roles'), 'plan.roles')
    roles = {}
    for role in ROLES:
        decision = _dict(plan_roles.get(role), 'plan.roles.%s' % role)
        if role == 'nvidia_driver':
            roles[role] = driver_change(plan, resolved)
        elif decision.get('run'):
            roles[role] = {'run': True, 'change': None, 'reboot': None, 'reason': NOT_INSPECTED}
        else:
            roles[role] = {'run': False, 'change': False, 'reboot': False,
                           'reason': 'skipped: %s' % decision.get('reason')}
    pending = pending_reboots(marker_text)
    would = sorted(r for r, v in roles.items() if v.get('reboot'))
    changes = sorted(r for r, v in roles.items() if v.get('change'))
    unknown = sorted(r for r, v in roles.items() if v.get('change') is None)
    return {
        'report_version': REPORT_VERSION,
        'host': host,
        'gpus': hw.get('gpu_count'),
        'architectures': hw.get('architectures') or [],
        'driver': {'loaded': bool(loaded.get('value')), 'version': loaded.get('version'),
                   'installed': roles['nvidia_driver'].get('installed'),
                   'target': roles['nvidia_driver'].get('target'),
                   'branch': _dict(driver.get('branch'), 'plan.driver.branch').get('value')},
        'plan': {'ok': bool(plan.get('ok', True)),
                 'errors': [e.get('message') if isinstance(e, dict) else str(e) for e in plan.get('errors') or []],
                 'warnings': [w.get('message') if isinstance(w, dict) else str(w) for w in plan.get('warnings') or []]},
        'roles': roles,
        'changes': changes,
        'not_inspected': unknown,
        'reboot': {'would_follow': bool(would), 'roles': would, 'pending': pending},
        'security_updates_held_back': held_back_security(resolved),
    }


def held_back_security(resolved):
    """The driver's security updates its pin or hold keeps back, from the driver role's read
    (``status.security_updates_held_back``, plugins/module_utils/packages/held_updates.py):
    ``{checked, packages, take}``; ``checked`` None where the driver role was not inspected."""
    record = ((resolved or {}).get('status') or {}).get('security_updates_held_back')
    if not isinstance(record, dict):
        return {'checked': None, 'packages': [], 'take': None}
    return {'checked': bool(record.get('checked')),
            'packages': [{'name': u.get('name'), 'installed': u.get('installed'), 'available': u.get('available')}
                         for u in record.get('security') or []],
            'take': record.get('take')}


def held_back_line(report):
    """The host's line on held-back driver security updates ('' when there are none)."""
    held = report.get('security_updates_held_back') or {}
    if not held.get('packages'):
        return ''
    return 'driver security updates held back: %s; to take them: %s' % (
        ', '.join('%s %s -> %s' % (u['name'], u['installed'], u['available']) for u in held['packages']),
        held.get('take'))


def _cell(value):
    return '?' if value is None else ('yes' if value else 'no')


def host_line(report):
    """One line for a host: GPUs, driver, plan, changes, reboot."""
    drv = report['driver']
    driver = drv.get('version') if drv.get('loaded') else 'not loaded'
    if drv.get('installed') and not drv.get('loaded'):
        driver = '%s installed, not loaded' % drv['installed']
    if report['roles']['nvidia_driver'].get('change'):
        driver += ' -> %s' % drv.get('target')
    plan = 'ok' if report['plan']['ok'] else 'CONFLICT'
    changes = ', '.join(report['changes']) or 'no change'
    reboot = report['reboot']
    boot = 'reboot: %s' % (', '.join(reboot['roles']) if reboot['would_follow'] else 'no')
    if reboot['pending']:
        boot += ' (pending from earlier runs: %s)' % ', '.join(sorted(reboot['pending']))
    return '%s: GPUs %s; driver %s; plan %s; changes: %s; %s' % (
        report['host'], report['gpus'], driver, plan, changes, boot)


def fleet_report(reports, hosts):
    """The fleet's document: ``{report_version, hosts: {name: report}, missing, table}``.

    ``reports``: ``{host: report or None}``; ``hosts``: every host of the play, in order (a host
    without a report failed or was unreachable).
    """
    reports = _dict(reports, 'reports')
    if not isinstance(hosts, (list, tuple)) or not all(isinstance(h, str) for h in hosts):
        raise ReportError('probe report: hosts must be a list of host names, got %r' % (hosts,))
    done, missing, table = {}, [], []
    for host in hosts:
        report = reports.get(host)
        if not isinstance(report, dict) or report.get('host') != host:
            missing.append(host)
            table.append('%s: NO REPORT (the host failed or was unreachable: see the errors above)' % host)
            continue
        done[host] = report
        table.append(host_line(report))
        if held_back_line(report):
            table.append('  ' + held_back_line(report))
        for role in ROLES:
            row = report['roles'].get(role) or {}
            table.append('  %-26s change: %-3s reboot: %-3s %s' % (
                role, _cell(row.get('change')), _cell(row.get('reboot')), row.get('reason')))
    return {'report_version': REPORT_VERSION, 'hosts': done, 'missing': missing,
            'changes': sorted(h for h in done if done[h]['changes']),
            'reboots': sorted(h for h in done if done[h]['reboot']['would_follow']),
            'table': table}
