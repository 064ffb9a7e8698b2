# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the dcgm_exporter role: pure functions, each a value plus a reason.

- ``FIELDS``: the DCGM fields the role knows (name -> Prometheus type, help text), built from
  ``dcgm_fields.FIELD_ROWS``, each row with its source: NVIDIA/dcgm-exporter
  ``etc/default-counters.csv`` (types and help texts as the exporter ships them) and DCGM's
  ``dcgm_fields.h`` (every name; the meaning of the fields the exporter's file does not list). A
  name outside the table fails in preflight, naming the variable it came from.
- ``decide(inputs, plan, gpu, platform)``: the counters CSV (profiling ``DCGM_FI_PROF_*`` fields
  only where the plan says the GPUs support DCGM profiling, each dropped field with its reason),
  the CUDA major of the DCGM packages, the MIG handling, the exporter's command line (host mode:
  ``-r <hostengine>`` so that no second host engine starts; container mode: the engine's
  ``run`` command with the GPUs passed in and ``SYS_ADMIN`` only for profiling), the packages,
  the repository and the status record. Errors name the variable to change.

The role reaches this through the filter ``gpuops.dlserver.__private.dcgm_exporter_config``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import quote_arg as systemd_quote
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm_fields, dcgm_inputs, dcgm_packages

# name: (Prometheus type, help). Profiling fields are the DCGM_FI_PROF_* names. Built from
# dcgm_fields.FIELD_ROWS, each row with its source (dcgm-exporter's counters file, dcgm_fields.h).
FIELDS = dict((row['name'], (row['type'], row['help'])) for row in dcgm_fields.FIELD_ROWS)

PROFILING_PREFIX = 'DCGM_FI_PROF_'
TYPES = ('gauge', 'counter', 'label')
# The CUDA majors DCGM 4 ships packages for (datacenter-gpu-manager-4-cuda<major>), each with its source.
_DCGM_PACKAGING = ('NVIDIA/DCGM v4.6.0 cmake/packaging.cmake (https://github.com/NVIDIA/DCGM): '
                   '"set(CPACK_DEBIAN_CUDA%s_PACKAGE_NAME \"${CPACK_PACKAGE_NAME}-cuda%s\")"; the same file names the '
                   'RPM package alike (CPACK_RPM_CUDA%s_PACKAGE_NAME)')
CUDA_MAJOR_ROWS = tuple({'cuda_major': major, 'package': 'datacenter-gpu-manager-4-cuda%s' % major,
                         'source': _DCGM_PACKAGING % (major, major, major), 'read': '2026-12-07'}
                        for major in ('11', '12', '13'))
CUDA_MAJORS = tuple(row['cuda_major'] for row in CUDA_MAJOR_ROWS)
# Driver branch from which each CUDA major's DCGM packages work: CUDA's minimum driver of the
# major (minor-version compatibility; python_env/cuda_match.py MINOR_COMPAT_ROWS says the same and a
# unit test keeps the two in step). One row per major, newest first, with its source and read date.
_CUDA_COMPAT = ('CUDA Compatibility guide, "Minor Version Compatibility", Table 1 '
                '(https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html): "CUDA %s.x >= %d"'
                '; DCGM installation guide: datacenter-gpu-manager-4-cuda<major> matches the driver\'s CUDA major')
CUDA_MIN_BRANCH_ROWS = tuple({'cuda_major': major, 'branch': branch, 'source': _CUDA_COMPAT % (major, branch),
                              'read': '2026-12-07'} for major, branch in (('13', 580), ('12', 525), ('11', 450)))
CUDA_MIN_BRANCH = tuple((row['cuda_major'], row['branch']) for row in CUDA_MIN_BRANCH_ROWS)
CONTAINER_NAME = 'dcgm-exporter'
CONTAINER_CSV = '/etc/dcgm-exporter/gpuops-counters.csv'

# Used with fullmatch: a trailing $ would let a trailing newline through (":9400\n").
_ADDRESS_RE = re.compile(r'(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]*):(?P<port>\d{1,5})')
_DEVICES_RE = re.compile(r'f|[gi](:\d+(-\d+)?(,\d+(-\d+)?)*)?')
_NAME_RE = re.compile(r'DCGM_FI_[A-Z0-9_]+')


def _err(variable, message):
    return {'variable': variable, 'message': '%s: %s' % (variable, message)}


def check_address(value, variable):
    """None when ``value`` is ``[host]:port`` with a port 1-65535, else an error naming ``variable``."""
    match = _ADDRESS_RE.fullmatch(value if isinstance(value, str) else '')
    if not match or not 0 < int(match.group('port')) < 65536:
        return _err(variable, '%r is not a listen address of the form [HOST]:PORT (":9400", "127.0.0.1:9400", '
                              '"[::1]:9400") with a port from 1 to 65535' % (value,))
    return None


def parse_counter(entry, variable):
    """One counters entry (a field name, or a dict with name/type/help) -> (counter, error)."""
    if isinstance(entry, str):
        entry = {'name': entry}
    if not isinstance(entry, dict) or not isinstance(entry.get('name'), str):
        return None, _err(variable, 'each entry is a DCGM field name or a dictionary with name (and optional '
                                    'type and help), got %r' % (entry,))
    unknown_keys = sorted(set(entry) - set(('name', 'type', 'help')))
    if unknown_keys:
        return None, _err(variable, 'entry %s has unknown keys %s (allowed: name, type, help)'
                          % (entry['name'], ', '.join(unknown_keys)))
    name = entry['name'].strip(' ')
    if not _NAME_RE.fullmatch(name) or name not in FIELDS:
        close = sorted(f for f in FIELDS if name and (name[8:] in f or f[8:] in name))[:3] if name else []
        hint = ' (did you mean %s?)' % ', '.join(close) if close else ''
        return None, _err(variable, '%r is not a DCGM field known to this collection%s. Known fields are listed in '
                                    'plugins/module_utils/monitoring/dcgm.py (FIELDS)' % (name, hint))
    ftype, fhelp = FIELDS[name]
    ctype = entry.get('type') or ftype
    if ctype not in TYPES:
        return None, _err(variable, 'type of %s is %r; allowed: %s' % (name, ctype, ', '.join(TYPES)))
    chelp = entry.get('help') if entry.get('help') is not None else fhelp
    if not isinstance(chelp, str) or ',' in chelp or '\n' in chelp:
        return None, _err(variable, 'help of %s must be one line of text without commas (the CSV separator)' % name)
    return {'name': name, 'type': ctype, 'help': chelp.strip(), 'source': variable}, None


def verify_url(address):
    """The URL verify reads: the listen address, with a wildcard host replaced by loopback."""
    match = _ADDRESS_RE.fullmatch(address or '')
    if not match:
        return None
    host = match.group('host')
    if host in ('', '0.0.0.0'):
        host = '127.0.0.1'
    elif host == '[::]':
        host = '[::1]'
    return 'http://%s:%s/metrics' % (host, match.group('port'))


def render_csv(counters, header):
    """The collectors file dcgm-exporter reads with -f (``FIELD, type, help`` per line)."""
    lines = ['# %s' % line for line in header.splitlines()]
    lines.append('# Format: DCGM field, Prometheus metric type, help message')
    lines.extend('%s, %s, %s' % (c['name'], c['type'], c['help']) for c in counters)
    return '\n'.join(lines) + '\n'


def decide_cuda_major(requested, gpu):
    """CUDA major of the DCGM packages (datacenter-gpu-manager-4-cuda<major>)."""
    if requested != 'auto':
        return {'value': requested, 'reason': 'dcgm_exporter_cuda_major is %s' % requested}
    driver = (gpu or {}).get('driver') or {}
    cuda = driver.get('cuda_version')
    if cuda:
        major = str(cuda).split('.', 1)[0]
        if major in CUDA_MAJORS:
            return {'value': major, 'reason': 'the loaded driver supports CUDA %s' % cuda}
    version = driver.get('version')
    if version:
        branch = versions.branch(version)
        if branch is not None:
            for major, low in CUDA_MIN_BRANCH:
                if branch >= low:
                    return {'value': major, 'reason': 'driver %s (branch %d) runs CUDA %s' % (version, branch, major)}
    return {'value': '12', 'reason': 'the driver version is not known here (not loaded): CUDA 12 packages, which '
                                     'every driver from R525 on runs; set dcgm_exporter_cuda_major to choose'}


_COUNTER_LISTS = ('counters', 'profiling_counters', 'counters_extra')


def _counter_entries(inputs):
    """Each entry of the three counters lists as (variable, counter, error): one parse, which the
    registry's check (input_problems) reads for the errors and decide() for the counters."""
    for key in _COUNTER_LISTS:
        variable = 'dcgm_exporter_' + key
        entries = inputs.get(key) or []
        if not isinstance(entries, list):
            yield variable, None, _err(variable, 'must be a list')
            continue
        for entry in entries:
            counter, error = parse_counter(entry, variable)
            if not error and key == 'profiling_counters' and not counter['name'].startswith(PROFILING_PREFIX):
                counter, error = None, _err(variable, '%s is not a profiling (DCGM_FI_PROF_*) field; list it in '
                                                      'dcgm_exporter_counters_extra' % counter['name'])
            yield variable, counter, error


def input_problems(inputs):
    """``[(variable, message)]`` of what needs no plan: the device selection's form and every
    counters entry (a known DCGM field, its type and help). Run by the registry of input checks
    (core/input_checks.py) before any change; decide() refuses only what needs the plan."""
    found = []
    devices = inputs.get('devices')
    if not isinstance(devices, str) or not _DEVICES_RE.fullmatch(devices):
        found.append(('dcgm_exporter_devices', '%r is not a device selection of dcgm-exporter: f, g, i, '
                                               'g:0,1 or i:0-3' % (devices,)))
    found.extend((error['variable'], error['message'].split(': ', 1)[1])
                 for _variable, _counter, error in _counter_entries(inputs) if error)
    return found


def _gather_counters(inputs, profiling, mig_capable):
    """The counters this host exports, and those the plan's profiling decision drops (the entries
    the registry refused never reach here)."""
    kept, dropped, seen = [], [], set()
    for variable, counter, _error in _counter_entries(inputs):
        if counter is None or counter['name'] in seen:
            continue
        seen.add(counter['name'])
        if counter['name'].startswith(PROFILING_PREFIX) and not profiling['value']:
            dropped.append({'name': counter['name'], 'source': variable,
                            'reason': 'DCGM profiling is off on this host: %s' % profiling['reason']})
            continue
        kept.append(counter)
    if mig_capable and 'DCGM_FI_DEV_MIG_MODE' not in seen:
        kept.append({'name': 'DCGM_FI_DEV_MIG_MODE', 'type': 'gauge', 'help': FIELDS['DCGM_FI_DEV_MIG_MODE'][1],
                     'source': 'MIG-capable GPUs (the plan)'})
    return kept, dropped


def _decide_mig(inputs, plan, errors):
    mig = plan.get('mig') or {}
    capable = list(mig.get('capable_gpus') or [])
    devices = inputs.get('devices')
    if not capable:
        return {'capable_gpus': [], 'reason': 'no MIG-capable GPU: GPUs are reported as whole devices'}
    if mig.get('mode') == 'enabled' and isinstance(devices, str) and devices.startswith('g'):
        errors.append(_err('dcgm_exporter_devices', 'is %s, but nvidia_driver_mig_mode enables MIG on %d GPU(s): '
                                                    'in MIG mode dcgm-exporter reports GPU instances only, so use f '
                                                    'or i' % (devices, len(capable))))
    reason = ('%d MIG-capable GPU(s): DCGM_FI_DEV_MIG_MODE is exported, and with devices %s GPU instances are '
              'reported separately (labels GPU_I_ID, GPU_I_PROFILE) where MIG is enabled' % (len(capable), devices))
    return {'capable_gpus': capable, 'reason': reason}


def _host_args(inputs, csv_path):
    return ['-f', csv_path, '-a', inputs['listen_address'], '-c', str(inputs['collect_interval_ms']),
            '-d', inputs['devices'], '-r', inputs['hostengine_address']]


def _container_command(inputs, profiling, csv_path):
    engine = inputs['container_engine']
    image = dcgm_inputs.image_reference(inputs)
    gpu_args = {'gpus': ['--gpus', 'all'],
                'runtime': ['--runtime', 'nvidia', '--env', 'NVIDIA_VISIBLE_DEVICES=all'],
                'cdi': ['--device', 'nvidia.com/gpu=all']}[inputs['container_gpu_access']]
    caps = ['SYS_ADMIN'] if profiling['value'] else []
    argv = ['/usr/bin/%s' % engine, 'run', '--rm', '--name', CONTAINER_NAME, '--network', 'host', '--pull', 'never',
            '--read-only', '--security-opt', 'no-new-privileges', '--cap-drop', 'ALL']
    for cap in caps:
        argv += ['--cap-add', cap]
    argv += gpu_args
    argv += ['--volume', '%s:%s:ro' % (csv_path, CONTAINER_CSV), image,
             '-f', CONTAINER_CSV, '-a', inputs['listen_address'], '-c', str(inputs['collect_interval_ms']),
             '-d', inputs['devices']]
    return {'image': image, 'argv': argv, 'capabilities': caps,
            'engine': engine,
            'stop': ['/usr/bin/%s' % engine, 'rm', '--force', CONTAINER_NAME],
            'capabilities_reason': ('SYS_ADMIN: the embedded host engine reads profiling (DCP) counters'
                                    if caps else 'no capability: profiling is off, nothing needs SYS_ADMIN')}


def _repository(inputs):
    """Where the role keeps NVIDIA's CUDA repository when it manages it. The URL and the key are the
    collection's (gpuops_cuda_repo: roles/common/tasks/cuda_repo.yml), the files are written by
    roles/common/tasks/package_repo.yml (module gpuops.dlserver.__private.package_repository)."""
    return {'manage': bool(inputs.get('repo_manage')), 'key_path': '/etc/apt/keyrings/gpuops-dcgm.asc',
            'sources_file': '/etc/apt/sources.list.d/gpuops-dcgm.sources'}


def decide(inputs, plan, gpu=None, platform=None):
    """Everything the role does, from its typed inputs and the host's plan.

    ``inputs``: the role's variables without the prefix (``__dcgm_exporter``); ``plan``:
    ``gpuops_plan``; ``gpu``: ``gpuops_gpu``; ``platform``: ``config_dir``.
    """
    platform = platform or {}
    errors = []
    roles = (plan.get('roles') or {}).get('dcgm_exporter') or {}
    run = bool(roles.get('run'))
    reason = roles.get('reason') or 'the plan has no dcgm_exporter decision'
    dcgm = plan.get('dcgm') or {}
    prof = dcgm.get('profiling') or {}
    profiling = {'value': bool(prof.get('value')), 'reason': prof.get('reason') or 'the plan says nothing',
                 'supported_gpus': list(prof.get('supported_gpus') or [])}

    # The values alone (mode, addresses, interval, CUDA major, engine, image, paths, versions) were
    # checked on the controller before any change by the registry of input checks
    # (core/input_checks.py: the argument spec's choices, value_kinds' listen addresses and numbers,
    # dcgm_inputs.problems, input_problems below: the device selection's form and every counters
    # entry); what is refused here needs the plan: the device selection against its MIG decision
    # and the counters against its profiling decision.
    mode = inputs.get('mode')
    cuda_requested = str(inputs.get('cuda_major'))

    mig = _decide_mig(inputs, plan, errors)
    counters, dropped = _gather_counters(inputs, profiling, bool(mig['capable_gpus']))
    if not counters and not errors:
        errors.append(_err('dcgm_exporter_counters', 'no field is left to export on this host (every field listed '
                                                     'was dropped); add fields that are not DCGM_FI_PROF_*'))
    cuda = decide_cuda_major(cuda_requested, gpu)
    proprietary = dcgm_packages.decide_proprietary(inputs.get('dcgm_proprietary'), profiling, gpu)

    config_dir = platform.get('config_dir') or '/etc/dcgm-exporter'
    csv_path = '%s/gpuops-counters.csv' % config_dir
    header = ('Managed by Ansible (gpuops.dlserver.dcgm_exporter): local changes are overwritten.\n'
              'Set dcgm_exporter_counters, dcgm_exporter_profiling_counters or dcgm_exporter_counters_extra instead.')
    result = {
        'ok': not errors,
        'errors': errors,
        'run': run,
        'reason': reason,
        'mode': mode,
        'profiling': profiling,
        'mig': mig,
        'cuda_major': cuda,
        'proprietary': proprietary,
        'counters': counters,
        'dropped': dropped,
        'metric_names': [c['name'] for c in counters],
        'csv_path': csv_path,
        'csv': render_csv(counters, header) if not errors else '',
        'hostengine': None,
        'status_listen': inputs.get('listen_address'),
        'verify_url': verify_url(inputs.get('listen_address')) if not errors else None,
        'unit': '',
        'container': None,
        'exec_start': [],
        'packages': [],
        'packages_missing': [],
        'repository': None,
        'adopt': dict((plan.get('adopt') or {}).get('dcgm_exporter') or {}),
        'stop_units': [],
    }
    if errors or not run:
        result['status'] = status(result)
        return result
    if mode == 'host':
        result.update({
            'exec_start': [inputs['binary']] + _host_args(inputs, csv_path),
            'packages': dcgm_packages.packages(inputs, cuda, proprietary),
            'packages_missing': packages_missing(dcgm_packages.packages(inputs, cuda, proprietary), gpu),
            'hostengine': {'service': 'nvidia-dcgm', 'address': inputs['hostengine_address'],
                           'reason': 'the exporter connects to the nvidia-dcgm host engine (-r %s) instead of '
                                     'starting an embedded one' % inputs['hostengine_address']},
            'repository': _repository(inputs),
        })
    else:
        container = _container_command(inputs, profiling, csv_path)
        result.update({'container': container, 'exec_start': container['argv']})
    result['unit'] = render_unit(result)
    result['stop_units'] = stop_units(result['adopt'], UNIT_NAME)
    result['status'] = status(result)
    return result


UNIT_NAME = 'dcgm-exporter.service'


def packages_missing(wanted, gpu):
    """The DCGM packages the host lacks, from the probe's one read of the package state
    (``gpuops_gpu.components.dcgm_exporter.packages``): a converged host skips apt. Where the probe
    did not read the packages, every one counts as missing (apt decides, as before)."""
    found = (((gpu or {}).get('components') or {}).get('dcgm_exporter') or {}).get('packages')
    if not isinstance(found, dict):
        return list(wanted)
    return [name for name in wanted if not found.get(name)]


def stop_units(adopted, own):
    """The exporter units someone else runs that the role stops and disables when it takes over
    (``dcgm_exporter_adopt``: the plan's ``adopt.dcgm_exporter`` names them); its own unit, at the
    same name, is rewritten instead."""
    if adopted.get('action') != 'adopt':
        return []
    return [unit for unit in adopted.get('units') or [] if unit != own]


# Host mode: the exporter only talks to the host engine over TCP and serves HTTP, so it runs
# as a transient user with no capability, no device and a read-only view of the system.
_HOST_SANDBOX = (
    'DynamicUser=yes', 'NoNewPrivileges=yes', 'CapabilityBoundingSet=', 'AmbientCapabilities=',
    'ProtectSystem=strict', 'ProtectHome=yes', 'PrivateTmp=yes', 'PrivateDevices=yes',
    'ProtectKernelTunables=yes', 'ProtectKernelModules=yes', 'ProtectKernelLogs=yes', 'ProtectControlGroups=yes',
    'ProtectClock=yes', 'ProtectHostname=yes', 'RestrictNamespaces=yes', 'RestrictRealtime=yes',
    'RestrictSUIDSGID=yes', 'LockPersonality=yes', 'SystemCallArchitectures=native',
    'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX', 'UMask=0077',
)


def render_unit(result):
    """The systemd unit of the exporter (dcgm-exporter.service) for ``result`` of decide()."""
    header = '# Managed by Ansible (gpuops.dlserver.dcgm_exporter): local changes are overwritten.'
    exec_start = 'ExecStart=' + ' '.join(systemd_quote(a) for a in result['exec_start'])
    if result['mode'] == 'host':
        unit = ['[Unit]', 'Description=NVIDIA DCGM exporter on %s (host engine %s)'
                % (result['status_listen'], result['hostengine']['address']),
                'Documentation=https://docs.nvidia.com/datacenter/cloud-native/gpu-telemetry/latest/dcgm-exporter.html',
                'Requires=nvidia-dcgm.service', 'After=network-online.target nvidia-dcgm.service',
                'Wants=network-online.target', '', '[Service]', 'Type=simple', exec_start,
                'Restart=on-failure', 'RestartSec=5']
        unit += list(_HOST_SANDBOX)
    else:
        container = result['container']
        engine = container['engine']
        needs = ['Requires=docker.service', 'After=network-online.target docker.service'] if engine == 'docker' \
            else ['After=network-online.target']
        stop = ' '.join(systemd_quote(a) for a in container['stop'])
        unit = ['[Unit]', 'Description=NVIDIA DCGM exporter on %s (container %s)'
                % (result['status_listen'], container['image']),
                'Documentation=https://docs.nvidia.com/datacenter/cloud-native/gpu-telemetry/latest/dcgm-exporter.html',
                'Wants=network-online.target'] + needs
        unit += ['', '[Service]', 'Type=simple', 'ExecStartPre=-' + stop, exec_start, 'ExecStop=' + stop,
                 'Restart=on-failure', 'RestartSec=5', 'TimeoutStartSec=120']
    unit += ['', '[Install]', 'WantedBy=multi-user.target']
    return header + '\n' + '\n'.join(unit) + '\n'


def status(result):
    """The record written to the status file (stable values only)."""
    record = {
        'run': result['run'],
        'reason': result['reason'],
        'mode': result['mode'],
        'profiling': {'value': result['profiling']['value'], 'reason': result['profiling']['reason']},
        'mig': result['mig'],
    }
    if result['adopt'].get('action') in ('leave', 'adopt'):
        # what the collection did not install (plan/adopt.py): who, why, and what the role stops on adopt
        record['adopt'] = dict(result['adopt'], left_alone=result['adopt']['action'] == 'leave')
    if result['run']:
        record.update({
            'cuda_major': result['cuda_major'],
            'metrics': result['metric_names'],
            'dropped': result['dropped'],
            'counters_file': result['csv_path'],
            'exec_start': result['exec_start'],
            'packages': result['packages'],
        })
        if result['mode'] == 'host':
            record['proprietary'] = result['proprietary']
        if result['container']:
            record['capabilities'] = {'value': result['container']['capabilities'],
                                      'reason': result['container']['capabilities_reason']}
    return record
