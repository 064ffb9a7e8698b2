# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The data path of gpuops.dlserver.gpu_validate (check group ``data``): can this node's storage and
CPUs feed its GPUs? Pure functions, tested from
``tests/unit/plugins/module_utils/data/validate_data_cases.yml`` and on published fio output
(``tests/fixtures/fio/``).

- ``fio_argv`` / ``parse_fio``: sequential (1 MiB blocks) and random (128 KiB blocks, about one
  JPEG of ImageNet) read MB/s of a sample file with ``fio --output-format=json``;
- ``demand``: the images/s the node's GPUs consume - GPU count x NVIDIA's published one-GPU
  ResNet-50 training figure (hardware/gpu_peaks.py RESNET50_TRAINING, with its sources), or the
  user's rate per GPU;
- ``checks``: the figures as checks of the group ``data``, and the verdict (``data_feed``): "feeds
  2,900 of the 4,800 images/s the GPUs need: CPU-bound at 32 workers", or on a node without GPUs the
  figures and "no GPU demand to compare";
- ``summary`` (the fleet table's and the HTML report's line) and ``textfile_lines`` (the metrics).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.gpu_peaks import peak_for, resnet50_published
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.health import check

SAMPLE_FILE = 'gpuops-fio.dat'
# (job name, fio rw, block size): the order of fio_argv's jobs and of the checks
FIO_JOBS = (('sequential', 'read', '1M'), ('random', 'randread', '128k'))
# A directory fio may be handed: absolute, no control character, no ':' (fio's file name separator).
_DIR_RE = re.compile(r'\A/[^\x00-\x1f\x7f:]{0,4095}\Z')
# The loader is I/O-bound when the random read rate, in images, stays within this factor of what it loaded.
IO_BOUND_FACTOR = 1.25
# LMDB loads this much faster than loose files: the report suggests packing the dataset.
PACK_GAIN = 1.5


def directory_problem(path):
    """None, or why fio must not be given ``path``."""
    if not isinstance(path, str) or not _DIR_RE.match(path):
        return '%r is not an absolute directory without control characters or ":"' % (path,)
    return None


def fio_argv(fio, directory, sample_mib, seconds):
    """fio's command: both read jobs one after the other (stonewall) on one sample file that fio
    lays out in ``directory``, each bounded by ``seconds``; buffered reads with fio's default
    ``invalidate=1`` (the file's pages dropped from the page cache before each job)."""
    problem = directory_problem(directory)
    if problem:
        raise ValueError('data path: %s' % problem)
    argv = [fio, '--output-format=json', '--directory=%s' % directory, '--filename=%s' % SAMPLE_FILE,
            '--size=%dM' % int(sample_mib), '--runtime=%d' % int(seconds), '--ioengine=psync', '--invalidate=1']
    for name, rw, block in FIO_JOBS:
        argv += ['--name=%s' % name, '--rw=%s' % rw, '--bs=%s' % block, '--stonewall']
    return argv


def parse_fio(text):
    """``{version, jobs: {name: {rw, bs, read_mbps, read_iops, runtime_ms}}}`` from fio's JSON (text
    before the first ``{`` - fio's own notices - is skipped), or ``{error}``."""
    text = text or ''
    start = text.find('{')
    try:
        data = json.loads(text[start:]) if start >= 0 else None
    except ValueError as exc:
        return {'error': 'fio printed no JSON report (%s)' % exc}
    if not isinstance(data, dict) or not isinstance(data.get('jobs'), list):
        return {'error': 'fio printed no JSON report: %s' % (text.strip()[-200:] or 'no output')}
    jobs = {}
    for job in data['jobs']:
        options = job.get('job options') or {}
        read = job.get('read') or {}
        name = str(job.get('jobname'))
        if job.get('error'):
            jobs[name] = {'error': 'fio job %s failed with error %s' % (name, job.get('error'))}
            continue
        bw_bytes = read.get('bw_bytes')
        if bw_bytes is None:  # fio before 3.x: KiB/s only
            bw_bytes = (read.get('bw') or 0) * 1024
        jobs[name] = {'rw': options.get('rw'), 'bs': options.get('bs'),
                      'read_mbps': round(bw_bytes / 1e6, 1), 'read_iops': round(float(read.get('iops') or 0), 1),
                      'runtime_ms': read.get('runtime')}
    return {'version': data.get('fio version'), 'jobs': jobs}


def demand(gpus, rate_per_gpu):
    """``{images_per_s, reason}``: what the GPUs consume in training - the user's rate per GPU, else
    NVIDIA's published one-GPU ResNet-50 figure of each model; None where there is no GPU, or a
    model has no published figure and no rate was given."""
    gpus = gpus or []
    if not gpus:
        return {'images_per_s': None, 'reason': 'no GPU demand to compare'}
    if rate_per_gpu:
        return {'images_per_s': round(float(rate_per_gpu) * len(gpus), 1),
                'reason': '%d GPU(s) x %s images/s (gpu_validate_data_images_per_gpu)' % (len(gpus), rate_per_gpu)}
    total, models = 0.0, {}
    for gpu in gpus:
        published = resnet50_published(gpu.get('pci_device_id'))
        if published is None:
            peak = peak_for(gpu.get('pci_device_id'))
            return {'images_per_s': None, 'reason': 'no published ResNet-50 training rate for %s: give '
                    'gpu_validate_data_images_per_gpu' % ((peak or {}).get('model') or gpu.get('pci_device_id'))}
        total += published['images_per_s']
        models[published['what']] = models.get(published['what'], 0) + 1
    what = '; '.join('%d x %s' % (count, name) for name, count in sorted(models.items()))
    return {'images_per_s': round(total, 1), 'reason': 'ResNet-50 training, NVIDIA\'s published one-GPU rate: %s'
            % what}


def _figure(value):
    return '{:,.0f}'.format(value) if value is not None else 'unknown'


def _measured(name, subject, value, unit, reason):
    entry = check(name, 'pass', '%s %s' % (value, unit), None, reason, subject)
    entry.update({'measured': value, 'unit': unit, 'fraction': None})
    return entry


def _not_measured(name, subject, reason):
    entry = check(name, 'skip', 'unknown', None, reason, subject)
    entry.update({'measured': None, 'fraction': None})
    return entry


def fio_checks(parsed):
    """One ``data_read`` check per fio job (sequential, random)."""
    out = []
    for name, rw, block in FIO_JOBS:
        if parsed.get('skip'):
            out.append(_not_measured('data_read', name, parsed['skip']))
            continue
        job = (parsed.get('jobs') or {}).get(name)
        error = parsed.get('error') or (job or {}).get('error') or (None if job else 'fio reported no job %s' % name)
        if error:
            out.append(dict(check('data_read', 'warn', None, None, 'the %s read measurement failed: %s' % (name, error),
                                  name), measured=None, fraction=None))
            continue
        out.append(_measured('data_read', name, job['read_mbps'], 'MB/s', '%s read (fio %s, %s blocks, %s ms)' % (
            name, rw, block, job.get('runtime_ms'))))
    return out


def loader_checks(result):
    """``data_loader`` checks (loose, lmdb, dali) from data_measure.py's result."""
    result = result or {}
    if result.get('error') or result.get('skip'):
        why = result.get('skip') or 'the DataLoader measurement failed: %s' % result['error']
        status = 'skip' if result.get('skip') else 'warn'
        out = [dict(_not_measured('data_loader', source, why), status=status) for source in ('loose', 'lmdb')]
    else:
        what = '%d JPEGs (%s bytes on average), %d DataLoader workers, batch %d, page cache dropped' % (
            result.get('images') or 0, _figure(result.get('mean_image_bytes')), result.get('workers') or 0,
            result.get('batch') or 0)
        out = [_measured('data_loader', 'loose', result.get('loose_images_per_s'), 'images/s',
                         'PyTorch DataLoader, Pillow decoding loose files: ' + what),
               _measured('data_loader', 'lmdb', result.get('lmdb_images_per_s'), 'images/s',
                         'PyTorch DataLoader, Pillow decoding from one LMDB pack of the same images: ' + what)]
    dali = result.get('dali') or {}
    if dali.get('images_per_s'):
        out.append(_measured('data_loader', 'dali', dali['images_per_s'], 'images/s',
                             'DALI decoding on the GPU (mixed): %s' % (dali.get('what') or '')))
    else:
        out.append(_not_measured('data_loader', 'dali', dali.get('reason') or 'not measured: no GPU/DALI'))
    return out


def _bottleneck(best, random_mbps, mean_bytes, workers):
    """Why the node loads no more: disk reads (the random read rate, in images, within
    IO_BOUND_FACTOR of what it loaded) or the CPUs decoding."""
    if random_mbps and mean_bytes:
        io_images = random_mbps * 1e6 / mean_bytes
        if io_images <= best * IO_BOUND_FACTOR:
            return 'I/O-bound: random reads of %s MB/s serve about %s images/s' % (_figure(random_mbps),
                                                                                   _figure(io_images))
    return 'CPU-bound at %d workers' % workers


def feed_check(fio_found, loaders, result, need):
    """The verdict ``data_feed``: the best loader against the GPUs' demand."""
    figures = dict((c['subject'], c.get('measured')) for c in loaders if c.get('measured'))
    if not figures:
        return dict(_not_measured('data_feed', 'host', 'nothing loaded: %s' % (
            '; '.join(c['reason'] for c in loaders if c['subject'] != 'dali') or 'no measurement')))
    best_source = max(figures, key=lambda k: figures[k])
    best = figures[best_source]
    hint = ''
    if figures.get('lmdb') and figures.get('loose') and figures['lmdb'] >= PACK_GAIN * figures['loose']:
        hint = '; LMDB loads %.1fx faster than loose files: pack the dataset' % (figures['lmdb'] / figures['loose'])
    wanted = (need or {}).get('images_per_s')
    if not wanted:
        entry = _not_measured('data_feed', 'host', 'loads %s images/s (%s); %s%s' % (
            _figure(best), best_source, (need or {}).get('reason') or 'no GPU demand to compare', hint))
        entry.update(measured=best, value='%s images/s' % best)
        return entry
    random = [c.get('measured') for c in fio_found if c['subject'] == 'random' and c.get('measured')]
    share = round(best / wanted, 3)
    if best >= wanted:
        reason = 'feeds %s of the %s images/s the GPUs need (%s, %s)%s' % (
            _figure(best), _figure(wanted), best_source, need['reason'], hint)
        status = 'pass'
    else:
        why = _bottleneck(best, random[0] if random else None, (result or {}).get('mean_image_bytes'),
                          (result or {}).get('workers') or 0)
        reason = 'feeds %s of the %s images/s the GPUs need: %s (%s, %s)%s' % (
            _figure(best), _figure(wanted), why, best_source, need['reason'], hint)
        status = 'warn'
    entry = check('data_feed', status, '%s images/s' % best, '>= %s images/s' % wanted, reason, 'host')
    entry.update({'measured': best, 'peak': wanted, 'fraction': share, 'threshold': 1.0, 'unit': 'images/s'})
    return entry


def checks(fio_parsed, loader_result, need):
    """Every check of the group ``data`` (without the group key), the verdict last."""
    found = fio_checks(fio_parsed or {})
    loaders = loader_checks(loader_result)
    return found + loaders + [feed_check(found, loaders, loader_result, need)]


def summary(data_checks):
    """The fleet table's line: 'seq 1,234 MB/s, rand 456 MB/s, loose 900, lmdb 1,500 images/s: <verdict>'."""
    by = dict(('%s/%s' % (c['check'], c['subject']), c) for c in data_checks)
    if not by:
        return 'not measured'
    parts = []
    for key, label in (('data_read/sequential', 'seq'), ('data_read/random', 'rand')):
        parts.append('%s %s MB/s' % (label, _figure((by.get(key) or {}).get('measured'))))
    loads = ['%s %s' % (source, _figure((by.get('data_loader/' + source) or {}).get('measured')))
             for source in ('loose', 'lmdb', 'dali') if (by.get('data_loader/' + source) or {}).get('measured')]
    parts.append(('%s images/s' % ', '.join(loads)) if loads else 'images/s unknown')
    feed = by.get('data_feed/host') or {}
    return '%s: %s' % (', '.join(parts), feed.get('reason') or 'no verdict')


def textfile_lines(data_checks, escape):
    """Prometheus lines of the figures (``escape`` quotes a label value)."""
    reads = [c for c in data_checks if c['check'] == 'data_read' and c.get('measured') is not None]
    loads = [c for c in data_checks if c['check'] == 'data_loader' and c.get('measured') is not None]
    feed = [c for c in data_checks if c['check'] == 'data_feed' and c.get('peak')]
    lines = []
    if reads:
        lines += ['# HELP gpuops_validate_data_read_megabytes_per_second Read rate of the dataset path\'s sample '
                  '(fio), by pattern.', '# TYPE gpuops_validate_data_read_megabytes_per_second gauge']
        lines += ['gpuops_validate_data_read_megabytes_per_second{pattern="%s"} %s' % (escape(c['subject']),
                                                                                       c['measured']) for c in reads]
    if loads:
        lines += ['# HELP gpuops_validate_data_images_per_second Images/s a PyTorch DataLoader (or DALI) '
                  'loaded and decoded, by source.', '# TYPE gpuops_validate_data_images_per_second gauge']
        lines += ['gpuops_validate_data_images_per_second{source="%s"} %s' % (escape(c['subject']), c['measured'])
                  for c in loads]
    if feed:
        lines += ['# HELP gpuops_validate_data_demand_images_per_second Images/s the node\'s GPUs consume in '
                  'training (published rate x GPUs, or the user\'s).',
                  '# TYPE gpuops_validate_data_demand_images_per_second gauge',
                  'gpuops_validate_data_demand_images_per_second %s' % feed[0]['peak']]
    return lines


def record(data_checks):
    """What validate.json keeps of the data path besides its checks: the figures and the summary line."""
    by = dict(('%s/%s' % (c['check'], c['subject']), c.get('measured')) for c in data_checks)
    feed = [c for c in data_checks if c['check'] == 'data_feed']
    return {'sequential_read_mbps': by.get('data_read/sequential'), 'random_read_mbps': by.get('data_read/random'),
            'loose_images_per_s': by.get('data_loader/loose'), 'lmdb_images_per_s': by.get('data_loader/lmdb'),
            'dali_images_per_s': by.get('data_loader/dali'),
            'demand_images_per_s': feed[0].get('peak') if feed else None,
            'verdict': feed[0].get('reason') if feed else None, 'summary': summary(data_checks)}
