# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The node side of the module gpuops.dlserver.gpu_validate: check the inputs, observe, measure,
decide the verdict and keep the record - everything its ``main()`` did after the argument spec.

The decisions are in health.py, balance.py, perf.py, report.py, dcgm_diag.py and ib_perf.py
(pure, case tables); this file runs the measurements (runner.py) and reads the host (observe.py)
in the order the groups need. Runs on the managed node: standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import time

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import sel as bmc_sel
from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import sel_lan
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import balance as balance_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import data_path, data_run, dcgm_diag, ib_perf
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


def _lan(params):
    return dict((key, params.get('bmc_' + key)) for key in ('address', 'user', 'password', 'port', 'workaround_flags'))


def _lan_problems(params):
    """The BMC inputs of the SEL's LAN read, where it is asked for (an address, a user and a password)."""
    lan = _lan(params)
    return sel_lan.problems(lan) if 'sel' in (params.get('groups') or []) and sel_lan.wanted(lan) else []


def _sel(module, old_record):
    """The BMC's SEL through the in-band BMC, else over the LAN where the BMC's address and credentials
    are given (bmc/sel_lan.py): (checks, the SEL position to record or None)."""
    devices = [d for d in bmc_sel.BMC_DEVICES if os.path.exists(d)]
    tools = dict((name, module.get_bin_path(name)) for name in ('ipmi-sel', 'ipmitool'))
    lan = _lan(module.params)
    if not devices and sel_lan.wanted(lan):
        tool, why = sel_lan.can_read(lan, tools['ipmi-sel'])
    else:
        tool, why = bmc_sel.can_read(devices, tools)
    if tool is None:
        return [health_checks.check('sel', 'skip', 'unknown', None, why, 'bmc')], None
    if not devices:
        rc, out, err = sel_lan.read(_run, tools[tool], lan)
    else:
        rc, out, err = _run(bmc_sel.argv(tool, tools[tool]), 120)
    if rc != 0:
        return bmc_sel.unreadable(tool, rc, err or out), None
    parsed = bmc_sel.parse(out)
    recorded = (old_record or {}).get('sel') if isinstance(old_record, dict) else None
    return bmc_sel.checks(parsed, recorded, tool), bmc_sel.position(parsed, tool)


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


def validate(module):
    """Run the groups of ``module.params`` on this node: (changed, the validation record).

    Fails the module (``fail_json``) on bad inputs, before anything is measured.
    """
    p = module.params
    try:
        names = dict(thresholds='thresholds', thresholds_by_model='thresholds_by_model',
                     balance_thresholds='balance_thresholds')
        names.update(p['input_names'] or {})
        merged = perf.validate_thresholds(p['thresholds'], p['thresholds_by_model'],
                                          (names['thresholds'], names['thresholds_by_model']))
        balance_checks.validate_thresholds(p['balance_thresholds'], names['balance_thresholds'])
        problems = validate_inputs.module_problems(p) + _lan_problems(p)
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
    if 'data' in groups:
        found = [health_checks.check('data_feed', 'skip', None, None, 'check mode: not measured')] \
            if module.check_mode else data_run.run(p, gpus, runner.environment(_EXTRA_ENV), module.get_bin_path('fio'))
        checks += [dict(c, group='data') for c in found]
    record_path = os.path.join(p['record_dir'], 'validate.json')
    old_record = _read_record(record_path)
    sel_position = None
    if 'sel' in groups:
        found, sel_position = _sel(module, old_record)
        checks += [dict(c, group='sel') for c in found]
    name, worst = report.verdict(checks)
    now = int(time.time())
    key = report.key_of(checks)
    write, why = report.record_decision(old_record, key, now, p['refresh_seconds'])
    if not write and sel_position and sel_position != (old_record.get('sel') if isinstance(old_record, dict) else None):
        # the next validation counts the SEL from here: the position is kept even when the verdict is not new
        write, why = True, 'the SEL has entries the record does not cover'
    if module.check_mode:
        write, why = False, 'check mode: ' + why
    record = {'host': p['host_name'], 'verdict': name, 'worst': worst, 'device': device, 'key': key,
              'timestamp': now, 'summary': report.summary_line(name, worst, device), 'checks': checks}
    if 'data' in groups:
        record['data'] = data_path.record([c for c in checks if c.get('group') == 'data'])
    kept = sel_position or (old_record.get('sel') if isinstance(old_record, dict) else None)
    if kept:
        record['sel'] = kept
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
    return bool(write), record
