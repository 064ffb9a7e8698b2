# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.reboot_served: the host's reboot request after the reboot ran.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is ``reboot_served.yml`` next to this file, the code is
``plugins/module_utils/reboot.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.reboot import served


def reboot_served(current):
    return served(current)


class FilterModule(object):
    """gpuops.dlserver.reboot_served."""

    def filters(self):
        return {'reboot_served': reboot_served}
