# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.gpu_plan: the probe's facts -> the plan every role follows.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list). The documentation is in gpu_plan.yml next to this file; the rules are in
plugins/module_utils/gpu_plan.py and docs/hardware-gating.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.gpu_plan import (
    build_plan,
    format_plan_errors,
)


def _plain(value):
    """Deep-copy Ansible's tagged/lazy containers into plain Python types."""
    if isinstance(value, dict):
        return dict((str(k), _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def gpu_plan(facts, options=None):
    """Return the hardware plan for ``facts`` (ansible_facts.gpuops_gpu)."""
    try:
        plan = build_plan(_plain(facts), _plain(options))
    except ValueError as exc:
        raise AnsibleFilterError('gpuops.dlserver.gpu_plan: %s' % exc)
    if plan['errors'] and plan['options']['strict']:
        raise AnsibleFilterError('gpuops.dlserver.gpu_plan: the requested settings conflict with the hardware '
                                 'of this host: %s' % format_plan_errors(plan))
    return plan


class FilterModule(object):
    """gpuops.dlserver hardware-plan filters."""

    def filters(self):
        return {'gpu_plan': gpu_plan}
