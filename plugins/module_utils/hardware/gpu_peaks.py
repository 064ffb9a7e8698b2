# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Published peak figures per NVIDIA GPU model, the yardstick of gpuops.dlserver.gpu_validate.

Keyed by PCI device id (as the probe reports it, ``pci_device_id``). Every row names the
datasheet it was taken from. Throughputs are DENSE tensor-core TFLOP/s (the datasheets print
sparse figures as twice these, marked with an asterisk); ``memory_gbps`` is the device memory
bandwidth in GB/s (10^9 bytes/s); ``nvlink_gbps`` the total bidirectional NVLink bandwidth per
GPU in GB/s (0: the model has no NVLink on this form factor; None: an optional bridge, not
judged); ``nvlinks`` the NVLink count each GPU should show up (None: not judged);
``pcie_gen``/``pcie_width`` the host link. ``bf16_tflops`` is None where the model has no
bfloat16 tensor cores (Volta): its matmul is then judged against ``fp16_tflops``.

A model missing here is "unknown": gpu_validate still checks health and measures, and reports
the figures without a verdict. These figures were copied from the datasheets by hand; none of
them has been measured by this collection on real hardware yet (README, support matrix).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

PEAKS = {
    0x2330: {
        'model': 'H100 SXM5 80GB',
        'source': 'NVIDIA H100 Tensor Core GPU datasheet (H100 SXM column)',
        'bf16_tflops': 989.4, 'fp16_tflops': 989.4, 'tf32_tflops': 494.7,
        'memory_gbps': 3350.0, 'pcie_gen': 5, 'pcie_width': 16, 'nvlink_gbps': 900.0, 'nvlinks': 18,
    },
    0x2331: {
        'model': 'H100 PCIe',
        'source': 'NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe column)',
        'bf16_tflops': 756.0, 'fp16_tflops': 756.0, 'tf32_tflops': 378.0,
        'memory_gbps': 2000.0, 'pcie_gen': 5, 'pcie_width': 16, 'nvlink_gbps': None, 'nvlinks': None,
    },
    0x20b2: {
        'model': 'A100 SXM4 80GB',
        'source': 'NVIDIA A100 Tensor Core GPU datasheet (A100 80GB SXM column)',
        'bf16_tflops': 312.0, 'fp16_tflops': 312.0, 'tf32_tflops': 156.0,
        'memory_gbps': 2039.0, 'pcie_gen': 4, 'pcie_width': 16, 'nvlink_gbps': 600.0, 'nvlinks': 12,
    },
    0x20b5: {
        'model': 'A100 PCIe 80GB',
        'source': 'NVIDIA A100 Tensor Core GPU datasheet (A100 80GB PCIe column)',
        'bf16_tflops': 312.0, 'fp16_tflops': 312.0, 'tf32_tflops': 156.0,
        'memory_gbps': 1935.0, 'pcie_gen': 4, 'pcie_width': 16, 'nvlink_gbps': None, 'nvlinks': None,
    },
    0x1db6: {
        'model': 'V100 PCIe 32GB',
        'source': 'NVIDIA Tesla V100 datasheet (V100 PCIe column; no bfloat16 on Volta)',
        'bf16_tflops': None, 'fp16_tflops': 112.0, 'tf32_tflops': None,
        'memory_gbps': 900.0, 'pcie_gen': 3, 'pcie_width': 16, 'nvlink_gbps': 0.0, 'nvlinks': None,
    },
    0x2684: {
        'model': 'GeForce RTX 4090',
        'source': 'NVIDIA Ada GPU Architecture whitepaper, appendix (RTX 4090: FP16/BF16 tensor with FP32 '
                  'accumulate, dense; TF32 dense)',
        'bf16_tflops': 165.2, 'fp16_tflops': 165.2, 'tf32_tflops': 82.6,
        'memory_gbps': 1008.0, 'pcie_gen': 4, 'pcie_width': 16, 'nvlink_gbps': 0.0, 'nvlinks': 0,
    },
}

KEYS = ('bf16_tflops', 'fp16_tflops', 'tf32_tflops', 'memory_gbps', 'pcie_gen', 'pcie_width', 'nvlink_gbps',
        'nvlinks')

# Per-direction host<->device peak of one x16 link, GB/s, by PCIe generation (the transfer rate
# times the 128b/130b encoding of Gen3+ times 16 lanes / 8 bits).
PCIE_X16_GBPS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}


def _device_int(device_id):
    if isinstance(device_id, int) and not isinstance(device_id, bool):
        return device_id
    try:
        return int(str(device_id), 16)
    except (TypeError, ValueError):
        return None


def peak_for(device_id):
    """The peak row of a PCI device id (``"0x2330"`` or int), with ``device_id``; None when unknown."""
    key = _device_int(device_id)
    row = PEAKS.get(key) if key is not None else None
    if row is None:
        return None
    out = dict(row)
    out['device_id'] = '0x%04x' % key
    return out


def pcie_peak_gbps(gen, width):
    """Per-direction peak of a PCIe link of ``gen`` and ``width`` lanes, GB/s; None when unknown."""
    per_x16 = PCIE_X16_GBPS.get(gen)
    if per_x16 is None or not width:
        return None
    return round(per_x16 * width / 16.0, 2)
