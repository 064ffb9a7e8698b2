# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.cuda_toolkit_verify: what the cuda_toolkit role's verify step found.

One filter per file, so that the file name is the filter name; the code is
``plugins/module_utils/cuda/verify.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: cuda_toolkit_verify
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: Each CUDA toolkit's nvcc release, the check program's compile and, where possible, its run
description:
  - Reads the registered results of the cuda_toolkit role's verify tasks (C(nvcc --version), the compile of
    the check program with each nvcc, and its run where a GPU and a loaded driver are present) against the
    role's decisions (C(gpuops.dlserver.__private.cuda_toolkit_plan)).
  - Returns C(ok), the C(problems) (each naming the toolkit and what it printed) and one record per toolkit
    that says whether the program was only compiled or also ran, and why.
positional: _input, resolved
options:
  _input:
    description: C(nvcc), C(compiled), C(ran) - the C(results) of the three verify tasks.
    type: dict
    required: true
  resolved:
    description: The role's decisions (C(__cuda_toolkit_resolved)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Record what verify found
  ansible.builtin.set_fact:
    verified: "{{ {'nvcc': nvcc.results, 'compiled': compiled.results, 'ran': ran.results} | gpuops.dlserver.__private.cuda_toolkit_verify(resolved) }}"
"""

RETURN = r"""
_value:
  description: C(ok), C(problems), C(toolkits) (C(version), C(nvcc), C(release), C(compiled), C(linked_and_ran), C(reason)).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import verify


def cuda_toolkit_verify(registered, resolved):
    if not isinstance(registered, dict) or not isinstance(resolved, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.cuda_toolkit_verify: the registered results and the decisions '
                                 'must be dicts, got %r and %r' % (type(registered).__name__, type(resolved).__name__))
    try:
        return verify.record(registered, resolved)
    except (KeyError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.cuda_toolkit_verify: malformed input: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.cuda_toolkit_verify."""

    def filters(self):
        return {'cuda_toolkit_verify': cuda_toolkit_verify}
