# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's in-band BMC device nodes, one list for both readers: the probe (``gpu_facts``:
``gpuops_gpu.bmc.inband_device``, from which the plan decides ``bmc.local`` for ipmi_exporter and the
prometheus role's in-band job) and gpu_validate's SEL check, which looks again on the node when it
validates. Standard library only (runs on targets)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

# Device nodes of an in-band BMC (the ipmi_devintf driver's names across distributions).
BMC_DEVICES = ('/dev/ipmi0', '/dev/ipmi/0', '/dev/ipmidev/0')


def inband_device(devices=BMC_DEVICES, exists=os.path.exists):
    """The first of ``devices`` the host has, or None (no in-band BMC: the kernel's ipmi_si and
    ipmi_devintf are not loaded, or the host has no BMC)."""
    for path in devices:
        if exists(path):
            return path
    return None
