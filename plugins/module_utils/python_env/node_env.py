# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The framework environment variables python_stack writes once per node (NCCL, CUDA,
TensorFlow), each with its reason, and the files that carry them: a profile.d script for login
shells (with conda's shell hook) and a KEY=VALUE file for units and launchers.

Every value written into the shell script is quoted for the shell (``shell_quote``); values and
the conda prefix are single-line (``\n`` refused before anything is written).
Standard library only, Python 3.8+ (imported by the module python_stack_host on the nodes).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_ENV_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_SHELL_SAFE = re.compile(r'[A-Za-z0-9_.,:/=+-]*')
# An absolute path of printable characters without a newline (the conda prefix, the environments'
# prefix): anything else in it is quoted where it reaches the shell.
_ABS_PATH = re.compile(r'/[^\x00-\x1f\x7f]*')


def valid_abs_path(value):
    """Whether ``value`` is an absolute path on one line, without control characters."""
    return isinstance(value, str) and _ABS_PATH.fullmatch(value) is not None


def shell_quote(value):
    """``value`` as one POSIX shell word."""
    value = str(value)
    if _SHELL_SAFE.fullmatch(value) and value:
        return value
    return "'" + value.replace("'", "'\"'\"'") + "'"


def env_defaults(gpu, overrides):
    """[{name, value, reason}] the framework environment variables for this node.

    ``gpu``: the gpuops_gpu facts; ``overrides``: python_stack_env_defaults (a value of null
    drops a default, any other value replaces or adds one)."""
    gpu = gpu or {}
    out = []
    if gpu.get('gpu_count', 0) > 0:
        out.append({'name': 'CUDA_DEVICE_ORDER', 'value': 'PCI_BUS_ID',
                    'reason': 'CUDA numbers GPUs in PCI order, as nvidia-smi and NVML do (default: fastest first)'})
        out.append({'name': 'NCCL_DEBUG', 'value': 'WARN',
                    'reason': 'NCCL prints why a collective fell back or failed without flooding the logs'})
        hcas = []
        for nic in gpu.get('nics') or []:
            if nic.get('nvlink_switch_mgmt') is True:
                continue
            for dev in nic.get('ib_devices') or []:
                if dev not in hcas:
                    hcas.append(dev)
        if hcas:
            out.append({'name': 'NCCL_IB_HCA', 'value': ','.join(sorted(hcas)),
                        'reason': 'the RDMA devices the probe found (NVSwitch management ports left out), so NCCL '
                                  'does not pick a management port'})
        else:
            out.append({'name': 'NCCL_IB_DISABLE', 'value': '1',
                        'reason': 'the probe found no RDMA device: NCCL uses sockets without probing InfiniBand'})
        out.append({'name': 'TF_FORCE_GPU_ALLOW_GROWTH', 'value': 'true',
                    'reason': 'TensorFlow allocates GPU memory as needed instead of all of it at start'})
    overrides = overrides or {}
    result = [d for d in out if d['name'] not in overrides]
    for name in sorted(overrides):
        if overrides[name] is None:
            continue
        result.append({'name': name, 'value': str(overrides[name]), 'reason': 'set in python_stack_env_defaults'})
    return sorted(result, key=lambda d: d['name'])


def env_default_problems(overrides):
    """Problems of python_stack_env_defaults (names must be shell variable names)."""
    problems = []
    for name, value in sorted((overrides or {}).items()):
        if not _ENV_NAME.fullmatch(str(name)):
            problems.append('python_stack_env_defaults: %r is not an environment variable name' % (name,))
        elif value is not None and (isinstance(value, (dict, list)) or '\n' in str(value)):
            problems.append('python_stack_env_defaults: %s must be a single-line value, not %r' % (name, value))
    return problems


def render_profile(defaults, links, conda_prefix=None):
    """/etc/profile.d script: the env defaults exported, conda's shell hook when installed."""
    lines = ['# gpuops.dlserver.python_stack: framework defaults and environments for every login shell.',
             '# Managed by Ansible; change python_stack_env_defaults instead of editing.']
    for item in defaults:
        lines.append('# %s' % item['reason'])
        lines.append('export %s=%s' % (item['name'], shell_quote(item['value'])))
    if links:
        lines.append('# Environments: source <path>/bin/activate (venv) or conda activate <path> (conda):')
        for link in links:
            lines.append('#   %s' % link)
    if conda_prefix:
        if not valid_abs_path(conda_prefix):
            raise ValueError('python_stack_conda_prefix must be an absolute path on one line, not %r' % (conda_prefix,))
        hook = shell_quote(conda_prefix.rstrip('/') + '/etc/profile.d/conda.sh')
        lines.append('if [ -f %s ]; then . %s; fi' % (hook, hook))
    return '\n'.join(lines) + '\n'


def render_env_file(defaults):
    """KEY=VALUE file for systemd EnvironmentFile= and job launchers."""
    return ''.join('%s=%s\n' % (d['name'], d['value']) for d in defaults)
