# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.cuda_toolkit_nccl: the exact NCCL version for the default CUDA toolkit.

One filter per file, so that the file name is the filter name; the code is
``plugins/module_utils/cuda/nccl.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: cuda_toolkit_nccl
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: The exact NCCL package version built for the default CUDA toolkit
description:
  - Reads the output of C(apt-cache policy libnccl2 libnccl-dev) (C locale) and picks the newest version both
    packages carry for the CUDA C(major.minor) of the C(cuda_toolkit_plan) filter's C(nccl) decision
    (NCCL's package versions name the CUDA they were built for, C(2.21.5-1+cuda12.4)).
  - apt takes C(libnccl2=<version>) only as an exact version, so this filter turns the decision into
    package arguments apt installs, and a change of the default toolkit into a change of the NCCL build.
  - Fails naming C(cuda_toolkit_nccl) and the CUDA builds the repositories carry when none fits.
    A decision without C(cuda) (the distribution's own NCCL, or none) passes the package names unchanged.
positional: _input, wanted
options:
  _input:
    description: Standard output of C(apt-cache policy libnccl2 libnccl-dev).
    type: str
    required: true
  wanted:
    description: The C(nccl) decision of the C(cuda_toolkit_plan) filter (C(packages), C(cuda), C(reason)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Read the NCCL builds the repositories carry
  ansible.builtin.command:
    argv: [apt-cache, policy, libnccl2, libnccl-dev]
  environment:
    LC_ALL: C
  register: nccl_policy
  changed_when: false

- name: Install NCCL built for CUDA 12.6
  ansible.builtin.apt:
    name: "{{ (nccl_policy.stdout | gpuops.dlserver.__private.cuda_toolkit_nccl({'packages': ['libnccl2', 'libnccl-dev'],
                                                                         'cuda': '12.6'})).install }}"
"""

RETURN = r"""
_value:
  description:
    - C(packages), C(cuda), C(version) (the exact version, or null), C(install) (C(name=version) arguments for
      apt, or the bare names), C(reason).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import nccl


def cuda_toolkit_nccl(policy, wanted):
    if not isinstance(policy, str) or not isinstance(wanted, dict):
        raise AnsibleFilterError("gpuops.dlserver.__private.cuda_toolkit_nccl: needs the apt-cache policy output (a string) and "
                                 "the plan's nccl decision (a dict), got %r and %r"
                                 % (type(policy).__name__, type(wanted).__name__))
    try:
        return nccl.pick(policy, wanted)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.cuda_toolkit_nccl: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.cuda_toolkit_nccl."""

    def filters(self):
        return {'cuda_toolkit_nccl': cuda_toolkit_nccl}
