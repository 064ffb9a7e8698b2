# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict of gpuops.dlserver.gpu_validate and what it leaves on the node: the JSON record,
the readable report, node_exporter textfile metrics, and the decision whether to rewrite them.

The record is a measurement: a run that measures the same verdict again does not rewrite it
(and reports no change) unless the record is older than ``refresh_seconds``, so the stale-
validation alert (``gpuops_validate_timestamp_seconds``) stays quiet on a node validated
regularly. Pure functions; tested from ``tests/unit/plugins/module_utils/data/validate_report_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.data_path import textfile_lines

RANK = {'fail': 3, 'warn': 2, 'pass': 1, 'skip': 0}
_LABEL_RE = re.compile(r'[A-Za-z0-9_.:\-/ ]{0,120}')
ADDRESS_RE = re.compile(r'[A-Za-z0-9_.:\-\[\]%]{1,253}')


def verdict(checks):
    """``(verdict, worst)``: fail when a check failed, warn when one warned, else pass; ``worst`` is
    the first check of the highest rank (the lowest fraction of peak among those), or None."""
    if not checks:
        return 'pass', None
    top = max(RANK[c['status']] for c in checks)
    candidates = [c for c in checks if RANK[c['status']] == top]
    with_fraction = [c for c in candidates if c.get('fraction') is not None]
    worst = min(with_fraction, key=lambda c: c['fraction']) if with_fraction else candidates[0]
    name = {3: 'fail', 2: 'warn'}.get(top, 'pass')
    return name, (worst if top >= 2 else None)


def key_of(checks):
    """What the verdict is made of: each check's name, subject and status (no measured figures)."""
    return sorted('%s/%s/%s/%s' % (c.get('group'), c['check'], c['subject'], c['status']) for c in checks)


def record_decision(old, new_key, now, refresh_seconds):
    """``(write, reason)``: write when there is no record, the verdict changed, or it is stale."""
    if not isinstance(old, dict) or 'key' not in old:
        return True, 'no previous validation record'
    if old.get('key') != new_key:
        return True, 'the verdict changed'
    age = now - (old.get('timestamp') or 0)
    if age >= refresh_seconds:
        return True, 'the record is %d s old (refresh after %d s)' % (age, refresh_seconds)
    return False, 'same verdict as the record of %d s ago: not rewritten' % age


def _label(text):
    text = str(text if text is not None else '')
    return text if _LABEL_RE.fullmatch(text) else re.sub(r'[^A-Za-z0-9_.:\-/ ]', '_', text[:120])


def _escape(text):
    return _label(text).replace('\\', '\\\\').replace('"', '\\"')


def textfile(checks, verdict_name, timestamp, device):
    """Prometheus text for node_exporter's textfile collector (no timestamps on samples)."""
    lines = [
        '# HELP gpuops_validate_ok 1 when the last gpu_validate verdict is pass or warn, 0 when it failed.',
        '# TYPE gpuops_validate_ok gauge',
        'gpuops_validate_ok{device="%s"} %d' % (_escape(device), 0 if verdict_name == 'fail' else 1),
        '# HELP gpuops_validate_timestamp_seconds When the recorded gpu_validate verdict was measured.',
        '# TYPE gpuops_validate_timestamp_seconds gauge',
        'gpuops_validate_timestamp_seconds %d' % int(timestamp),
        '# HELP gpuops_validate_check_ok Per check of gpu_validate: 1 pass/warn/skip, 0 fail.',
        '# TYPE gpuops_validate_check_ok gauge',
    ]
    seen = set()
    for c in checks:
        labels = 'group="%s",check="%s",subject="%s",status="%s"' % (
            _escape(c.get('group')), _escape(c['check']), _escape(c['subject']), c['status'])
        if labels in seen:
            continue
        seen.add(labels)
        lines.append('gpuops_validate_check_ok{%s} %d' % (labels, 0 if c['status'] == 'fail' else 1))
    lines += ['# HELP gpuops_validate_fraction_of_peak Measured value of a gpu_validate check over its '
              'published peak.', '# TYPE gpuops_validate_fraction_of_peak gauge']
    for c in checks:
        if c.get('fraction') is not None:
            lines.append('gpuops_validate_fraction_of_peak{group="%s",check="%s",subject="%s"} %s' % (
                _escape(c.get('group')), _escape(c['check']), _escape(c['subject']), c['fraction']))
    lines += textfile_lines([c for c in checks if c.get('group') == 'data'], _escape)
    return '\n'.join(lines) + '\n'


def readable(host, verdict_name, worst, checks, device):
    """The human report (/etc/gpuops/validate.txt)."""
    out = ['gpu_validate on %s: %s (device: %s)' % (host, verdict_name.upper(), device)]
    if worst:
        out.append('worst: %s %s: %s' % (worst['check'], worst['subject'], worst.get('reason') or worst['status']))
    for c in sorted(checks, key=lambda c: (-RANK[c['status']], c.get('group') or '', c['check'], c['subject'])):
        out.append('%-5s %-12s %-20s %-8s value=%s expected=%s%s' % (
            c['status'].upper(), c.get('group'), c['check'], c['subject'], c.get('value'), c.get('expected'),
            ('  ' + c['reason']) if c.get('reason') else ''))
    return '\n'.join(out) + '\n'


def summary_line(verdict_name, worst, device):
    """One line for the fleet table / summary: verdict, worst check, measured/peak."""
    if not worst:
        return '%s (device: %s)' % (verdict_name, device)
    figure = ''
    if worst.get('fraction') is not None:
        figure = ' %s of peak %s = %.0f%%' % (worst.get('measured'), worst.get('peak'), worst['fraction'] * 100)
    return '%s: %s %s%s (device: %s)' % (verdict_name, worst['check'], worst['subject'], figure, device)


def peers(hosts, hostvars):
    """The cross-node group as gpu_validate's ``peers``: name and address of each host, in inventory
    order (``gpu_validate_address``, else ``ansible_host``, else the name). Raises ValueError for an
    address with whitespace or a newline (it reaches a command line)."""
    out = []
    for name in hosts:
        hv = hostvars.get(name) or {}
        address = str(hv.get('gpu_validate_address') or hv.get('ansible_host') or name)
        if not ADDRESS_RE.fullmatch(address):
            raise ValueError('gpu_validate_address of %s: %r is not a host name or IP address' % (name, address))
        out.append({'name': str(name), 'address': address})
    return out


def fleet_inputs(hosts, hostvars):
    """The hosts as a list, or ValueError where they are not a list of names or hostvars is not a
    mapping (the fleet filters' argument check)."""
    if isinstance(hosts, (str, bytes, dict)) or not hasattr(hosts, '__iter__'):
        raise ValueError('the hosts must be a list of inventory names, got %s' % type(hosts).__name__)
    if not hasattr(hostvars, 'get'):
        raise ValueError('hostvars must be a mapping, got %s' % type(hostvars).__name__)
    return list(hosts)


def fleet_table(hosts, hostvars):
    """Lines of the fleet table: node, verdict, device, worst check, measured/peak, and the data path
    where a node measured it (a node that did not validate says so)."""
    reports = [(hostvars.get(name) or {}).get('gpu_validate_report') for name in hosts]
    data = any(isinstance(val, dict) and isinstance(val.get('data'), dict) for val in reports)
    rows = [('node', 'verdict', 'device', 'worst check', 'measured/peak') + (('data path',) if data else ())]
    for name, val in zip(hosts, reports):
        if not isinstance(val, dict):
            rows.append((str(name), 'not run', '-', '-', '-') + (('-',) if data else ()))
            continue
        worst = val.get('worst') or {}
        figure = '-'
        if worst.get('fraction') is not None:
            figure = '%s/%s (%.0f%%)' % (worst.get('measured'), worst.get('peak'), worst['fraction'] * 100)
        elif worst.get('value') is not None:
            figure = '%s (expected %s)' % (worst.get('value'), worst.get('expected'))
        check_name = '%s %s' % (worst.get('check'), worst.get('subject')) if worst else '-'
        row = (str(name), str(val.get('verdict')), str(val.get('device')), check_name, figure)
        if data:
            row += (str((val.get('data') or {}).get('summary') or 'not measured'),)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ['  '.join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]
