#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpu_validate
short_description: Prove a GPU node - health, host balance, measured performance against published peak
version_added: 0.2.0
description:
  - Judges a node from the probe's facts (M(gpuops.dlserver.gpu_facts)) and the plan, plus what it
    reads itself (NVML error counters, the kernel log since boot, the NVIDIA kernel module version,
    Fabric Manager, memory, CPUs, the dataset path's device, NIC speeds). Checks and verdicts are
    pure functions in C(plugins/module_utils/validate/).
  - Performance runs C(plugins/module_utils/validate/measure.py) with the python O(python) names (an
    environment with PyTorch), handed to it with C(-c) - nothing is copied to the host. Each figure is
    reported with its fraction of the model's published peak (C(plugins/module_utils/hardware/gpu_peaks.py)).
  - "Without GPUs and with O(allow_cpu) the measurements run on the CPU with small sizes and are
    reported as C(device: cpu), never judged as GPU results."
  - Cross-node tests (O(peers), two or more) run an all-reduce through C(torch.distributed) (NCCL on
    GPUs, gloo on the CPU) and C(iperf3) toward the first peer; every host of the group must run this
    module at the same time (one task of one play). Each is bounded by O(timeout).
  - Writes C(validate.json) and C(validate.txt) into O(record_dir) and C(gpuops_validate.prom) into
    O(textfile_dir) only when the verdict changed or the record is older than O(refresh_seconds);
    C(changed) says that it did.
  - C(dcgm_diag) runs C(dcgmi diag -r) O(dcgm_diag_level) C(-j) (bounded by O(dcgm_diag_timeout)) where DCGM runs
    (GPUs with a loaded driver, C(dcgmi), the C(nvidia-dcgm) host engine active) and reports every DCGM test,
    a failed one by name with DCGM's message per GPU; elsewhere it is skipped with the reason.
  - With O(ib_write_bw), the cross-node tests also run C(ib_write_bw) (perftest) toward the first peer for
    O(ib_seconds) seconds over the fastest active InfiniBand port and judge the measured Gb/s against the
    port's link rate (the C(network) threshold); a host without an active InfiniBand port skips it with the reason.
  - In check mode only health and balance run and nothing is written.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: partial
    details: health and balance only; no measurement, no file written.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  gpu_facts:
    description: The probe's facts (C(gpuops_gpu)).
    type: dict
    required: true
  plan:
    description: The plan (C(gpuops_plan)); persistence and Fabric Manager decisions are read from it.
    type: dict
    default: {}
  groups:
    description: Which groups of checks run.
    type: list
    elements: str
    choices: [health, balance, performance, cross_node, dcgm_diag]
    default: [health, balance, performance]
  host_name:
    description: The node's name in reports.
    type: str
    required: true
  sysfs_root:
    description: Where the NVIDIA kernel module version is read (a fixture tree in the lab).
    type: path
    default: /sys
  nvml_path:
    description: Extra directories to import the NVML binding from.
    type: list
    elements: path
    default: [/opt/gpuops/nvml]
  retired_page_limit:
    description: Retired pages per GPU above which health fails.
    type: int
    default: 10
  balance_thresholds:
    description: Balance checks that fail instead of warning (C(memory_ratio), C(cpu_cores_per_gpu), C(nic_gbps), C(dataset_nvme)).
    type: dict
    default: {}
  dataset_path:
    description: Path whose block device is judged (NVMe or what it is); empty to skip.
    type: str
    default: ''
  python:
    description: Interpreter of the environment with PyTorch (performance and cross-node).
    type: path
  allow_cpu:
    description: "Without GPUs, run the measurements on the CPU (reported as C(device: cpu))."
    type: bool
    default: false
  thresholds:
    description: Fractions of peak in (0, 1] per metric (C(matmul), C(memory_copy), C(host_device), C(allreduce), C(cross_allreduce), C(network), C(resnet50)).
    type: dict
    default: {}
  thresholds_by_model:
    description: Per model (PCI device id such as C(0x2330), or the table's model name), the same keys as O(thresholds).
    type: dict
    default: {}
  size_mib:
    description: Buffer size of the copy and all-reduce measurements on GPUs (the CPU run caps it at 64).
    type: int
    default: 256
  resnet50:
    description:
      - With C(performance), also train ResNet-50 with mixed precision on random data and report images/s
        per GPU, judged against NVIDIA's published one-GPU figure where one exists (threshold C(resnet50)),
        measured without a verdict elsewhere.
      - "On the CPU (O(allow_cpu)) a tiny run, reported as C(device: cpu) and never judged."
    type: bool
    default: false
  resnet50_batch:
    description: Images per training step of the ResNet-50 measurement on a GPU (the CPU run uses at most 2).
    type: int
    default: 128
  peers:
    description: Every host of the cross-node group, in the same order on every host (C(name), C(address)); the first is rank 0.
    type: list
    elements: dict
    default: []
  rank:
    description: This host's index in O(peers).
    type: int
    default: 0
  port:
    description: TCP port of the all-reduce rendezvous on the first peer.
    type: int
    default: 29511
  iperf3_port:
    description: TCP port of the iperf3 server on the first peer.
    type: int
    default: 5201
  timeout:
    description: Seconds each cross-node test may take to join or connect.
    type: int
    default: 20
  record_dir:
    description: Directory of C(validate.json) and C(validate.txt).
    type: path
    default: /etc/gpuops
  textfile_dir:
    description: node_exporter textfile directory for C(gpuops_validate.prom); empty, or a directory that does not exist, to skip.
    type: str
    default: /var/lib/node_exporter/textfile
  refresh_seconds:
    description: Rewrite an unchanged verdict once its record is this old (keeps the stale alert quiet).
    type: int
    default: 604800
  dcgm_diag_level:
    description: C(dcgmi diag) run level - 1 (quick, about a minute) or 2 (medium, a few minutes).
    type: int
    choices: [1, 2]
    default: 1
  dcgm_diag_timeout:
    description: Seconds C(dcgmi diag) may run before it is stopped and the check fails.
    type: int
    default: 600
  ib_write_bw:
    description: Run C(ib_write_bw) between the cross-node peers where an active InfiniBand port is present.
    type: bool
    default: true
  ib_port:
    description: TCP port of the C(ib_write_bw) server on the first peer (its connection setup).
    type: int
    default: 18515
  ib_seconds:
    description: Seconds each C(ib_write_bw) run measures (C(-D)).
    type: int
    default: 5
  env_file:
    description: A KEY=VALUE file (python_stack's NCCL environment) whose variables the measurements get; ignored when absent.
    type: path
  input_names:
    description: How error messages name O(thresholds), O(thresholds_by_model) and O(balance_thresholds) (a role passes its variable names).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Validate the node
  gpuops.dlserver.gpu_validate:
    gpu_facts: "{{ ansible_facts.gpuops_gpu }}"
    plan: "{{ gpuops_plan }}"
    host_name: "{{ inventory_hostname }}"
    python: /opt/gpuops/envs/pytorch/bin/python
"""

RETURN = r"""
validation:
  description: verdict (pass, warn, fail), worst check, device (cuda, cpu or none), summary line, checks, record decision.
  returned: always
  type: dict
"""

import json
import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import balance as balance_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import dcgm_diag, ib_perf
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import health as health_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import inputs as validate_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import measure, observe, perf, report, runner


_EXTRA_ENV = {}


def _run(argv, timeout):
    return runner.run(argv, timeout, runner.environment(_EXTRA_ENV))


def _observe(p, gpu_facts, run_command):
    gpus = gpu_facts.get('gpus') or []
    counters, nvml_reason = observe.nvml_counters([g.get('pci_bus_id') for g in gpus], p['nvml_path']) \
        if gpus else ({}, None)
    rc, out, dummy = run_command(['journalctl', '-k', '-b', '-q', '-o', 'cat', '--no-pager'])
    if rc != 0:
        rc, out, dummy = run_command(['dmesg'])
    seen = {'counters': counters, 'nvml_reason': nvml_reason, 'kernel_log': out if rc == 0 else None,
            'kernel_module_version': observe.kernel_module_version(p['sysfs_root'])}
    if ((p['plan'] or {}).get('fabric_manager') or {}).get('required'):
        rc, out, dummy = run_command(['systemctl', 'is-active', 'nvidia-fabricmanager'])
        seen['fabric_manager_state'] = (out or '').strip() or 'unknown'
        rc, out, dummy = run_command(['nv-fabricmanager', '--version'])
        seen['fabric_manager_version'] = observe.fabric_manager_version(out) if rc == 0 else None
    return seen


def _numa(gpu):
    """numactl binding to the GPU's own NUMA node, where known and numactl is installed."""
    if gpu.get('numa_node') is not None and os.path.exists('/usr/bin/numactl'):
        return ['/usr/bin/numactl', '--cpunodebind=%d' % gpu['numa_node'], '--membind=%d' % gpu['numa_node']]
    return []


def _local(p, gpus, device, merged):
    python = p['python']
    results = []
    if device == 'cpu':
        rc, out, err = _run(measure.argv(python, 'local', cpu=True, size_mib=p['size_mib']), 300)
        results = perf.local_perf(measure.parse(out) or _failed(err), gpus, merged)
        if p['resnet50']:
            rc, out, err = _run(measure.argv(python, 'resnet50', cpu=True, batch=p['resnet50_batch']), 600)
            results.extend(perf.resnet50_perf(measure.parse(out) or _failed(err), gpus, merged))
    else:
        for index, gpu in enumerate(gpus):
            dtypes = perf.measure_dtypes(gpu)
            rc, out, err = _run(_numa(gpu) + measure.argv(python, 'local', gpu=index, size_mib=p['size_mib'],
                                                          dtype=dtypes['local']), 600)
            results.extend(perf.local_perf(measure.parse(out) or _failed(err), gpus, merged))
            if p['resnet50']:
                rc, out, err = _run(_numa(gpu) + measure.argv(python, 'resnet50', gpu=index,
                                                              batch=p['resnet50_batch'], dtype=dtypes['resnet50']), 600)
                results.extend(perf.resnet50_perf(measure.parse(out) or _failed(err), gpus, merged))
    world = len(gpus) if device == 'cuda' else 2
    if world < 2:
        results.append(health_checks.check('allreduce', 'skip', None, None, 'one GPU: no all-reduce within the node'))
        return results
    port = runner.free_port()
    argvs = [measure.argv(python, 'allreduce', rank=rank, local_rank=rank if device == 'cuda' else None,
                          world=world, master='127.0.0.1', port=port, timeout=p['timeout'],
                          backend='nccl' if device == 'cuda' else 'gloo',
                          size_mib=p['size_mib'] if device == 'cuda' else min(p['size_mib'], 16))
             for rank in range(world)]
    outs = runner.run_parallel(argvs, p['timeout'] + 120, runner.environment(_EXTRA_ENV))
    first = measure.parse(outs[0][1]) or _failed(outs[0][2])
    threshold = perf.thresholds_for(merged, None)['allreduce']
    results.append(perf.allreduce_perf('allreduce', first, perf.node_allreduce_peak(gpus) if device == 'cuda' else None,
                                       threshold, 'all-reduce across the node\'s %d %s' % (
                                           world, 'GPUs (NCCL)' if device == 'cuda' else 'CPU ranks (gloo)')))
    return results


def _failed(err):
    return {'error': (err or 'no output').strip()[-400:]}


def _cross(p, merged, host):
    peers = p['peers']
    rank, world = p['rank'], len(peers)
    master = peers[0]
    results = []
    argv = measure.argv(p['python'], 'allreduce', rank=rank, world=world, master=master['address'], port=p['port'],
                        timeout=p['timeout'], backend='auto', size_mib=16)
    rc, out, err = _run(argv, p['timeout'] + 60)
    result = measure.parse(out) or _failed(err)
    if result.get('error'):
        result['error'] = 'rendezvous %s:%s (peer %s): %s' % (
            master['address'], p['port'], master['name'], result['error'])
    entry = perf.allreduce_perf('cross_allreduce', result, None, merged['default']['cross_allreduce'],
                                'all-reduce across %d nodes (%s)' % (world, result.get('backend') or 'NCCL or gloo'))
    entry['group'] = 'cross_node'
    results.append(entry)
    if rank == 0:
        served, deadline = 0, time.time() + p['timeout'] + 8 * (world - 1)
        while served < world - 1 and time.time() < deadline:
            rc, out, err = _run(['iperf3', '-s', '-1', '-p', str(p['iperf3_port'])], max(1, int(deadline - time.time())))
            served += 1 if rc == 0 else 0
            if rc == 127:
                break
            if rc not in (0, 124):
                time.sleep(1)
        status = 'pass' if served == world - 1 else 'fail'
        results.append(dict(health_checks.check(
            'network', status, '%d of %d peers' % (served, world - 1), '%d peers' % (world - 1),
            '' if status == 'pass' else 'iperf3 server on %s port %s: %d of %d peers connected within the time limit'
            ' (%s)' % (host, p['iperf3_port'], served, world - 1, (err or '').strip()[:200]), host), group='cross_node'))
        return results
    deadline = time.time() + p['timeout']
    while True:
        rc, out, err = _run(['iperf3', '-c', master['address'], '-p', str(p['iperf3_port']), '-t', '2', '-J',
                             '--connect-timeout', '3000'], 30)
        got = observe.iperf3_result(rc, out, err)
        if not got.get('error') or rc == 127 or time.time() > deadline:
            break
        time.sleep(1)
    nic = max([n['speed_mbps'] for n in observe.nics() if n.get('speed_mbps')] or [0]) / 1000.0
    entry = perf.network_check('%s (%s)' % (master['name'], master['address']), p['iperf3_port'], got, nic or None,
                               merged['default']['network'])
    entry['group'] = 'cross_node'
    results.append(entry)
    return results


def _dcgm_diag(p, gpus, driver, module, run_command):
    """dcgmi diag where DCGM runs, else one skipped check with the reason."""
    dcgmi = module.get_bin_path('dcgmi')
    state = None
    if gpus and driver and dcgmi:
        dummy, out, dummy = run_command(['systemctl', 'is-active', dcgm_diag.HOSTENGINE_SERVICE])
        state = (out or '').strip() or 'unknown'
    run, why = dcgm_diag.can_run(gpus, driver, dcgmi, state)
    if not run:
        return [health_checks.check('dcgm_diag', 'skip', None, None, why, 'dcgmi')]
    level = p['dcgm_diag_level']
    rc, out, err = _run(dcgm_diag.argv(dcgmi, level), p['dcgm_diag_timeout'])
    if rc == 124:
        parsed = {'error': 'timed out after %d s (dcgm_diag_timeout)' % p['dcgm_diag_timeout']}
    else:
        parsed = dcgm_diag.parse(out if '{' in (out or '') else '%s\n%s' % (out or '', err or ''))
    return dcgm_diag.checks(parsed, level, rc)


def _ib(p, facts, merged):
    """ib_write_bw toward the group's first host over the fastest active InfiniBand port."""
    devices = [d for nic in facts.get('nics') or [] for d in nic.get('ib_devices') or []]
    port, why = ib_perf.choose_port(observe.ib_ports(p['sysfs_root'], devices))
    if port is None:
        return [health_checks.check('ib_write_bw', 'skip', None, None, why, 'host')]
    peers, rank = p['peers'], p['rank']
    master, world, seconds = peers[0], len(peers), p['ib_seconds']
    if rank == 0:
        served, deadline = 0, time.time() + p['timeout'] + (seconds + 10) * (world - 1)
        err = ''
        while served < world - 1 and time.time() < deadline:
            rc, out, err = _run(ib_perf.server_argv(port, p['ib_port'], seconds), max(1, int(deadline - time.time())))
            served += 1 if rc == 0 and not ib_perf.parse(out).get('error') else 0
            if rc in (124, 127):
                break
        status = 'pass' if served == world - 1 else 'fail'
        return [health_checks.check(
            'ib_write_bw', status, '%d of %d peers' % (served, world - 1), '%d peers' % (world - 1),
            '' if status == 'pass' else 'ib_write_bw server on %s/%s port %s: %d of %d peers measured within the time '
            'limit (%s)' % (port['device'], port['port'], p['ib_port'], served, world - 1, (err or '').strip()[-200:]),
            p['host_name'])]
    deadline = time.time() + p['timeout']
    while True:
        rc, out, err = _run(ib_perf.client_argv(port, p['ib_port'], seconds, master['address']), seconds + 30)
        got = ib_perf.parse(out) if rc == 0 else {'error': (err or out or 'rc %s' % rc).strip()[-300:]}
        if not got.get('error') or rc == 127 or time.time() > deadline:
            break
        time.sleep(1)
    return [ib_perf.verdict('%s (%s)' % (master['name'], master['address']), p['ib_port'], got, port,
                            merged['default']['network'])]


def _write(path, text):
    tmp = '%s.tmp.%d' % (path, os.getpid())
    with open(tmp, 'w') as handle:
        handle.write(text)
    os.chmod(tmp, 0o644)
    os.rename(tmp, path)


def _read_record(path):
    try:
        with open(path) as handle:
            return json.load(handle)
    except (IOError, OSError, ValueError):
        return None


def main():
    module = AnsibleModule(argument_spec=dict(
        gpu_facts=dict(type='dict', required=True),
        plan=dict(type='dict', default={}),
        groups=dict(type='list', elements='str', default=['health', 'balance', 'performance'],
                    choices=['health', 'balance', 'performance', 'cross_node', 'dcgm_diag']),
        host_name=dict(type='str', required=True),
        sysfs_root=dict(type='path', default='/sys'),
        nvml_path=dict(type='list', elements='path', default=['/opt/gpuops/nvml']),
        retired_page_limit=dict(type='int', default=10),
        balance_thresholds=dict(type='dict', default={}),
        dataset_path=dict(type='str', default=''),
        python=dict(type='path'),
        allow_cpu=dict(type='bool', default=False),
        thresholds=dict(type='dict', default={}),
        thresholds_by_model=dict(type='dict', default={}),
        size_mib=dict(type='int', default=256),
        resnet50=dict(type='bool', default=False),
        resnet50_batch=dict(type='int', default=128),
        peers=dict(type='list', elements='dict', default=[]),
        rank=dict(type='int', default=0),
        port=dict(type='int', default=29511),
        iperf3_port=dict(type='int', default=5201),
        timeout=dict(type='int', default=20),
        record_dir=dict(type='path', default='/etc/gpuops'),
        textfile_dir=dict(type='str', default='/var/lib/node_exporter/textfile'),
        refresh_seconds=dict(type='int', default=604800),
        dcgm_diag_level=dict(type='int', default=1, choices=[1, 2]),
        dcgm_diag_timeout=dict(type='int', default=600),
        ib_write_bw=dict(type='bool', default=True),
        ib_port=dict(type='int', default=18515),
        ib_seconds=dict(type='int', default=5),
        env_file=dict(type='path'),
        input_names=dict(type='dict', default={}),
    ), supports_check_mode=True)
    p = module.params
    try:
        names = dict(thresholds='thresholds', thresholds_by_model='thresholds_by_model',
                     balance_thresholds='balance_thresholds')
        names.update(p['input_names'] or {})
        merged = perf.validate_thresholds(p['thresholds'], p['thresholds_by_model'],
                                          (names['thresholds'], names['thresholds_by_model']))
        balance_checks.validate_thresholds(p['balance_thresholds'], names['balance_thresholds'])
        problems = validate_inputs.module_problems(p)
        if problems:
            raise ValueError('; '.join(problems))
    except ValueError as exc:
        module.fail_json(msg='gpu_validate: %s; nothing was measured' % exc)
    _EXTRA_ENV.update(observe.env_file(p['env_file']))
    groups = p['groups']
    facts = p['gpu_facts']
    gpus = facts.get('gpus') or []
    driver = bool(gpus and (facts.get('driver') or {}).get('loaded'))
    device = 'cuda' if driver else ('cpu' if p['allow_cpu'] and not gpus else 'none')
    measuring = not module.check_mode and (('performance' in groups and (driver or p['allow_cpu']))
                                           or 'cross_node' in groups)
    if measuring and not p['python']:
        module.fail_json(msg='gpu_validate: performance and cross_node need python (an environment with PyTorch)')
    if 'cross_node' in groups and (len(p['peers']) < 2 or not 0 <= p['rank'] < len(p['peers'])):
        module.fail_json(msg='gpu_validate: cross_node needs two or more peers and a rank among them')
    no_python, torch_gpus = None, None
    if measuring and not os.access(p['python'], os.X_OK):
        no_python = ('%s is not an executable python: point gpu_validate_python at an environment with PyTorch '
                     '(gpuops.dlserver.python_stack builds one)' % p['python'])

    def run_command(argv):
        return module.run_command(argv, environ_update={'LC_ALL': 'C'})

    checks = []
    if 'health' in groups:
        seen = _observe(p, facts, run_command)
        found = health_checks.health(facts, p['plan'], seen, p['retired_page_limit'])
        checks += [dict(c, group='health') for c in found]
    if 'balance' in groups:
        host = {'memory_mib': observe.memory_mib(), 'cpu_count': observe.cpu_count(),
                'dataset': observe.dataset_device(p['dataset_path']), 'nics': observe.nics()}
        checks += [dict(c, group='balance') for c in balance_checks.balance(facts, host, p['balance_thresholds'])]
    # cross-node first: every host of the group gets here at about the same time (the rendezvous)
    if 'cross_node' in groups and not module.check_mode and no_python:
        checks.append(dict(health_checks.check('cross_allreduce', 'fail', None, None, no_python), group='cross_node'))
    elif 'cross_node' in groups and not module.check_mode:
        checks += _cross(p, merged, p['host_name'])
        if p['ib_write_bw']:
            checks += [dict(c, group='cross_node') for c in _ib(p, facts, merged)]
    if 'dcgm_diag' in groups:
        found = [health_checks.check('dcgm_diag', 'skip', None, None, 'check mode: not run', 'dcgmi')] \
            if module.check_mode else _dcgm_diag(p, gpus, driver, module, run_command)
        checks += [dict(c, group='dcgm_diag') for c in found]
    if 'performance' in groups and measuring and driver and not no_python:
        # What PyTorch sees decides: GPUs on PCI that it cannot use fail performance, and with
        # allow_cpu the measurements still run on the CPU, reported as such.
        rc, out, err = _run(measure.argv(p['python'], 'devices'), 300)
        torch_gpus = (measure.parse(out) or {}).get('device_count') or 0
        if not torch_gpus:
            device = 'cpu' if p['allow_cpu'] else 'none'
    if 'performance' in groups:
        if module.check_mode:
            checks.append(dict(health_checks.check('performance', 'skip', None, None, 'check mode: not measured'),
                               group='performance'))
        elif no_python and (driver or device != 'none'):
            checks.append(dict(health_checks.check('performance', 'fail', None, None, no_python), group='performance'))
        elif driver and torch_gpus == 0:
            checks.append(dict(health_checks.check(
                'performance', 'fail', 0, len(gpus),
                '%d GPU(s) on PCI with a loaded driver, but PyTorch (%s) sees none: a CPU build of torch, or a CUDA '
                'build newer than the driver; no GPU figure measured%s' % (
                    len(gpus), p['python'], ', the CPU measurements below are not GPU results'
                    if device == 'cpu' else ''), 'host'), group='performance'))
            if device == 'cpu':
                checks += [dict(c, group='performance') for c in _local(p, [], 'cpu', merged)]
        elif device == 'none':
            checks.append(dict(health_checks.check(
                'performance', 'fail' if gpus else 'skip', None, None,
                'GPUs present but the driver is not loaded: nothing to measure' if gpus else
                'no GPU, and allow_cpu is false: not measured'), group='performance'))
        else:
            checks += [dict(c, group='performance') for c in _local(p, gpus, device, merged)]
    name, worst = report.verdict(checks)
    now = int(time.time())
    key = report.key_of(checks)
    record_path = os.path.join(p['record_dir'], 'validate.json')
    write, why = report.record_decision(_read_record(record_path), key, now, p['refresh_seconds'])
    if module.check_mode:
        write, why = False, 'check mode: ' + why
    record = {'host': p['host_name'], 'verdict': name, 'worst': worst, 'device': device, 'key': key,
              'timestamp': now, 'summary': report.summary_line(name, worst, device), 'checks': checks}
    written = []
    if write:
        if not os.path.isdir(p['record_dir']):
            os.makedirs(p['record_dir'], 0o755)
        _write(record_path, json.dumps(record, indent=2, sort_keys=True) + '\n')
        _write(os.path.join(p['record_dir'], 'validate.txt'), report.readable(p['host_name'], name, worst, checks,
                                                                              device))
        written = [record_path, os.path.join(p['record_dir'], 'validate.txt')]
        if p['textfile_dir'] and os.path.isdir(p['textfile_dir']):
            prom = os.path.join(p['textfile_dir'], 'gpuops_validate.prom')
            _write(prom, report.textfile(checks, name, now, device))
            written.append(prom)
    record['record'] = {'written': written, 'reason': why}
    module.exit_json(changed=bool(write), validation=record)


if __name__ == '__main__':
    main()
