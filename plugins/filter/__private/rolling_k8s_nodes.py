# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.rolling_k8s_nodes: the drain decision of every host of a rolling driver
upgrade, and whether it may start. The code is ``plugins/module_utils/plan/drain.py``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: rolling_k8s_nodes
author: gpuops.dlserver contributors
version_added: 0.3.0
short_description: Every host of a rolling upgrade mapped to its Kubernetes node, or the hosts that are not
description:
  - Used by the first play of C(playbooks/rolling_driver_upgrade.yml), once, before any change.
  - A Kubernetes cluster is configured when C(gpuops_rolling_kubeconfig) is set, the Kubernetes group
    (C(gpuops_rolling_k8s_group), default C(k8s_nodes)) or C(k8s_control) has hosts in the inventory, or
    a host of the upgrade sets C(gpuops_k8s_node_name) or C(gpuops_k8s_drain=true).
  - Then every host that the plan gives driver work must be mapped to a node (the group, whose node name
    is the host name, C(gpuops_k8s_node_name) or C(gpuops_k8s_drain=true)) or opted out explicitly
    (C(gpuops_k8s_drain=false)); C(ok) is false and C(message) names the unmapped hosts otherwise.
  - A node name Kubernetes refuses or a C(gpuops_k8s_drain) that is no boolean fails, naming the hosts.
  - Without a cluster no host is drained, and C(message) says so.
positional: _input, hostvars, groups, kubeconfig, group
options:
  _input:
    description: The hosts of the upgrade (C(ansible_play_hosts)).
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars); per host C(gpuops_k8s_node_name), C(gpuops_k8s_drain), C(ansible_facts.hostname)
      and C(gpuops_plan) are read.
    type: dict
    required: true
  groups:
    description: C(groups) of the inventory.
    type: dict
    required: true
  kubeconfig:
    description: C(gpuops_rolling_kubeconfig) (C("") when unset).
    type: str
    required: true
  group:
    description: The Kubernetes group (C(gpuops_rolling_k8s_group)).
    type: str
    default: k8s_nodes
"""

EXAMPLES = r"""
- name: Refuse the upgrade when a host of a configured cluster has no Kubernetes node
  ansible.builtin.assert:
    that: drains.ok
    fail_msg: "{{ drains.message }}"
  vars:
    drains: "{{ ansible_play_hosts | gpuops.dlserver.__private.rolling_k8s_nodes(hostvars, groups, '', 'k8s_nodes') }}"
"""

RETURN = r"""
_value:
  description: C(configured) (bool), C(reason), C(nodes) (per host C(drain), C(name), C(reason), C(mapped),
    C(opted_out)), C(unmapped) (host names), C(problems), C(ok) (bool) and C(message).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.drain import fleet_nodes


def _record(name, variables):
    facts = variables.get('ansible_facts') or {}
    # the plan of this run (a run-only host variable); a host without one is drained as one that upgrades
    plan = variables.get('gpuops_plan') or {}
    return {'host': str(name), 'node_name': plain(variables.get('gpuops_k8s_node_name')),
            'drain': plain(variables.get('gpuops_k8s_drain')), 'hostname': plain(facts.get('hostname')),
            'upgrade': bool(((plan.get('roles') or {}).get('nvidia_driver') or {}).get('run', True))}


def rolling_k8s_nodes(hosts, hostvars, groups, kubeconfig, group='k8s_nodes'):
    try:
        if isinstance(hosts, str) or not isinstance(group, str) or not group:
            raise ValueError('hosts must be a list of host names and group a group name')
        records = [_record(name, hostvars[name]) for name in hosts]
        result = fleet_nodes(records, str(kubeconfig or ''), group, list(groups.get(group) or []),
                             list(groups.get('k8s_control') or []))
        if result['problems']:  # a bad value: named, as every filter of the collection names one
            raise ValueError(result['message'])
        return result
    except ValueError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.rolling_k8s_nodes: %s' % exc)
    except (TypeError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.rolling_k8s_nodes: hostvars and groups must be those of the '
                                 'inventory (%s: %s)' % (type(exc).__name__, exc))


class FilterModule(object):
    """gpuops.dlserver.__private.rolling_k8s_nodes."""

    def filters(self):
        return {'rolling_k8s_nodes': rolling_k8s_nodes}
