# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.gpu_plan: the probe's facts -> the plan every role follows.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list). The documentation is below; the rules are in
plugins/module_utils/plan/gpu_plan.py and docs/hardware-gating.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: gpu_plan
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Turn the GPU probe's facts into the plan every role follows
description:
  - Takes C(ansible_facts.gpuops_gpu), as returned by M(gpuops.dlserver.gpu_facts), and the
    user's overrides, and returns the hardware plan of the host - whether the NVIDIA driver
    is needed, which kernel-module flavour and driver branches fit the GPUs, Fabric Manager,
    the NVLink subnet manager, persistence, MIG, DCGM profiling, the exporters and which roles
    of the collection run.
  - Every decision carries a machine-readable value and a human C(reason).
  - This is the one place where hardware is turned into decisions; roles read the plan and do
    not re-derive it. The rules, with their vendor sources, are in C(docs/hardware-gating.md).
  - Conflicts between the options and the hardware (for example proprietary kernel modules
    forced on Blackwell) are listed in C(errors); with O(options.strict=true), the default, the filter
    fails instead, with a message naming the variable to change.
  - Options that are not known, or values outside their choices, always fail, naming the option
    and the allowed values.
positional: _input, options
options:
  _input:
    description: The probe's facts, C(ansible_facts.gpuops_gpu) (the fact contract of the collection).
    type: dict
    required: true
  options:
    description:
      - The user's overrides, as a dictionary. Every key is optional; C(null) means the default.
      - Each key maps to the public role variable named in its description; error messages name
        that variable.
    type: dict
    default: {}
    suboptions:
      driver_force:
        description:
          - Install the driver even where no NVIDIA GPU is found (image builds, GPUs arriving later).
          - Role variable C(nvidia_driver_force).
        type: bool
        default: false
      kernel_modules:
        description:
          - Kernel-module flavour. V(auto) picks V(open) for Turing and newer, V(proprietary) for Volta,
            Pascal, Maxwell and Kepler and for GPUs of unknown architecture.
          - V(proprietary) on a Blackwell GPU, or V(open) on a GPU older than Turing, is an error.
          - Role variable C(nvidia_driver_kernel_modules).
        type: str
        choices: [auto, open, proprietary]
        default: auto
      driver_branch:
        description:
          - Driver branch to install, such as V(580) (an integer, or a string of digits optionally
            prefixed with C(R)). Checked against the branches every GPU of the host supports
            (Kepler up to 470; Maxwell, Pascal, Volta up to 580; Ada and Hopper from 525; Blackwell
            from 570; open kernel modules from 515).
          - When not set, the branch of O(options.driver_version); else the branch of the loaded driver, kept
            (unless O(options.driver_upgrade)); else the newest branch every GPU supports that the driver
            source carries - O(options.source_branches), else the collection's table
            (C(plugins/module_utils/packages/driver_branches.py)) for O(options.distribution),
            O(options.distribution_major) and O(options.driver_source); with neither the branch is left
            open (C(null), with C(driver.branch.from=source) and the range).
          - Role variable C(nvidia_driver_branch).
        type: raw
      driver_version:
        description:
          - Driver version the user pinned (V(580.95.05)); its branch is the branch when O(options.driver_branch)
            is not set.
          - Role variable C(nvidia_driver_version).
        type: str
      driver_upgrade:
        description:
          - Move off the loaded driver's branch to the newest one the source carries that the GPUs support.
          - Role variable C(nvidia_driver_upgrade).
        type: bool
        default: false
      driver_source:
        description:
          - Where the driver comes from, V(distro) or V(cuda_repo); with O(options.distribution) it picks
            the branches the source carries.
          - Role variable C(nvidia_driver_source).
        type: str
        choices: [distro, cuda_repo]
        default: distro
      distribution:
        description:
          - The host's C(ansible_facts.distribution) (V(Debian), V(Ubuntu), V(RedHat), V(Rocky)); with
            O(options.distribution_major) and O(options.driver_source) it picks the branches the driver
            source carries from the collection's table. The C(host_plan) action passes the host's facts.
        type: str
      distribution_major:
        description:
          - The host's C(ansible_facts.distribution_major_version) (V(12), V(24), V(9)).
        type: str
      source_branches:
        description:
          - The driver branches the driver source carries, instead of the collection's table (to ask
            what the plan would be with another source). The roles never set it.
        type: list
        elements: raw
      mig:
        description:
          - MIG mode to apply. V(auto) leaves each GPU's mode as it is; V(enabled) or V(disabled)
            applies it to the MIG-capable GPUs only.
          - V(enabled) on a host without a MIG-capable GPU is an error.
          - Role variable C(nvidia_driver_mig_mode).
        type: str
        choices: [auto, enabled, disabled]
        default: auto
      dcgm_profiling:
        description:
          - DCGM profiling (DCP) metrics. V(auto) turns them on where a data-centre GPU of Volta or
            newer exists; V(enabled) on a host without one is an error.
          - Role variable C(dcgm_exporter_profiling).
        type: str
        choices: [auto, enabled, disabled]
        default: auto
      cuda_without_gpu:
        description:
          - Run C(cuda_toolkit) on a host that gets no driver (build and login nodes), when
            O(options.cuda_versions) lists a toolkit.
          - Role variable C(cuda_toolkit_without_gpu).
        type: bool
        default: false
      cuda_versions:
        description:
          - The CUDA toolkits asked for; C(cuda_toolkit) runs only where this lists one (and the host gets a
            driver, or O(options.cuda_without_gpu)). The versions themselves are checked by the role.
          - Role variable C(cuda_toolkit_versions).
        type: list
        elements: str
      in_container:
        description:
          - The host is a container (from the virtualization facts, for example
            C(ansible_virtualization_type) C(docker) or C(podman) with role C(guest)). No kernel
            module is loaded, services that need it are not started, sysctl is not applied live.
        type: bool
        default: false
      persistence:
        description:
          - Enable C(nvidia-persistenced) where the driver is installed.
          - Role variable C(nvidia_driver_persistence).
        type: bool
        default: true
      strict:
        description:
          - Fail when the plan has errors (conflicts between the options and the hardware).
            With V(false) the plan is returned with its C(errors) list and C(ok=false).
        type: bool
        default: true
seealso:
  - module: gpuops.dlserver.gpu_facts
"""

EXAMPLES = r"""
# the plan of this host from the probe's facts, with the driver settings of the inventory
- name: Probe the GPUs
  gpuops.dlserver.gpu_facts:

- name: Plan from the probe's facts
  ansible.builtin.set_fact:
    driver_plan: >-
      {{ ansible_facts.gpuops_gpu | gpuops.dlserver.gpu_plan({
           'driver_force': false,
           'kernel_modules': 'auto',
           'driver_branch': none,
           'mig': 'keep',
           'in_container': false,
         }) }}

# gate on the plan, never on a reading of the facts of your own
- name: Install Fabric Manager
  ansible.builtin.package:
    name: nvidia-fabricmanager
  when: driver_plan.fabric_manager.required

# report conflicts instead of failing
- name: Show what the plan objects to
  ansible.builtin.debug:
    msg: "{{ (ansible_facts.gpuops_gpu | gpuops.dlserver.gpu_plan({'strict': false})).errors }}"
"""

RETURN = r"""
_value:
  description:
    - The plan. Every decision has a C(reason) string. The full description of each key is in
      C(docs/hardware-gating.md).
  type: dict
  contains:
    plan_version:
      description: Version of the plan's shape (1).
      type: int
    ok:
      description: True when C(errors) is empty.
      type: bool
    host:
      description: C(gpu_count), C(nvswitch_count), C(nvswitch_mgmt_nic_count) (NVLink 5 switch-management
        functions), C(architectures) (sorted oldest first), C(source) (probe depth) and C(in_container).
      type: dict
    driver:
      description:
        - C(required) (bool) and C(reason); C(kernel_modules) with C(value) (V(open), V(proprietary),
          or C(null) when no driver or no flavour fits); C(branch) with C(value) (int or null), C(min),
          C(max) (the supported range, null where unbounded; floors per GPU, such as R550 for H200),
          C(from) (where the branch came from - C(nvidia_driver_branch), C(nvidia_driver_version), C(installed),
          C(newest_supported), C(source) when left to the source, C(none)),
          C(min_version) (first driver version where a branch's early releases lack a GPU, such as
          V(580.82.07) for B300, else null); C(load_modules) with C(value) (false in
          containers); C(loaded) with C(value), C(version), C(branch) of the driver running now.
      type: dict
    fabric_manager:
      description: C(required) (an NVSwitch fabric and a driver to install), C(start), C(detected_by)
        (what showed the fabric - NVSwitches on PCI, NVLink 5 switch-management functions with SW_MNG in
        their VPD, NVLinks to a switch seen by NVML), C(reason).
      type: dict
    nvlink_subnet_manager:
      description: C(required) (NVLink 5 systems - HGX/DGX B200, B300 - and fourth-generation NVSwitches),
        C(start), C(mgmt_nics) (PCI bus ids of the switch-management functions NVLSM binds to),
        C(reason).
      type: dict
    imex:
      description: C(required) (Grace Blackwell NVL tray GPUs - GB200, GB300 - with a driver to install),
        C(gpus) (their PCI bus ids), C(reason). Reported only; no role installs IMEX yet.
      type: dict
    persistence:
      description: C(enabled), C(start), C(reason).
      type: dict
    mig:
      description: C(capable_gpus) (PCI bus ids), C(mode) (V(enabled), V(disabled) or null to leave as is),
        C(apply_to) (PCI bus ids), C(apply) (bool), C(reason).
      type: dict
    dcgm:
      description: C(exporter) with C(value) and C(reason); C(profiling) with C(value), C(supported_gpus)
        and C(reason).
      type: dict
    exporters:
      description: C(node_exporter) and C(dcgm_exporter), each with C(run) and C(reason).
      type: dict
    sysctl:
      description: C(live) (apply sysctl settings now; false in containers) and C(reason).
      type: dict
    roles:
      description: One entry per role of the collection (C(os_tuning), C(nvidia_driver), C(cuda_toolkit),
        C(nvidia_container_toolkit), C(python_stack), C(node_exporter), C(dcgm_exporter), C(prometheus),
        C(volcano), C(gpu_validate)), each with C(run) and C(reason).
      type: dict
    options:
      description: The options after validation, every one set.
      type: dict
    warnings:
      description: Things to look at that do not stop the run, each with C(code), C(message) and, for one
        GPU, C(pci_bus_id). Codes are C(pcie_degraded), C(probe_error), C(probe_shallow),
        C(unknown_architecture), C(architecture_unrecognised), C(driver_branch_change),
        C(nvswitch_without_gpus), C(nvswitch_generation_unknown), C(gpu_count_mismatch),
        C(nvlink5_unconfirmed), C(nvswitch_baseboard_without_switch), C(unknown_gpu_new_silicon),
        C(unknown_gpu_proprietary).
      type: list
      elements: dict
    errors:
      description: Conflicts between the options and the hardware, each with C(code), C(option),
        C(variable) (the variable to change) and C(message). Codes are C(kernel_modules_conflict),
        C(no_common_branch), C(no_source_branch), C(branch_too_old), C(branch_too_new), C(open_modules_branch),
        C(open_modules_alpha), C(mig_not_capable), C(profiling_not_supported).
      type: list
      elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.gpu_plan import (
    build_plan,
    format_plan_errors,
)


def gpu_plan(facts, options=None):
    """Return the hardware plan for ``facts`` (ansible_facts.gpuops_gpu)."""
    try:
        plan = build_plan(plain(facts), plain(options))
    except ValueError as exc:
        raise AnsibleFilterError('gpuops.dlserver.gpu_plan: %s' % exc)
    if plan['errors'] and plan['options']['strict']:
        raise AnsibleFilterError('gpuops.dlserver.gpu_plan: the requested settings conflict with the hardware '
                                 'of this host: %s' % format_plan_errors(plan))
    return plan


class FilterModule(object):
    """gpuops.dlserver hardware-plan filters."""

    def filters(self):
        return {'gpu_plan': gpu_plan}
