# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet acceptance report of playbooks/validate.yml: one self-contained HTML page (inline CSS
and SVG, no script, nothing fetched) with a row per node - failures first, then nodes that did not
validate, warnings, passes - its verdict, worst check and summary, a bar per measured fraction of
peak (with the threshold marked), and the data path (read MB/s, images/s from loose files, LMDB and
DALI, and what the GPUs need). Every value from the nodes is escaped. Rendered on the controller
from each host's ``gpu_validate_report`` fact; pure, tested in
``tests/unit/plugins/module_utils/validate/test_report_html.py`` (and in headless Chromium).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from html import escape

ORDER = {'fail': 0, 'not run': 1, 'warn': 2, 'pass': 3}
COLOURS = {'fail': '#c62828', 'warn': '#ef6c00', 'pass': '#2e7d32', 'not run': '#616161', 'skip': '#9e9e9e'}
BAR_WIDTH = 220
LOAD_WIDTH = 140
_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#212121}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.4em;text-align:left;vertical-align:top}
.verdict{font-weight:bold;color:#fff;padding:.1em .5em;border-radius:.3em}
.bars div,.load{display:flex;align-items:center;gap:.5em;font-size:.85em}
.bars span{min-width:12em}
.load span{min-width:9em}
.verdict{white-space:nowrap}
.data{font-size:.85em;min-width:26em}
.data ul{margin:0;padding-left:1.2em}
"""


def _e(value):
    return escape('' if value is None else str(value), quote=True)


def _bar(label, fraction, threshold, status):
    """One bar: the fraction of peak (capped at 100 %), the threshold as a line."""
    shown = max(0.0, min(float(fraction), 1.0))
    colour = COLOURS.get(status, COLOURS['skip'])
    mark = ''
    if threshold:
        x = int(round(max(0.0, min(float(threshold), 1.0)) * BAR_WIDTH))
        mark = '<line x1="%d" y1="0" x2="%d" y2="14" stroke="#212121" stroke-width="2"/>' % (x, x)
    return ('<div class="bar" data-check="%s" data-fraction="%s"><span>%s</span>'
            '<svg width="%d" height="14" role="img" aria-label="%s %.0f%%">'
            '<rect width="%d" height="14" fill="#eee"/><rect width="%d" height="14" fill="%s"/>%s</svg>'
            '<b>%.0f%%</b></div>') % (
        _e(label), _e(round(float(fraction), 3)), _e(label), BAR_WIDTH, _e(label), float(fraction) * 100,
        BAR_WIDTH, int(round(shown * BAR_WIDTH)), colour, mark, float(fraction) * 100)


def _bars(checks):
    out = []
    for c in checks:
        if isinstance(c, dict) and c.get('fraction') is not None:
            out.append(_bar('%s %s' % (c.get('check'), c.get('subject')), c['fraction'], c.get('threshold'),
                            c.get('status')))
    return ''.join(out) or '<div>no measured fraction of peak</div>'


def _data_cell(data):
    if not isinstance(data, dict):
        return '<td class="data">not measured</td>'
    figures = []
    for key, label, unit in (('sequential_read_mbps', 'sequential read', 'MB/s'),
                             ('random_read_mbps', 'random read', 'MB/s'),
                             ('loose_images_per_s', 'loose JPEGs', 'images/s'),
                             ('lmdb_images_per_s', 'LMDB', 'images/s'), ('dali_images_per_s', 'DALI', 'images/s'),
                             ('demand_images_per_s', 'GPUs need', 'images/s')):
        value = data.get(key)
        figures.append('<li data-figure="%s">%s: %s</li>' % (
            _e(key), _e(label), _e('%s %s' % (value, unit)) if value is not None else 'unknown'))
    sources = (('loose_images_per_s', 'loose'), ('lmdb_images_per_s', 'LMDB'), ('dali_images_per_s', 'DALI'))
    loads = [(label, data.get(key)) for key, label in sources if data.get(key)]
    demand = data.get('demand_images_per_s')
    reference = demand or max([value for dummy, value in loads] or [0])
    bars = ''.join(_load_bar(label, value, reference, 'of the GPUs\' need' if demand else 'of the best source')
                   for label, value in loads)
    return '<td class="data"><ul>%s</ul><div class="bars">%s</div><p>%s</p></td>' % (
        ''.join(figures), bars, _e(data.get('verdict')))


def _load_bar(label, value, reference, what):
    """A bar of images/s against ``reference`` (the GPUs' need, else the best source's figure)."""
    share = float(value) / reference if reference else 0.0
    colour = '#1565c0' if not what.startswith('of the GPUs') else COLOURS['pass'] if share >= 1 else COLOURS['warn']
    return ('<div class="load" data-source="%s" data-share="%s"><span>%s %s images/s</span>'
            '<svg width="%d" height="10" role="img" aria-label="%s %.0f%% %s"><rect width="%d" height="10" '
            'fill="#eee"/><rect width="%d" height="10" fill="%s"/></svg><b>%.0f%% %s</b></div>') % (
        _e(label), _e(round(share, 3)), _e(label), _e(value), LOAD_WIDTH, _e(label), share * 100, _e(what), LOAD_WIDTH,
        int(round(min(share, 1.0) * LOAD_WIDTH)), colour, share * 100, _e(what))


def _row(name, report):
    if not isinstance(report, dict):
        return ORDER['not run'], ('<tr class="node" data-node="%s" data-verdict="not run"><td>%s</td>'
                                  '<td><span class="verdict" style="background:%s">not run</span></td><td>-</td>'
                                  '<td>no gpu_validate_report: the node did not validate</td><td></td>'
                                  '<td class="data">not measured</td></tr>') % (_e(name), _e(name), COLOURS['not run'])
    verdict = str(report.get('verdict') or 'not run')
    checks = [c for c in report.get('checks') or [] if isinstance(c, dict)]
    data_checks = [c for c in checks if c.get('group') == 'data' and c.get('check') == 'data_feed']
    return ORDER.get(verdict, 1), (
        '<tr class="node" data-node="%s" data-verdict="%s"><td>%s</td>'
        '<td><span class="verdict" style="background:%s">%s</span></td><td>%s</td><td>%s</td>'
        '<td class="bars">%s</td>%s</tr>') % (
        _e(name), _e(verdict), _e(name), COLOURS.get(verdict, COLOURS['not run']), _e(verdict),
        _e(report.get('device')), _e(report.get('summary')),
        _bars([c for c in checks if c not in data_checks] + data_checks), _data_cell(report.get('data')))


def render(hosts, reports, generated=''):
    """The page: ``reports`` maps each host of ``hosts`` to its ``gpu_validate_report`` (or None)."""
    rows = sorted((_row(name, reports.get(name)) + (str(name),) for name in hosts), key=lambda r: (r[0], r[2]))
    counts = {}
    for rank, dummy, dummy2 in rows:
        label = [k for k, v in ORDER.items() if v == rank][0]
        counts[label] = counts.get(label, 0) + 1
    tally = ', '.join('%d %s' % (counts[k], k) for k in sorted(counts, key=lambda k: ORDER[k]))
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<title>gpu_validate fleet report</title><style>%s</style></head><body>'
            '<h1>gpu_validate fleet report</h1><p id="tally">%d node(s): %s%s</p>'
            '<table><thead><tr><th>node</th><th>verdict</th><th>device</th><th>summary</th>'
            '<th>fraction of peak</th><th>data path</th></tr></thead><tbody>%s</tbody></table>'
            '</body></html>\n') % (_STYLE, len(rows), _e(tally), (' - ' + _e(generated)) if generated else '',
                                   ''.join(r[1] for r in rows))


def from_hostvars(hosts, hostvars, generated=''):
    """``render`` with each host's ``gpu_validate_report`` read from ``hostvars``."""
    reports = {}
    for name in hosts:
        found = (hostvars.get(name) or {}).get('gpu_validate_report')
        reports[name] = found if isinstance(found, dict) else None
    return render(list(hosts), reports, generated)
