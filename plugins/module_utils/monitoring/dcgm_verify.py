# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What dcgm_exporter's verify step decides: whether to verify at all (a dry run verifies only
where no task of the role would change anything), and whether what the exporter served is what
its counters file lists (filters gpuops.dlserver.__private.dcgm_exporter_verify_when and
gpuops.dlserver.__private.dcgm_exporter_verify; case table tests/unit/plugins/module_utils/data/dcgm_verify_cases.yml).

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


class VerifyError(ValueError):
    """The role handed in results of the wrong shape."""


def verify_when(results, check_mode):
    """``{run, reason, changed}``: whether the role verifies the exporter in this run.

    ``results``: ``{name: registered result (a dict, ``{}`` when the task did not run) or bool}``
    of the role's tasks that change the host; ``check_mode``: ansible_check_mode. A run always
    verifies what it leaves; a dry run only where nothing would change (a converged host: the page
    is then the one a run would verify, and the status file records the same verification, so
    --check changes nothing there). Elsewhere the exporter is not (yet) what a run leaves.
    """
    if not isinstance(results, dict):
        raise VerifyError('the results of the role\'s tasks must be a dict of name: result, got %r' % (results,))
    if not isinstance(check_mode, bool):
        raise VerifyError('check_mode must be true or false, got %r' % (check_mode,))
    changed = []
    for name in sorted(results):
        value = results[name]
        if isinstance(value, bool):
            if value:
                changed.append(name)
        elif isinstance(value, dict):
            if value.get('changed') is True:
                changed.append(name)
        else:
            raise VerifyError('the result of %s must be a registered result or true/false, got %r' % (name, value))
    if not check_mode:
        return {'run': True, 'changed': changed, 'reason': 'a run verifies the exporter it leaves'}
    if changed:
        return {'run': False, 'changed': changed,
                'reason': 'check mode: %s would change, so the exporter is not yet what a run leaves'
                          % ', '.join(changed)}
    return {'run': True, 'changed': [], 'reason': 'check mode on a converged host: the page is the one a run '
                                                  'would verify'}


def verify_metrics(text, expected):
    """Compare what the exporter served (Prometheus text) with the fields of the counters file.

    Every metric named ``DCGM_FI_*`` that was served must be in ``expected``; at least one must be
    served. Fields a GPU does not support are not served by dcgm-exporter, so they are listed,
    not failed.
    """
    served = set()
    for line in (text or '').splitlines():
        if line.startswith('DCGM_FI_'):
            served.add(re.split(r'[{ ]', line, 1)[0])
    expected = list(expected or [])
    unexpected = sorted(served - set(expected))
    not_served = [name for name in expected if name not in served]
    ok = bool(served) and not unexpected
    if not served:
        reason = 'the exporter served no DCGM_FI_* metric'
    elif unexpected:
        reason = 'the exporter served fields that are not in the counters file: %s' % ', '.join(unexpected)
    else:
        reason = '%d of %d fields served' % (len(served), len(expected))
        if not_served:
            reason += '; not served (not supported by these GPUs or not yet sampled): %s' % ', '.join(not_served)
    return {'ok': ok, 'served': sorted(served), 'not_served': not_served, 'unexpected': unexpected,
            'reason': reason}
