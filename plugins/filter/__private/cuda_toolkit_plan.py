# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.cuda_toolkit_plan: the cuda_toolkit role's decisions on one host.

One filter per file, so that the file name is the filter name; the code is
``plugins/module_utils/cuda/toolkit.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: cuda_toolkit_plan
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: Which CUDA toolkits, packages and default a host gets, and whether its driver runs them
description:
  - Checks the driver against CUDA's compatibility rules (the toolkit's release driver, or minor-version
    compatibility per CUDA major). The typed inputs of the C(cuda_toolkit) role (versions the collection
    knows, a default among them, the distribution's own toolkit for C(cuda_toolkit_source=distro)) were
    checked before, by the registry of input checks (C(plugins/module_utils/core/input_checks.py)).
  - Fails naming the variable and what would work (the versions this driver runs, the driver branch the
    toolkit needs).
  - Returns the packages to install and to remove, the default toolkit, the profile.d and ld.so.conf.d
    contents and, per toolkit, the nvcc that verify compiles with and whether the program runs here.
positional: _input, platform, driver, installed, gpu_count, in_container
options:
  _input:
    description: The role's typed inputs (C(__cuda_toolkit)).
    type: dict
    required: true
  platform:
    description: C(distribution) and C(major) of the host.
    type: dict
    required: true
  driver:
    description: C(version) (installed driver or null), C(branch) (the plan's or null), C(loaded) (bool).
    type: dict
    required: true
  installed:
    description: Names of the packages installed on the host.
    type: list
    elements: str
    required: true
  gpu_count:
    description: GPUs the probe saw.
    type: int
    default: 0
  in_container:
    description: Whether the host is a container guest.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Gather the installed packages
  ansible.builtin.package_facts:

- name: Decide what two side-by-side toolkits need on this host (driver from the GPU probe)
  ansible.builtin.set_fact:
    cuda_plan: >-
      {{ {'source': 'cuda_repo', 'versions': ['12.4', '12.6'], 'default': '12.6', 'driver_compat': 'minor',
          'status_file': '/etc/gpuops/cuda_toolkit.json'}
         | gpuops.dlserver.__private.cuda_toolkit_plan({'distribution': 'Debian', 'major': '12'},
                                             {'version': '580.95.05', 'loaded': true, 'branch': '580'},
                                             ansible_facts.packages.keys() | list) }}
"""

RETURN = r"""
_value:
  description:
    - C(source), C(toolkits) (C(version), C(home), C(nvcc), C(packages), C(priority)), C(default) (C(value),
      C(reason), C(home), C(path)), C(alternatives), C(install), C(nccl), C(remove), C(unlisted),
      C(compatibility), C(profile), C(ldconf), C(files), C(verify).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import toolkit


def cuda_toolkit_plan(inputs, platform, driver, installed, gpu_count=0, in_container=False):
    if not isinstance(inputs, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.cuda_toolkit_plan: the inputs must be a dict, got %r' % (inputs,))
    try:
        return toolkit.plan(inputs, platform or {}, driver or {}, list(installed or []), int(gpu_count or 0),
                            bool(in_container))
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.cuda_toolkit_plan: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.cuda_toolkit_plan."""

    def filters(self):
        return {'cuda_toolkit_plan': cuda_toolkit_plan}
