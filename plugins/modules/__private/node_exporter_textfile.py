#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_exporter_textfile
short_description: Write the GPU facts of a host for node_exporter's textfile collector
version_added: 0.1.0
description:
  - Renders what the collection knows about the host - the GPUs and NVSwitches the probe found
    on PCI, each GPU's PCIe link and whether it is degraded, the driver, the hardware plan's
    decisions, the reboots gpuops roles left pending and the kernel updates the os_tuning hold
    keeps back - as C(gpuops_*) metrics in Prometheus' text format
    (C(plugins/module_utils/monitoring/gpu_textfile.py)).
  - Writes them atomically (a temporary file in the same directory, then C(atomic_move)), so that
    node_exporter never reads half a file; the file changes only when a value changed.
  - "Reads on the host: O(reboot_marker) and O(os_tuning_status_file), when they exist."
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpuops.dlserver.attributes.host_files
options:
  path:
    description: The file to write, ending in C(.prom), in node_exporter's textfile directory.
    type: path
    required: true
  gpu:
    description: The probe's facts (C(gpuops_gpu), from M(gpuops.dlserver.gpu_facts)).
    type: dict
    required: true
  plan:
    description: The hardware plan (C(gpuops_plan), from the C(gpuops.dlserver.gpu_plan) filter).
    type: dict
    default: {}
  reboot_marker:
    description: "The collection's pending-reboot file, one line C(<role>: <reason>) per role."
    type: path
    default: /run/gpuops/reboot-required
  os_tuning_status_file:
    description:
      - The status file of the C(gpuops.dlserver.os_tuning) role (held-back kernel updates).
      - No default here - the action of the same name fills it from os_tuning's argument spec
        (C(os_tuning_status_file)) where the task leaves it out.
    type: path
  mode:
    description: File mode of O(path).
    type: str
    default: "0644"
"""

EXAMPLES = r"""
- name: Write the GPU facts for the textfile collector
  gpuops.dlserver.__private.node_exporter_textfile:
    path: /var/lib/node_exporter/textfile/gpuops.prom
    gpu: "{{ ansible_facts.gpuops_gpu }}"
    plan: "{{ gpuops_plan }}"
"""

RETURN = r"""
content:
  description: The metrics written (or that would be written in check mode).
  returned: always
  type: str
  sample: "# HELP gpuops_gpus_on_pci ...\ngpuops_gpus_on_pci 8\n"
reboot_pending_roles:
  description: Roles whose reboot is pending, from O(reboot_marker).
  returned: always
  type: list
  elements: str
  sample: [os_tuning]
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import textfile_module


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', required=True),
            gpu=dict(type='dict', required=True),
            plan=dict(type='dict', default={}),
            reboot_marker=dict(type='path', default='/run/gpuops/reboot-required'),
            os_tuning_status_file=dict(type='path'),
            mode=dict(type='str', default='0644'),
        ),
        supports_check_mode=True,
    )
    textfile_module.run(module)


if __name__ == '__main__':
    main()
