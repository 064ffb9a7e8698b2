# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What gpuops.dlserver.gpu_validate's ``data`` group runs INSIDE the user's Python environment
(PyTorch, Pillow and lmdb), handed to its python with ``-c`` like measure.py: it measures and
prints one JSON object after MARKER; it decides nothing (data_path.py judges). It imports nothing
of Ansible or the collection.

    <env>/bin/python -c "<source>" --dir DIR --images N --workers W [--batch B]

It writes N JPEGs (photo-like: a small random picture scaled up, 384x288, quality 90) as loose
files under DIR/jpeg and packs the same bytes into one LMDB under DIR/lmdb, drops their pages from
the page cache (fsync, then posix_fadvise DONTNEED), and times one pass of a PyTorch DataLoader with
W workers over each - open or read the record, decode with Pillow, resize to 224x224, make a uint8
tensor - in images/s from the first batch on (the workers' start-up left out). Where PyTorch sees a
GPU and NVIDIA DALI is importable, the same loose files through DALI's file reader and its mixed
(GPU) JPEG decoder; else "not measured: no GPU/DALI". The caller removes DIR.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import io
import json
import os
import random
import sys
import time

MARKER = 'GPUOPS-DATA '
WIDTH, HEIGHT, SIDE = 384, 288, 224


def argv(python, directory, images, workers, batch=32):
    """The command that measures in ``directory`` with ``python``."""
    from ansible_collections.gpuops.dlserver.plugins.module_utils.core.embedded import script_argv
    return script_argv(python, __name__, ['--dir', directory, '--images', str(int(images)),
                                          '--workers', str(int(workers)), '--batch', str(int(batch))])


def parse(out):
    """The JSON object printed after MARKER, or None."""
    from ansible_collections.gpuops.dlserver.plugins.module_utils.core.embedded import marked_json
    return marked_json(out, MARKER)


def _drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        if hasattr(os, 'posix_fadvise'):
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _jpegs(image_module, count, seed=0):
    """``count`` JPEGs as bytes: random 24x18 pictures scaled up (smooth, like photographs)."""
    rng = random.Random(seed)
    out = []
    for dummy in range(count):
        small = image_module.frombytes('RGB', (24, 18), bytes(rng.getrandbits(8) for dummy in range(24 * 18 * 3)))
        big = small.resize((WIDTH, HEIGHT), image_module.BICUBIC)
        buf = io.BytesIO()
        big.save(buf, format='JPEG', quality=90)
        out.append(buf.getvalue())
    return out


def _write_sample(directory, blobs, lmdb):
    loose = os.path.join(directory, 'jpeg')
    os.makedirs(loose)
    paths = []
    for index, blob in enumerate(blobs):
        path = os.path.join(loose, '%08d.jpg' % index)
        with open(path, 'wb') as handle:
            handle.write(blob)
        paths.append(path)
    pack = os.path.join(directory, 'lmdb')
    env = lmdb.open(pack, map_size=sum(len(b) for b in blobs) * 2 + (64 << 20), subdir=True)
    with env.begin(write=True) as txn:
        for index, blob in enumerate(blobs):
            txn.put(b'%08d' % index, blob)
    env.sync(True)
    env.close()
    for path in paths + [os.path.join(pack, name) for name in os.listdir(pack)]:
        _drop_cache(path)
    return paths, pack


def _decode(image_module, torch, data):
    img = image_module.open(io.BytesIO(data)).convert('RGB').resize((SIDE, SIDE), image_module.BILINEAR)
    return torch.frombuffer(bytearray(img.tobytes()), dtype=torch.uint8).view(SIDE, SIDE, 3).permute(2, 0, 1)


def _datasets(torch, image_module, lmdb):
    class Loose(torch.utils.data.Dataset):
        def __init__(self, paths):
            self.paths = paths

        def __len__(self):
            return len(self.paths)

        def __getitem__(self, index):
            with open(self.paths[index], 'rb') as handle:
                return _decode(image_module, torch, handle.read())

    class Packed(torch.utils.data.Dataset):
        def __init__(self, path, count):
            self.path, self.count, self.env = path, count, None

        def __len__(self):
            return self.count

        def __getitem__(self, index):
            if self.env is None:  # one environment per worker process, opened there
                self.env = lmdb.open(self.path, readonly=True, lock=False, readahead=False, meminit=False)
            with self.env.begin() as txn:
                return _decode(image_module, torch, txn.get(b'%08d' % index))

    return Loose, Packed


def _time_loader(torch, dataset, workers, batch):
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch, num_workers=workers, shuffle=True)
    start, counted, total = None, 0, 0
    began = time.perf_counter()
    for images in loader:
        total += images.shape[0]
        if start is None:
            start = time.perf_counter()
            continue
        counted += images.shape[0]
    end = time.perf_counter()
    if counted == 0:  # a single batch: the whole pass, start-up included
        return round(total / (end - began), 1)
    return round(counted / (end - start), 1)


def _dali(torch, paths, batch):
    """DALI's mixed (GPU) JPEG decoding of the loose files, where a GPU and DALI are present."""
    if not torch.cuda.is_available():
        return {'reason': 'not measured: no GPU/DALI (PyTorch sees no GPU)'}
    try:
        from nvidia.dali import fn, pipeline_def  # pylint: disable=import-error
    except ImportError:
        return {'reason': 'not measured: no GPU/DALI (nvidia.dali is not in this environment)'}

    @pipeline_def(batch_size=batch, num_threads=4, device_id=0)
    def pipe():
        jpegs, dummy = fn.readers.file(files=paths, name='reader')
        return fn.resize(fn.decoders.image(jpegs, device='mixed'), resize_x=SIDE, resize_y=SIDE)

    built = pipe()
    built.build()
    built.run()
    steps = max(1, len(paths) // batch - 1)
    start = time.perf_counter()
    for dummy in range(steps):
        built.run()
    seconds = time.perf_counter() - start
    return {'images_per_s': round(steps * batch / seconds, 1),
            'what': '%d batches of %d from the loose files on GPU 0' % (steps, batch)}


def measure(args):
    import torch
    try:
        from PIL import Image
        import PIL
    except ImportError:
        return {'skip': 'not measured: Pillow is not in %s\'s environment (add pillow to its pip list)' % sys.executable}
    try:
        import lmdb
    except ImportError:
        return {'skip': 'not measured: lmdb is not in %s\'s environment (add lmdb to its pip list)' % sys.executable}
    blobs = _jpegs(Image, args.images)
    paths, pack = _write_sample(args.dir, blobs, lmdb)
    loose_cls, packed_cls = _datasets(torch, Image, lmdb)
    batch = max(1, min(args.batch, args.images))
    result = {'torch': torch.__version__, 'pillow': PIL.__version__, 'lmdb': lmdb.__version__,
              'images': len(blobs), 'bytes': sum(len(b) for b in blobs), 'workers': args.workers, 'batch': batch,
              'mean_image_bytes': round(sum(len(b) for b in blobs) / float(len(blobs)))}
    result['loose_images_per_s'] = _time_loader(torch, loose_cls(paths), args.workers, batch)
    result['lmdb_images_per_s'] = _time_loader(torch, packed_cls(pack, len(blobs)), args.workers, batch)
    try:
        result['dali'] = _dali(torch, paths, batch)
    except Exception as exc:  # pylint: disable=broad-except
        result['dali'] = {'reason': 'DALI failed: %s: %s' % (type(exc).__name__, exc)}
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--dir', required=True)
    parser.add_argument('--images', type=int, default=512)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--batch', type=int, default=32)
    args = parser.parse_args()
    try:
        result = measure(args)
    except Exception as exc:  # pylint: disable=broad-except
        result = {'error': '%s: %s' % (type(exc).__name__, exc)}
    result['python'] = '%d.%d.%d' % sys.version_info[:3]
    sys.stdout.write(MARKER + json.dumps(result, sort_keys=True) + '\n')


if __name__ == '__main__':
    main()
