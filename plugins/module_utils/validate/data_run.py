# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node side of gpu_validate's ``data`` group: make a sample directory on the dataset path
(``gpu_validate_dataset_path``; else /var/tmp), run fio and data_measure.py in it, each bounded in
time, and remove it - also when a measurement fails or times out. data_path.py judges.
Runs on the managed node: standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import tempfile

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import data_measure, data_path, runner

DEFAULT_DIR = '/var/tmp'
# What the sample needs besides fio's file: the JPEGs twice (loose and LMDB), about 60 KB each, and slack.
_IMAGE_ALLOWANCE = 2 * 128 * 1024
LOADER_TIMEOUT = 600


def _free_bytes(path):
    try:
        stat = os.statvfs(path)
        return stat.f_bavail * stat.f_frsize
    except OSError:
        return None


def where(dataset_path):
    """(directory the sample goes under, why not) - the dataset path where given and a directory."""
    base = dataset_path or DEFAULT_DIR
    problem = data_path.directory_problem(base)
    if problem:
        return None, 'not measured: gpu_validate_dataset_path %s' % problem
    if not os.path.isdir(base):
        return None, 'not measured: %s is not a directory' % base
    return base, None


def run(p, gpus, env, fio_bin):
    """The checks of the group ``data`` (without the group key)."""
    need = data_path.demand(gpus, p.get('data_images_per_gpu'))
    base, why = where(p.get('dataset_path'))
    workers = p.get('data_workers') or os.cpu_count() or 1
    wanted = p['data_sample_mib'] * 1048576 + p['data_images'] * _IMAGE_ALLOWANCE
    free = _free_bytes(base) if base else None
    if base and free is not None and free < 2 * wanted:
        why = 'not measured: %s has %d MiB free; the sample takes about %d MiB and twice that must be free' % (
            base, free // 1048576, wanted // 1048576)
    if why:
        return data_path.checks({'skip': why}, {'skip': why}, need)
    sample = tempfile.mkdtemp(prefix='.gpuops-data-', dir=base)
    try:
        if fio_bin:
            rc, out, err = runner.run(data_path.fio_argv(fio_bin, sample, p['data_sample_mib'], p['data_seconds']),
                                      2 * p['data_seconds'] + 120, env)
            parsed = data_path.parse_fio(out)
            if rc != 0 and not parsed.get('error'):
                parsed = {'error': 'fio exited %d: %s' % (rc, (err or '').strip()[-300:])}
            elif parsed.get('error') and err:
                parsed['error'] += ': ' + err.strip()[-300:]
            fio_file = os.path.join(sample, data_path.SAMPLE_FILE)
            if os.path.exists(fio_file):  # room for the JPEGs
                os.remove(fio_file)
        else:
            parsed = {'skip': 'not measured: fio is not installed (gpu_validate_fio_install)'}
        if p.get('python') and os.access(p['python'], os.X_OK):
            rc, out, err = runner.run(data_measure.argv(p['python'], sample, p['data_images'], workers), LOADER_TIMEOUT,
                                      env)
            loaded = data_measure.parse(out) or {'error': (err or 'no output (rc %s)' % rc).strip()[-400:]}
        else:
            loaded = {'skip': ('not measured: %s is not an executable python (gpu_validate_python)' % p['python'])
                      if p.get('python') else 'not measured: no python to measure with (gpu_validate_python)'}
    finally:
        shutil.rmtree(sample, ignore_errors=True)
    if not loaded.get('error') and not loaded.get('skip'):
        loaded.setdefault('workers', workers)
    return data_path.checks(parsed, loaded, need)
