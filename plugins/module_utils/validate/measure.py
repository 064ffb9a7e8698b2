# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What gpuops.dlserver.gpu_validate runs INSIDE the user's Python environment (the one
python_stack built, with PyTorch), handed to its python with ``-c`` the way python_stack_host
hands python_stack_verify.py: ``argv()`` below. It measures and prints one JSON object after
MARKER; it decides nothing (plugins/module_utils/validate/perf.py judges). It imports nothing of
Ansible or the collection, because the environment has neither.

    <env>/bin/python -c "<source>" --mode devices
    <env>/bin/python -c "<source>" --mode local [--cpu | --gpu INDEX] [--size-mib N] [--dtype D]
    <env>/bin/python -c "<source>" --mode allreduce --rank R --world N --master ADDR --port P
                                   [--backend nccl|gloo|auto] [--timeout S] [--size-mib N]
    <env>/bin/python -c "<source>" --mode resnet50 [--cpu | --gpu INDEX] [--batch N] [--dtype D]

- devices: the PyTorch version, the CUDA it was built for and the GPUs it sees;
- local: per GPU, a matrix multiply in the GPU's native tensor-core precision (``--dtype``, which
  gpu_validate decides from the probe with hardware/precision.py; ``auto``: bfloat16 from compute
  capability 8.0 on, float16 below - never ``torch.cuda.is_bf16_supported()``, which counts
  emulation and says True on Volta and Turing; it is recorded as a cross-check) in TFLOP/s,
  a device-to-device copy in GB/s (bytes read plus written), and pinned host-to-device and
  device-to-host copies in GB/s from the GPU's own NUMA node (the caller pins the process);
  with ``--cpu`` (no GPU, allowed by the user) the same matrix multiply and copy on the CPU with
  small sizes, reported as ``device: cpu`` - never a GPU figure;
- allreduce: one rank of torch.distributed (NCCL on GPUs, gloo on the CPU) through
  ``tcp://ADDR:PORT``; rank 0 prints the bus bandwidth (algorithm bandwidth x 2(n-1)/n, as
  nccl-tests defines it), every rank its own time; joining is bounded by ``--timeout``;
- resnet50: per GPU, ResNet-50 (written here with torch.nn; torchvision is not needed) trained on
  random 224x224 images with autocast in ``--dtype`` (float16 adds a GradScaler; ``auto`` as above),
  channels_last, images/s over 20 steps after 5 warm-up steps; with ``--cpu`` a tiny run on the
  CPU (32x32 images), reported as ``device: cpu``.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import sys
import time

MARKER = 'GPUOPS-VALIDATE '
# bfloat16 tensor cores from compute capability 8.0 (Ampere) on: the rule of
# plugins/module_utils/hardware/precision.py (BF16_FROM), repeated here because this file runs in
# the user's environment without the collection; a unit test keeps the two equal.
NATIVE_BF16_FROM = (8, 0)
DTYPES = ('auto', 'bfloat16', 'float16')


def native_dtype(capability):
    """'bfloat16' or 'float16' for a (major, minor) compute capability."""
    return 'bfloat16' if tuple(capability) >= NATIVE_BF16_FROM else 'float16'


def _precision(torch, index, asked):
    """(torch dtype, facts): the precision to measure GPU ``index`` in - ``asked`` unless 'auto', else
    by its compute capability - with PyTorch's own answers recorded as a cross-check only."""
    capability = tuple(torch.cuda.get_device_capability(index))
    name = asked if asked in ('bfloat16', 'float16') else native_dtype(capability)
    try:
        native_api = bool(torch.cuda.is_bf16_supported(including_emulation=False))
    except TypeError:  # releases before the argument existed
        native_api = None
    facts = {'dtype': name, 'dtype_from': 'caller' if name == asked else 'compute capability',
             'capability': '%d.%d' % capability[:2], 'bf16_native_api': native_api,
             'bf16_supported_api': bool(torch.cuda.is_bf16_supported())}
    return getattr(torch, name), facts


def argv(python, mode, **options):
    """The command that runs this file's ``mode`` with ``python``; options become ``--key value``."""
    from ansible_collections.gpuops.dlserver.plugins.module_utils.core.embedded import script_argv
    args = ['--mode', mode]
    for key in sorted(options):
        value = options[key]
        if value is None or value is False:
            continue
        flag = '--' + key.replace('_', '-')
        args.extend([flag] if value is True else [flag, str(value)])
    return script_argv(python, __name__, args)


def parse(out):
    """The JSON object printed after MARKER, or None."""
    from ansible_collections.gpuops.dlserver.plugins.module_utils.core.embedded import marked_json
    return marked_json(out, MARKER)


def _timed(torch, device, fn, repeat):
    fn()
    if device != 'cpu':
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    for dummy in range(repeat):
        fn()
    if device != 'cpu':
        torch.cuda.synchronize(device)
    return (time.perf_counter() - start) / repeat


def _matmul(torch, device, dtype, n, repeat):
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    seconds = _timed(torch, device, lambda: torch.matmul(a, b), repeat)
    return round(2.0 * n ** 3 / seconds / 1e12, 4)


def _copy(torch, device, size_mib, repeat):
    src = torch.empty(size_mib * 1048576, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    seconds = _timed(torch, device, lambda: dst.copy_(src), repeat)
    return round(2.0 * src.numel() / seconds / 1e9, 3)


def _host_device(torch, device, size_mib, repeat):
    host = torch.empty(size_mib * 1048576, dtype=torch.uint8).pin_memory()
    dev = torch.empty(host.numel(), dtype=torch.uint8, device=device)
    h2d = _timed(torch, device, lambda: dev.copy_(host, non_blocking=True), repeat)
    d2h = _timed(torch, device, lambda: host.copy_(dev, non_blocking=True), repeat)
    return round(host.numel() / h2d / 1e9, 3), round(host.numel() / d2h / 1e9, 3)


def _cuda_indexes(torch, args, result):
    """The GPUs to measure (``--gpu``, else every one PyTorch sees), with ``result['device']`` set;
    none, with the error set, where PyTorch sees no GPU."""
    if not torch.cuda.is_available():
        result.update(device='none', error='torch.cuda.is_available() is false: PyTorch sees no GPU (CPU build, '
                                           'or no driver)')
        return []
    result['device'] = 'cuda'
    return [args.gpu] if args.gpu is not None else list(range(torch.cuda.device_count()))


def devices(args):
    import torch
    available = bool(torch.cuda.is_available())
    return {'torch': torch.__version__, 'cuda_build': torch.version.cuda, 'cuda_available': available,
            'device_count': torch.cuda.device_count() if available else 0}


def local(args):
    import torch
    result = {'torch': torch.__version__, 'gpus': []}
    if args.cpu:
        torch.manual_seed(0)
        result['device'] = 'cpu'
        result['gpus'] = [{'index': None, 'name': 'cpu', 'device': 'cpu', 'dtype': 'bfloat16',
                           'matmul_tflops': _matmul(torch, 'cpu', torch.bfloat16, 256, 3),
                           'copy_gbps': _copy(torch, 'cpu', min(args.size_mib, 64), 3)}]
        return result
    for index in _cuda_indexes(torch, args, result):
        device = 'cuda:%d' % index
        torch.cuda.set_device(index)
        dtype, facts = _precision(torch, index, args.dtype)
        h2d, d2h = _host_device(torch, device, args.size_mib, 5)
        entry = {
            'index': index, 'name': torch.cuda.get_device_name(index), 'device': 'cuda',
            'matmul_tflops': _matmul(torch, device, dtype, 8192, 20),
            'copy_gbps': _copy(torch, device, args.size_mib, 10),
            'h2d_gbps': h2d, 'd2h_gbps': d2h,
        }
        entry.update(facts)
        result['gpus'].append(entry)
    return result


def allreduce(args):
    import datetime
    import torch
    import torch.distributed as dist
    backend = args.backend
    if backend == 'auto':  # across nodes: NCCL where PyTorch sees a GPU (every node of a group alike)
        backend = 'nccl' if torch.cuda.is_available() else 'gloo'
    device = 'cpu'
    if backend == 'nccl':
        local_rank = args.local_rank if args.local_rank is not None else 0
        torch.cuda.set_device(local_rank)
        device = 'cuda:%d' % local_rank
    result = {'rank': args.rank, 'world': args.world, 'backend': backend,
              'device': 'cpu' if device == 'cpu' else 'cuda'}
    start = time.perf_counter()
    dist.init_process_group(backend, init_method='tcp://%s:%d' % (args.master, args.port), rank=args.rank,
                            world_size=args.world, timeout=datetime.timedelta(seconds=args.timeout))
    result['join_seconds'] = round(time.perf_counter() - start, 3)
    try:
        numel = args.size_mib * 1048576 // 4
        tensor = torch.ones(numel, dtype=torch.float32, device=device)
        dist.all_reduce(tensor)
        ok = float(tensor[0].item()) == float(args.world)
        repeat = 5
        dist.barrier()
        start = time.perf_counter()
        for dummy in range(repeat):
            dist.all_reduce(tensor)
        if device != 'cpu':
            torch.cuda.synchronize()
        seconds = (time.perf_counter() - start) / repeat
        algbw = numel * 4 / seconds / 1e9
        result.update({'ok': ok, 'bytes': numel * 4, 'seconds': round(seconds, 6),
                       'algbw_gbps': round(algbw, 3),
                       'busbw_gbps': round(algbw * 2.0 * (args.world - 1) / args.world, 3)})
        if not ok:
            result['error'] = 'the all-reduce sum is wrong: %s, expected %s' % (tensor[0].item(), args.world)
    finally:
        dist.destroy_process_group()
    return result


# ResNet-50 (He et al., "Deep Residual Learning for Image Recognition", 2015, table 1) in the
# v1.5 form NVIDIA's published training figures use: a down-sampling bottleneck strides in its 3x3
# convolution, not its first 1x1. Stages of (width, bottlenecks, stride); a bottleneck's output is
# 4 x its width. 25,557,032 trainable parameters with 1000 classes.
RESNET50_STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))
RESNET50_PARAMETERS = 25557032


def resnet50(torch, classes=1000):
    """ResNet-50 v1.5 built from torch.nn alone (torchvision is not required)."""
    nn = torch.nn

    def conv_bn(cin, cout, kernel, stride=1, relu=True):
        layers = [nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False),
                  nn.BatchNorm2d(cout)]
        return layers + [nn.ReLU(inplace=True)] if relu else layers

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super(Bottleneck, self).__init__()
            cout = 4 * width
            self.body = nn.Sequential(*(conv_bn(cin, width, 1) + conv_bn(width, width, 3, stride)
                                        + conv_bn(width, cout, 1, relu=False)))
            self.shortcut = (nn.Sequential(*conv_bn(cin, cout, 1, stride, relu=False))
                             if stride != 1 or cin != cout else nn.Identity())
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):  # pylint: disable=arguments-differ
            return self.relu(self.body(x) + self.shortcut(x))

    layers = conv_bn(3, 64, 7, 2) + [nn.MaxPool2d(3, stride=2, padding=1)]
    cin = 64
    for width, blocks, stride in RESNET50_STAGES:
        for block in range(blocks):
            layers.append(Bottleneck(cin, width, stride if block == 0 else 1))
            cin = 4 * width
    return nn.Sequential(*(layers + [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]))


def _resnet50_steps(torch, device, batch, size, warmup, steps, dtype=None):
    """Mixed-precision training steps on random images: autocast in ``dtype`` (bfloat16 on the CPU;
    float16 with a GradScaler), channels_last on a GPU; images/s over ``steps`` after ``warmup``."""
    cuda = device != 'cpu'
    torch.manual_seed(0)
    model = resnet50(torch).to(device)
    dtype = dtype if cuda and dtype is not None else torch.bfloat16
    bf16 = dtype == torch.bfloat16
    images = torch.randn(batch, 3, size, size, device=device)
    if cuda:
        torch.backends.cudnn.benchmark = True
        model = model.to(memory_format=torch.channels_last)
        images = images.contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, 1000, (batch,), device=device)
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler('cuda' if cuda else 'cpu', enabled=not bf16)
    losses = []

    def step():
        optimiser.zero_grad(set_to_none=True)
        with torch.autocast(device_type='cuda' if cuda else 'cpu', dtype=dtype):
            loss = torch.nn.functional.cross_entropy(model(images), labels)
        scaler.scale(loss).backward()
        scaler.step(optimiser)
        scaler.update()
        losses.append(loss.detach())

    for dummy in range(warmup):
        step()
    if cuda:
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    for dummy in range(steps):
        step()
    if cuda:
        torch.cuda.synchronize(device)
    seconds = time.perf_counter() - start
    finite = bool(torch.isfinite(torch.stack(losses)).all().item())
    return {'images_per_s': round(batch * steps / seconds, 2), 'batch': batch, 'image_size': size,
            'steps': steps, 'warmup_steps': warmup, 'dtype': 'bfloat16' if bf16 else 'float16',
            'grad_scaler': not bf16, 'channels_last': cuda, 'loss_finite': finite,
            'parameters': sum(p.numel() for p in model.parameters())}


def resnet(args):
    """ResNet-50 training images/s per GPU (224x224, ``--batch``); with ``--cpu`` a tiny run
    (32x32 images, at most 2 a batch, one step after one warm-up step) reported as ``device: cpu``."""
    import torch
    result = {'torch': torch.__version__, 'gpus': []}
    if args.cpu:
        result['device'] = 'cpu'
        entry = _resnet50_steps(torch, 'cpu', min(args.batch, 2), 32, 1, 1)
        entry.update({'index': None, 'name': 'cpu', 'device': 'cpu'})
        result['gpus'].append(entry)
        return result
    for index in _cuda_indexes(torch, args, result):
        torch.cuda.set_device(index)
        dtype, facts = _precision(torch, index, args.dtype)
        entry = _resnet50_steps(torch, 'cuda:%d' % index, args.batch, 224, 5, 20, dtype)
        entry.update({'index': index, 'name': torch.cuda.get_device_name(index), 'device': 'cuda'})
        entry.update(facts)
        result['gpus'].append(entry)
        torch.cuda.empty_cache()
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--mode', choices=['devices', 'local', 'allreduce', 'resnet50'], required=True)
    parser.add_argument('--cpu', action='store_true')
    parser.add_argument('--gpu', type=int, default=None)
    parser.add_argument('--size-mib', type=int, default=256)
    parser.add_argument('--rank', type=int, default=0)
    parser.add_argument('--local-rank', type=int, default=None)
    parser.add_argument('--world', type=int, default=1)
    parser.add_argument('--master', default='127.0.0.1')
    parser.add_argument('--port', type=int, default=29500)
    parser.add_argument('--backend', choices=['nccl', 'gloo', 'auto'], default='gloo')
    parser.add_argument('--timeout', type=int, default=20)
    parser.add_argument('--batch', type=int, default=128)
    parser.add_argument('--dtype', choices=DTYPES, default='auto')
    args = parser.parse_args()
    try:
        result = {'devices': devices, 'local': local, 'allreduce': allreduce, 'resnet50': resnet}[args.mode](args)
    except Exception as exc:  # pylint: disable=broad-except
        result = {'error': '%s: %s' % (type(exc).__name__, exc), 'mode': args.mode}
    result['python'] = '%d.%d.%d' % sys.version_info[:3]
    sys.stdout.write(MARKER + json.dumps(result, sort_keys=True) + '\n')


if __name__ == '__main__':
    main()
