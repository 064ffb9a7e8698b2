# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.reboot_request: add a role's reboot decision to the host's single request.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is ``reboot_request.yml`` next to this file, the code is
``plugins/module_utils/reboot.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.reboot import add_request


def reboot_request(current, role, decision):
    try:
        return add_request(current, str(role), dict(decision))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.reboot_request: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.reboot_request."""

    def filters(self):
        return {'reboot_request': reboot_request}
