#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_facts
short_description: Probe NVIDIA GPUs, NVSwitches and NICs (PCI sysfs, NVML, nvidia-smi)
version_added: 0.1.0
description:
  - Finds the NVIDIA GPUs and NVSwitches of a host and the Mellanox/NVIDIA network
    adapters beside them, and returns them as C(ansible_facts.gpuops_gpu), the fact
    contract every role of the collection decides from.
  - Works at three depths and says which one answered in C(source). PCI sysfs is always
    read and needs no driver; it decides which GPUs exist and the counts. NVML (the
    C(pynvml) binding from the C(nvidia-ml-py) package) adds names, memory, modes, power,
    NVLink, topology, affinity, clocks and maximum clocks when the driver is loaded. C(nvidia-smi) is
    used instead when the binding is absent but the tool is there.
  - Changes nothing on the host.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - gpuops.dlserver.attributes.host_check_mode
attributes:
  facts:
    support: full
options:
  sysfs_root:
    description:
      - Root of the sysfs tree to read. Point it at a fixture tree (rendered by
        C(tests/fixtures/build_sysfs.py)) to probe simulated hardware.
      - The module fails when the path does not exist or has no C(bus/pci/devices).
    type: path
    default: /sys
  procfs_root:
    description:
      - Root of procfs, read for C(driver/nvidia/version) (driver version and kernel-module flavour).
    type: path
    default: /proc
  pci_ids_path:
    description:
      - PCI ID database used for GPU names and chip code names (architecture).
      - By default the first of C(/usr/share/misc/pci.ids), C(/usr/share/hwdata/pci.ids)
        and C(/usr/share/pci.ids) that exists. Without one, a built-in table of data-centre
        and common GPUs is used; other ids get architecture C(unknown).
    type: path
  nvml:
    description:
      - Whether to read NVML through the C(pynvml) binding.
      - C(auto) uses it when it can be imported and initialised.
      - C(required) fails when the binding is missing or NVML does not answer. To get the
        binding, set C(gpuops_nvml_install=true) (the collection installs C(nvidia-ml-py)
        with C(pip --target /opt/gpuops/nvml), leaving the system Python alone), or install
        C(nvidia-ml-py) into the interpreter that C(ansible_python_interpreter) names.
      - C(disabled) never imports it.
    type: str
    choices: [auto, required, disabled]
    default: auto
  nvml_path:
    description:
      - Directories put in front of C(sys.path) while importing C(pynvml).
    type: list
    elements: path
    default: [/opt/gpuops/nvml]
  nvidia_smi:
    description:
      - Whether to fall back to C(nvidia-smi) when NVML did not answer.
    type: str
    choices: [auto, disabled]
    default: auto
  nvidia_smi_path:
    description:
      - Path of C(nvidia-smi). By default it is looked up on C(PATH).
    type: path
  nvidia_smi_timeout:
    description:
      - Seconds each C(nvidia-smi) call may take. A hung GPU can make C(nvidia-smi) block in the
        driver; after this time the call is killed (through coreutils C(timeout)) and the depth
        reports that it did not answer, instead of hanging the play.
      - C(0) runs without a limit.
    type: int
    default: 30
  nvml_init_timeout:
    description:
      - Seconds C(nvmlInit) may take. It runs in a worker thread; when it does not return in time
        the NVML depth reports why and the probe goes on (NVML is not used again in that run).
      - C(0) waits without a limit.
    type: int
    default: 30
  status_dir:
    description:
      - Also return RV(status_files), the digest and attributes of every C(*.json) file in this
        directory (the directory of the collection's status records and plan, C(/etc/gpuops)), read in
        the same round trip.
      - C(gpuops.dlserver.__private.status_file) takes them as its C(known_files)
        option, so that the first status record or plan of a run that would write the same bytes is
        answered on the controller without asking the host again.
      - Left out, nothing is read there.
    type: path
    version_added: 0.2.0
  packages:
    description:
      - Whether to read who installed the driver and the container toolkit (C(auto)); C(disabled) leaves
        C(driver.installed_packages), C(driver.package_origins), C(driver.runfile), C(driver.marker) and
        C(components) out.
      - Reads the package manager's state only (C(dpkg-query -W) and C(apt-cache policy), or C(rpm -qa));
        the plan decides from it whether the nvidia_driver role manages the driver or leaves it alone
        (C(nvidia_driver_adopt)).
    type: str
    choices: [auto, disabled]
    default: auto
notes:
  - Commands run with C(LC_ALL=C).
  - No error of the probe ends in a traceback. Permission denied on a sysfs file the PCI scan needs
    fails the task with a message naming the file; an unexpected error in the NVML or nvidia-smi
    depth becomes that depth's reason in C(depths_tried); an I/O error on one GPU's files keeps
    the GPU and lists the error in C(errors).
  - PCI VPD is readable by root only. Without root, ConnectX-7 switch-management functions of
    NVLink 5 systems cannot be told from ordinary NICs; C(errors) says so.
  - Architectures are C(volta), C(turing), C(ampere), C(ada), C(hopper), C(blackwell) or
    C(unknown); older GPUs found in the PCI ID database are reported as C(kepler),
    C(maxwell) or C(pascal) so that the driver role can refuse them by name.
  - C(pcie.degraded) compares the current link with the device's maximum. Idle GPUs may
    lower their link speed to save power, so C(pcie.degraded_reasons) says whether the
    generation, the width, or both are below the maximum; a lower width is the reliable sign
    of a bad slot or riser.
  - NVSwitches of HGX B200 and later are not host PCI functions. The probe finds their
    switch-management ConnectX-7 functions (VPD C(SW_MNG)) at the PCI depth and reports them in
    C(nvswitch_mgmt_nics); at the NVML depth the NVLink remote device type reveals the switches
    (C(nvlinks[].remote_type=switch)). C(nvlink_fabric) sums up the evidence.
seealso:
  - module: gpuops.dlserver.host_plan
    description: Turns these facts into the one plan per host that every role follows (the fact
      contract is in the collection's docs/gpu_facts.md).
"""

EXAMPLES = r"""
- name: Probe the GPUs
  gpuops.dlserver.gpu_facts:

- name: Probe a simulated HGX H100 (fixture tree), PCI depth only
  gpuops.dlserver.gpu_facts:
    sysfs_root: /srv/fixtures/hgx-h100-8gpu
    nvml: disabled
    nvidia_smi: disabled

- name: Insist on NVML (fails with instructions when the binding is missing)
  gpuops.dlserver.gpu_facts:
    nvml: required

- name: Say what was found
  ansible.builtin.debug:
    msg: >-
      {{ ansible_facts.gpuops_gpu.gpu_count }} GPU(s)
      ({{ ansible_facts.gpuops_gpu.gpus | map(attribute='architecture') | unique | join(', ') }}),
      seen by {{ ansible_facts.gpuops_gpu.source }}
"""

RETURN = r"""
status_files:
  description:
    - With O(status_dir), every C(*.json) file there (regular, at most 1 MiB) by path, with C(sha256)
      (its content's digest) and C(attrs) (whether it is root's with mode 0644).
  returned: when O(status_dir) is set
  type: dict
  sample: {"/etc/gpuops/plan.json": {"sha256": "9f2c0e51c3b6d2f8a4e8f5b1c7d9a0e3b2f4c6d8e0a1b3c5d7e9f1a2b4c6d8e0", "attrs": true}}
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    gpuops_gpu:
      description: What the probe found (the collection's fact contract).
      returned: always
      type: dict
      contains:
        source:
          description: The deepest depth that answered.
          type: str
          returned: always
          sample: nvml
        depths_tried:
          description: Each depth tried, whether it answered and, if not, why.
          type: list
          elements: dict
          returned: always
          sample: [{"depth": "pci", "answered": true, "reason": null},
                   {"depth": "nvml", "answered": false, "reason": "nvmlInit failed: Driver Not Loaded"}]
        gpu_count:
          description: Number of NVIDIA GPUs on PCI.
          type: int
          returned: always
          sample: 8
        nvswitch_count:
          description: Number of NVSwitches on PCI.
          type: int
          returned: always
          sample: 4
        gpus:
          description:
            - One entry per GPU, ordered by PCI address, with C(index) (that order, as
              C(GPU<index>) in C(topology)), C(pci_bus_id), C(pci_device_id), C(numa_node),
              C(architecture), C(name), C(pcie), C(datacenter), C(mig_capable) and, at the
              NVML or nvidia-smi depth, C(uuid), C(memory_total_mib), C(compute_capability),
              C(ecc_mode), C(mig_mode), C(persistence_mode), C(power_limit_w), C(cpu_affinity),
              C(max_clocks) (C(graphics_mhz) and C(memory_mhz), the highest clocks, null where unknown)
              and more; C(error) when NVML could not read that GPU.
            - At the nvidia-smi depth C(numa_affinity) is an int, or a sorted list of node numbers
              on Grace hosts (GH200, GB200), whose C(topo -m) prints several (C(0,3-9,11-17)).
          type: list
          elements: dict
          returned: always
          sample: [{"index": 0, "pci_bus_id": "0000:1b:00.0", "pci_device_id": "0x2330",
                    "numa_node": 0, "architecture": "hopper", "name": "NVIDIA H100 80GB HBM3",
                    "pcie": {"current_gen": 5, "max_gen": 5, "current_width": 16,
                             "max_width": 16, "degraded": false, "degraded_reasons": []},
                    "datacenter": true, "mig_capable": true}]
        nvswitches:
          description: NVSwitch functions on PCI, with C(generation) where known.
          type: list
          elements: dict
          returned: always
        nics:
          description:
            - Mellanox/NVIDIA network adapters (vendor 0x15b3) with C(netdevs), C(ib_devices), C(vpd)
              (C(present), C(readable), C(error), C(id_string), C(part_number), C(sw_mng)) and
              C(nvlink_switch_mgmt) (true for an NVLink 5 switch-management function, null when the
              VPD could not be read).
          type: list
          elements: dict
          returned: always
        nvswitch_mgmt_nics:
          description:
            - ConnectX-7 functions whose PCI VPD carries C(SW_MNG), through which the host manages the
              NVSwitch trays of NVLink 5 systems (HGX/DGX B200, B300). Each has C(pci_bus_id),
              C(ib_devices), C(netdevs) and C(numa_node).
          type: list
          elements: dict
          returned: always
          sample: [{"pci_bus_id": "0000:05:00.0", "ib_devices": ["mlx5_8"], "netdevs": [], "numa_node": 0}]
        nvlink_fabric:
          description:
            - Evidence of an NVSwitch fabric from every depth - C(nvswitch_pci_count),
              C(switch_mgmt_nic_count), C(vpd_unreadable) (ConnectX-7 functions whose VPD could not be
              read), C(nvml_switch_links) (active NVLinks to a switch, null below the NVML depth),
              C(detected) and C(nvlink5).
          type: dict
          returned: always
        driver:
          description:
            - C(loaded), C(version), C(cuda_version) (null when unknown) and C(kernel_module_flavor).
            - With O(packages=auto) also who installed it - C(installed_packages) (the driver's kernel-module
              packages, C(name) to C(version), installed even when not loaded yet), C(package_origins) (each
              package's C(cuda_repo), C(distro) or C(other)), C(runfile) (NVIDIA's C(.run) installer left
              its files, or C(nvidia-smi) is there without any driver package), C(marker) (the version pin
              the nvidia_driver role writes) and C(packages_read) (C(answered), C(reason)).
          type: dict
          returned: always
          sample: {"loaded": true, "version": "535.161.08", "cuda_version": "12.2",
                   "kernel_module_flavor": "open", "installed_packages": {"nvidia-kernel-open-dkms": "535.161.08-1"},
                   "package_origins": {"nvidia-kernel-open-dkms": "cuda_repo"}, "runfile": false,
                   "marker": true, "packages_read": {"answered": true, "reason": null}}
        components:
          description:
            - With O(packages=auto), per role whose component the host may have from elsewhere
              (C(nvidia_container_toolkit), C(dcgm_exporter)) - C(version) of its package (for DCGM the first
              C(datacenter-gpu-manager*) package; null when not installed), C(origin) (C(toolkit_repo),
              C(cuda_repo), C(distro) or C(other); of several packages the one that is not the role's) and
              C(marker) (the role's version pin; for DCGM the role's counters file), C(packages) (every installed
              package of the component and its version, so that a converged host skips apt). C(dcgm_exporter) also has
              C(units), the exporter units found under C(/etc/systemd/system) (NVIDIA's packaged
              C(nvidia-dcgm-exporter.service) enabled, or an C(nvidia-dcgm-exporter.service) or
              C(dcgm-exporter.service) written there).
          type: dict
          returned: when O(packages=auto) (empty when the package state could not be read)
          sample: {"nvidia_container_toolkit": {"version": "1.19.1-1", "origin": "toolkit_repo", "marker": true}}
        bmc:
          description:
            - C(inband_device), the host's in-band BMC device (the first of C(/dev/ipmi0), C(/dev/ipmi/0),
              C(/dev/ipmidev/0) that exists; null where none does). The plan decides from it whether
              ipmi_exporter reads the host's BMC in-band (C(gpuops_plan.bmc.local)).
          type: dict
          returned: always
          sample: {"inband_device": "/dev/ipmi0"}
        capabilities:
          description: C(fabric_manager_required), C(open_kernel_modules_supported), C(mig_capable), C(dcgm_profiling_supported).
          type: dict
          returned: always
        topology:
          description:
            - Pairwise links as C(nvidia-smi topo -m) prints them (C(X), C(NV#), C(PIX), C(PXB),
              C(PHB), C(NODE), C(SYS)), keyed C(GPU0..GPUn) in PCI order; C(gpus) maps those
              names to bus ids. NIC rows and columns only at the nvidia-smi depth.
          type: dict
          returned: when NVML or nvidia-smi answered
        errors:
          description: Problems that did not stop the probe (a GPU lost at NVML, a failed nvidia-smi call).
          type: list
          elements: dict
          returned: always
        pci_ids_path:
          description: The PCI ID database used, or null.
          type: str
          returned: always
"""

import traceback

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import file_states

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.gpu_probe import (
    NVIDIA_SMI_CHOICES,
    NVML_CHOICES,
    ProbeError,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvml import DEFAULT_NVML_PATHS
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.runner import gather

ARGUMENT_SPEC = dict(
    sysfs_root=dict(type="path", default="/sys"),
    procfs_root=dict(type="path", default="/proc"),
    pci_ids_path=dict(type="path"),
    nvml=dict(type="str", default="auto", choices=list(NVML_CHOICES)),
    nvml_path=dict(type="list", elements="path", default=list(DEFAULT_NVML_PATHS)),
    nvidia_smi=dict(type="str", default="auto", choices=list(NVIDIA_SMI_CHOICES)),
    nvidia_smi_path=dict(type="path"),
    nvidia_smi_timeout=dict(type="int", default=30),
    nvml_init_timeout=dict(type="int", default=30),
    packages=dict(type="str", default="auto", choices=["auto", "disabled"]),
    status_dir=dict(type="path"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        facts = gather(module.params, module.run_command, module.get_bin_path)
    except ProbeError as exc:
        module.fail_json(msg=str(exc))
    except Exception as exc:  # never a traceback: say what failed, keep the trace for -vvv
        module.fail_json(msg="gpu_facts failed unexpectedly: %s: %s" % (type(exc).__name__, exc),
                         exception=traceback.format_exc())
    extra = {}
    if module.params["status_dir"]:
        # the status records and the plan as they are now: status_file's known_files
        extra["status_files"] = file_states([module.params["status_dir"]])
    module.exit_json(changed=False, ansible_facts={"gpuops_gpu": facts}, **extra)


if __name__ == "__main__":
    main()
