# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``dcgmi diag -r 1|2 -j`` for gpuops.dlserver.gpu_validate: whether it can run here (GPUs with a
loaded driver, ``dcgmi`` installed, DCGM's host engine running), its command line, the parser of
its JSON and one check per DCGM test - a failed test named, with DCGM's own message per GPU.

DCGM prints one JSON document (``"DCGM GPU Diagnostic"``; DCGM 4 names it ``"DCGM Diagnostic"``)
of ``test_categories`` > ``tests`` > ``results``, one result per GPU or one for all of them
(``gpu_ids`` "0,1,2,3"; DCGM 4: ``entity_id``), each with a ``status`` (PASS, FAIL, WARN, SKIP,
in any case) and ``warnings`` (strings, or ``{"warning": text, "error_id": n}``). A text line may
come before it ("Successfully ran diagnostic for group."). Pure functions; tested from
``tests/unit/plugins/module_utils/data/validate_dcgm_diag_cases.yml`` on published output.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.health import check

LEVELS = (1, 2)
# The top-level key of dcgmi diag -j: dcgmi writes output[NVVS_NAME] (dcgmi/Diag.cpp), each row with its source.
_NVVS_NAME = ('NVIDIA/DCGM %s nvvs/include/NvvsJsonStrings.h (https://github.com/NVIDIA/DCGM): "#define NVVS_NAME %s"; '
              'dcgmi/Diag.cpp: "output[NVVS_NAME][NVVS_VERSION_STR]"')
ROOT_KEY_ROWS = (
    {'key': 'DCGM GPU Diagnostic', 'dcgm': '3.x (to v3.3.9)', 'read': '2026-12-07',
     'source': _NVVS_NAME % ('v3.3.9', '"DCGM GPU Diagnostic"')},
    {'key': 'DCGM Diagnostic', 'dcgm': '4.x (v4.0.0 to v4.6.0)', 'read': '2026-12-07',
     'source': _NVVS_NAME % ('v4.0.0 and v4.6.0', '"DCGM Diagnostic"')},
)
ROOT_KEYS = tuple(row['key'] for row in ROOT_KEY_ROWS)
HOSTENGINE_SERVICE = 'nvidia-dcgm'
_STATUS = {'pass': 'pass', 'fail': 'fail', 'warn': 'warn', 'warning': 'warn', 'skip': 'skip', 'skipped': 'skip',
           'not run': 'skip', 'notrun': 'skip'}
_MAX_MESSAGE = 300


def can_run(gpus, driver_loaded, dcgmi, hostengine_state):
    """``(run, reason)``: the diagnostic needs GPUs, their driver, ``dcgmi`` and a running host engine."""
    if not gpus:
        return False, 'no NVIDIA GPU on PCI: nothing for DCGM to diagnose'
    if not driver_loaded:
        return False, 'the NVIDIA driver is not loaded: DCGM cannot reach the GPUs'
    if not dcgmi:
        return False, ('dcgmi is not installed: DCGM does not run here (gpuops.dlserver.dcgm_exporter in host '
                       'mode installs it)')
    if hostengine_state != 'active':
        return False, "DCGM's host engine (%s) is not running (state: %s)" % (
            HOSTENGINE_SERVICE, hostengine_state or 'unknown')
    return True, ''


def argv(dcgmi, level):
    """The command line; ``level`` is 1 (quick, about a minute) or 2 (medium, a few minutes)."""
    if level not in LEVELS:
        raise ValueError('dcgm_diag level must be one of %s, got %r' % (LEVELS, level))
    return [dcgmi, 'diag', '-r', str(level), '-j']


def _messages(result):
    out = []
    for warning in result.get('warnings') or []:
        if isinstance(warning, dict):
            text = warning.get('warning') or warning.get('message') or ''
            code = warning.get('error_id')
            text = '%s (DCGM error %s)' % (text, code) if text and code is not None else text
        else:
            text = str(warning)
        text = ' '.join(str(text).split())
        if text:
            out.append(text[:_MAX_MESSAGE])
    return out


def _gpus(result):
    ids = result.get('gpu_ids', result.get('entity_id'))
    return str(ids) if ids is not None else 'all'


def parse(text):
    """``{'version', 'tests': [{'category', 'name', 'results': [{'gpus', 'status', 'messages'}]}]}``,
    or ``{'error': why}`` when the output holds no diagnostic document."""
    text = text or ''
    start, end = text.find('{'), text.rfind('}')
    if start < 0 or end < start:
        return {'error': 'dcgmi printed no JSON: %s' % (' '.join(text.split())[:_MAX_MESSAGE] or 'nothing')}
    try:
        data = json.loads(text[start:end + 1])
    except ValueError as exc:
        return {'error': 'dcgmi printed JSON that does not parse: %s' % exc}
    root = None
    if isinstance(data, dict):
        root = next((data[key] for key in ROOT_KEYS if isinstance(data.get(key), dict)), None)
    if root is None:
        return {'error': 'no "DCGM GPU Diagnostic" document in dcgmi\'s output'}
    tests = []
    for category in root.get('test_categories') or []:
        if not isinstance(category, dict):
            continue
        for test in category.get('tests') or []:
            if not isinstance(test, dict) or not test.get('name'):
                continue  # DCGM 3.1 prints null between tests
            results = []
            for result in test.get('results') or []:
                if not isinstance(result, dict):
                    continue
                status = _STATUS.get(str(result.get('status', '')).strip().lower(), 'fail')
                results.append({'gpus': _gpus(result), 'status': status, 'messages': _messages(result)})
            tests.append({'category': str(category.get('category') or ''), 'name': str(test['name']),
                          'results': results})
    out = {'version': root.get('version'), 'tests': tests}
    if root.get('runtime_error'):
        out['error'] = 'DCGM runtime error: %s' % root['runtime_error']
    elif not tests:
        out['error'] = 'the diagnostic document lists no test'
    return out


def _subjects(results, status):
    return ', '.join('GPU %s' % r['gpus'] if r['gpus'] != 'all' else 'all GPUs' for r in results
                     if r['status'] == status)


def checks(parsed, level, rc=0):
    """One check per DCGM test (named ``dcgm_diag``, subject the test's name): fail with DCGM's
    messages per GPU where a result failed, warn where one warned, skip (with DCGM's reason) where
    every result skipped. A run that produced no document is one failed check."""
    if parsed.get('error'):
        return [check('dcgm_diag', 'fail', 'rc %s' % rc, 'a diagnostic report',
                      'dcgmi diag -r %d: %s' % (level, parsed['error']), 'dcgmi')]
    out = []
    for test in parsed['tests']:
        results = test['results']
        statuses = set(r['status'] for r in results)
        if 'fail' in statuses:
            status = 'fail'
        elif 'warn' in statuses:
            status = 'warn'
        elif statuses == set(['skip']) or not statuses:
            status = 'skip'
        else:
            status = 'pass'
        value = 'level %d: %s' % (level, status if status != 'fail' else 'failed on ' + _subjects(results, 'fail'))
        # what DCGM said: the results of the verdict's status; on a pass, the GPUs it skipped
        told = status if status != 'pass' else 'skip'
        said = ['GPU %s: %s' % (r['gpus'], '; '.join(r['messages']) or 'no message') if r['gpus'] != 'all'
                else '; '.join(r['messages']) or 'no message'
                for r in results if r['status'] == told]
        reason = 'DCGM %s test "%s" (%s): %s' % (
            {'fail': 'failed', 'warn': 'warned in', 'skip': 'skipped', 'pass': 'passed'}[status], test['name'],
            test['category'] or 'diagnostic', ' | '.join(said)) if said else ''
        if status == 'pass' and said:
            reason = '%s; skipped on %s' % (reason.split(':', 1)[0], ' | '.join(said))
        out.append(check('dcgm_diag', status, value, 'pass', reason, test['name']))
    return out
