# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.volcano_smoke_result.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is below, the rules and their sources are in
``plugins/module_utils/kubernetes/volcano.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: volcano_smoke_result
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: The outcome of the volcano role's gang smoke job, as facts
description:
  - Reads the Volcano Job last returned by M(kubernetes.core.k8s_info) and says whether every
    worker of the gang ran and succeeded, with the phase, the pod counts and a reason.
positional: _input, workers, timeout
options:
  _input:
    description: What M(kubernetes.core.k8s_info) returned for the job (or the Job object itself).
    type: dict
    required: true
  workers:
    description: The number of workers of the gang (its C(minAvailable)).
    type: int
    required: true
  timeout:
    description: Seconds the role waited, named in the reason when the job did not finish.
    type: int
    required: true
"""

EXAMPLES = r"""
- name: Record the smoke job
  ansible.builtin.set_fact:
    result: "{{ job_read | gpuops.dlserver.__private.volcano_smoke_result(4, 600) }}"
"""

RETURN = r"""
_value:
  description: C(passed), C(phase), C(workers), C(pending), C(running), C(succeeded), C(failed), C(reason).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano import (
    smoke_result,
)


def volcano_smoke_result(job, workers, timeout):
    """The smoke job's outcome as facts: passed, phase, counts and a reason."""
    for name, value in (('workers', workers), ('timeout', timeout)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise AnsibleFilterError('gpuops.dlserver.__private.volcano_smoke_result: %s must be an integer, got %r' % (name, value))
    if job is not None and not isinstance(job, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.volcano_smoke_result: the job must be what k8s_info returned (a dict), '
                                 'got %r' % type(job).__name__)
    resources = (job or {}).get('resources') if isinstance(job, dict) and 'resources' in job else None
    obj = (resources[0] if resources else None) if resources is not None else job
    try:
        return smoke_result(plain(obj), workers, timeout)
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.volcano_smoke_result: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.volcano_smoke_result."""

    def filters(self):
        return {'volcano_smoke_result': volcano_smoke_result}
