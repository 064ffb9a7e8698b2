# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters reboot_request / reboot_served: the collection's single reboot request per host."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.reboot import add_request, served


def reboot_request(current, role, decision):
    try:
        return add_request(current, str(role), dict(decision))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.reboot_request: %s' % exc)


def reboot_served(current):
    return served(current)


class FilterModule(object):
    """gpuops.dlserver reboot filters."""

    def filters(self):
        return {'reboot_request': reboot_request, 'reboot_served': reboot_served}
