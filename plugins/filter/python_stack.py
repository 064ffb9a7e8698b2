# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter python_stack_status: the status record of gpuops.dlserver.python_stack."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_stack import status


def python_stack_status(plan, verified=None, verify_enabled=True):
    try:
        return status(dict(plan), dict(verified or {}), bool(verify_enabled))
    except (TypeError, KeyError, ValueError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.python_stack_status: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver python_stack filters."""

    def filters(self):
        return {'python_stack_status': python_stack_status}
