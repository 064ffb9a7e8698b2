#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nvidia_driver_gpu_settings
short_description: Apply persistence mode, power limit, application clocks and MIG mode per NVIDIA GPU
version_added: 0.1.0
description:
  - Reads every GPU's settings with one C(nvidia-smi --query-gpu) call (C(LC_ALL=C), a time limit),
    decides per GPU and setting what to do (C(plugins/module_utils/driver/gpu_settings.py)) and runs
    C(nvidia-smi) only for the settings that differ, then reads again and returns what holds.
  - A power limit outside any GPU's own minimum and maximum fails before anything is changed, naming
    C(nvidia_driver_power_limit_watts) and the GPU's range.
  - "Values nvidia-smi cannot give are never compared with the wanted ones: application clocks that
    drivers 590 and later answer with C([Requested functionality has been deprecated]), and C([N/A]) or
    C([Not Supported]) of older drivers and GPUs, get no command and say so in the GPU's record."
  - The nvidia_driver role offers no ECC setting; ECC is not read.
  - In check mode nothing runs; the result says what would run (C(changed) when something would).
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpuops.dlserver.attributes.host_check_mode
options:
  persistence:
    description:
      - Persistence mode wanted on every GPU (C(nvidia-smi -pm)); normally kept by nvidia-persistenced,
        so nothing runs. C(null) leaves it alone.
    type: bool
  power_limit_watts:
    description: Power limit for every GPU in W (C(nvidia-smi -pl)); C(null) leaves the limits alone.
    type: int
  application_clocks:
    description: Application clocks for every GPU (C(nvidia-smi -ac)); C({}) leaves them alone.
    type: dict
    default: {}
    suboptions:
      memory_mhz:
        description: Memory clock in MHz.
        type: int
      graphics_mhz:
        description: Graphics clock in MHz.
        type: int
  mig:
    description:
      - The hardware plan's C(mig) decision (C(apply), C(mode), C(apply_to) with bus ids in sysfs form,
        C(reason)); MIG mode is set (C(nvidia-smi -mig)) only on the GPUs it names.
    type: dict
    default: {}
  binary:
    description: The nvidia-smi command.
    type: str
    default: nvidia-smi
  timeout:
    description:
      - Seconds each nvidia-smi call may take (through coreutils C(timeout)) before it is killed and the
        task fails; C(0) waits for ever.
    type: int
    default: 60
"""

EXAMPLES = r"""
- name: Apply the GPU settings
  gpuops.dlserver.__private.nvidia_driver_gpu_settings:
    persistence: "{{ gpuops_plan.persistence.enabled }}"
    power_limit_watts: 300
    application_clocks: {memory_mhz: 1593, graphics_mhz: 1410}
    mig: "{{ gpuops_plan.mig }}"
  register: settings
"""

RETURN = r"""
gpus:
  description:
    - One record per GPU (C(pci_bus_id) in sysfs form) with C(persistence), C(power_limit),
      C(application_clocks) and C(mig), each C(wanted), C(current), C(action) (C(none), C(set),
      C(not_asked), C(unsupported), C(deprecated), C(unreadable), C(refused)), C(reason) and C(argv).
    - After changes, read again (the values that hold now); in check mode, as read before.
  returned: always
  type: list
  elements: dict
commands:
  description: The nvidia-smi argv lists run (or, in check mode, that would run).
  returned: always
  type: list
  elements: list
reason:
  description: One line on what was found and done.
  returned: always
  type: str
converged:
  description: Whether the second read shows every asked-for setting holding (true when nothing ran).
  returned: always
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.driver import gpu_settings_module


def main():
    module = AnsibleModule(
        argument_spec=dict(
            persistence=dict(type="bool"),
            power_limit_watts=dict(type="int"),
            application_clocks=dict(type="dict", default={}, options=dict(
                memory_mhz=dict(type="int"), graphics_mhz=dict(type="int"))),
            mig=dict(type="dict", default={}),
            binary=dict(type="str", default="nvidia-smi"),
            timeout=dict(type="int", default=60),
        ),
        supports_check_mode=True,
    )
    gpu_settings_module.run(module)


if __name__ == "__main__":
    main()
