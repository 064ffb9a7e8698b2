# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filter gpuops.dlserver.parse_nvidia_topo: the text of ``nvidia-smi topo -m`` -> data.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is below, the code is
``plugins/module_utils/probe/nvidia_topo.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: parse_nvidia_topo
version_added: 0.1.0
author: gpuops.dlserver developers
short_description: Parse the output of C(nvidia-smi topo -m)
description:
  - Turns the text that C(nvidia-smi topo -m) prints into GPUs, NICs and the pairwise link matrix.
  - Takes every layout NVIDIA drivers have printed, whether tab-separated or copied from a terminal
    with spaces; with or without the C(NIC Legend) block and the C(CPU Affinity), C(NUMA Affinity)
    and C(GPU NUMA ID) columns; NIC columns named C(NIC0) or by device (C(mlx5_0)); ANSI underline
    escapes around the header; C(N/A), empty and missing affinity values; C(NUMA Affinity) node
    lists (C(0,3-9,11-17)) as Grace hosts print them.
  - Lines before the header that do not start with a device name (driver warnings) are skipped.
    The matrix ends at the first blank line; of what follows only the C(NIC Legend) block is read.
  - Fails, naming the line number and quoting the line, on text it cannot read completely
    (no header, a row whose cells do not fit the header, a link code other than C(X), C(NV#),
    C(PIX), C(PXB), C(PHB), C(NODE), C(SYS), C(SOC) or C(N/A), or a matrix that is not square).
    It never returns a partial result.
  - The same parser runs on targets in M(gpuops.dlserver.gpu_facts) when only C(nvidia-smi) answers.
positional: _input
options:
  _input:
    description: The standard output of C(nvidia-smi topo -m) (or C(nvidia-smi topo --matrix)).
    type: str
    required: true
seealso:
  - plugin: gpuops.dlserver.render_nvidia_topo
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Read the topology of a GPU host
  ansible.builtin.command: nvidia-smi topo -m
  register: topo_out
  changed_when: false

- name: Keep it as structured data
  ansible.builtin.set_fact:
    gpu_topology: "{{ topo_out.stdout | gpuops.dlserver.parse_nvidia_topo }}"

- name: Fail when GPU0 and GPU1 are not joined by NVLink
  ansible.builtin.assert:
    that: gpu_topology.matrix.GPU0.GPU1 is match('NV[0-9]+')
    fail_msg: "GPU0-GPU1 link is {{ gpu_topology.matrix.GPU0.GPU1 }}"

- name: CPUs nearest to GPU0
  ansible.builtin.debug:
    msg: "{{ (gpu_topology.gpus | selectattr('name', 'eq', 'GPU0') | first).cpu_affinity }}"
"""

RETURN = r"""
_value:
  description: The topology.
  type: dict
  contains:
    gpus:
      description: One entry per GPU column, in header order.
      type: list
      elements: dict
      contains:
        name:
          description: Column name, C(GPU0) and so on.
          type: str
        cpu_affinity:
          description: Sorted CPU numbers of the C(CPU Affinity) cell; empty for C(N/A), empty or missing.
          type: list
          elements: int
        numa_affinity:
          description:
            - The C(NUMA Affinity) cell as a number; null for C(N/A), empty or missing.
            - On Grace hosts (GH200, GB200) the cell lists several nodes (C(0,3-9,11-17)); the value is
              then a sorted list of node numbers. A single node is always a number.
          type: raw
        gpu_numa_id:
          description: The C(GPU NUMA ID) cell as a number or null; present only when the output has that column.
          type: int
    nics:
      description: One entry per NIC column, in header order.
      type: list
      elements: dict
      contains:
        name:
          description: Column name, C(NIC0) or a device name such as C(mlx5_0) on older drivers.
          type: str
        device:
          description: >-
            RDMA device from the C(NIC Legend); the column name when the column is named by device;
            null when neither says.
          type: str
    matrix:
      description: >-
        Every printed row (GPU and NIC rows) keyed by every column, the self cell C(X) included,
        with link codes verbatim (C(NV18), C(PIX), C(N/A)).
      type: dict
      sample:
        GPU0: {GPU0: X, GPU1: NV18, NIC0: PIX}
        GPU1: {GPU0: NV18, GPU1: X, NIC0: NODE}
        NIC0: {GPU0: PIX, GPU1: NODE, NIC0: X}
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_topo import parse_nvidia_topo as _parse


def parse_nvidia_topo(text):
    """Text of ``nvidia-smi topo -m`` -> ``{gpus, nics, matrix}``."""
    try:
        return _parse(text)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    """gpuops.dlserver.parse_nvidia_topo."""

    def filters(self):
        return {'parse_nvidia_topo': parse_nvidia_topo}
