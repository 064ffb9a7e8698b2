#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: os_tuning_host
short_description: Read what gpuops.dlserver.os_tuning decides on and return its decisions
version_added: 0.1.0
description:
  - The one read of the host the C(gpuops.dlserver.os_tuning) role makes, and all its decisions
    (C(plugins/module_utils/host/os_tuning.py)) - what is applied live, what the boot loader
    configuration lacks, what waits for a reboot and whether to reboot, the unattended-upgrade
    blacklist, the kernel holds, the kernel updates they keep back, the files and units to
    write, and the status record.
  - Fails, before the role changes anything, when an input is wrong, naming each variable.
  - "Reads: C(/proc/cmdline), the generated GRUB configuration (Debian family) or
    C(grubby --info=DEFAULT) (EL), whether the boot loader tool, the cpufreq directory and the
    role's units exist and (one C(systemctl show)) whether those to enable are enabled and
    active, the files the role writes, the live values of the role's sysctl keys (where applied live), the
    installed kernel packages (where they are held) and C(apt-get --simulate --ignore-hold
    dist-upgrade) (Debian family, where kernels are kept back)."
  - Changes nothing on the host, unless O(write) is set.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: With O(write), the before and after of each file that changes.
  platform:
    platforms: posix
options:
  inputs:
    description:
      - The role's variables converted by its argument spec (C(__os_tuning), published by
        C(gpuops.dlserver.__private.role_inputs)), keys without the C(os_tuning_) prefix.
    type: dict
    required: true
  platform:
    description:
      - The role's per-platform variables.
    type: dict
    required: true
    suboptions:
      cmdline_backend:
        description: How kernel parameters reach the boot loader.
        type: str
        choices: [grub_dropin, grubby]
        required: true
      grub_tool:
        description: C(update-grub) or C(grubby).
        type: path
        required: true
      grub_cfg:
        description: The generated GRUB configuration.
        type: path
        required: true
      grub_dropin:
        description: The role's GRUB drop-in (C(grub_dropin) backend).
        type: path
      unattended_backend:
        description: Which automatic-upgrade tool the blacklist is written for.
        type: str
        choices: [apt, dnf_automatic]
        required: true
      unattended_file:
        description: The blacklist file.
        type: path
        required: true
      hold_backend:
        description: How kernel packages are held.
        type: str
        choices: [dpkg, versionlock]
        required: true
      kernel_packages:
        description: Kernel metapackages held where installed.
        type: list
        elements: str
        default: []
  in_container:
    description: The host is a container guest (C(gpuops_in_container)).
    type: bool
    default: false
  virtualization_type:
    description: C(ansible_facts.virtualization_type), for the reasons.
    type: str
    default: ""
  virtualization_role:
    description: C(ansible_facts.virtualization_role), for the status record.
    type: str
    default: ""
  driver_required:
    description:
      - The hardware plan installs the NVIDIA driver on this host (C(gpuops_plan.driver.required)).
        Kernel globs of the blacklist and kernel holds apply only then.
    type: bool
    default: false
  kernel:
    description: The running kernel release (C(ansible_facts.kernel)).
    type: str
    default: ""
  reboot_marker:
    description:
      - The collection's reboot-required file; whether it holds an C(os_tuning:) line decides if
        the role's reboot record has anything to write or clear (RV(reboot_record)).
    type: path
    default: /run/gpuops/reboot-required
  simulation_cache:
    description:
      - Where the answer of C(apt-get --simulate --ignore-hold dist-upgrade) is kept (JSON), with a
        fingerprint of what apt reads (C(/etc/apt), the package lists, C(/var/lib/apt/extended_states),
        C(/var/lib/dpkg/status) - each file's path, size, modification time and inode). While
        those stay the same, the kept answer is used instead of simulating again (about 1 s of
        CPU per run on a Debian node); an C(apt-get update), an install, a hold or an edited pin
        changes the fingerprint. Check mode reads the file and never writes it.
      - Empty to simulate on every run.
    type: path
    default: /var/cache/gpuops/apt-simulation.json
  root:
    description: Directory the host's files are read under (tests, chroots).
    type: path
    default: /
  write:
    description:
      - Also write the files the decisions list (RV(files)), rendered here, with
        C(plugins/module_utils/core/files.py) (atomic, mode 0644 or the file's, owner root; a
        diff under C(--diff); nothing written in check mode). The result is then RV(written)
        only, not the decisions.
    type: bool
    default: false
notes:
  - On EL the kernel updates kept back are not checked (reported as not checked).
seealso:
  - name: The os_tuning role
    description: docs/roles/os_tuning.md in the collection.
    link: https://github.com/gpuops/dlserver/blob/main/docs/roles/os_tuning.md
"""

EXAMPLES = r"""
# gpuops_plan comes from gpuops.dlserver.host_plan
- name: Read os_tuning's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: os_tuning
  register: os_tuning_inputs

- name: Decide what os_tuning applies (fails on bad input, before any change)
  gpuops.dlserver.__private.os_tuning_host:
    inputs: "{{ os_tuning_inputs.inputs }}"
    platform:
      cmdline_backend: grub_dropin
      grub_tool: /usr/sbin/update-grub
      grub_cfg: /boot/grub/grub.cfg
      grub_dropin: /etc/default/grub.d/90-gpuops.cfg
      unattended_backend: apt
      unattended_file: /etc/apt/apt.conf.d/51gpuops-unattended-upgrades
      hold_backend: dpkg
      kernel_packages: [linux-image-amd64]
    in_container: false
    driver_required: "{{ gpuops_plan.driver.required }}"
    kernel: "{{ ansible_facts['kernel'] }}"
  register: os_tuning_decisions
"""

RETURN = r"""
written:
  description: With O(write), each file the decisions list, and whether this run changed it.
  returned: with write
  type: list
  elements: dict
live:
  description: Whether settings act on the running system now (C(live)), whether kernel and boot loader are the host's, and why not.
  returned: success
  type: dict
  sample: {live: false, host_owned: false, reason: "container (docker): the running kernel belongs to the host, persisted only"}
sysctl:
  description: The merged settings, the role's file, and the keys whose live value differs (C(drift)).
  returned: success
  type: dict
thp:
  description: Transparent hugepage policy, its unit, whether it is applied now and why.
  returned: success
  type: dict
cpufreq:
  description: CPU governor, its unit, whether a cpufreq driver exists, whether it is applied now and why.
  returned: success
  type: dict
limits:
  description: PAM limits entries and files, whether systemd is re-executed and why.
  returned: success
  type: dict
kernel_cmdline:
  description:
    - Wanted parameters, the ones the boot loader configuration lacks (C(boot_missing)), the ones
      not in C(/proc/cmdline) yet (C(pending)), whether the boot loader is managed and why not.
  returned: success
  type: dict
reboot:
  description: The reboot decision, C({needed, action, reason, timeout}) with action none, reboot, deferred or skipped.
  returned: success
  type: dict
  sample:
    needed: true
    action: deferred
    timeout: 1800
    reason: >-
      kernel command line parameters not active until reboot: iommu=pt; deferred: os_tuning_reboot
      is false, reboot when convenient and run the play again
reboot_record:
  description:
    - Whether the role's line in O(reboot_marker) must be written, changed or cleared (a reboot is
      needed, or the file holds an C(os_tuning:) line); false on a host with nothing to record.
  returned: success
  type: bool
unattended:
  description: The blacklist globs that apply (kernel globs only where a driver is installed), their regular expressions and the file.
  returned: success
  type: dict
hold:
  description: Installed kernel packages to hold (C(held)) and those not held yet (C(to_hold)), and why.
  returned: success
  type: dict
held_back:
  description: Kernel updates the blacklist or hold keeps back (C(updates)), the security ones (C(security)), whether checked and how.
  returned: success
  type: dict
simulation_cached:
  description: Whether RV(held_back) came from the answer kept in O(simulation_cache) (apt's inputs unchanged) instead of a new simulation.
  returned: success
  type: bool
files:
  description:
    - Directories to create, files to write (key, dest, mode, content) and files to remove, each
      with C(current) - whether the host has it so already (bytes, mode and root ownership; a
      directory; no file) - so that the role writes or removes only the others.
  returned: success
  type: dict
converged:
  description:
    - The converged fast path - C(converged) is true when the role's change phases would change
      nothing (every file and directory current, the units to enable enabled and, where live,
      active, no unit to stop, no live sysctl drift, nothing the boot loader configuration lacks,
      every kernel package held; on EL the dnf-automatic exclusion set and no version lock to
      make), and C(reasons) names what is not.
  returned: success
  type: dict
  sample: {converged: false, reasons: ["/etc/security/limits.d/90-gpuops.conf differs (content, mode 0644 or root ownership)"]}
units:
  description: Units to stop and disable (C(stop)) and to enable, started where live (C(enable)).
  returned: success
  type: dict
status:
  description: The status record the role writes to C(os_tuning_status_file).
  returned: success
  type: dict
ansible_facts:
  description: The status record again, as the fact C(os_tuning_status).
  returned: success
  type: dict
  contains:
    os_tuning_status:
      description: Same as RV(status).
      type: dict
      returned: success
problems:
  description: On bad input, one line per problem, each naming the variable.
  returned: failure
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning_host


def main():
    module = AnsibleModule(
        argument_spec=dict(
            inputs=dict(type='dict', required=True),
            platform=dict(type='dict', required=True, options=dict(
                cmdline_backend=dict(type='str', required=True, choices=['grub_dropin', 'grubby']),
                grub_tool=dict(type='path', required=True),
                grub_cfg=dict(type='path', required=True),
                grub_dropin=dict(type='path'),
                unattended_backend=dict(type='str', required=True, choices=['apt', 'dnf_automatic']),
                unattended_file=dict(type='path', required=True),
                hold_backend=dict(type='str', required=True, choices=['dpkg', 'versionlock']),
                kernel_packages=dict(type='list', elements='str', default=[]),
            )),
            in_container=dict(type='bool', default=False),
            virtualization_type=dict(type='str', default=''),
            virtualization_role=dict(type='str', default=''),
            driver_required=dict(type='bool', default=False),
            kernel=dict(type='str', default=''),
            reboot_marker=dict(type='path', default='/run/gpuops/reboot-required'),
            simulation_cache=dict(type='path', default='/var/cache/gpuops/apt-simulation.json'),
            root=dict(type='path', default='/'),
            write=dict(type='bool', default=False),
        ),
        supports_check_mode=True,
    )
    try:
        if module.params['write']:
            result = os_tuning_host.write(module.params, module)
        else:
            result = os_tuning_host.facts(module.params, module.check_mode, module.run_command)
    except os_tuning_host.HostError as exc:
        module.fail_json(msg=exc.msg, **exc.details)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
