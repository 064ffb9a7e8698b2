#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_validate
short_description: Prove a GPU node - health, host balance, measured performance against published peak
version_added: 0.2.0
description:
  - Judges a node from the probe's facts (M(gpuops.dlserver.gpu_facts)) and the plan, plus what it
    reads itself (NVML error counters, the kernel log since boot, the NVIDIA kernel module version,
    Fabric Manager, memory, CPUs, the dataset path's device, NIC speeds). Checks and verdicts are
    pure functions in C(plugins/module_utils/validate/).
  - The options that stand for a variable of the C(gpuops.dlserver.gpu_validate) role state no default
    here - the action of the same name fills each one the task leaves out from the role's argument spec
    (C(roles/gpu_validate/meta/argument_specs.yml); O(sysfs_root) from common's C(gpuops_sysfs_root),
    O(refresh_seconds) from C(gpu_validate_refresh_days)), the one place that states them.
  - Performance runs C(plugins/module_utils/validate/measure.py) with the python O(python) names (an
    environment with PyTorch), handed to it with C(-c) - nothing is copied to the host. Each figure is
    reported with its fraction of the model's published peak (C(plugins/module_utils/hardware/gpu_peaks.py)).
  - "Without GPUs and with O(allow_cpu) the measurements run on the CPU with small sizes and are
    reported as C(device: cpu), never judged as GPU results."
  - Cross-node tests (O(peers), two or more) run an all-reduce through C(torch.distributed) (NCCL on
    GPUs, gloo on the CPU) and C(iperf3) toward the first peer; every host of the group must run this
    module at the same time (one task of one play). Each is bounded by O(timeout).
  - Writes C(validate.json) and C(validate.txt) into O(record_dir) and C(gpuops_validate.prom) into
    O(textfile_dir) only when the verdict changed or the record is older than O(refresh_seconds);
    C(changed) says that it did.
  - C(dcgm_diag) runs C(dcgmi diag -r) O(dcgm_diag_level) C(-j) (bounded by O(dcgm_diag_timeout)) where DCGM runs
    (GPUs with a loaded driver, C(dcgmi), the C(nvidia-dcgm) host engine active) and reports every DCGM test,
    a failed one by name with DCGM's message per GPU; elsewhere it is skipped with the reason.
  - With O(ib_write_bw), the cross-node tests also run C(ib_write_bw) (perftest) toward the first peer for
    O(ib_seconds) seconds over the fastest active InfiniBand port and judge the measured Gb/s against the
    port's link rate (the C(network) threshold); a host without an active InfiniBand port skips it with the reason.
  - C(sel) reads the BMC's System Event Log through the in-band BMC (C(/dev/ipmi0), C(/dev/ipmi/0) or
    C(/dev/ipmidev/0)) with FreeIPMI's C(ipmi-sel) or else C(ipmitool), decodes each event by sensor type and
    offset (IPMI 2.0 table 42-3) and judges the events after the position the last validation recorded in
    C(validate.json) - uncorrectable memory errors, PCI/PCIe fatal errors (PERR, SERR, bus fatal/uncorrectable)
    and processor IERR, thermal trip or uncorrectable machine checks fail the node; correctable errors, power
    supply and cooling events and a full SEL warn with counts. Without a BMC device or either tool the check
    says that it is unknown (no BMC access; status skip, never pass). C(plugins/module_utils/bmc/sel.py).
  - C(data) measures the data path in a sample directory under O(dataset_path) (else C(/var/tmp)), written and
    removed - sequential and random read MB/s with C(fio), images/s of a PyTorch DataLoader decoding JPEGs from
    loose files and from one LMDB pack (Pillow and lmdb in O(python)'s environment), DALI's GPU decoding where a GPU
    and DALI are present - and compares the best with what the GPUs consume (O(data_images_per_gpu), else the
    published ResNet-50 training rate x GPUs). C(plugins/module_utils/validate/data_path.py).
  - In check mode only health, balance and sel run and nothing is written.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: partial
    details: health and balance only; no measurement, no file written.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  gpu_facts:
    description: The probe's facts (C(gpuops_gpu)).
    type: dict
    required: true
  plan:
    description: The plan (C(gpuops_plan)); persistence and Fabric Manager decisions are read from it.
    type: dict
    default: {}
  groups:
    description: Which groups of checks run.
    type: list
    elements: str
    choices: [health, balance, performance, cross_node, dcgm_diag, sel, data]
  host_name:
    description: The node's name in reports.
    type: str
    required: true
  sysfs_root:
    description: Where the NVIDIA kernel module version is read (a fixture tree in the lab).
    type: path
  nvml_path:
    description: Extra directories to import the NVML binding from.
    type: list
    elements: path
    default: [/opt/gpuops/nvml]
  retired_page_limit:
    description: Retired pages per GPU above which health fails.
    type: int
  balance_thresholds:
    description: Balance checks that fail instead of warning (C(memory_ratio), C(cpu_cores_per_gpu), C(nic_gbps), C(dataset_nvme)).
    type: dict
  dataset_path:
    description: Path whose block device is judged (NVMe or what it is); empty to skip.
    type: str
  python:
    description: Interpreter of the environment with PyTorch (performance and cross-node).
    type: path
  allow_cpu:
    description: "Without GPUs, run the measurements on the CPU (reported as C(device: cpu))."
    type: bool
  thresholds:
    description: Fractions of peak in (0, 1] per metric (C(matmul), C(memory_copy), C(host_device), C(allreduce), C(cross_allreduce), C(network), C(resnet50)).
    type: dict
  thresholds_by_model:
    description: Per model (PCI device id such as C(0x2330), or the table's model name), the same keys as O(thresholds).
    type: dict
  size_mib:
    description: Buffer size of the copy and all-reduce measurements on GPUs (the CPU run caps it at 64).
    type: int
  resnet50:
    description:
      - With C(performance), also train ResNet-50 with mixed precision on random data and report images/s
        per GPU, judged against NVIDIA's published one-GPU figure where one exists (threshold C(resnet50)),
        measured without a verdict elsewhere.
      - "On the CPU (O(allow_cpu)) a tiny run, reported as C(device: cpu) and never judged."
    type: bool
  resnet50_batch:
    description: Images per training step of the ResNet-50 measurement on a GPU (the CPU run uses at most 2).
    type: int
  peers:
    description: Every host of the cross-node group, in the same order on every host (C(name), C(address)); the first is rank 0.
    type: list
    elements: dict
    default: []
  rank:
    description: This host's index in O(peers).
    type: int
    default: 0
  port:
    description: TCP port of the all-reduce rendezvous on the first peer.
    type: int
  iperf3_port:
    description: TCP port of the iperf3 server on the first peer.
    type: int
  timeout:
    description: Seconds each cross-node test may take to join or connect.
    type: int
  record_dir:
    description: Directory of C(validate.json) and C(validate.txt).
    type: path
  textfile_dir:
    description: node_exporter textfile directory for C(gpuops_validate.prom); empty, or a directory that does not exist, to skip.
    type: str
  refresh_seconds:
    description: Rewrite an unchanged verdict once its record is this old (keeps the stale alert quiet).
    type: int
  dcgm_diag_level:
    description: C(dcgmi diag) run level - 1 (quick, about a minute) or 2 (medium, a few minutes).
    type: int
    choices: [1, 2]
  dcgm_diag_timeout:
    description: Seconds C(dcgmi diag) may run before it is stopped and the check fails.
    type: int
  ib_write_bw:
    description: Run C(ib_write_bw) between the cross-node peers where an active InfiniBand port is present.
    type: bool
  ib_port:
    description: TCP port of the C(ib_write_bw) server on the first peer (its connection setup).
    type: int
  ib_seconds:
    description: Seconds each C(ib_write_bw) run measures (C(-D)).
    type: int
  env_file:
    description: A KEY=VALUE file (python_stack's NCCL environment) whose variables the measurements get; ignored when absent.
    type: path
  data_workers:
    description: DataLoader workers of the C(data) group; 0 - the node's CPU count.
    type: int
  data_images:
    description: JPEGs the C(data) group writes, loads and removes (loose files and one LMDB pack).
    type: int
  data_sample_mib:
    description: Size of the file fio reads in the C(data) group (MiB), written and removed.
    type: int
  data_seconds:
    description: Seconds each fio job of the C(data) group may read (sequential, random).
    type: int
  data_images_per_gpu:
    description: Images/s one GPU consumes; 0 - NVIDIA's published one-GPU ResNet-50 training figure of the model.
    type: int
  bmc_address:
    description:
      - The node's BMC (IPv4, IPv6 or DNS name). With O(bmc_user) and O(bmc_password), the C(sel) group reads the
        SEL over the LAN (RMCP+, FreeIPMI's C(ipmi-sel) with driver C(LAN_2_0)) where the node has no in-band BMC
        device; the credentials go into a FreeIPMI configuration file of mode 0600 that exists only while
        C(ipmi-sel) runs, never onto a command line (C(plugins/module_utils/bmc/sel_lan.py)).
    type: str
    default: ""
  bmc_user:
    description: The BMC user that reads the SEL over the LAN (user privilege is enough).
    type: str
    default: ""
  bmc_password:
    description: Its password; never shown, never on a command line.
    type: str
    default: ""
  bmc_port:
    description: The BMC's RMCP+ UDP port.
    type: int
    default: 623
  bmc_workaround_flags:
    description: FreeIPMI workaround flags for the LAN read (lower-case words, e.g. C(opensesspriv)).
    type: list
    elements: str
    default: []
  input_names:
    description: How error messages name O(thresholds), O(thresholds_by_model) and O(balance_thresholds) (a role passes its variable names).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Validate the node
  gpuops.dlserver.gpu_validate:
    gpu_facts: "{{ ansible_facts.gpuops_gpu }}"
    plan: "{{ gpuops_plan }}"
    host_name: "{{ inventory_hostname }}"
    python: /opt/gpuops/envs/pytorch/bin/python
"""

RETURN = r"""
validation:
  description: verdict (pass, warn, fail), worst check, device (cuda, cpu or none), summary line, checks, record decision.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import node


def main():
    module = AnsibleModule(argument_spec=dict(
        gpu_facts=dict(type='dict', required=True),
        plan=dict(type='dict', default={}),
        groups=dict(type='list', elements='str',
                    choices=['health', 'balance', 'performance', 'cross_node', 'dcgm_diag', 'sel', 'data']),
        host_name=dict(type='str', required=True),
        sysfs_root=dict(type='path'),
        nvml_path=dict(type='list', elements='path', default=['/opt/gpuops/nvml']),
        retired_page_limit=dict(type='int'),
        balance_thresholds=dict(type='dict'),
        dataset_path=dict(type='str'),
        python=dict(type='path'),
        allow_cpu=dict(type='bool'),
        thresholds=dict(type='dict'),
        thresholds_by_model=dict(type='dict'),
        size_mib=dict(type='int'),
        resnet50=dict(type='bool'),
        resnet50_batch=dict(type='int'),
        peers=dict(type='list', elements='dict', default=[]),
        rank=dict(type='int', default=0),
        port=dict(type='int'),
        iperf3_port=dict(type='int'),
        timeout=dict(type='int'),
        record_dir=dict(type='path'),
        textfile_dir=dict(type='str'),
        refresh_seconds=dict(type='int'),
        dcgm_diag_level=dict(type='int', choices=[1, 2]),
        dcgm_diag_timeout=dict(type='int'),
        ib_write_bw=dict(type='bool'),
        ib_port=dict(type='int'),
        ib_seconds=dict(type='int'),
        env_file=dict(type='path'),
        input_names=dict(type='dict', default={}),
        data_workers=dict(type='int'),
        data_images=dict(type='int'),
        data_sample_mib=dict(type='int'),
        data_seconds=dict(type='int'),
        data_images_per_gpu=dict(type='int'),
        bmc_address=dict(type='str', default=''),
        bmc_user=dict(type='str', default=''),
        bmc_password=dict(type='str', default='', no_log=True),
        bmc_port=dict(type='int', default=623),
        bmc_workaround_flags=dict(type='list', elements='str', default=[]),
    ), supports_check_mode=True)
    changed, record = node.validate(module)
    module.exit_json(changed=changed, validation=record)


if __name__ == '__main__':
    main()
