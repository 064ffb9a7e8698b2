# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.validate_inputs: the gpu_validate role's input checks.

One filter per file; the code is ``plugins/module_utils/validate/inputs.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: validate_inputs
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: Check the gpu_validate role's typed inputs before anything changes
description:
  - Takes C(__gpu_validate) (the role's variables converted by its argument spec) and fails,
    naming every variable with a careless value - paths that are not absolute and normal, an
    address or group name that is not one, numbers out of bounds, thresholds outside (0, 1].
  - Returns the inputs unchanged when they pass.
positional: _input
options:
  _input:
    description: The typed inputs C(__gpu_validate).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Read gpu_validate's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: gpu_validate
    fact: validate_inputs

- name: Check them (fails naming the variable)
  ansible.builtin.set_fact:
    validate_checked: "{{ validate_inputs | gpuops.dlserver.__private.validate_inputs }}"
"""

RETURN = r"""
_value:
  description: The inputs, unchanged.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.inputs import input_problems


def validate_inputs(inputs):
    if not isinstance(inputs, dict):
        raise AnsibleFilterError('validate_inputs: expected the dict __gpu_validate, got %r' % (inputs,))
    problems = input_problems(inputs)
    if problems:
        raise AnsibleFilterError('gpu_validate: ' + '; '.join(problems))
    return inputs


class FilterModule(object):
    """gpuops.dlserver.__private.validate_inputs."""

    def filters(self):
        return {'validate_inputs': validate_inputs}
