# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The read-only fleet report of ``playbooks/probe.yml``: per host, what the probe saw, what the
plan decided, per role whether a run would change something and whether a reboot would follow.

``host_report()`` builds one host's report from its plan, the driver role's read of the host
and repositories (``nvidia_driver_host`` action ``resolve``, run in check mode), node_exporter's
own decision on the host (its preflight in check mode, and a HEAD request of the release it would
download), what the registry of input checks found in each role's
settings (``host_plan`` option ``settings_checks``: ``plan/settings_checks.py``) and the
host's pending reboot marker; ``fleet_report()`` gathers the hosts' reports (a host without one
failed or was unreachable) into the JSON document and the table the playbook prints.

A report says only what it knows (issue 34): each role the plan runs is either inspected (the
change is known), predicted to fail (its settings checks found a problem) or unknown, and the
verdict (``verdict()``, ``fleet_verdict()``) counts the unknown ones and never calls a host or
the fleet converged while any role is unknown.

Pure functions, standard library only (reached through the filters gpuops.dlserver.__private.probe_report
and gpuops.dlserver.__private.probe_fleet).
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

    ``resolved`` is the result of ``nvidia_driver_host`` (action resolve) on this host, or None
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


def release_failure(read):
    """The URL of node_exporter's release that did not answer the probe's HEAD request, as one
    sentence (None when every URL answered): ``read`` is the failed result of the ``uri`` loop
    (``{msg, results: [{failed, url, status, msg, item}]}``), or None when the URLs answered or were
    not asked."""
    if not read:
        return None
    read = _dict(read, 'the release read')
    for res in read.get('results') or [read]:
        if not isinstance(res, dict) or not res.get('failed'):
            continue
        url = res.get('url') or res.get('item') or '?'
        status = res.get('status')
        if isinstance(status, int) and status > 0:
            return '%s answered HTTP %d' % (url, status)
        return '%s did not answer: %s' % (url, str(res.get('msg') or 'no message').strip())
    return 'the release URLs failed: %s' % (str(read.get('msg') or 'no message').strip())


def node_exporter_change(decision, read):
    """What a run of node_exporter would do, from the role's own decision on this host
    (``node_exporter`` preflight, run in check mode): ``read`` is ``{plan, package, error,
    release_error}`` - ``plan`` the role's decision (``__node_exporter_plan``: ``converged`` and
    ``drift``), ``package`` the distribution package's read (``{name, version}``), ``error`` the
    preflight's failure (its checks refused the settings), ``release_error`` the release URL that
    did not answer (release_failure). None: the role was not inspected."""
    if not decision.get('run'):
        return {'run': False, 'change': False, 'reboot': False, 'reason': 'skipped: %s' % decision.get('reason')}
    read = _dict(read, 'the node_exporter read')
    if read.get('error'):
        return {'run': True, 'change': None, 'reboot': None, 'fails': True,
                'reason': 'a run would FAIL in this role: %s' % read['error']}
    plan = _dict(read.get('plan'), 'the node_exporter read plan')
    if 'converged' not in plan:
        return {'run': True, 'change': None, 'reboot': None, 'reason': NOT_INSPECTED}
    release = _dict(plan.get('release'), 'the node_exporter read plan.release')
    if read.get('release_error'):
        return {'run': True, 'change': None, 'reboot': None, 'fails': True,
                'reason': 'a run would FAIL in this role: its release download: %s' % read['release_error']}
    if plan['converged']:
        return {'run': True, 'change': False, 'reboot': False,
                'reason': 'no change: %s is as the role leaves it' % plan.get('source_reason')}
    reason = 'would change: %s' % ', '.join(str(d) for d in plan.get('drift') or ['?'])
    package = _dict(read.get('package'), 'the node_exporter read package')
    if plan.get('source') == 'release':
        reason += '; installs the release %s (%s)' % (release.get('archive'), release.get('url'))
        if package.get('version'):
            reason += ' while the distribution package %s %s is installed' % (package.get('name'), package['version'])
    return {'run': True, 'change': True, 'reboot': False, 'reason': reason}


def role_row(role, decision, settings):
    """A role the probe does not read the host for: ``{run, change, reboot, reason}`` (``fails``
    where its settings checks predict a failure; ``change`` None: unknown)."""
    if not decision.get('run'):
        return {'run': False, 'change': False, 'reboot': False, 'reason': 'skipped: %s' % decision.get('reason')}
    checked = _dict(settings.get(role), 'settings.%s' % role)
    if checked.get('problems'):
        return {'run': True, 'change': None, 'reboot': None, 'fails': True,
                'reason': 'a run would FAIL in this role: %s' % '; '.join(str(p) for p in checked['problems'])}
    if checked.get('checked'):
        return {'run': True, 'change': None, 'reboot': None,
                'reason': '%s; its settings pass its checks (%s)' % (NOT_INSPECTED, checked.get('reason'))}
    return {'run': True, 'change': None, 'reboot': None, 'reason': NOT_INSPECTED}


def verdict(roles):
    """What the probe knows of a host's roles: ``{inspected, would_change, would_fail, unknown, not_run}``
    (role names; inspected: the plan runs the role and its change is known)."""
    run = [r for r in sorted(roles) if roles[r].get('run')]
    return {
        'inspected': [r for r in run if roles[r].get('change') is not None],
        'would_change': [r for r in run if roles[r].get('change')],
        'would_fail': [r for r in run if roles[r].get('fails')],
        'unknown': [r for r in run if roles[r].get('change') is None and not roles[r].get('fails')],
        'not_run': [r for r in sorted(roles) if not roles[r].get('run')],
    }


def verdict_line(known):
    """One line of what the probe knows of a host's roles (counts, then the roles that would fail)."""
    line = 'roles: %d inspected (%d would change), %d would fail, %d unknown (not inspected), %d not run (plan)' % (
        len(known['inspected']), len(known['would_change']), len(known['would_fail']), len(known['unknown']),
        len(known['not_run']))
    if known['would_fail']:
        line += '; would FAIL: %s' % ', '.join(known['would_fail'])
    return line


def host_report(host, plan, resolved=None, marker_text=None, settings=None, node_exporter=None):
    """One host's report: GPUs, driver, plan, per role ``{run, change, reboot, reason}``, reboots,
    and the verdict (what is known, would change, would fail, unknown). ``node_exporter``: that
    role's read (node_exporter_change), None where it was not inspected."""
    if not isinstance(host, str) or not host:
        raise ReportError('probe report: the host name must be a non-empty string, got %r' % (host,))
    plan = _dict(plan, 'plan (gpuops_plan)')
    if not plan:
        raise ReportError('probe report: %s has no plan (gpuops_plan): run the probe and the plan first' % host)
    hw = _dict(plan.get('host'), 'plan.host')
    driver = _dict(plan.get('driver'), 'plan.driver')
    loaded = _dict(driver.get('loaded'), 'plan.driver.loaded')
    plan_roles = _dict(plan.get('roles'), 'plan.roles')
    settings = _dict(settings, 'settings (gpuops_settings)')
    roles = {}
    for role in ROLES:
        decision = _dict(plan_roles.get(role), 'plan.roles.%s' % role)
        if role == 'nvidia_driver':
            roles[role] = driver_change(plan, resolved)
        elif role == 'node_exporter' and node_exporter is not None:
            roles[role] = node_exporter_change(decision, node_exporter)
        else:
            roles[role] = role_row(role, decision, settings)
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
        'verdict': verdict(roles),
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


def _cell(value, fails=False):
    return 'FAIL' if fails else ('?' if value is None else ('yes' if value else 'no'))


def host_line(report):
    """One line for a host: GPUs, driver, plan, changes, reboot."""
    drv = report['driver']
    driver = drv.get('version') if drv.get('loaded') else 'not loaded'
    if drv.get('installed') and not drv.get('loaded'):
        driver = '%s installed, not loaded' % drv['installed']
    if report['roles']['nvidia_driver'].get('change'):
        driver += ' -> %s' % drv.get('target')
    plan = 'ok' if report['plan']['ok'] else 'CONFLICT'
    unknown = report['verdict']['unknown'] if 'verdict' in report else report.get('not_inspected') or []
    changes = ', '.join(report['changes']) or ('none known (%d role(s) unknown)' % len(unknown) if unknown
                                               else 'no change')
    reboot = report['reboot']
    boot = 'reboot: %s' % (', '.join(reboot['roles']) if reboot['would_follow'] else 'no')
    if reboot['pending']:
        boot += ' (pending from earlier runs: %s)' % ', '.join(sorted(reboot['pending']))
    return '%s: GPUs %s; driver %s; plan %s; changes: %s; %s' % (
        report['host'], report['gpus'], driver, plan, changes, boot)


def fleet_verdict(done, missing):
    """The report's last line: what a run would do across the fleet, from what the probe knows.
    Never "converged" (nor "would change nothing") while a role is unknown or a host has no report."""
    changes = sorted(h for h in done if done[h]['changes'])
    fails = sorted(h for h in done if done[h]['verdict']['would_fail'])
    unknown = dict((h, done[h]['verdict']['unknown']) for h in done if done[h]['verdict']['unknown'])
    parts = []
    if missing:
        parts.append('%d host(s) without a report (failed or unreachable: %s)' % (len(missing), ', '.join(missing)))
    if fails:
        parts.append('a run would FAIL on %d host(s) (%s)' % (len(fails), ', '.join(fails)))
    if changes:
        parts.append('a run would change %d host(s) (%s)' % (len(changes), ', '.join(changes)))
    if unknown:
        parts.append('unknown for %d role(s) on %d host(s), not inspected by the probe (site.yml --check --diff on '
                     'a canary shows them)' % (sum(len(r) for r in unknown.values()), len(unknown)))
    if not parts:
        return 'Verdict: every role the plan runs was inspected; a run would change nothing on any host.'
    if not (missing or fails or changes):
        parts.insert(0, 'no change found')
    return 'Verdict: %s; not known to be converged.' % '; '.join(parts)


def fleet_report(reports, hosts):
    """The fleet's document: ``{report_version, hosts: {name: report}, missing, verdict, table}``.

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
        if 'verdict' not in report:
            report = dict(report, verdict=verdict(report['roles']))
        done[host] = report
        table.append(host_line(report))
        if held_back_line(report):
            table.append('  ' + held_back_line(report))
        table.append('  ' + verdict_line(report['verdict']))
        for role in ROLES:
            row = report['roles'].get(role) or {}
            table.append('  %-26s change: %-4s reboot: %-3s %s' % (
                role, _cell(row.get('change'), row.get('fails')), _cell(row.get('reboot')), row.get('reason')))
    last = fleet_verdict(done, missing)
    table.append(last)
    return {'report_version': REPORT_VERSION, 'hosts': done, 'missing': missing,
            'changes': sorted(h for h in done if done[h]['changes']),
            'reboots': sorted(h for h in done if done[h]['reboot']['would_follow']),
            'would_fail': sorted(h for h in done if done[h]['verdict']['would_fail']),
            'unknown': dict((h, done[h]['verdict']['unknown']) for h in done if done[h]['verdict']['unknown']),
            'verdict': last, 'table': table}
