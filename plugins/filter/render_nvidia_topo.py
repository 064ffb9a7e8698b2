# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filter gpuops.dlserver.render_nvidia_topo: topology data -> ``nvidia-smi topo -m`` style text.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is ``render_nvidia_topo.yml`` next to this file, the code is
``plugins/module_utils/nvidia_topo.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.nvidia_topo import render_nvidia_topo as _render


def render_nvidia_topo(topo):
    """``{gpus, nics, matrix}`` -> an aligned ``nvidia-smi topo -m`` style table."""
    try:
        return _render(topo)
    except (ValueError, TypeError) as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    """gpuops.dlserver.render_nvidia_topo."""

    def filters(self):
        return {'render_nvidia_topo': render_nvidia_topo}
