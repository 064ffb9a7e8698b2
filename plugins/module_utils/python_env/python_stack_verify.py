# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What gpuops.dlserver.__private.python_stack_host runs INSIDE one environment, with the environment's
own python (``argv()`` below: ``<env>/bin/python -c <this file's source> ...``), printing what it
saw as one JSON object. It measures; it decides nothing: the module judges the result
(plugins/module_utils/python_env/python_stack.py). It imports nothing of Ansible or the collection, because
the environment has neither.

    <env>/bin/python -c "<source>" [--import MODULE ...] [--imports-only]

- every module named with --import is imported (version when it has one);
- PyTorch, when importable: version, the CUDA it was built for, torch.cuda.is_available(),
  device names, and one mixed-precision training step - torch.autocast with float16 and a
  GradScaler on CUDA; on a CPU-only host autocast with bfloat16 on the CPU (GradScaler is for
  float16 gradients on CUDA), and the record says "cpu";
- TensorFlow, when importable: version, the GPU list, and one training step compiled with
  XLA (tf.function(jit_compile=True)), on the GPU when there is one, else on the CPU.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import importlib
import json
import math
import sys
import time

MARKER = 'GPUOPS-VERIFY '


def argv(python, imports, imports_only=False):
    """The command that runs this file's measurements with ``python`` (an environment's own).

    The source travels with the module (module_utils are packaged with it), so nothing is copied
    to the host beside the environments.
    """
    from ansible_collections.gpuops.dlserver.plugins.module_utils.core.embedded import script_argv
    args = ['--imports-only'] if imports_only else []
    for name in imports:
        args += ['--import', name]
    return script_argv(python, __name__, args)


def parse(out):
    """The JSON object the measurements printed (after MARKER), or None."""
    from ansible_collections.gpuops.dlserver.plugins.module_utils.core.embedded import marked_json
    return marked_json(out, MARKER)


def _imports(names):
    out = {}
    for name in names:
        try:
            module = importlib.import_module(name)
            out[name] = {'ok': True, 'version': str(getattr(module, '__version__', '') or '')}
        except Exception as exc:  # pylint: disable=broad-except
            out[name] = {'ok': False, 'error': '%s: %s' % (type(exc).__name__, exc)}
    return out


def _torch():
    try:
        import torch
    except ImportError:
        return None
    record = {'version': torch.__version__, 'cuda_build': torch.version.cuda, 'ok': False}
    try:
        available = bool(torch.cuda.is_available())
        record['cuda_available'] = available
        record['device_count'] = torch.cuda.device_count() if available else 0
        record['device_names'] = [torch.cuda.get_device_name(i) for i in range(record['device_count'])]
        device = 'cuda' if available else 'cpu'
        dtype = torch.float16 if available else torch.bfloat16
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).to(device)
        optimiser = torch.optim.SGD(model.parameters(), lr=0.01)
        scaler = torch.amp.GradScaler(device, enabled=available)
        inputs = torch.randn(32, 64, device=device)
        target = torch.randint(0, 10, (32,), device=device)
        start = time.time()
        with torch.autocast(device_type=device, dtype=dtype):
            output = model(inputs)
            loss = torch.nn.functional.cross_entropy(output, target)
        scaler.scale(loss).backward()
        scaler.step(optimiser)
        scaler.update()
        if available:
            torch.cuda.synchronize()
        record.update({
            'ok': bool(torch.isfinite(loss).item()),
            'device': device,
            'dtype': str(dtype).replace('torch.', ''),
            'autocast_dtype': str(output.dtype).replace('torch.', ''),
            'grad_scaler': available,
            'loss': round(float(loss.item()), 4),
            'step_seconds': round(time.time() - start, 3),
        })
        if not record['ok']:
            record['error'] = 'the loss of the mixed-precision step is not finite'
    except Exception as exc:  # pylint: disable=broad-except
        record['error'] = '%s: %s' % (type(exc).__name__, exc)
    return record


def _tensorflow():
    try:
        import tensorflow as tf
    except ImportError:
        return None
    record = {'version': tf.__version__, 'ok': False}
    try:
        gpus = tf.config.list_physical_devices('GPU')
        record['gpus'] = [g.name for g in gpus]
        device = '/GPU:0' if gpus else '/CPU:0'
        with tf.device(device):
            model = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(128, activation='relu'),
                                         tf.keras.layers.Dense(10)])
            optimiser = tf.keras.optimizers.SGD(0.01)
            loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

            @tf.function(jit_compile=True)
            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x, training=True))
                grads = tape.gradient(loss, model.trainable_variables)
                optimiser.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            start = time.time()
            loss = step(tf.random.normal((32, 64)), tf.random.uniform((32,), 0, 10, dtype=tf.int32))
        value = float(loss.numpy())
        record.update({'ok': math.isfinite(value), 'device': 'gpu' if gpus else 'cpu', 'xla': True,
                       'loss': round(value, 4), 'step_seconds': round(time.time() - start, 3)})
    except Exception as exc:  # pylint: disable=broad-except
        record['error'] = '%s: %s' % (type(exc).__name__, exc)
    return record


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--import', dest='imports', action='append', default=[])
    parser.add_argument('--imports-only', action='store_true')
    args = parser.parse_args()
    result = {'python': '%d.%d.%d' % sys.version_info[:3], 'executable': sys.executable,
              'imports': _imports(args.imports)}
    if not args.imports_only:
        names = set(args.imports)
        if 'torch' in names:
            result['torch'] = _torch()
        if 'tensorflow' in names:
            result['tensorflow'] = _tensorflow()
    sys.stdout.write(MARKER + json.dumps(result, sort_keys=True) + '\n')


if __name__ == '__main__':
    main()
