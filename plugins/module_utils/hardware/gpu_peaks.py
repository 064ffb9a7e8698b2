# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Published peak figures per NVIDIA GPU model, the yardstick of gpuops.dlserver.gpu_validate.

Keyed by PCI device id (as the probe reports it, ``pci_device_id``). Throughputs are DENSE
tensor-core TFLOP/s: NVIDIA's datasheets print the "with sparsity" figure (marked with an
asterisk), which is twice the dense one, so those figures are halved here - and only those.
``memory_gbps`` is the device memory bandwidth in GB/s (10^9 bytes/s); ``nvlink_gbps`` the total
bidirectional NVLink bandwidth per GPU in GB/s (0: the model has no NVLink on this form factor;
None: an optional bridge, not judged); ``nvlinks`` the NVLink count each GPU should show up (None:
not judged); ``pcie_gen``/``pcie_width`` the host link. ``bf16_tflops`` is None where the model
has no bfloat16 tensor cores (Volta): its matmul is then judged against ``fp16_tflops``.

Every row carries where its figures come from: ``source`` (the document), ``url`` (NVIDIA's
publication), ``read`` (the date the row was last checked, 2026-12-01), ``checked`` (where the figures were read then:
the publication itself or a copy of its table) and ``unconfirmed`` - None, or what could not be
confirmed. A row is never silent about its origin (a unit test keeps it so).

A model missing here is "unknown": gpu_validate still checks health and measures, and reports
the figures without a verdict. None of these figures has been measured by this collection on
real hardware yet (docs/support-matrix.md).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import pci_sources

_H100_DATASHEET = 'https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet'
_A100_DATASHEET = ('https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/'
                   'nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf')

PEAKS = {
    0x2330: {
        'model': 'H100 SXM5 80GB',
        'source': 'NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column: BF16/FP16 1,979 and TF32 989 TFLOPS '
                  '"shown with sparsity" (halved); dense 989.4/494.7 as the H100 architecture whitepaper prints '
                  'them; 3.35 TB/s; NVLink 900 GB/s over 18 fourth-generation links; PCIe Gen5',
        'url': _H100_DATASHEET,
        'checked': 'a copy of the datasheet table (archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html); dense '
                   'figures and the 18 links as quoted from the whitepaper (glennklockwood.com/garden/processors/h100, '
                   'wikimili.com/en/NVLink)',
        'read': '2026-12-01',
        'unconfirmed': None,
        'bf16_tflops': 989.4, 'fp16_tflops': 989.4, 'tf32_tflops': 494.7,
        'memory_gbps': 3350.0, 'pcie_gen': 5, 'pcie_width': 16, 'nvlink_gbps': 900.0, 'nvlinks': 18,
    },
    0x2331: {
        'model': 'H100 PCIe',
        'source': 'NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe column: BF16/FP16 1,513 and TF32 756 TFLOPS '
                  '"shown with sparsity" (halved: 756.5 and 378); 2,000 GB/s; optional NVLink bridge 600 GB/s; '
                  'PCIe Gen5',
        'url': _H100_DATASHEET,
        'checked': 'a copy of the datasheet table (archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html); NVIDIA '
                   'product brief PB-11133-001 (memory bandwidth greater than 2,000 GB/s)',
        'read': '2026-12-01',
        'unconfirmed': None,
        'bf16_tflops': 756.5, 'fp16_tflops': 756.5, 'tf32_tflops': 378.0,
        'memory_gbps': 2000.0, 'pcie_gen': 5, 'pcie_width': 16, 'nvlink_gbps': None, 'nvlinks': None,
    },
    0x2335: {
        'model': 'H200 SXM 141GB',
        'source': 'NVIDIA H200 product page, H200 SXM column: BF16/FP16 1,979 and TF32 989 TFLOPS with sparsity '
                  '(halved: 989.5 and 494.5); 4.8 TB/s; NVLink 900 GB/s (18 links, as H100 SXM); PCIe Gen5',
        'url': 'https://www.nvidia.com/en-us/data-center/h200/',
        'checked': 'copies of the product page table (aiwiki.ai/wiki/nvidia_h200, lzwjava.github.io/nvidia-h200-gpu-'
                   'specs-en: "performance figures include sparsity")',
        'read': '2026-12-01',
        'unconfirmed': None,
        'bf16_tflops': 989.5, 'fp16_tflops': 989.5, 'tf32_tflops': 494.5,
        'memory_gbps': 4800.0, 'pcie_gen': 5, 'pcie_width': 16, 'nvlink_gbps': 900.0, 'nvlinks': 18,
    },
    0x20b2: {
        'model': 'A100 SXM4 80GB',
        'source': 'NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM column: BF16/FP16 312 (624 with sparsity), '
                  'TF32 156 (312 with sparsity); 2,039 GB/s; NVLink 600 GB/s over 12 third-generation links; '
                  'PCIe Gen4',
        'url': _A100_DATASHEET,
        'checked': 'copies of the datasheet table (glennklockwood.com/garden/processors/A100, '
                   'thundercompute.com/blog/nvidia-a100-specs-full-guide); 12 links: wikimili.com/en/NVLink',
        'read': '2026-12-01',
        'unconfirmed': None,
        'bf16_tflops': 312.0, 'fp16_tflops': 312.0, 'tf32_tflops': 156.0,
        'memory_gbps': 2039.0, 'pcie_gen': 4, 'pcie_width': 16, 'nvlink_gbps': 600.0, 'nvlinks': 12,
    },
    0x20b5: {
        'model': 'A100 PCIe 80GB',
        'source': 'NVIDIA A100 Tensor Core GPU datasheet, A100 80GB PCIe column: BF16/FP16 312, TF32 156 (dense); '
                  '1,935 GB/s; optional NVLink bridge for 2 GPUs 600 GB/s; PCIe Gen4',
        'url': _A100_DATASHEET,
        'checked': 'copies of the datasheet table (thundercompute.com/blog/nvidia-a100-specs-full-guide: 1,935 GB/s; '
                   'xynio.com/nvidia-a100-tensor-core-gpu: NVLink bridge for up to 2 GPUs)',
        'read': '2026-12-01',
        'unconfirmed': None,
        'bf16_tflops': 312.0, 'fp16_tflops': 312.0, 'tf32_tflops': 156.0,
        'memory_gbps': 1935.0, 'pcie_gen': 4, 'pcie_width': 16, 'nvlink_gbps': None, 'nvlinks': None,
    },
    0x1db6: {
        'model': 'V100 PCIe 32GB',
        'source': 'NVIDIA Tesla V100 datasheet / product page, V100 PCIe column: tensor 112 TFLOPS (Volta has no sparsity and no '
                  'bfloat16); 900 GB/s; PCIe Gen3, no NVLink',
        'url': 'https://www.nvidia.com/en-us/data-center/v100/',
        'checked': 'copies of NVIDIA\'s V100 PCIe specification table in public repositories (tensor performance '
                   '112 TFLOPS, 900 GB/sec, form factor PCIe)',
        'read': '2026-12-01',
        'unconfirmed': 'the copies seen are of the 16GB PCIe card; the 32GB card\'s own column (same GV100, same '
                       'clocks in the datasheet) was not read here',
        'bf16_tflops': None, 'fp16_tflops': 112.0, 'tf32_tflops': None,
        'memory_gbps': 900.0, 'pcie_gen': 3, 'pcie_width': 16, 'nvlink_gbps': 0.0, 'nvlinks': None,
    },
    0x2684: {
        'model': 'GeForce RTX 4090',
        'source': 'NVIDIA Ada GPU Architecture whitepaper, appendix table (RTX 4090: FP16/BF16 tensor with FP32 '
                  'accumulate 165.2 dense / 330.4 sparse, TF32 82.6 / 165.2); 1,008 GB/s; PCIe Gen4, no NVLink',
        'url': 'https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf',
        'checked': 'copies of the whitepaper figures (waredb.com/processor/nvidia-geforce-rtx-4090: 165.15/330.30, '
                   '82.58/165.15; gfxspeak.com: 1,008 GB/s)',
        'read': '2026-12-01',
        'unconfirmed': None,
        'bf16_tflops': 165.2, 'fp16_tflops': 165.2, 'tf32_tflops': 82.6,
        'memory_gbps': 1008.0, 'pcie_gen': 4, 'pcie_width': 16, 'nvlink_gbps': 0.0, 'nvlinks': 0,
    },
}

_RESNET50_README = ('https://github.com/NVIDIA/DeepLearningExamples/blob/master/PyTorch/Classification/ConvNets/'
                    'resnet50v1.5/README.md#training-performance-results')
# Every row carries its source and the date it was read (docs/vendor-facts.md lists them).
_RESNET50_SOURCE = ('NVIDIA DeepLearningExamples, PyTorch ResNet-50 v1.5 README, "Training performance results" '
                    '(1 GPU, mixed precision): ' + _RESNET50_README)
_RESNET50_READ = '2026-12-07'

# ResNet-50 training images/s of ONE GPU as NVIDIA published it (the articles' yardstick), by PCI
# device id. Only where a figure exists: every other model is measured and reported without a
# verdict. NVIDIA's figures are ResNet-50 v1.5 in PyTorch with mixed precision (float16 AMP),
# batch 256, on ImageNet through DALI - ``precision`` float16 on every row: gpu_validate trains in
# that precision where such a figure exists (hardware/precision.py resnet50_precision), on random
# data, so a healthy GPU lands near, not on, them (threshold ``resnet50``, 0.5 by default).
RESNET50_TRAINING = {
    0x20b2: {'images_per_s': 2470.0, 'precision': 'float16', 'url': _RESNET50_README,
             'what': 'NVIDIA DeepLearningExamples ResNet-50 v1.5 for PyTorch, DGX A100 (A100 80GB), 1 GPU, mixed '
                     'precision, pytorch-21.03 NGC container'},
    0x1db1: {'images_per_s': 1200.0, 'precision': 'float16', 'url': _RESNET50_README,
             'what': 'NVIDIA DeepLearningExamples ResNet-50 v1.5 for PyTorch, DGX-1 16GB (V100 SXM2 16GB), 1 GPU, '
                     'mixed precision, pytorch-21.03 NGC container'},
    0x1db5: {'images_per_s': 1156.0, 'precision': 'float16', 'url': _RESNET50_README,
             'what': 'NVIDIA DeepLearningExamples ResNet-50 v1.5 for PyTorch, DGX-1 32GB (V100 SXM2 32GB), 1 GPU, '
                     'mixed precision, pytorch-21.03 NGC container'},
}

KEYS = ('bf16_tflops', 'fp16_tflops', 'tf32_tflops', 'memory_gbps', 'pcie_gen', 'pcie_width', 'nvlink_gbps',
        'nvlinks')

# Per-direction host<->device peak of one x16 link, GB/s, by PCIe generation (the transfer rate times
# the encoding's data share - 128b/130b for Gen3-5, none in Gen6's Flit mode - times 16 lanes / 8 bits):
# built from probe/pci_sources.py PCIE_RATE_ROWS, each row with its source. Gen1 and Gen2 are not judged.
PCIE_X16_GBPS = dict((row['gen'], row['x16_gbps']) for row in pci_sources.PCIE_RATE_ROWS
                     if row['x16_gbps'] is not None)

# Every ResNet-50 figure carries its source and the date it was read, as data (docs/vendor-facts.md
# lists them); all come from the same README table.
for _figure in RESNET50_TRAINING.values():
    _figure['source'] = _RESNET50_SOURCE
    _figure['read'] = _RESNET50_READ


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


def resnet50_published(device_id):
    """NVIDIA's published one-GPU ResNet-50 training images/s of a PCI device id (``images_per_s``,
    ``what``, ``url``); None where none is published (measured, no verdict)."""
    key = _device_int(device_id)
    row = RESNET50_TRAINING.get(key) if key is not None else None
    return dict(row) if row else None


def pcie_peak_gbps(gen, width):
    """Per-direction peak of a PCIe link of ``gen`` and ``width`` lanes, GB/s; None when unknown."""
    per_x16 = PCIE_X16_GBPS.get(gen)
    if per_x16 is None or not width:
        return None
    return round(per_x16 * width / 16.0, 2)
