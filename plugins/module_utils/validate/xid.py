# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The XID meanings gpuops.dlserver.gpu_validate reports (validate/health.py reads the kernel log):
the XIDs a fleet meets, each with its meaning, the likely cause or action, whether the GPU must
not take work until it is handled (``critical``: the health check fails; the rest warn, often
application faults), and where the row was checked.

Sources: NVIDIA's XID catalogue (``CATALOGUE``) for the meanings and resolution buckets, and the
driver's own list of XID numbers, ``nverror.h`` of NVIDIA's open GPU kernel modules (``NVERROR``),
for the number of each: ``nverror`` names the row's symbol there. A row that could not be
confirmed says what is missing in ``unconfirmed`` (None: confirmed). Any other number is reported
as "see NVIDIA's XID catalogue".
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

CATALOGUE = 'https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html'
NVERROR = 'https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/src/common/sdk/nvidia/inc/nverror.h'


def _row(meaning, cause, critical, nverror, unconfirmed=None):
    return {'meaning': meaning, 'cause': cause, 'critical': critical, 'nverror': nverror,
            'unconfirmed': unconfirmed}


XID_TABLE = {
    13: _row('Graphics engine exception', 'application fault or driver bug; check the job first', False,
             'ROBUST_CHANNEL_GR_EXCEPTION'),
    31: _row('GPU memory page fault', 'application fault (illegal address) or driver bug', False,
             'ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT'),
    32: _row('Invalid or corrupted push buffer stream', 'driver or PCIe fault', False, 'ROBUST_CHANNEL_PBDMA_ERROR'),
    38: _row('Driver firmware error', 'driver firmware fault; update the driver', False, None,
             'XID 38 is not defined in nverror.h (its numbers skip from 36 to 39) and its catalogue row was not '
             'read here; the meaning is that of NVIDIA\'s older XID table as copied elsewhere'),
    43: _row('GPU stopped processing', 'application fault after a previous error', False,
             'ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR'),
    45: _row('Preemptive cleanup, due to previous errors', 'follows another error; look at the XID before it', False,
             'ROBUST_CHANNEL_PREEMPTIVE_REMOVAL'),
    48: _row('Double-bit ECC error', 'uncorrectable memory error: drain the node, reset the GPU, RMA if it repeats',
             True, 'ROBUST_CHANNEL_GPU_ECC_DBE'),
    61: _row('Internal micro-controller breakpoint/warning', 'firmware fault; reset the GPU, update the driver', False,
             'PMU_BREAKPOINT'),
    62: _row('Internal micro-controller halt', 'firmware fault; reset the GPU', True, 'PMU_HALT_ERROR'),
    63: _row('ECC page retirement or row remapping recording event', 'memory cells retired; reset the GPU to apply',
             False, 'INFOROM_PAGE_RETIREMENT_EVENT'),
    64: _row('ECC page retirement or row remapper recording failure', 'memory fault; RMA the GPU', True,
             'INFOROM_PAGE_RETIREMENT_FAILURE'),
    74: _row('NVLink error', 'NVLink fault: reseat the GPU/baseboard, check the NVSwitch tray', True, 'NVLINK_ERROR'),
    79: _row('GPU has fallen off the bus', 'PCIe, power or thermal fault: check power, riser, cooling', True,
             'ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS'),
    92: _row('High single-bit ECC error rate', 'degrading memory: watch, RMA if it persists', False,
             'EXCESSIVE_SBE_INTERRUPTS'),
    94: _row('Contained ECC error', 'uncorrectable error contained to one application: reset the GPU when idle', True,
             'ROBUST_CHANNEL_CONTAINED_ERROR'),
    95: _row('Uncontained ECC error', 'uncorrectable error: drain the node and reset the GPU', True,
             'ROBUST_CHANNEL_UNCONTAINED_ERROR'),
    119: _row('GSP RPC timeout', 'GSP firmware timeout: reset the GPU, update the driver', True, 'GSP_RPC_TIMEOUT'),
    120: _row('GSP error', 'GSP firmware fault: reset the GPU, update the driver', True, 'GSP_ERROR'),
    123: _row('SPI PMU RPC write failure', 'firmware fault: reset the GPU', False, 'SPI_PMU_RPC_WRITE_FAIL'),
}

# What health.py reads: number -> (meaning, cause), and the numbers whose GPU must not take work.
XID_MEANINGS = dict((number, (row['meaning'], row['cause'])) for number, row in XID_TABLE.items())
XID_CRITICAL = frozenset(number for number, row in XID_TABLE.items() if row['critical'])
