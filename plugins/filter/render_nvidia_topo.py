# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filter gpuops.dlserver.render_nvidia_topo: topology data -> ``nvidia-smi topo -m`` style text.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is below, the code is
``plugins/module_utils/probe/nvidia_topo.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: render_nvidia_topo
version_added: 0.1.0
author: gpuops.dlserver developers
short_description: Write a parsed GPU topology back as an aligned table
description:
  - The inverse of P(gpuops.dlserver.parse_nvidia_topo#filter), for reports.
  - Writes the GPU and NIC rows of the link matrix, the C(CPU Affinity) (as compressed CPU lists),
    C(NUMA Affinity) and, when the GPUs carry it, C(GPU NUMA ID) columns, a legend of link codes
    and a C(NIC Legend), aligned with spaces.
  - Parsing the result with P(gpuops.dlserver.parse_nvidia_topo#filter) gives back the same data.
  - Fails when the input lacks C(gpus), C(nics), C(matrix) or a matrix cell.
positional: _input
options:
  _input:
    description: A topology as returned by P(gpuops.dlserver.parse_nvidia_topo#filter).
    type: dict
    required: true
seealso:
  - plugin: gpuops.dlserver.parse_nvidia_topo
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Put the topology of every host in a report
  ansible.builtin.copy:
    dest: "/srv/reports/{{ inventory_hostname }}-topology.txt"
    content: "{{ gpu_topology | gpuops.dlserver.render_nvidia_topo }}"
    mode: "0644"
  delegate_to: localhost
"""

RETURN = r"""
_value:
  description: >-
    The table, one line per row, then the legend of link codes and the NIC Legend;
    ends in a newline. The sample shows the table only.
  type: str
  sample: |2
          GPU0  GPU1  NIC0  CPU Affinity  NUMA Affinity
    GPU0  X     NV18  PIX   0-47,96-143   0
    GPU1  NV18  X     NODE  0-47,96-143   0
    NIC0  PIX   NODE  X
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_topo import render_nvidia_topo as _render


def render_nvidia_topo(topo):
    """``{gpus, nics, matrix}`` -> an aligned ``nvidia-smi topo -m`` style table."""
    try:
        return _render(topo)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.render_nvidia_topo: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.render_nvidia_topo."""

    def filters(self):
        return {'render_nvidia_topo': render_nvidia_topo}
