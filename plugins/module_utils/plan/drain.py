# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which hosts the rolling driver upgrade drains as Kubernetes nodes, value plus reason.

- :func:`host_node`: one host: drained under which node name, or why not.
- :func:`fleet_nodes`: every host of the upgrade. When a Kubernetes cluster is configured
  (``gpuops_rolling_kubeconfig`` set, a host in the Kubernetes group or in ``k8s_control``, or a
  host with ``gpuops_k8s_node_name`` or ``gpuops_k8s_drain: true``), every host the upgrade gives driver work is mapped to a node or opted
  out explicitly (``gpuops_k8s_drain: false``); otherwise the upgrade refuses before any change,
  naming the unmapped hosts. Without a cluster nothing is drained, and the answer says so.

The node-name check itself is :func:`..rollback.k8s_node`'s (RFC 1123, fully matched).

Pure functions, standard library only, Python 3.8+. Tested from
``tests/unit/plugins/module_utils/data/drain_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.rollback import k8s_node

_TRUE = ('true', 'yes', 'on', '1')
_FALSE = ('false', 'no', 'off', '0')
OPT_OUT = ('not drained: gpuops_k8s_drain is false for this host (opted out: its Kubernetes node, if it is one, '
           'keeps its jobs through the upgrade and the reboot)')


def drain_flag(value):
    """``gpuops_k8s_drain`` as None (unset), True or False; ValueError naming it for anything else."""
    if value is None or value == '':
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
    raise ValueError('gpuops_k8s_drain: %r is not a boolean (true: drain the host as a Kubernetes node; false: '
                     'opt it out of the drain)' % (value,))


def host_node(node_name, hostname, in_group, drain=None):
    """{'drain', 'name', 'reason', 'mapped', 'opted_out'} for one host.

    ``node_name``: ``gpuops_k8s_node_name`` ('' or None when unset); ``hostname``: the host's name as
    the system reports it; ``in_group``: whether the host is in the Kubernetes group; ``drain``:
    ``gpuops_k8s_drain`` (None when unset; true maps the host by its host name, false opts it out).
    ValueError on a node name Kubernetes refuses or a drain flag that is no boolean.
    """
    flag = drain_flag(drain)
    if flag is False:
        return {'drain': False, 'name': '', 'reason': OPT_OUT, 'mapped': False, 'opted_out': True}
    decision = k8s_node(node_name, hostname, bool(in_group) or flag is True)
    return dict(decision, mapped=decision['drain'], opted_out=False)


def _signals(records, kubeconfig, group, group_hosts, control_hosts):
    found = []
    if kubeconfig:
        found.append('gpuops_rolling_kubeconfig is set')
    if group_hosts:
        found.append('the group %s has %d host(s)' % (group, len(group_hosts)))
    if control_hosts:
        found.append('the group k8s_control has %d host(s)' % len(control_hosts))
    named = sorted(r['host'] for r in records if r.get('node_name'))
    if named:
        found.append('gpuops_k8s_node_name is set for %s' % ', '.join(named))
    forced = []
    for record in records:
        try:
            if drain_flag(record.get('drain')) is True:
                forced.append(record['host'])
        except ValueError:
            continue  # named by fleet_nodes with the host
    if forced:
        found.append('gpuops_k8s_drain is true for %s' % ', '.join(sorted(forced)))
    return found


def fleet_nodes(records, kubeconfig='', group='k8s_nodes', group_hosts=(), control_hosts=()):
    """The drain decision of every host of a rolling upgrade, and whether the upgrade may start.

    ``records``: one per host, ``{'host', 'node_name', 'hostname', 'drain', 'upgrade'}`` (``upgrade``:
    whether the plan gives the host driver work, default true). ``kubeconfig``:
    ``gpuops_rolling_kubeconfig``; ``group``/``group_hosts``: the Kubernetes group's name and the
    inventory's hosts in it; ``control_hosts``: the inventory's ``k8s_control`` hosts.

    Returns {'configured': bool, 'reason', 'nodes': {host: host_node()}, 'unmapped': [hosts],
    'problems': [str], 'ok': bool, 'message'}: ``ok`` false (and ``message`` the refusal) when a
    value is bad or a cluster is configured and a host with driver work is neither mapped nor
    opted out.
    """
    if not isinstance(records, (list, tuple)):
        raise ValueError('records must be a list of hosts, not %r' % (records,))
    group_hosts = set(str(h) for h in (group_hosts or ()))
    signals = _signals(records, kubeconfig, group, group_hosts, control_hosts or ())
    nodes, unmapped, problems = {}, [], []
    for record in sorted(records, key=lambda r: str(r['host'])):
        host = str(record['host'])
        try:
            decision = host_node(record.get('node_name'), record.get('hostname'), host in group_hosts,
                                 record.get('drain'))
        except ValueError as exc:
            problems.append('%s: %s' % (host, exc))
            continue
        if not signals:
            decision = dict(decision, reason='not drained: no Kubernetes cluster is configured')
        nodes[host] = decision
        if signals and record.get('upgrade', True) and not decision['mapped'] and not decision['opted_out']:
            unmapped.append(host)
    if signals:
        reason = 'a Kubernetes cluster is configured (%s)' % '; '.join(signals)
    else:
        reason = ('no Kubernetes cluster is configured (no gpuops_rolling_kubeconfig, no host in the groups %s and '
                  'k8s_control, no gpuops_k8s_node_name or gpuops_k8s_drain: true): no host is drained' % group)
    if problems:
        message = 'rolling driver upgrade refused before any change: %s' % '; '.join(problems)
    elif unmapped:
        message = ('rolling driver upgrade refused before any change: %s, but these hosts have no Kubernetes node: '
                   '%s. Map each one (put it in the group %s, whose node name is the host name, or set '
                   'gpuops_k8s_node_name), or opt it out explicitly with gpuops_k8s_drain: false'
                   % (reason, ', '.join(unmapped), group))
    else:
        drained = ['%s -> %s' % (h, d['name']) for h, d in sorted(nodes.items()) if d['drain']]
        opted = [h for h, d in sorted(nodes.items()) if d['opted_out']]
        message = '%s. Drained: %s' % (reason, ', '.join(drained) or 'none')
        if opted:
            message += '. Opted out (gpuops_k8s_drain: false): %s' % ', '.join(opted)
    return {'configured': bool(signals), 'reason': reason, 'nodes': nodes, 'unmapped': unmapped,
            'problems': problems, 'ok': not (problems or unmapped), 'message': message}
