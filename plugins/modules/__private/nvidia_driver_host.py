#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nvidia_driver_host
short_description: Read the host and the driver repositories, and decide what the nvidia_driver role installs
version_added: 0.1.0
description:
  - The decisions of the C(gpuops.dlserver.nvidia_driver) role, reached in one round trip per phase.
    Changes nothing on the host but its package index (refreshed when older than an hour, not in check
    mode); repositories are read into a scratch directory that is removed.
  - The inputs are checked before the role calls this module, on the controller, by the registry of input
    checks (C(plugins/module_utils/core/input_checks.py)); this module checks only what needs the host. The
    branch is the plan's (C(gpuops_plan.driver.branch), decided by
    C(plugins/module_utils/plan/driver_branch.py)); C(action=resolve) installs that branch.
  - C(action=resolve) refuses an interrupted dpkg or a half-installed driver package (naming the
    packages and C(dpkg --configure -a)), waits (bounded) for a dpkg/apt lock held by another process
    and names the holder, refreshes the host's package index when it is older than an hour (in check
    mode it is only read, and RV(index) says it may be stale), reads the host's apt sources, downloads
    the repository key once, checks its checksum and fingerprint and exports only the wanted key into a
    fresh keyring, reads the versions the repositories carry (a scratch apt directory that apt reads as
    its sandbox user C(_apt); dpkg ordering on apt, RPM ordering on dnf), the installed packages and
    kernels, the boot state (Secure Boot, nouveau, the MOK key's owner and mode), and decides the driver
    version, each package's exact version, the files the role writes and the reboot.
  - C(action=after_install) reads the installed kernels and C(dkms status) after the install and
    reports a kernel the install changed or a kernel DKMS did not build for.
  - C(action=verify) compares what the probe saw (C(gpuops_gpu)) and the loaded kernel module with the
    pinned version and the plan's flavour.
  - C(action=resolve) also returns RV(transaction) - the snapshot a failed change is restored to (the
    role's repository and pin files, every installed package of the driver's family with its version and
    hold) and the holds of the installed driver the new package set lacks (another kernel-module flavour),
    which the role releases in the same change.
  - C(action=restore) is the role's rescue of a failed driver change (C(state) the resolve, C(failure)
    the failed task). It writes the files back, reinstalls the previous package versions, holds what was
    held, reads everything back and B(always fails), with a message that says what was restored and what
    the node now has, and the record in RV(transaction). In check mode it restores nothing.
  - C(action=write_config) renders the driver's configuration files named in O(files) as C(action=resolve)
    renders them and writes them here (C(plugins/module_utils/core/files.py) - atomic, root 0644, a diff
    under C(--diff), nothing written in check mode; the DKMS signing file removed without a key pair). It
    reads no repository; their text never travels through the controller.
  - C(action=write_repo) makes the read of C(action=resolve) again (the repository files need the versions
    and the checked key) and writes the role's repository files, keyring and version pin (RV(repo_files))
    here, with the same writer; those no longer wanted are removed.
  - Decisions live in C(plugins/module_utils/packages/nvidia_repo.py); the reads of the host in
    C(driver_host.py) and C(driver_resolve.py) beside it.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: >-
      Reads only; it runs the same in check mode (C(action=restore), C(action=write_config) and
      C(action=write_repo) change nothing in check mode).
  diff_mode:
    support: full
    details: C(action=write_config) and C(action=write_repo) return the before and after of each file that changes.
  platform:
    platforms: posix
options:
  action:
    description: What to do (see the description).
    type: str
    choices: [resolve, after_install, verify, restore, write_config, write_repo]
    required: true
  inputs:
    description: The role's inputs converted by its argument spec (C(__nvidia_driver)).
    type: dict
    default: {}
  platform:
    description:
      - The role's per-platform values (backend, package table, default branch, repository names,
        paths of the tools and files it uses).
    type: dict
    default: {}
  plan:
    description: The hardware plan (C(gpuops_plan)).
    type: dict
    default: {}
  gpu:
    description: The probe's facts (C(gpuops_gpu)).
    type: dict
    default: {}
  state:
    description: For C(after_install), C(verify) and C(restore), the result of C(action=resolve).
    type: dict
    default: {}
  sysfs_root:
    description: Where sysfs is read (C(/module/nouveau), C(/module/nvidia/version)).
    type: path
    default: /sys
  lock_timeout:
    description: Seconds to wait for a dpkg/apt lock another process holds before failing.
    type: int
    default: 300
  cuda:
    description:
      - NVIDIA's CUDA repository of this host and how its key is checked (C(gpuops_cuda_repo), set by
        C(roles/common/tasks/cuda_repo.yml) from the collection's one table and the C(gpuops_cuda_repo_*)
        variables), with the keys C(url), C(key_url), C(fingerprint) and C(sha256).
    type: dict
    default: {}
  failure:
    description:
      - For C(restore), the failed task of the change, with the keys C(task) (its name), C(msg) and, for a
        loop task, C(results) (its items' results, whose failed items' messages are named in the message).
    type: dict
    default: {}
  files:
    description:
      - For C(write_config), the configuration files to write - C(nouveau_blacklist), C(modules_load),
        C(dkms_signing).
    type: list
    elements: str
    choices: [nouveau_blacklist, modules_load, dkms_signing]
    default: []
requirements:
  - gpg on the host where a repository key is checked
  - python3-apt for version ordering where it is installed (dpkg's algorithm is used otherwise)
"""

EXAMPLES = r"""
# gpuops_gpu and gpuops_plan come from gpuops.dlserver.gpu_facts and gpuops.dlserver.host_plan;
# the platform below is Debian 12's (the role's vars/Debian.yml and vars/Debian_12.yml)
- name: Read nvidia_driver's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: nvidia_driver
  register: driver_inputs

- name: Read the host and the repositories and choose the driver version
  gpuops.dlserver.__private.nvidia_driver_host:
    action: resolve
    inputs: "{{ driver_inputs.inputs }}"
    platform:
      backend: apt
      distribution: Debian
      codename: bookworm
      running_kernel: "{{ ansible_facts['kernel'] }}"
      distro_branch: "535"
      packages:
        distro:
          current:
            open: [nvidia-open-kernel-dkms, nvidia-smi, libcuda1]
            proprietary: [nvidia-kernel-dkms, nvidia-smi, libcuda1]
          other:
            open: []
            proprietary: ["nvidia-tesla-{branch}-kernel-dkms", "nvidia-tesla-{branch}-smi", "libnvidia-tesla-{branch}-cuda1"]
          persistenced: [nvidia-persistenced]
          fabric_manager_available: false
        cuda_repo:
          current:
            open: [nvidia-driver-cuda, nvidia-kernel-open-dkms]
            proprietary: [nvidia-driver-cuda, nvidia-kernel-dkms]
          other:
            open: [nvidia-driver-cuda, nvidia-kernel-open-dkms]
            proprietary: [nvidia-driver-cuda, nvidia-kernel-dkms]
          persistenced: []
      distro_repository: debian_components
      components: [contrib, non-free, non-free-firmware]
      repo_gpgcheck: true
      headers_package: linux-headers-{kernel}
      mokutil: /usr/bin/mokutil
      initramfs_tool: /usr/sbin/update-initramfs
      header: "# Managed by Ansible: local changes are overwritten."
      blacklist_file: /etc/modprobe.d/gpuops-nvidia-blacklist-nouveau.conf
      keyring_path: /etc/apt/keyrings/gpuops-nvidia-cuda.asc
      debian_sources_file: /etc/apt/sources.list.d/gpuops-nvidia-debian.sources
      cuda_sources_file: /etc/apt/sources.list.d/gpuops-nvidia-cuda.sources
      cuda_preferences_file: /etc/apt/preferences.d/gpuops-nvidia-cuda.pref
      preferences_file: /etc/apt/preferences.d/gpuops-nvidia-driver.pref
      legacy_files: []
    plan: "{{ gpuops_plan }}"
    gpu: "{{ ansible_facts.gpuops_gpu }}"
  register: driver_resolved
"""

RETURN = r"""
written:
  description:
    - (write_config) Each file named in O(files) (C(key), C(dest)) and whether this run changed it.
    - (write_repo) Each repository file (C(dest)) and whether this run changed (wrote or removed) it.
  returned: action is write_config or write_repo
  type: list
  elements: dict
target:
  description: The driver version to install.
  returned: action is resolve
  type: str
  sample: 580.95.05
pinned:
  description: Each versioned package and its exact version.
  returned: action is resolve
  type: dict
  sample: {nvidia-driver-cuda: 580.95.05-1}
install:
  description: The package arguments of the install task (C(name=version) on apt).
  returned: action is resolve
  type: list
  elements: str
install_state:
  description:
    - "Whether the install step must run at all (C(install): a pinned version differs, or a wanted
      package is not installed), the wanted packages not installed (C(missing)) and the pinned
      packages to hold afterwards (C(hold)), from the package state read once; a converged host
      skips the package manager."
  returned: action is resolve
  type: dict
  sample: {install: false, missing: [], hold: []}
keyring:
  description: The repository key, checked, with only the wanted key in C(content) (armored).
  returned: action is resolve and a CUDA repository is used
  type: dict
files:
  description: Text of the files the role writes (sources, preferences, DKMS signing, modules-load).
  returned: action is resolve
  type: dict
config_files:
  description:
    - The driver's configuration files by key (C(nouveau_blacklist), C(modules_load), C(dkms_signing)),
      each C(dest), C(content) (empty - the file is removed) and C(current) as in RV(repo_files). The role
      writes only the files that are not current.
  returned: action is resolve
  type: dict
repo_files:
  description:
    - The repository files of the driver (C(dest), C(content); an empty C(content) means the file is
      removed), each with C(current) - whether the host has it so already (those exact bytes, mode 0644,
      owned by root; for an empty C(content), no file). The role writes only the files that are not current.
  returned: action is resolve
  type: list
  elements: dict
activation:
  description: How the driver gets loaded (none, load, reboot, deferred, skipped, not_applicable) and the reboot decision.
  returned: action is resolve
  type: dict
status:
  description: The record the role writes to its status file.
  returned: action is resolve
  type: dict
index:
  description: Whether the host's package index was refreshed, or (check mode) may be stale, and why.
  returned: action is resolve on apt
  type: dict
problems:
  description: What the host or the repositories lack, each naming the variable to change.
  returned: always
  type: list
  elements: str
verify:
  description: What the loaded driver shows and the problems found (C(action=verify)).
  returned: action is verify
  type: dict
converged:
  description:
    - "Whether the role's repository, install, configure and verify phases would change nothing
      (C(converged)), and what they would act on (C(reasons)): every repository and configuration file
      current, no package to install or hold, no headers to install, no version change, the modules not to
      be loaded now, no reboot needed and no C(nvidia_driver:) line in the reboot marker, the services
      enabled, started, or stopped and disabled as the plan wants (one C(systemctl show)), C(dkms status)
      without a problem and, where the driver is loaded, the verification without a problem. The dnf
      backend is never converged (its module streams and version locks are read by the tasks)."
  returned: action is resolve
  type: dict
  sample: {converged: true, reasons: []}
after:
  description:
    - Where converged, the record C(action=after_install) would return (C(kernels), C(dkms),
      C(security_updates_held_back) - after an install, read again once the packages are installed and held).
  returned: action is resolve and converged
  type: dict
verified:
  description: Where converged and the driver is loaded, the record C(action=verify) would return.
  returned: action is resolve, converged and the driver loaded
  type: dict
transaction:
  description:
    - For C(resolve), C(before) (the snapshot, C(files) and C(packages); null on dnf), C(release) (held
      packages of the installed driver outside the new set) with C(release_reason), and C(previous) (the
      installed driver version).
    - For C(restore), C(restored) (everything read back as before), C(changed), C(step), C(items) (what was
      put back), C(remaining) (what still differs), C(now) (what the node has) and C(msg).
  returned: action is resolve or restore
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_module


def main():
    module = AnsibleModule(argument_spec=driver_module.ARGUMENT_SPEC, supports_check_mode=True)
    driver_module.run(module)


if __name__ == '__main__':
    main()
