# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The canary of a batched play (site.yml's rebooting play, the rolling driver upgrade): the one
host of the first batch, chosen on purpose, value plus reason.

A canary must need what the run does. In order:

1. a host of the inventory group ``gpu_canary`` that is in this run and is a GPU host the plan
   gives driver work (the first by name);
2. else any GPU host of this run the plan gives driver work (the first by name); when
   ``gpu_canary`` has hosts in this run, none of which qualifies, the answer carries a warning;
3. else a host that runs one of the play's roles at all (``gpu_canary``'s first, then the first by
   name): a fleet without GPU work still gets a named canary;
4. else no canary (no host of this run runs the play's roles).

Names sort as strings, so the choice is the same in every run, whatever the inventory's group order.

Pure functions, standard library only, Python 3.8+. Tested from
``tests/unit/plugins/module_utils/data/canary_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DRIVER_ROLE = 'nvidia_driver'


def _record(record, roles):
    """(host, gpu_count, driver work, runs a role of the play) of one host's record."""
    if not isinstance(record, dict) or not isinstance(record.get('host'), str) or not record['host']:
        raise ValueError('each record must be {host, plan}, not %r' % (record,))
    plan = record.get('plan')
    if plan is None:  # no plan: the host failed before it was planned, it is in no batch
        return record['host'], 0, False, False
    if not isinstance(plan, dict) or not isinstance(plan.get('roles'), dict):
        raise ValueError('%s: gpuops_plan is not a plan of the collection (no roles)' % record['host'])
    decisions = plan['roles']
    gpus = (plan.get('host') or {}).get('gpu_count') or 0
    if not isinstance(gpus, int) or isinstance(gpus, bool):
        raise ValueError('%s: gpuops_plan.host.gpu_count %r is not a number' % (record['host'], gpus))
    driver = bool((decisions.get(DRIVER_ROLE) or {}).get('run'))
    runs = any(bool((decisions.get(role) or {}).get('run')) for role in roles)
    return record['host'], gpus, driver and DRIVER_ROLE in roles, runs


def choose_canary(records, canary_group=(), roles=(DRIVER_ROLE,), group='gpu_canary'):
    """The canary of a batched play.

    ``records``: one per host of the run, ``{'host': name, 'plan': gpuops_plan or None}``;
    ``canary_group``: the inventory's hosts of ``group`` (empty when it has none); ``roles``: the
    roles the batched play runs. Returns {'host': name or None, 'reason', 'warning': str or None,
    'message'}.
    """
    if not isinstance(records, (list, tuple)):
        raise ValueError('records must be a list of {host, plan}, not %r' % (records,))
    if isinstance(roles, str) or not roles:
        raise ValueError('roles must be a non-empty list of role names, not %r' % (roles,))
    hosts = [_record(r, roles) for r in records]
    names = set(h[0] for h in hosts)
    in_group = sorted(set(str(h) for h in (canary_group or ())) & names)
    gpu_work = sorted(h[0] for h in hosts if h[1] > 0 and h[2])
    running = sorted(h[0] for h in hosts if h[3])
    warning = None
    chosen = [h for h in in_group if h in gpu_work]
    if chosen:
        host, reason = chosen[0], 'the first by name of the group %s that is a GPU host with driver work' % group
    elif gpu_work:
        host, reason = gpu_work[0], 'the first GPU host by name that the plan gives driver work'
        if in_group:
            warning = ('the group %s holds no GPU host with driver work in this run (%s): the canary is %s instead'
                       % (group, ', '.join(in_group), host))
        elif canary_group:
            reason += ' (no host of the group %s is in this run)' % group
    elif running:
        fallback = [h for h in in_group if h in running] or running
        host = fallback[0]
        reason = ('no GPU host of this run has driver work: the first host by name%s that runs %s'
                  % (' of the group %s' % group if fallback is not running else '', ' or '.join(roles)))
    else:
        return {'host': None, 'reason': 'no host of this run runs %s' % ' or '.join(roles), 'warning': None,
                'message': 'no canary: no host of this run runs %s' % ' or '.join(roles)}
    return {'host': host, 'reason': reason, 'warning': warning,
            'message': 'canary (the first batch, alone): %s - %s%s' % (
                host, reason, ('; WARNING: %s' % warning) if warning else '')}
