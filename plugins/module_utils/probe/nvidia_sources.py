# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVML and nvidia-smi words the probe decides by, one row each with its ``source`` and the date
it was ``read`` (``unconfirmed`` where a row could not be confirmed against NVIDIA's own text), as
plain data that tools/vendor_facts.py lists in docs/vendor-facts.md. probe/nvml.py,
probe/nvidia_smi.py and probe/nvidia_topo.py build their tables from these rows.

- NVML (``nvml.h``, NVML 13.3.29 as NVIDIA/go-nvml v0.13.3-0 carries it): ``NVLINK_VERSION_ROWS``
  (nvmlNvlinkVersion_t), ``THROTTLE_REASON_ROWS`` (the nvmlClocksEventReason bits),
  ``REMOTE_TYPE_ROWS`` (nvmlIntNvLinkDeviceType_t), ``TOPOLOGY_LEVEL_ROWS`` (nvmlGpuTopologyLevel_t,
  with the ``nvidia-smi topo -m`` code each level is reported as).
- nvidia-smi: ``QUERY_FIELD_ROWS`` (the ``--query-gpu`` fields asked), ``FIELD_FALLBACK_ROWS`` (what
  to ask when a driver refuses one), ``LINK_CODE_ROWS`` (the codes of the ``topo -m`` matrix).
  NVIDIA prints the ``--query-gpu`` list only with ``nvidia-smi --help-query-gpu`` on a host with
  the driver; no NVIDIA page with it was found and no GPU host was at hand, so those rows quote a
  published copy of that output and say so.

Quotes of nvml.h and of published output collapse runs of blanks into one.

Pure data, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

READ = '2026-12-07'
NVML_H = ('nvml.h of NVML 13.3.29 (NVIDIA/go-nvml v0.13.3-0, gen/nvml/nvml.h, '
          'https://github.com/NVIDIA/go-nvml/blob/v0.13.3-0/gen/nvml/nvml.h)')


def _row(quoted, source=NVML_H, unconfirmed=None, after='', **values):
    row = dict(values, read=READ, source='%s: "%s"%s' % (source, quoted, after))
    if unconfirmed:
        row['unconfirmed'] = unconfirmed
    return row


NVLINK_VERSION_ROWS = tuple(_row('NVML_NVLINK_VERSION_%s     = %d, //!< NVLink Version %s' % (v.replace('.', '_'), n, v),
                                 value=n, version=v)
                            for n, v in ((1, '1.0'), (2, '2.0'), (3, '2.2'), (4, '3.0'), (5, '3.1'), (6, '4.0'),
                                         (7, '5.0'), (8, '6.0')))

# The bits of nvmlClocksEventReasons, named by the NVML macro in snake case (nvmlClocksEventReasonGpuIdle ->
# gpu_idle); nvml.h spells the three hardware ones nvmlClocksThrottleReason... (the older prefix).
_SMI_FIELDS = ('; nvidia-smi --help-query-gpu (published copy, driver 535.129.03, public GitHub file, index id '
               '47337582899) names the field "clocks_event_reasons.%s"')
_NO_SMI_FIELD = ('nvidia-smi --help-query-gpu (the published copy read) has no clocks_event_reasons.display_clock_setting: '
                 'the name is the NVML macro\'s')
THROTTLE_REASON_ROWS = tuple(_row('#define %s 0x%016XLL' % (macro, bit), bit='0x%x' % bit, name=name,
                                  after='' if name == 'display_clock_setting' else _SMI_FIELDS % name,
                                  unconfirmed=_NO_SMI_FIELD if name == 'display_clock_setting' else None)
                             for bit, name, macro in (
    (0x1, 'gpu_idle', 'nvmlClocksEventReasonGpuIdle'),
    (0x2, 'applications_clocks_setting', 'nvmlClocksEventReasonApplicationsClocksSetting'),
    (0x4, 'sw_power_cap', 'nvmlClocksEventReasonSwPowerCap'),
    (0x8, 'hw_slowdown', 'nvmlClocksThrottleReasonHwSlowdown'),
    (0x10, 'sync_boost', 'nvmlClocksEventReasonSyncBoost'),
    (0x20, 'sw_thermal_slowdown', 'nvmlClocksEventReasonSwThermalSlowdown'),
    (0x40, 'hw_thermal_slowdown', 'nvmlClocksThrottleReasonHwThermalSlowdown'),
    (0x80, 'hw_power_brake_slowdown', 'nvmlClocksThrottleReasonHwPowerBrakeSlowdown'),
    (0x100, 'display_clock_setting', 'nvmlClocksEventReasonDisplayClockSetting'),
))

REMOTE_TYPE_ROWS = tuple(_row('NVML_NVLINK_DEVICE_TYPE_%s = 0x%02X' % (enum, value), value=value, remote=remote)
                         for value, enum, remote in ((0, 'GPU', 'gpu'), (1, 'IBMNPU', 'ibmnpu'), (2, 'SWITCH', 'switch')))

# The legend nvidia-smi topo -m prints (published output; public GitHub file, index id 47337582899, of 2024).
TOPO_LEGEND = 'nvidia-smi topo -m legend (published output, public GitHub file, index id 47337582899)'
_OLD_LEGEND = ('nvidia-smi topo -m legend of older drivers (published output, public GitHub file, index id '
               '23205746750)')
LINK_CODE_ROWS = tuple(_row(quoted, source=TOPO_LEGEND, code=code) for code, quoted in (
    ('X', 'X    = Self'),
    ('NV#', 'NV#  = Connection traversing a bonded set of # NVLinks'),
    ('PIX', 'PIX  = Connection traversing at most a single PCIe bridge'),
    ('PXB', 'PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)'),
    ('PHB', 'PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)'),
    ('NODE', 'NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node'),
    ('SYS', 'SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)'),
)) + (
    _row('SOC  = Connection traversing PCIe as well as the SMP link between CPU sockets(e.g. QPI)', source=_OLD_LEGEND,
         code='SOC'),
    _row('N/A', source='no legend entry: a cell nvidia-smi prints where it has no link to report', code='N/A',
         unconfirmed='no published topo -m matrix with an N/A link cell was read; the code is kept so that such a '
                     'cell parses instead of failing the probe'),
)


def _level(value, enum, comment, code, unconfirmed=None):
    legend = [row['source'] for row in LINK_CODE_ROWS if row['code'] == code][0]
    return _row('NVML_TOPOLOGY_%s = %d, // %s' % (enum, value, comment), level=value, nvml=enum, code=code,
                unconfirmed=unconfirmed, after='; ' + legend)


TOPOLOGY_LEVEL_ROWS = (
    _level(0, 'INTERNAL', 'e.g. Tesla K80', 'PIX',
           unconfirmed='the legend has no word for two GPUs on one board: PIX is the collection\'s choice (the '
                       'board\'s own PCIe switch is the single bridge between them)'),
    _level(10, 'SINGLE', 'all devices that only need traverse a single PCIe switch', 'PIX'),
    _level(20, 'MULTIPLE', 'all devices that need not traverse a host bridge', 'PXB'),
    _level(30, 'HOSTBRIDGE', 'all devices that are connected to the same host bridge', 'PHB'),
    _level(40, 'NODE', 'all devices that are connected to the same NUMA node but possibly multiple host bridges',
           'NODE'),
    _level(50, 'SYSTEM', 'all devices in the system', 'SYS'),
)

# nvidia-smi --help-query-gpu as published (a copy of its output in a public GitHub file, index id 47337582899; the
# same file's nvidia-smi -a shows driver 535.129.03).
HELP_QUERY_GPU = ('nvidia-smi --help-query-gpu output (published copy, driver 535.129.03, public GitHub file, index id '
                  '47337582899)')
_NO_NVIDIA_PAGE = ('not read in an NVIDIA publication: NVIDIA prints the list with nvidia-smi --help-query-gpu only, '
                   'and no GPU host was at hand to run it')
QUERY_FIELD_ROWS = tuple(_row(quoted, source=HELP_QUERY_GPU, unconfirmed=_NO_NVIDIA_PAGE, field=field)
                         for field, quoted in (
    ('pci.bus_id', '"pci.bus_id" or "gpu_bus_id" PCI bus id as "domain:bus:device.function", in hex.'),
    ('name', '"name" or "gpu_name" The official product name of the GPU.'),
    ('uuid', '"uuid" or "gpu_uuid" This value is the globally unique immutable alphanumeric identifier of the GPU.'),
    ('memory.total', '"memory.total" Total installed GPU memory.'),
    ('driver_version', '"driver_version" The version of the installed NVIDIA display driver.'),
    ('compute_cap', '"compute_cap" The CUDA Compute Capability, represented as Major DOT Minor.'),
    ('persistence_mode', '"persistence_mode" A flag that indicates whether persistence mode is enabled for the GPU.'),
    ('mig.mode.current', '"mig.mode.current" The MIG mode that the GPU is currently operating under.'),
    ('power.limit', '"power.limit" The software power limit in watts.'),
    ('ecc.mode.current', '"ecc.mode.current" The ECC mode that the GPU is currently operating under.'),
))

# The second, separate query of each GPU's maximum clocks (a driver that refuses it leaves the main
# query's answer as it was); the same published copy of --help-query-gpu.
MAX_CLOCK_FIELD_ROWS = tuple(_row(quoted, source=HELP_QUERY_GPU, unconfirmed=_NO_NVIDIA_PAGE, field=field)
                             for field, quoted in (
    ('pci.bus_id', '"pci.bus_id" or "gpu_bus_id" PCI bus id as "domain:bus:device.function", in hex.'),
    ('clocks.max.graphics', '"clocks.max.graphics" or "clocks.max.gr" Maximum frequency of graphics (shader) clock.'),
    ('clocks.max.memory', '"clocks.max.memory" or "clocks.max.mem" Maximum frequency of memory clock.'),
))

# What to ask instead when a driver refuses a field (instead None: leave it out).
FIELD_FALLBACK_ROWS = (
    _row('"compute_cap" The CUDA Compute Capability, represented as Major DOT Minor.', source=HELP_QUERY_GPU,
         unconfirmed='the first driver whose nvidia-smi knows compute_cap was not found in an NVIDIA publication: an '
                     'older one refuses the field and the probe asks again without it',
         field='compute_cap', instead=None),
    _row('Modified version information: deprecated Driver Version and CUDA Version in favor of KMD Version and CUDA UMD '
         'Version respectively', source='NVIDIA nvidia-smi documentation (https://docs.nvidia.com/deploy/nvidia-smi/'
         'index.html), as PrismML-Eng/Bonsai-demo pull request 122 quotes it', field='driver_version',
         instead='kmd_version',
         unconfirmed='the field name kmd_version is inferred from the renamed label (KMD Version); the NVIDIA page '
                     'itself and a --help-query-gpu of R610 were not read'),
)
