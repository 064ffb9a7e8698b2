# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.python_stack_status.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: python_stack_status
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: The status record of the python_stack role
description:
- Builds what C(gpuops.dlserver.python_stack) records in its status file and publishes to the fleet summary
  - per environment the backend, Python, resolved packages and index URLs, the spec hash, the decisions
  (PyTorch index, TensorFlow CUDA extra, DALI flavour) with their reasons, and the verification without
  timings - plus the framework environment defaults.
positional: _input, verified, verify_enabled
options:
  _input:
    description: The result of C(gpuops.dlserver.__private.python_stack_host) with C(action=plan).
    type: dict
    required: true
  verified:
    description: The registered loop of C(gpuops.dlserver.__private.python_stack_host) with C(action=verify).
    type: dict
    default: {}
  verify_enabled:
    description: Whether verification was asked for (C(python_stack_verify)).
    type: bool
    default: true
"""

EXAMPLES = r"""
- name: Record the decisions and the verification
  ansible.builtin.set_fact:
    python_stack_status: "{{ plan | gpuops.dlserver.__private.python_stack_status(verified, true) }}"
"""

RETURN = r"""
_value:
  description: C(environments) (one record each), C(env_defaults), C(cuda_version), C(backends).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.stack_status import status


def python_stack_status(plan, verified=None, verify_enabled=True):
    try:
        # plain(): a skipped registered result is copied without its deprecated skipped_reason
        return status(dict(plain(plan)), dict(plain(verified) or {}), bool(verify_enabled))
    except (TypeError, KeyError, ValueError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.python_stack_status: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.python_stack_status."""

    def filters(self):
        return {'python_stack_status': python_stack_status}
