# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host balance checks of gpuops.dlserver.gpu_validate (the hardware advice of the articles the
collection starts from): system memory at least the GPUs' memory, CPU cores per GPU, every GPU on
a full-width link, the dataset on NVMe, 10 Gb/s or more toward the other nodes.

Each is a warning with the figures; it fails only where the user set a threshold
(``thresholds``: ``memory_ratio``, ``cpu_cores_per_gpu``, ``nic_gbps``, ``dataset_nvme``).
Pure functions; tested from ``tests/unit/plugins/module_utils/data/validate_balance_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.health import check

ADVICE = {'memory_ratio': 1.0, 'cpu_cores_per_gpu': 4, 'nic_gbps': 10}
THRESHOLD_KEYS = ('memory_ratio', 'cpu_cores_per_gpu', 'nic_gbps', 'dataset_nvme')


def validate_thresholds(thresholds, name='balance threshold'):
    """The balance thresholds the user set (None: warn only). Raises ValueError naming ``name`` and the key."""
    out = {}
    for key, value in (thresholds or {}).items():
        if key not in THRESHOLD_KEYS:
            raise ValueError('%s: %r is not one of %s' % (name, key, ', '.join(THRESHOLD_KEYS)))
        if value is None:
            continue
        if key == 'dataset_nvme':
            if not isinstance(value, bool):
                raise ValueError('%s: dataset_nvme must be true or false, got %r' % (name, value))
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError('%s: %s must be a number above 0, got %r' % (name, key, value))
        out[key] = value
    return out


def _judge(name, ok, value, expected, reason, enforced):
    if ok:
        return check(name, 'pass', value, expected)
    return check(name, 'fail' if enforced else 'warn', value, expected, reason)


def balance(gpu_facts, host, thresholds=None):
    """``host``: ``memory_mib``, ``cpu_count``, ``dataset`` ({path, device, kind} or None),
    ``nics`` ([{name, speed_mbps, kind}])."""
    limits = validate_thresholds(thresholds)
    gpus = (gpu_facts or {}).get('gpus') or []
    out = []
    gpu_mib = sum(int(g.get('memory_total_mib') or (g.get('memory_gb') or 0) * 1024) for g in gpus)
    memory = host.get('memory_mib') or 0
    if gpus and gpu_mib:
        ratio = limits.get('memory_ratio', ADVICE['memory_ratio'])
        out.append(_judge('system_memory', memory >= gpu_mib * ratio, '%d GiB' % (memory // 1024),
                          '>= %d GiB' % (gpu_mib * ratio // 1024),
                          'system memory %d GiB is below %.1fx the GPUs\' %d GiB: data loaders and pinned '
                          'buffers will run short; add memory' % (memory // 1024, ratio, gpu_mib // 1024),
                          'memory_ratio' in limits))
    else:
        out.append(check('system_memory', 'skip', '%d GiB' % (memory // 1024), None,
                         'no GPU memory size known' if gpus else 'no GPU'))
    cpus = host.get('cpu_count') or 0
    if gpus:
        per_gpu = cpus / float(len(gpus))
        want = limits.get('cpu_cores_per_gpu', ADVICE['cpu_cores_per_gpu'])
        out.append(_judge('cpu_cores_per_gpu', per_gpu >= want, round(per_gpu, 1), '>= %s' % want,
                          '%d CPU threads for %d GPUs (%.1f each, advice >= %s): data loading will starve the '
                          'GPUs' % (cpus, len(gpus), per_gpu, want), 'cpu_cores_per_gpu' in limits))
        narrow = ['GPU%s x%s/x%s' % (g.get('index'), (g.get('pcie') or {}).get('current_width'),
                                     (g.get('pcie') or {}).get('max_width'))
                  for g in gpus if (g.get('pcie') or {}).get('current_width') and
                  (g.get('pcie') or {}).get('current_width') < (g.get('pcie') or {}).get('max_width')]
        out.append(check('gpu_link_width', 'warn' if narrow else 'pass', ', '.join(narrow) or 'all full width',
                         'all full width', 'narrow links: %s (see pcie_link)' % ', '.join(narrow) if narrow else ''))
    dataset = host.get('dataset')
    if not dataset:
        out.append(check('dataset_device', 'skip', None, 'nvme', 'no dataset path given'))
    elif dataset.get('error'):
        out.append(check('dataset_device', 'fail' if limits.get('dataset_nvme') else 'warn', None, 'nvme',
                         'dataset path %s: %s' % (dataset.get('path'), dataset['error'])))
    else:
        kind = dataset.get('kind')
        out.append(_judge('dataset_device', kind == 'nvme', '%s (%s)' % (kind, dataset.get('device')), 'nvme',
                          'dataset path %s is on %s (%s), not NVMe: input pipelines may starve the GPUs'
                          % (dataset.get('path'), dataset.get('device'), kind), bool(limits.get('dataset_nvme'))))
    nics = [n for n in host.get('nics') or [] if n.get('speed_mbps')]
    want_gbps = limits.get('nic_gbps', ADVICE['nic_gbps'])
    if not nics:
        out.append(check('nic_speed', 'skip', None, '>= %s Gb/s' % want_gbps,
                         'no physical NIC reports a link speed (virtual NICs, containers)'))
    else:
        best = max(nics, key=lambda n: n['speed_mbps'])
        gbps = best['speed_mbps'] / 1000.0
        value = '%s %g Gb/s%s' % (best['name'], gbps, ' (%s)' % best['kind'] if best.get('kind') else '')
        out.append(_judge('nic_speed', gbps >= want_gbps, value, '>= %s Gb/s' % want_gbps,
                          'fastest NIC %s runs at %g Gb/s, below %s Gb/s: distributed training will wait on the '
                          'network (InfiniBand or RoCE where possible)' % (best['name'], gbps, want_gbps),
                          'nic_gbps' in limits))
    return out
