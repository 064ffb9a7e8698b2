# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters that read and write the text of ``nvidia-smi topo -m``.

The documentation of each filter is in ``parse_nvidia_topo.yml`` and
``render_nvidia_topo.yml`` next to this file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.nvidia_topo import (
    parse_nvidia_topo as _parse,
    render_nvidia_topo as _render,
)


def parse_nvidia_topo(text):
    """Text of ``nvidia-smi topo -m`` -> ``{gpus, nics, matrix}``."""
    try:
        return _parse(text)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError(str(exc))


def render_nvidia_topo(topo):
    """``{gpus, nics, matrix}`` -> an aligned ``nvidia-smi topo -m`` style table."""
    try:
        return _render(topo)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    """nvidia-smi topology filters."""

    def filters(self):
        return {
            'parse_nvidia_topo': parse_nvidia_topo,
            'render_nvidia_topo': render_nvidia_topo,
        }
