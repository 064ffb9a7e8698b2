# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The DCGM fields dcgm_exporter knows, one row each (``name``, Prometheus ``type``, ``help``) with
its ``source`` and the date it was ``read`` (``unconfirmed`` where the type and help are the
collection's own words), as plain data that tools/vendor_facts.py lists in docs/vendor-facts.md;
monitoring/dcgm.py builds ``FIELDS`` from ``FIELD_ROWS``.

What was read (2026-12-07): dcgm-exporter's counters file (NVIDIA/dcgm-exporter tag 4.5.3-4.8.2,
etc/default-counters.csv: each field's type and help as the exporter ships them, a line starting with
``#`` being listed but not collected by default) and DCGM's field header (NVIDIA/DCGM tag v4.6.0,
dcgmlib/dcgm_fields.h: every name is defined there, several as an alias of a newer name). Where the
counters file does not list a field, the header's comment says what it is and the type and help are
the collection's.

Pure data, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

READ = '2026-12-07'
COUNTERS_CSV = 'NVIDIA/dcgm-exporter 4.5.3-4.8.2 etc/default-counters.csv (https://github.com/NVIDIA/dcgm-exporter)'
FIELDS_H = 'NVIDIA/DCGM v4.6.0 dcgmlib/dcgm_fields.h (https://github.com/NVIDIA/DCGM)'
_OWN_WORDS = ('type and help are the collection\'s: the counters file of dcgm-exporter 4.5.3-4.8.2 does not list '
              'this field (its name and meaning are dcgm_fields.h\'s)')
_NVLINK_WORDS = ('the counters file does not list this field: the help follows its DCGM_FI_PROF_PCIE_TX_BYTES line with '
                 'dcgm_fields.h\'s statement that headers are included (the row said "not including protocol headers" '
                 'until 2026-12-07)')


def _csv(name, ftype, text, line, commented=False):
    """A field the exporter's counters file lists: its line quoted."""
    return {'name': name, 'type': ftype, 'help': text, 'read': READ,
            'source': '%s%s: "%s"; defined in %s' % (COUNTERS_CSV, ' (commented out there: not collected by default)'
                                                     if commented else '', line, FIELDS_H)}


def _header(name, ftype, text, quoted, unconfirmed=_OWN_WORDS):
    """A field only dcgm_fields.h describes: its comment and definition quoted."""
    return {'name': name, 'type': ftype, 'help': text, 'read': READ, 'source': '%s: "%s"' % (FIELDS_H, quoted),
            'unconfirmed': unconfirmed}


FIELD_ROWS = (
    # Clocks
    _csv(
        'DCGM_FI_DEV_SM_CLOCK', 'gauge',
        'SM clock frequency (in MHz).',
        'DCGM_FI_DEV_SM_CLOCK, gauge, SM clock frequency (in MHz).'),
    _csv(
        'DCGM_FI_DEV_MEM_CLOCK', 'gauge',
        'Memory clock frequency (in MHz).',
        'DCGM_FI_DEV_MEM_CLOCK, gauge, Memory clock frequency (in MHz).'),
    _header(
        'DCGM_FI_DEV_APP_SM_CLOCK', 'gauge',
        'SM application clock (in MHz).',
        'SM Application clocks (#define DCGM_FI_DEV_APP_SM_CLOCK 110)'),
    _header(
        'DCGM_FI_DEV_APP_MEM_CLOCK', 'gauge',
        'Memory application clock (in MHz).',
        'Memory Application clocks (#define DCGM_FI_DEV_APP_MEM_CLOCK 111)'),
    _header(
        'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS', 'gauge',
        'Current clock throttle reasons (bitmask).',
        'Deprecated: Use DCGM_FI_DEV_CLOCKS_EVENT_REASONS instead (#define DCGM_FI_DEV_CLOCK_THROTTLE_REASONS '
        'DCGM_FI_DEV_CLOCKS_EVENT_REASONS)'),
    _header(
        'DCGM_FI_DEV_CLOCKS_EVENT_REASONS', 'gauge',
        'Current clock event reasons (bitmask).',
        'Current clock event reasons (bitmask of DCGM_CLOCKS_EVENT_REASON_*) (#define DCGM_FI_DEV_CLOCKS_EVENT_REASONS '
        '112)'),
    # Temperature
    _csv(
        'DCGM_FI_DEV_MEMORY_TEMP', 'gauge',
        'Memory temperature (in C).',
        'DCGM_FI_DEV_MEMORY_TEMP, gauge, Memory temperature (in C).'),
    _csv(
        'DCGM_FI_DEV_GPU_TEMP', 'gauge',
        'GPU temperature (in C).',
        'DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).'),
    _header(
        'DCGM_FI_DEV_SLOWDOWN_TEMP', 'gauge',
        'Slowdown temperature threshold (in C).',
        'Slowdown temperature for the device (#define DCGM_FI_DEV_GPU_TEMP_SLOWDOWN_CELSIUS 158; #define '
        'DCGM_FI_DEV_SLOWDOWN_TEMP DCGM_FI_DEV_GPU_TEMP_SLOWDOWN_CELSIUS)'),
    _header(
        'DCGM_FI_DEV_SHUTDOWN_TEMP', 'gauge',
        'Shutdown temperature threshold (in C).',
        'Shutdown temperature for the device (#define DCGM_FI_DEV_GPU_TEMP_SHUTDOWN_CELSIUS 159; #define '
        'DCGM_FI_DEV_SHUTDOWN_TEMP DCGM_FI_DEV_GPU_TEMP_SHUTDOWN_CELSIUS)'),
    _header(
        'DCGM_FI_DEV_FAN_SPEED', 'gauge',
        'Fan speed (in 0-100%).',
        'Fan speed for the device in percent 0-100 (#define DCGM_FI_DEV_FAN_SPEED 191)'),
    # Power
    _csv(
        'DCGM_FI_DEV_POWER_USAGE', 'gauge',
        'Power draw (in W).',
        'DCGM_FI_DEV_POWER_USAGE, gauge, Power draw (in W).'),
    _header(
        'DCGM_FI_DEV_POWER_MGMT_LIMIT', 'gauge',
        'Power management limit (in W).',
        'Current Power limit for the device (#define DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS 160; #define '
        'DCGM_FI_DEV_POWER_MGMT_LIMIT DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS)'),
    _csv(
        'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', 'counter',
        'Total energy consumption since boot (in mJ).',
        'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, counter, Total energy consumption since boot (in mJ).'),
    _header(
        'DCGM_FI_DEV_PSTATE', 'gauge',
        'Performance state (P-State) 0-15.',
        'Performance state (P-State) 0-15. 0=highest (#define DCGM_FI_DEV_GPU_PSTATE 190; #define DCGM_FI_DEV_PSTATE '
        'DCGM_FI_DEV_GPU_PSTATE)'),
    # PCIe
    _header(
        'DCGM_FI_DEV_PCIE_TX_THROUGHPUT', 'counter',
        'Total number of bytes transmitted through PCIe TX (in KB) via NVML.',
        'PCIe Tx utilization information Deprecated: Use DCGM_FI_PROF_PCIE_TX_BYTES instead. (#define '
        'DCGM_FI_DEV_PCIE_TX_THROUGHPUT 200)'),
    _header(
        'DCGM_FI_DEV_PCIE_RX_THROUGHPUT', 'counter',
        'Total number of bytes received through PCIe RX (in KB) via NVML.',
        'PCIe Rx utilization information Deprecated: Use DCGM_FI_PROF_PCIE_RX_BYTES instead. (#define '
        'DCGM_FI_DEV_PCIE_RX_THROUGHPUT 201)'),
    _csv(
        'DCGM_FI_DEV_PCIE_REPLAY_COUNTER', 'counter',
        'Total number of PCIe retries.',
        'DCGM_FI_DEV_PCIE_REPLAY_COUNTER, counter, Total number of PCIe retries.'),
    _header(
        'DCGM_FI_DEV_PCIE_LINK_GEN', 'gauge',
        'PCIe current link generation.',
        'PCIe Current Link Generation (#define DCGM_FI_DEV_PCIE_LINK_GEN 237)'),
    _header(
        'DCGM_FI_DEV_PCIE_LINK_WIDTH', 'gauge',
        'PCIe current link width.',
        'PCIe Current Link Width (#define DCGM_FI_DEV_PCIE_LINK_WIDTH 238)'),
    # Utilisation
    _csv(
        'DCGM_FI_DEV_GPU_UTIL', 'gauge',
        'GPU utilization (in %).',
        'DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).'),
    _csv(
        'DCGM_FI_DEV_MEM_COPY_UTIL', 'gauge',
        'Memory utilization (in %).',
        'DCGM_FI_DEV_MEM_COPY_UTIL, gauge, Memory utilization (in %).'),
    _csv(
        'DCGM_FI_DEV_ENC_UTIL', 'gauge',
        'Encoder utilization (in %).',
        'DCGM_FI_DEV_ENC_UTIL, gauge, Encoder utilization (in %).'),
    _csv(
        'DCGM_FI_DEV_DEC_UTIL', 'gauge',
        'Decoder utilization (in %).',
        'DCGM_FI_DEV_DEC_UTIL , gauge, Decoder utilization (in %).'),
    # Errors and violations
    _csv(
        'DCGM_FI_DEV_XID_ERRORS', 'gauge',
        'Value of the last XID error encountered.',
        'DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error encountered.'),
    _csv(
        'DCGM_FI_DEV_POWER_VIOLATION', 'counter',
        'Throttling duration due to power constraints (in ns).',
        '# DCGM_FI_DEV_POWER_VIOLATION, counter, Throttling duration due to power constraints (in ns).', commented=True),
    _csv(
        'DCGM_FI_DEV_THERMAL_VIOLATION', 'counter',
        'Throttling duration due to thermal constraints (in ns).',
        '# DCGM_FI_DEV_THERMAL_VIOLATION, counter, Throttling duration due to thermal constraints (in ns).', commented=True),
    _csv(
        'DCGM_FI_DEV_SYNC_BOOST_VIOLATION', 'counter',
        'Throttling duration due to sync-boost constraints (in ns).',
        '# DCGM_FI_DEV_SYNC_BOOST_VIOLATION, counter, Throttling duration due to sync-boost constraints (in ns).', commented=True),
    _csv(
        'DCGM_FI_DEV_BOARD_LIMIT_VIOLATION', 'counter',
        'Throttling duration due to board limit constraints (in ns).',
        '# DCGM_FI_DEV_BOARD_LIMIT_VIOLATION, counter, Throttling duration due to board limit constraints (in ns).', commented=True),
    _csv(
        'DCGM_FI_DEV_LOW_UTIL_VIOLATION', 'counter',
        'Throttling duration due to low utilization (in ns).',
        '# DCGM_FI_DEV_LOW_UTIL_VIOLATION, counter, Throttling duration due to low utilization (in ns).', commented=True),
    _csv(
        'DCGM_FI_DEV_RELIABILITY_VIOLATION', 'counter',
        'Throttling duration due to reliability constraints (in ns).',
        '# DCGM_FI_DEV_RELIABILITY_VIOLATION, counter, Throttling duration due to reliability constraints (in ns).', commented=True),
    # Memory
    _header(
        'DCGM_FI_DEV_FB_TOTAL', 'gauge',
        'Framebuffer memory total (in MiB).',
        'Total Frame Buffer of the GPU in MB (#define DCGM_FI_DEV_FB_TOTAL 250)'),
    _csv(
        'DCGM_FI_DEV_FB_FREE', 'gauge',
        'Framebuffer memory free (in MiB).',
        'DCGM_FI_DEV_FB_FREE, gauge, Framebuffer memory free (in MiB).'),
    _csv(
        'DCGM_FI_DEV_FB_USED', 'gauge',
        'Framebuffer memory used (in MiB).',
        'DCGM_FI_DEV_FB_USED, gauge, Framebuffer memory used (in MiB).'),
    _csv(
        'DCGM_FI_DEV_FB_RESERVED', 'gauge',
        'Framebuffer memory reserved (in MiB).',
        'DCGM_FI_DEV_FB_RESERVED, gauge, Framebuffer memory reserved (in MiB).'),
    # ECC
    _csv(
        'DCGM_FI_DEV_ECC_SBE_VOL_TOTAL', 'counter',
        'Total number of single-bit volatile ECC errors.',
        '# DCGM_FI_DEV_ECC_SBE_VOL_TOTAL, counter, Total number of single-bit volatile ECC errors.', commented=True),
    _csv(
        'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL', 'counter',
        'Total number of double-bit volatile ECC errors.',
        '# DCGM_FI_DEV_ECC_DBE_VOL_TOTAL, counter, Total number of double-bit volatile ECC errors.', commented=True),
    _csv(
        'DCGM_FI_DEV_ECC_SBE_AGG_TOTAL', 'counter',
        'Total number of single-bit persistent ECC errors.',
        '# DCGM_FI_DEV_ECC_SBE_AGG_TOTAL, counter, Total number of single-bit persistent ECC errors.', commented=True),
    _csv(
        'DCGM_FI_DEV_ECC_DBE_AGG_TOTAL', 'counter',
        'Total number of double-bit persistent ECC errors.',
        '# DCGM_FI_DEV_ECC_DBE_AGG_TOTAL, counter, Total number of double-bit persistent ECC errors.', commented=True),
    # Retired pages
    _csv(
        'DCGM_FI_DEV_RETIRED_SBE', 'counter',
        'Total number of retired pages due to single-bit errors.',
        '# DCGM_FI_DEV_RETIRED_SBE, counter, Total number of retired pages due to single-bit errors.', commented=True),
    _csv(
        'DCGM_FI_DEV_RETIRED_DBE', 'counter',
        'Total number of retired pages due to double-bit errors.',
        '# DCGM_FI_DEV_RETIRED_DBE, counter, Total number of retired pages due to double-bit errors.', commented=True),
    _csv(
        'DCGM_FI_DEV_RETIRED_PENDING', 'counter',
        'Total number of pages pending retirement.',
        '# DCGM_FI_DEV_RETIRED_PENDING, counter, Total number of pages pending retirement.', commented=True),
    # Remapped rows
    _csv(
        'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS', 'counter',
        'Number of remapped rows for uncorrectable errors',
        'DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS, counter, Number of remapped rows for uncorrectable errors'),
    _csv(
        'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS', 'counter',
        'Number of remapped rows for correctable errors',
        'DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS, counter, Number of remapped rows for correctable errors'),
    _csv(
        'DCGM_FI_DEV_ROW_REMAP_FAILURE', 'gauge',
        'Whether remapping of rows has failed',
        'DCGM_FI_DEV_ROW_REMAP_FAILURE, gauge, Whether remapping of rows has failed'),
    _header(
        'DCGM_FI_DEV_ROW_REMAP_PENDING', 'gauge',
        'Whether remapping of rows is pending (a GPU reset is needed).',
        'Whether remapping of rows is pending (#define DCGM_FI_DEV_ROW_REMAP_PENDING 396)'),
    # NVLink
    _csv(
        'DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL', 'counter',
        'Total number of NVLink flow-control CRC errors.',
        '# DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL, counter, Total number of NVLink flow-control CRC errors.', commented=True),
    _csv(
        'DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL', 'counter',
        'Total number of NVLink data CRC errors.',
        '# DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL, counter, Total number of NVLink data CRC errors.', commented=True),
    _csv(
        'DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL', 'counter',
        'Total number of NVLink retries.',
        '# DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL, counter, Total number of NVLink retries.', commented=True),
    _csv(
        'DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL', 'counter',
        'Total number of NVLink recovery errors.',
        '# DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL, counter, Total number of NVLink recovery errors.', commented=True),
    _csv(
        'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL', 'counter',
        'Total number of NVLink bandwidth counters for all lanes.',
        'DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL, counter, Total number of NVLink bandwidth counters for all lanes.'),
    # Virtualisation, MIG, identity
    _csv(
        'DCGM_FI_DEV_VGPU_LICENSE_STATUS', 'gauge',
        'vGPU License status',
        'DCGM_FI_DEV_VGPU_LICENSE_STATUS, gauge, vGPU License status'),
    _header(
        'DCGM_FI_DEV_MIG_MODE', 'gauge',
        'MIG mode of the GPU (1 enabled and 0 disabled).',
        'MIG mode for the device Boolean: 0 is disabled, 1 is enabled (#define DCGM_FI_DEV_MIG_MODE 67)'),
    _header(
        'DCGM_FI_DEV_MIG_MAX_SLICES', 'gauge',
        'Maximum number of MIG slices of the GPU.',
        'The maximum number of MIG slices supported by this GPU (#define DCGM_FI_DEV_MIG_MAX_SLICES 69)'),
    _header(
        'DCGM_FI_DEV_COUNT', 'gauge',
        'Number of devices on the node.',
        'Number of Devices on the node (#define DCGM_FI_SYSTEM_GPU_QUANTITY 4; #define DCGM_FI_DEV_COUNT '
        'DCGM_FI_SYSTEM_GPU_QUANTITY)'),
    _csv(
        'DCGM_FI_DRIVER_VERSION', 'label',
        'Driver Version',
        'DCGM_FI_DRIVER_VERSION, label, Driver Version'),
    # Profiling (DCP): data-centre and workstation GPUs of Volta and newer
    _csv(
        'DCGM_FI_PROF_GR_ENGINE_ACTIVE', 'gauge',
        'Ratio of time the graphics engine is active.',
        'DCGM_FI_PROF_GR_ENGINE_ACTIVE, gauge, Ratio of time the graphics engine is active.'),
    _csv(
        'DCGM_FI_PROF_SM_ACTIVE', 'gauge',
        'The ratio of cycles an SM has at least 1 warp assigned.',
        '# DCGM_FI_PROF_SM_ACTIVE, gauge, The ratio of cycles an SM has at least 1 warp assigned.', commented=True),
    _csv(
        'DCGM_FI_PROF_SM_OCCUPANCY', 'gauge',
        'The ratio of number of warps resident on an SM.',
        '# DCGM_FI_PROF_SM_OCCUPANCY, gauge, The ratio of number of warps resident on an SM.', commented=True),
    _csv(
        'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE', 'gauge',
        'Ratio of cycles the tensor (HMMA) pipe is active.',
        'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, gauge, Ratio of cycles the tensor (HMMA) pipe is active.'),
    _header(
        'DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE', 'gauge',
        'Ratio of cycles the tensor HMMA pipe is active.',
        'The ratio of cycles the tensor (HMMA) pipe is active (off the peak sustained elapsed cycles) (#define '
        'DCGM_FI_PROF_HMMA_UTIL_RATIO 1014; #define DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE DCGM_FI_PROF_HMMA_UTIL_RATIO)'),
    _csv(
        'DCGM_FI_PROF_DRAM_ACTIVE', 'gauge',
        'Ratio of cycles the device memory interface is active sending or receiving data.',
        'DCGM_FI_PROF_DRAM_ACTIVE, gauge, Ratio of cycles the device memory interface is active sending or receiving '
        'data.'),
    _csv(
        'DCGM_FI_PROF_PIPE_FP64_ACTIVE', 'gauge',
        'Ratio of cycles the fp64 pipes are active.',
        '# DCGM_FI_PROF_PIPE_FP64_ACTIVE, gauge, Ratio of cycles the fp64 pipes are active.', commented=True),
    _csv(
        'DCGM_FI_PROF_PIPE_FP32_ACTIVE', 'gauge',
        'Ratio of cycles the fp32 pipes are active.',
        '# DCGM_FI_PROF_PIPE_FP32_ACTIVE, gauge, Ratio of cycles the fp32 pipes are active.', commented=True),
    _csv(
        'DCGM_FI_PROF_PIPE_FP16_ACTIVE', 'gauge',
        'Ratio of cycles the fp16 pipes are active.',
        '# DCGM_FI_PROF_PIPE_FP16_ACTIVE, gauge, Ratio of cycles the fp16 pipes are active.', commented=True),
    _csv(
        'DCGM_FI_PROF_PCIE_TX_BYTES', 'gauge',
        'The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes '
        'per second.',
        'DCGM_FI_PROF_PCIE_TX_BYTES, gauge, The rate of data transmitted over the PCIe bus - including both protocol '
        'headers and data payloads - in bytes per second.'),
    _csv(
        'DCGM_FI_PROF_PCIE_RX_BYTES', 'gauge',
        'The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per '
        'second.',
        'DCGM_FI_PROF_PCIE_RX_BYTES, gauge, The rate of data received over the PCIe bus - including both protocol '
        'headers and data payloads - in bytes per second.'),
    _header(
        'DCGM_FI_PROF_NVLINK_TX_BYTES', 'gauge',
        'The rate of data transmitted over NVLink - including both protocol headers and data payloads - in bytes per '
        'second.',
        'The total number of bytes of active NvLink tx (transmit) data including both header and payload. Per-link '
        'fields are available below (#define DCGM_FI_PROF_NVLINK_TX_BYTES 1011)', unconfirmed=_NVLINK_WORDS),
    _header(
        'DCGM_FI_PROF_NVLINK_RX_BYTES', 'gauge',
        'The rate of data received over NVLink - including both protocol headers and data payloads - in bytes per second.',
        'The total number of bytes of active NvLink rx (read) data including both header and payload. Per-link fields '
        'are available below (#define DCGM_FI_PROF_NVLINK_RX_BYTES 1012)', unconfirmed=_NVLINK_WORDS),
)
