# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Performance verdicts of gpuops.dlserver.gpu_validate: what measure.py printed, as a fraction
of the GPU model's published peak (hardware/gpu_peaks.py), against thresholds that are fractions
of peak per model. A model missing from the peak table is reported as measured, without a
verdict, and named unknown; a CPU run is reported as ``device: cpu`` and never judged as a GPU.
Pure functions; tested from ``tests/unit/plugins/module_utils/data/validate_perf_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.gpu_peaks import (
    pcie_peak_gbps, peak_for, resnet50_published)
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.precision import (
    native_precision, resnet50_precision)
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.health import check

METRICS = ('matmul', 'memory_copy', 'host_device', 'allreduce', 'cross_allreduce', 'network', 'resnet50')
# resnet50: of NVIDIA's published one-GPU training figure (float16 AMP on ImageNet through DALI;
# gpu_validate trains in float16 too, on random data, without a tuned data pipeline or compilation).
DEFAULT_THRESHOLDS = {'matmul': 0.6, 'memory_copy': 0.7, 'host_device': 0.6, 'allreduce': 0.5,
                      'cross_allreduce': 0.3, 'network': 0.5, 'resnet50': 0.5}


def validate_thresholds(thresholds, by_model, names=('thresholds', 'thresholds_by_model')):
    """Merged thresholds; raises ValueError (naming ``names`` and the key) for a fraction outside (0, 1]."""
    def one(where, table):
        out = {}
        for key, value in (table or {}).items():
            if key not in METRICS:
                raise ValueError('%s: %r is not one of %s' % (where, key, ', '.join(METRICS)))
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
                raise ValueError('%s.%s must be a fraction of peak in (0, 1], got %r' % (where, key, value))
            out[key] = float(value)
        return out
    base = dict(DEFAULT_THRESHOLDS)
    base.update(one(names[0], thresholds))
    models = {}
    for model, table in (by_model or {}).items():
        if not isinstance(table, dict):
            raise ValueError('%s.%s must be a dict of fractions, got %r' % (names[1], model, table))
        models[str(model).lower()] = one('%s.%s' % (names[1], model), table)
    return {'default': base, 'models': models}


def thresholds_for(merged, peak):
    """The thresholds of one model: its device id or model name in ``models``, else the defaults."""
    out = dict(merged['default'])
    if peak:
        for key in (peak.get('device_id'), peak.get('model')):
            out.update(merged['models'].get(str(key).lower(), {}))
    return out


def _judge(name, subject, measured, unit, peak_value, fraction, source):
    value = '%s %s' % (measured, unit)
    if not peak_value:
        return check(name, 'skip', value, None, 'no published peak for this figure', subject)
    share = round(measured / peak_value, 3)
    expected = '>= %.0f%% of %s %s' % (fraction * 100, peak_value, unit)
    entry = check(name, 'pass' if share >= fraction else 'fail', value, expected,
                  '' if share >= fraction else '%s %s is %.0f%% of the published %s %s (%s), below %.0f%%' % (
                      subject, value, share * 100, peak_value, unit, source, fraction * 100), subject)
    entry.update({'measured': measured, 'peak': peak_value, 'fraction': share, 'threshold': fraction})
    return entry


def measure_dtypes(gpu):
    """{local, resnet50}: the ``--dtype`` measure.py runs each mode in for a probe GPU - its native
    tensor-core precision for the matmul (hardware/precision.py: the compute capability decides, not
    ``torch.cuda.is_bf16_supported()``), the published figure's precision for ResNet-50 where one
    exists; ``auto`` (measure.py reads the capability) where the probe knows neither."""
    gpu = gpu or {}
    local = native_precision(gpu)['value'] or 'auto'
    resnet = resnet50_precision(gpu, resnet50_published(gpu.get('pci_device_id')))['value'] or 'auto'
    return {'local': local, 'resnet50': resnet}


def _expected_precision(gpu, entry):
    """native_precision of the probe's GPU, else of the capability measure.py read."""
    expected = native_precision(gpu)
    if expected['value'] is None and entry.get('capability'):
        expected = native_precision({'compute_capability': entry.get('capability')})
    return expected


def _unjudged(name, subject, measured, unit, why):
    entry = check(name, 'skip', '%s %s' % (measured, unit), None, why, subject)
    entry.update({'measured': measured, 'peak': None, 'fraction': None})
    return entry


def local_perf(result, gpus, merged):
    """Checks from measure.py's ``local`` result; ``gpus`` are the probe's (ordered like CUDA's)."""
    if result is None:
        return [check('performance', 'fail', None, None, 'the measurement printed nothing (see stderr)')]
    if result.get('error'):
        return [check('performance', 'fail', result.get('device'), 'cuda',
                      'the measurement failed: %s' % result['error'])]
    out = []
    for entry in result.get('gpus') or []:
        if result.get('device') == 'cpu':
            subject = 'cpu'
            why = 'device: cpu - a CPU run with small sizes, never a GPU result; no verdict'
            out.append(_unjudged('matmul', subject, entry.get('matmul_tflops'), 'TFLOP/s', why))
            out.append(_unjudged('memory_copy', subject, entry.get('copy_gbps'), 'GB/s', why))
            continue
        index = entry.get('index')
        gpu = gpus[index] if index is not None and index < len(gpus) else {}
        subject = 'GPU%s' % index
        peak = peak_for(gpu.get('pci_device_id'))
        if peak is None:
            why = 'model unknown (%s, PCI id %s): measured, no verdict' % (
                entry.get('name'), gpu.get('pci_device_id'))
            out.append(_unjudged('matmul', subject, entry['matmul_tflops'], 'TFLOP/s', why))
            out.append(_unjudged('memory_copy', subject, entry['copy_gbps'], 'GB/s', why))
            out.append(_unjudged('host_device', subject, min(entry['h2d_gbps'], entry['d2h_gbps']), 'GB/s', why))
            continue
        limits = thresholds_for(merged, peak)
        expected = _expected_precision(gpu, entry)
        if entry.get('dtype') == 'bfloat16' and expected['value'] == 'float16':
            out.append(_unjudged('matmul', subject, entry['matmul_tflops'], 'TFLOP/s', (
                'measured in bfloat16, but the GPU\'s native tensor-core precision is float16 (%s): emulated '
                'bfloat16 is not a figure of its tensor cores; no verdict' % expected['reason'])))
        else:
            tflops_peak = peak['bf16_tflops'] if entry.get('dtype') == 'bfloat16' else peak['fp16_tflops']
            out.append(_judge('matmul', subject, entry['matmul_tflops'], 'TFLOP/s', tflops_peak, limits['matmul'],
                              '%s %s dense' % (peak['model'], entry.get('dtype'))))
        out.append(_judge('memory_copy', subject, entry['copy_gbps'], 'GB/s', peak['memory_gbps'],
                          limits['memory_copy'], '%s memory bandwidth' % peak['model']))
        pcie = gpu.get('pcie') or {}
        link = pcie_peak_gbps(pcie.get('max_gen') or peak['pcie_gen'], pcie.get('max_width') or peak['pcie_width'])
        out.append(_judge('host_device', subject, min(entry['h2d_gbps'], entry['d2h_gbps']), 'GB/s', link,
                          limits['host_device'], 'PCIe Gen%s x%s per direction' % (
                              pcie.get('max_gen') or peak['pcie_gen'], pcie.get('max_width') or peak['pcie_width'])))
    return out


def resnet50_perf(result, gpus, merged):
    """Checks from measure.py's ``resnet50`` result: images/s per GPU against NVIDIA's published
    one-GPU figure for the model where one exists; measured without a verdict where none does, and
    never judged on the CPU."""
    if result is None or result.get('error'):
        return [check('resnet50', 'fail', None, None, 'the ResNet-50 training measurement failed: %s'
                      % ((result or {}).get('error') or 'no result'))]
    out = []
    for entry in result.get('gpus') or []:
        what = 'ResNet-50 training, %s autocast, batch %s of %sx%s random images' % (
            entry.get('dtype'), entry.get('batch'), entry.get('image_size'), entry.get('image_size'))
        if entry.get('device') == 'cpu':
            subject = 'cpu'
        else:
            subject = 'GPU%s' % entry.get('index')
        if not entry.get('loss_finite'):
            out.append(check('resnet50', 'fail', entry.get('images_per_s'), None,
                             '%s: %s gave a loss that is not finite' % (subject, what), subject))
            continue
        if entry.get('device') == 'cpu':
            out.append(_unjudged('resnet50', subject, entry.get('images_per_s'), 'images/s',
                                 'device: cpu - %s, a tiny CPU run that proves the path, never a GPU result; '
                                 'no verdict' % what))
            continue
        index = entry.get('index')
        gpu = gpus[index] if index is not None and index < len(gpus) else {}
        published = resnet50_published(gpu.get('pci_device_id'))
        if published is None:
            peak = peak_for(gpu.get('pci_device_id'))
            out.append(_unjudged('resnet50', subject, entry.get('images_per_s'), 'images/s', (
                'no published one-GPU ResNet-50 training figure for %s: measured, no verdict' % peak['model'])
                if peak else 'model unknown (%s, PCI id %s): measured, no verdict' % (
                    entry.get('name'), gpu.get('pci_device_id'))))
            continue
        if published.get('precision') and entry.get('dtype') != published['precision']:
            out.append(_unjudged('resnet50', subject, entry.get('images_per_s'), 'images/s', (
                '%s, but NVIDIA\'s published figure is %s AMP (%s): a different precision, no verdict'
                % (what, published['precision'], published['what']))))
            continue
        limits = thresholds_for(merged, peak_for(gpu.get('pci_device_id')))
        out.append(_judge('resnet50', subject, entry.get('images_per_s'), 'images/s', published['images_per_s'],
                          limits['resnet50'], published['what']))
    return out


def allreduce_perf(name, result, peak_gbps, fraction, what):
    """An all-reduce rank-0 result against ``peak_gbps`` (None: measured without a verdict)."""
    if result is None or result.get('error'):
        return check(name, 'fail', None, None, '%s failed: %s' % (what, (result or {}).get('error') or 'no result'))
    if result.get('device') == 'cpu':
        return _unjudged(name, 'host', result.get('busbw_gbps'), 'GB/s',
                         'device: cpu - %s over gloo on the CPU, %d ranks; it proves the path, not a GPU figure'
                         % (what, result.get('world')))
    if not peak_gbps:
        return _unjudged(name, 'host', result.get('busbw_gbps'), 'GB/s', 'no published peak: no verdict')
    return _judge(name, 'host', result.get('busbw_gbps'), 'GB/s', peak_gbps, fraction, what)


def node_allreduce_peak(gpus):
    """Per-direction peak of the slowest GPU-to-GPU path of the node: NVLink where the model has it
    (half the bidirectional figure), else its PCIe link; None when any GPU is unknown."""
    peaks = []
    for gpu in gpus:
        peak = peak_for(gpu.get('pci_device_id'))
        if peak is None:
            return None
        if peak.get('nvlink_gbps'):
            peaks.append(peak['nvlink_gbps'] / 2.0)
        else:
            pcie = gpu.get('pcie') or {}
            peaks.append(pcie_peak_gbps(pcie.get('max_gen') or peak['pcie_gen'],
                                        pcie.get('max_width') or peak['pcie_width']))
    return min(peaks) if peaks and None not in peaks else None


def network_check(peer, port, result, nic_gbps, fraction):
    """iperf3 toward ``peer``: a failure names the peer and the port."""
    if result is None or result.get('error'):
        return check('network', 'fail', None, None, 'iperf3 to %s port %s failed: %s' % (
            peer, port, (result or {}).get('error') or 'no result'), peer)
    gbps = result.get('gbps')
    if not nic_gbps:
        entry = check('network', 'pass', '%s Gb/s' % gbps, None, 'measured; no NIC speed to compare with', peer)
        entry.update({'measured': gbps, 'peak': None, 'fraction': None})
        return entry
    return _judge('network', peer, gbps, 'Gb/s', nic_gbps, fraction, 'the NIC link speed')
