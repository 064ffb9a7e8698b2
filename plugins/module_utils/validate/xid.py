# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The XID meanings gpuops.dlserver.gpu_validate reports (validate/health.py reads the kernel log):
the XIDs a fleet meets, each with its meaning, the likely cause, NVIDIA's recovery action for it
and where the row was checked.

Sources: NVIDIA's XID catalogue (``CATALOGUE``, "Xid Catalog Reference", Ampere and newer) for the
meanings and the column "Resolution Bucket (Immediate Action)" (``action``), and the driver's own
list of XID numbers, ``nverror.h`` of NVIDIA's open GPU kernel modules (``NVERROR``), for the
number of each: ``nverror`` names the row's symbol there. A row that could not be confirmed says
what is missing in ``unconfirmed`` (None: confirmed). Any other number is reported as "see NVIDIA's
XID catalogue". Every row carries ``source`` and ``read`` (the date it was read) as data. On
2026-12-07 the catalogue page came back here only as excerpts of its first rows (1-13); the actions
of the later rows were read from two independent public copies of its table, which agree on every
row used here.

What the health check does with an XID follows from the catalogue's immediate action
(``ACTION_VERDICT``): a GPU reset or a node reboot fails the node naming that action; the rest warn.
XID 154 carries the driver's own verdict (Ampere and newer): the catalogue says it "summarises the
recovery action required for other Xids", printed as ``GPU recovery action changed from 0x0 (None)
to 0x2 (Node Reboot Required)``; ``recovery_action`` reads that line and the node fails with what
the driver asks for.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

CATALOGUE = 'https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html'
NVERROR = 'https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/src/common/sdk/nvidia/inc/nverror.h'
# NVML's enum of the driver's recovery action (the codes XID 154 prints in hex).
NVML_RECOVERY = ('https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/error-recovery-and-response-flags.html; '
                 'nvmlDeviceGpuRecoveryAction_t (cuda.bindings.nvml.DeviceGpuRecoveryAction)')
READ = '2026-12-07'

# The catalogue's "Resolution Bucket (Immediate Action)" -> what gpu_validate does with the XID:
# reset / reboot fail the node (the GPU must not take work until it is handled); driver: XID 154,
# the verdict is in the line; application / none / unknown warn. The two WORKFLOW_ buckets of 48
# and 74 read "A GPU reset or node reboot is needed to clear this error" in their rows.
ACTION_VERDICT = {
    'RESET_GPU': 'reset',
    'WORKFLOW_XID_48': 'reset',
    'WORKFLOW_NVLINK_ERR': 'reset',
    'RESTART_BM': 'reboot',
    'RESTART_VM': 'reboot',
    'XID_154': 'driver',
    'RESTART_APP': 'application',
    'WORKFLOW_XID_45': 'application',
    'IGNORE': 'none',
    None: 'unknown',
}
FAILING = ('reset', 'reboot')
# What each verdict asks of the operator (health.py's reasons).
VERDICT_TEXT = {
    'reset': 'the GPU needs a reset: drain the node, then nvidia-smi -r (or reboot)',
    'reboot': 'the node needs a reboot: drain it and reboot',
    'drain': 'peer-to-peer traffic must be drained (stop the GPU jobs); the driver then states the next action',
    'domain': 'the IMEX domain needs recovery (not this GPU alone)',
    'none': 'no recovery action needed',
    'application': 'usually the application\'s: restart the job; the GPU keeps working',
    'unknown': "no recovery action known: see NVIDIA's XID catalogue",
}


def _row(meaning, cause, action, nverror, unconfirmed=None):
    verdict = ACTION_VERDICT[action]
    return {'meaning': meaning, 'cause': cause, 'action': action, 'verdict': verdict,
            'critical': verdict in FAILING or verdict == 'driver', 'nverror': nverror,
            'unconfirmed': unconfirmed, 'source': CATALOGUE, 'read': READ}


_NOT_IN_NVERROR = ('the symbol is the catalogue\'s Mnemonic: nverror.h as stored (open-gpu-kernel-modules main) '
                   'ends at 125 and does not define it')
_NO_CATALOGUE_ROW = ('no row for it among the catalogue\'s Ampere-and-newer rows that were read: its recovery '
                     'action is unknown, so it warns')

XID_TABLE = {
    13: _row('Graphics engine exception', 'application fault or driver bug; check the job first', 'RESTART_APP',
             'ROBUST_CHANNEL_GR_EXCEPTION'),
    31: _row('GPU memory page fault', 'application fault (illegal address) or driver bug', 'RESTART_APP',
             'ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT'),
    32: _row('Invalid or corrupted push buffer stream', 'driver or PCIe fault', 'RESTART_APP',
             'ROBUST_CHANNEL_PBDMA_ERROR'),
    38: _row('Driver firmware error', 'driver firmware fault; update the driver', 'IGNORE', None,
             'XID 38 is not defined in nverror.h (its numbers skip from 36 to 39); the catalogue lists it as '
             'ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT, "Driver firmware error"'),
    43: _row('GPU stopped processing', 'application fault after a previous error', 'IGNORE',
             'ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR'),
    45: _row('Preemptive cleanup, due to previous errors', 'follows another error; look at the XID before it',
             'WORKFLOW_XID_45', 'ROBUST_CHANNEL_PREEMPTIVE_REMOVAL'),
    46: _row('GPU stopped processing', 'GPU timeout: reset the GPU', 'RESET_GPU', None,
             'ROBUST_CHANNEL_GPU_TIMEOUT_ERROR: ' + _NOT_IN_NVERROR),
    48: _row('Double-bit ECC error', 'uncorrectable memory error: drain the node, reset the GPU, RMA if it repeats',
             'WORKFLOW_XID_48', 'ROBUST_CHANNEL_GPU_ECC_DBE'),
    61: _row('Internal micro-controller breakpoint/warning', 'firmware fault; reset the GPU, update the driver', None,
             'PMU_BREAKPOINT', None),
    62: _row('Internal micro-controller halt', 'firmware fault; reset the GPU', 'RESET_GPU', 'PMU_HALT_ERROR'),
    63: _row('ECC page retirement or row remapping recording event', 'memory cells retired; reset the GPU to apply',
             'IGNORE', 'INFOROM_PAGE_RETIREMENT_EVENT'),
    64: _row('ECC page retirement or row remapper recording failure', 'memory fault; RMA the GPU', 'RESET_GPU',
             'INFOROM_PAGE_RETIREMENT_FAILURE'),
    74: _row('NVLink error', 'NVLink fault: reseat the GPU/baseboard, check the NVSwitch tray',
             'WORKFLOW_NVLINK_ERR', 'NVLINK_ERROR'),
    79: _row('GPU has fallen off the bus', 'PCIe, power or thermal fault: check power, riser, cooling', 'RESTART_BM',
             'ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS'),
    92: _row('High single-bit ECC error rate', 'degrading memory: watch, RMA if it persists', 'IGNORE',
             'EXCESSIVE_SBE_INTERRUPTS'),
    94: _row('Contained ECC error', 'uncorrectable error contained to one application: restart it, reset the GPU '
             'when convenient', 'RESTART_APP', 'ROBUST_CHANNEL_CONTAINED_ERROR'),
    95: _row('Uncontained ECC error', 'uncorrectable error: drain the node and reset the GPU', 'RESET_GPU',
             'ROBUST_CHANNEL_UNCONTAINED_ERROR'),
    109: _row('Context switch timeout', 'the GPU did not switch contexts in time: reset the GPU', 'RESET_GPU', None,
              'ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR: ' + _NOT_IN_NVERROR),
    110: _row('Security fault', 'security engine fault: reset the GPU', 'RESET_GPU', 'SEC_FAULT_ERROR'),
    119: _row('GSP RPC timeout', 'GSP firmware timeout: reset the GPU, update the driver', 'RESET_GPU',
              'GSP_RPC_TIMEOUT'),
    120: _row('GSP error', 'GSP firmware fault: reset the GPU, update the driver', 'RESET_GPU', 'GSP_ERROR'),
    123: _row('SPI PMU RPC write failure', 'firmware fault: reset the GPU', None, 'SPI_PMU_RPC_WRITE_FAIL'),
    136: _row('Link training failure', 'NVLink training failed: reset the GPU', 'RESET_GPU', None,
              'ALI_TRAINING_FAIL: ' + _NOT_IN_NVERROR),
    140: _row('ECC unrecovered error', 'uncorrectable memory error the driver could not retire or remap: reset the '
              'GPU, contact the vendor if it repeats', 'RESET_GPU', None,
              'UNRECOVERABLE_ECC_ERROR_ESCAPE: ' + _NOT_IN_NVERROR),
    143: _row('GPU initialization error', 'the GPU failed to initialise: reset the GPU', 'RESET_GPU', None,
              'GPU_INIT_ERROR: ' + _NOT_IN_NVERROR),
    151: _row('Key rotation error', 'confidential-computing key rotation failed: restart the (virtual) machine',
              'RESTART_VM', None, 'ROBUST_CHANNEL_KEY_ROTATION_ERROR: ' + _NOT_IN_NVERROR),
    154: _row('GPU recovery action changed', 'the driver states the recovery the GPU needs', 'XID_154', None,
              'GPU_RECOVERY_ACTION_CHANGED: ' + _NOT_IN_NVERROR),
    155: _row('NVLink software-defined error', 'NVLink fault: reset the GPU', 'RESET_GPU', None,
              'NVLINK_SW_DEFINED_ERROR: ' + _NOT_IN_NVERROR),
    156: _row('Resource retirement event', 'resources were retired: reset the GPU to apply', 'RESET_GPU', None,
              'RESOURCE_RETIREMENT_EVENT: ' + _NOT_IN_NVERROR),
    158: _row('GPU fatal timeout', 'fatal GPU timeout: reset the GPU', 'RESET_GPU', None,
              'GPU_FATAL_TIMEOUT: ' + _NOT_IN_NVERROR),
}
for _number in (61, 123):
    XID_TABLE[_number]['unconfirmed'] = _NO_CATALOGUE_ROW

# What health.py reads: number -> (meaning, cause), and the numbers whose GPU must not take work.
XID_MEANINGS = dict((number, (row['meaning'], row['cause'])) for number, row in XID_TABLE.items())
XID_CRITICAL = frozenset(number for number, row in XID_TABLE.items() if row['critical'])
# The XIDs that page in Prometheus (roles/prometheus/files/rules/gpu.rules.yml, GPUXidErrors; a unit
# test keeps the rule in step): a reset, a reboot, or the driver's own verdict (the gauge holds only
# the number, so a 154 pages and the kernel log says which action).
XID_PAGE = tuple(sorted(XID_CRITICAL))

# The driver's recovery actions by the code XID 154 prints (NVML_RECOVERY): what each asks of the
# node. Reset, reboot and drain keep work off the GPU (fail); 5 (IMEX domain) is the domain's, not
# this GPU's, and 0 (None) asks nothing: they warn. A code NVML does not list fails (unknown).
RECOVERY_FAILING = ('reset', 'reboot', 'drain', 'unknown')
RECOVERY_CODES = dict(
    (code, {'verdict': verdict, 'label': label, 'source': NVML_RECOVERY, 'read': READ})
    for code, verdict, label in (
        (0, 'none', 'None'),
        (1, 'reset', 'GPU Reset Required'),
        (2, 'reboot', 'Node Reboot Required'),
        (3, 'drain', 'Drain P2P'),
        (4, 'reset', 'Drain and Reset'),
        (5, 'domain', 'Recover IMEX Domain'),
        (6, 'reset', 'Bus Reset'),
        (7, 'reboot', 'System Reboot'),
    ))
_RECOVERY_RE = re.compile(r'GPU recovery action changed from (0x[0-9a-fA-F]{1,8}) \(([^()\n]{0,60})\) '
                          r'to (0x[0-9a-fA-F]{1,8}) \(([^()\n]{0,60})\)')


def recovery_action(text):
    """The driver's verdict in the text of an XID 154 line: {code, label, verdict}, or None.

    ``verdict`` (from the code, NVML's enum): ``reset``, ``reboot``, ``drain``, ``domain``, ``none``
    or ``unknown`` (a code NVML does not list); ``label`` is what the driver printed, kept as is
    (drivers print "GPU Reset Required", "Node Reboot Required"; the catalogue names these).
    """
    match = _RECOVERY_RE.search(text or '')
    if not match:
        return None
    code = int(match.group(3), 16)
    verdict = RECOVERY_CODES.get(code, {'verdict': 'unknown'})['verdict']
    return {'code': code, 'label': match.group(4).strip(), 'verdict': verdict}


def catalogue_rows():
    """The table as rows of data (number, symbol, action, verdict, source, read) for docs and tests."""
    return [dict(XID_TABLE[n], xid=n) for n in sorted(XID_TABLE)]
