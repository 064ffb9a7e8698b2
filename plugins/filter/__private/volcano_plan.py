# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.volcano_plan.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is below, the rules and their sources are in
``plugins/module_utils/kubernetes/volcano.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: volcano_plan
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Every object the volcano role applies, checked before any change
description:
  - Takes the volcano role's typed inputs and what the role read of the cluster, and returns
    the plan of the role - the compatibility verdict, the scheduler ConfigMap and the checksum
    that rolls the scheduler, the Queues and PriorityClasses, the device plugin (or why it is
    left to the GPU Operator), the node label patches derived from each GPU node's probe facts
    and the gang smoke job.
  - Fails, applying nothing, naming the role variable to change, where the cluster refuses the
    settings - a Volcano release that does not support the cluster's Kubernetes version (naming
    the releases that do). The inputs alone (an unknown scheduler action or plugin, a queue with a
    weight below 1 or an unknown resource name ...) were refused before, by the registry of input
    checks in the role's preflight.
  - The compatibility table, the scheduler vocabulary and the Volcano object rules are data in
    C(plugins/module_utils/kubernetes/volcano.py), with their sources.
positional: _input, cluster_info, nodes, crds, daemonsets, hosts, hostvars
options:
  _input:
    description: The role's inputs (every C(volcano_*) variable without its prefix, as C(gpuops.dlserver.__private.role_inputs) publishes them).
    type: dict
    required: true
  cluster_info:
    description:
      - What M(kubernetes.core.k8s_cluster_info) returned (its C(version.server.kubernetes)).
      - The inputs were checked before, by the registry of input checks
        (C(plugins/module_utils/core/input_checks.py), the role's preflight); this filter checks what
        needs the cluster.
    type: dict
    required: true
  nodes:
    description: The Node objects of the cluster (C(resources) of M(kubernetes.core.k8s_info)).
    type: list
    elements: dict
    default: []
  crds:
    description: The GPU Operator's CustomResourceDefinition, when M(kubernetes.core.k8s_info) found it.
    type: list
    elements: dict
    default: []
  daemonsets:
    description: NVIDIA device plugin DaemonSets found in the cluster.
    type: list
    elements: dict
    default: []
  hosts:
    description: Inventory hosts whose C(gpuops_gpu) facts give the node labels.
    type: list
    elements: str
    default: []
  hostvars:
    description: C(hostvars), to read those hosts' facts.
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Read the volcano role's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: volcano
  register: volcano_inputs

- name: Check them before the cluster is contacted (fails naming each bad variable)
  ansible.builtin.set_fact:
    volcano_checked: "{{ volcano_inputs.inputs | gpuops.dlserver.__private.volcano_plan(none) }}"

- name: Read the cluster's version
  kubernetes.core.k8s_cluster_info:
  register: cluster_info

- name: Read the nodes
  kubernetes.core.k8s_info:
    api_version: v1
    kind: Node
  register: nodes

- name: Look for the GPU Operator
  kubernetes.core.k8s_info:
    api_version: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    name: clusterpolicies.nvidia.com
  register: crds

- name: Look for NVIDIA device plugin DaemonSets
  kubernetes.core.k8s_info:
    api_version: apps/v1
    kind: DaemonSet
    label_selectors: [name=nvidia-device-plugin-ds]
  register: daemonsets

- name: Plan what the role applies
  ansible.builtin.set_fact:
    volcano_decisions: >-
      {{ volcano_inputs.inputs | gpuops.dlserver.__private.volcano_plan(cluster_info, nodes.resources, crds.resources,
         daemonsets.resources, groups['gpu_nodes'] | default([]), hostvars) }}
"""

RETURN = r"""
_value:
  description:
    - C(compatibility) (C(ok), C(reason), C(working_volcano), C(supported_kubernetes), C(source)),
      C(warnings), C(scheduler) (C(configmap), C(rollout), C(checksum)), C(queues),
      C(priority_classes), C(device_plugin) (C(deploy), C(reason), C(objects)), C(labels)
      (C(patches), C(objects), C(unmatched), C(unprobed)) and C(smoke) (C(run), C(workers),
      C(reason), C(job)).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano import (
    VolcanoError,
    build_plan,
    daemonsets_from_resources,
    hosts_view,
    nodes_from_resources,
)


def volcano_plan(inputs, cluster_info, nodes=None, crds=None, daemonsets=None, hosts=None, hostvars=None):
    """Every object the volcano role applies, or a failure naming each bad variable.

    ``inputs`` passed the registry of input checks (core/input_checks.py: volcano.input_errors) in
    the role's preflight, before the cluster was read.
    """
    try:
        version = (((cluster_info or {}).get('version') or {}).get('server') or {}).get('kubernetes') or {}
        cluster = {
            'version': version.get('gitVersion') or '%s.%s' % (version.get('major'), version.get('minor')),
            'nodes': nodes_from_resources(plain(nodes)),
            'crds': [((c or {}).get('metadata') or {}).get('name') for c in plain(crds) or []],
            'device_plugin_daemonsets': daemonsets_from_resources(plain(daemonsets)),
            'hosts': hosts_view(hosts, hostvars or {}),
        }
        return build_plan(plain(inputs), cluster)
    except VolcanoError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.volcano_plan: nothing was applied; fix these first: %s'
                                 % '; '.join(exc.errors))
    except (KeyError, ValueError, TypeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.volcano_plan: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.volcano_plan."""

    def filters(self):
        return {'volcano_plan': volcano_plan}
