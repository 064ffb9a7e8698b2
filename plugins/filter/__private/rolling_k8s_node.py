# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.rolling_k8s_node: whether the rolling driver upgrade drains a host as a
Kubernetes node, and under which name. The code is ``plugins/module_utils/plan/drain.py``."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: rolling_k8s_node
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Whether a host is a Kubernetes node to cordon and drain, and its node name
description:
  - Used by C(playbooks/rolling_driver_upgrade.yml), host by host; its first play has already refused
    the run when a Kubernetes cluster is configured and a host is not mapped (filter
    C(gpuops.dlserver.__private.rolling_k8s_nodes)).
  - A host is drained when the inventory names its node (C(gpuops_k8s_node_name)), puts it in the
    Kubernetes group, or sets C(gpuops_k8s_drain=true); the node name is C(gpuops_k8s_node_name), else
    the host's name as the system reports it. C(gpuops_k8s_drain=false) opts the host out, whatever
    else is set.
  - The name must be a Kubernetes node name (RFC 1123, fully matched); anything else fails naming
    C(gpuops_k8s_node_name). A C(gpuops_k8s_drain) that is no boolean fails naming it.
positional: _input, hostname, in_k8s_group, drain
options:
  _input:
    description: C(gpuops_k8s_node_name) from the inventory (C("") when unset).
    type: str
    required: true
  hostname:
    description: The host's name as the system reports it (C(ansible_facts.hostname)).
    type: str
    required: true
  in_k8s_group:
    description: Whether the host is in the inventory group of Kubernetes nodes.
    type: bool
    required: true
  drain:
    description: C(gpuops_k8s_drain) from the inventory (C(None) or C("") when unset).
    type: raw
"""

EXAMPLES = r"""
- name: Name the host's Kubernetes node
  ansible.builtin.debug:
    msg: "{{ '' | gpuops.dlserver.__private.rolling_k8s_node('gpu-07', true) }}"
  # drain: true, name: gpu-07, reason: "Kubernetes node gpu-07 (from the host's name)"
"""

RETURN = r"""
_value:
  description: C(drain) (bool), C(name), C(reason), C(mapped) (bool) and C(opted_out) (bool).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.drain import host_node


def rolling_k8s_node(node_name, hostname, in_k8s_group, drain=None):
    try:
        return host_node(node_name, hostname, bool(in_k8s_group), drain)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.rolling_k8s_node: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.rolling_k8s_node."""

    def filters(self):
        return {'rolling_k8s_node': rolling_k8s_node}
