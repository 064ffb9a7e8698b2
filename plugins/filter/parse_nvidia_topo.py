# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filter gpuops.dlserver.parse_nvidia_topo: the text of ``nvidia-smi topo -m`` -> data.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is ``parse_nvidia_topo.yml`` next to this file, the code is
``plugins/module_utils/nvidia_topo.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.nvidia_topo import parse_nvidia_topo as _parse


def parse_nvidia_topo(text):
    """Text of ``nvidia-smi topo -m`` -> ``{gpus, nics, matrix}``."""
    try:
        return _parse(text)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    """gpuops.dlserver.parse_nvidia_topo."""

    def filters(self):
        return {'parse_nvidia_topo': parse_nvidia_topo}
