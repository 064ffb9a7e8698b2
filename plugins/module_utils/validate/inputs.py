# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The input checks of the gpu_validate role, run by the registry of input checks
(core/input_checks.py: host_plan and the role's preflight) before anything is installed or
measured; ``module_problems`` is the public module's guard, made of the same functions.

``input_problems(inputs)`` takes the role's typed inputs (``__gpu_validate``: the variables
converted by its argument spec, without the ``gpu_validate_`` prefix) and returns one message per
careless value, each naming the variable. Every value that reaches a file, a command line
(iperf3, torch.distributed) or the measurements' environment is checked with a full match; paths
with the collection's shared path check (core/systemd.owned_path_error); numbers within bounds;
thresholds through the same functions the module judges with. Pure; tested in
``tests/unit/plugins/module_utils/validate/test_inputs.py`` and by the bad-input table.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import sel_lan
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import SYSTEM_DIRS, owned_path_error
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import balance, perf
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.report import ADDRESS_RE

PREFIX = 'gpu_validate_'
# name -> (lowest, highest)
BOUNDS = {
    'timeout': (1, 600),
    'size_mib': (1, 16384),
    'resnet50_batch': (1, 1024),
    'refresh_days': (1, 3650),
    'retired_page_limit': (0, 1000000),
    'port': (1, 65535),
    'iperf3_port': (1, 65535),
    'dcgm_diag_level': (1, 2),
    'dcgm_diag_timeout': (10, 3600),
    'ib_port': (1, 65535),
    'ib_seconds': (1, 60),
    'data_workers': (0, 1024),
    'data_images': (16, 100000),
    'data_sample_mib': (1, 65536),
    'data_seconds': (1, 600),
    'data_images_per_gpu': (0, 1000000),
}
# Paths the role writes (record_dir, textfile_dir) or reads (env_file, env_prefix, python,
# dataset_path); those that may be empty mean "the default" or "not checked" then.
PATHS = ('record_dir', 'env_file', 'env_prefix')
OPTIONAL_PATHS = ('python', 'dataset_path', 'textfile_dir')
_ENV_NAME_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}')
_GROUP_RE = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}')
_MODEL_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9_. +-]{0,63}')


# The role gives no directory an owner or mode (the module only creates a missing record_dir, 0755):
# a system directory such as /etc/gpuops is a fine place for its files, except these.
_NEVER = ('/', '/proc', '/sys', '/dev', '/run/systemd')


def _path_problem(value, variable):
    if isinstance(value, str) and value in SYSTEM_DIRS and value not in _NEVER:
        return None
    return owned_path_error(value, variable)


def _number_problem(name, value, low, high):
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return '%s%s must be a whole number from %d to %d, got %r' % (PREFIX, name, low, high, value)
    return None


def bound_problems(values, skip=()):
    """The numbers of ``values`` that BOUNDS bounds (those present, but ``skip``), each outside its
    bounds named; the role's check (``input_problems``) and the module's guard share it."""
    return [_number_problem(name, values[name], low, high) for name, (low, high) in sorted(BOUNDS.items())
            if name in values and name not in skip]


def address_problem(value, what):
    """``what``'s address when it is not a host name or IP address (full match), else None."""
    if isinstance(value, str) and ADDRESS_RE.fullmatch(value):
        return None
    return '%s%s: %r is not a host name or IP address' % (PREFIX, what, value)


def input_problems(inputs):
    """Messages naming each gpu_validate_* variable whose value the role must not use (empty: none)."""
    inputs = inputs or {}
    problems = bound_problems(inputs)
    for name in PATHS + OPTIONAL_PATHS:
        value = inputs.get(name)
        if name in OPTIONAL_PATHS and value in ('', None):
            continue
        problems.append(_path_problem(value, PREFIX + name))
    env = inputs.get('python_env')
    if env is not None and not (isinstance(env, str) and _ENV_NAME_RE.fullmatch(env)):
        problems.append('%spython_env: %r must be an environment name of letters, digits and _ . + - '
                        '(at most 64)' % (PREFIX, env))
    if inputs.get('address') not in ('', None):
        problems.append(address_problem(inputs['address'], 'address'))
    group = inputs.get('peer_group')
    if group not in ('', None) and not (isinstance(group, str) and _GROUP_RE.fullmatch(group)):
        problems.append('%speer_group: %r is not an inventory group name' % (PREFIX, group))
    if 'cross_node' in (inputs.get('checks') or []) and not group:
        problems.append('%speer_group must name the inventory group of the cross-node tests when '
                        '%schecks has cross_node' % (PREFIX, PREFIX))
    flags = inputs.get('sel_workaround_flags')
    if flags not in (None, []) and not (isinstance(flags, list) and all(isinstance(f, str) and sel_lan.FLAG_RE.fullmatch(f)
                                                                        for f in flags)):
        problems.append('%ssel_workaround_flags: %r must be FreeIPMI workaround flags (lower-case letters and digits, '
                        'e.g. opensesspriv)' % (PREFIX, flags))
    for model in inputs.get('thresholds_by_model') or {}:
        if not (isinstance(model, str) and _MODEL_RE.fullmatch(model)):
            problems.append('%sthresholds_by_model: %r is not a PCI device id or model name' % (PREFIX, model))
    try:
        perf.validate_thresholds(inputs.get('thresholds'), inputs.get('thresholds_by_model'),
                                 (PREFIX + 'thresholds', PREFIX + 'thresholds_by_model'))
    except (ValueError, AttributeError, TypeError) as exc:
        problems.append(str(exc) if PREFIX in str(exc) else '%sthresholds: %s' % (PREFIX, exc))
    try:
        balance.validate_thresholds(inputs.get('balance_thresholds'), PREFIX + 'balance_thresholds')
    except (ValueError, AttributeError, TypeError) as exc:
        problems.append(str(exc) if PREFIX in str(exc) else '%sbalance_thresholds: %s' % (PREFIX, exc))
    return [p for p in problems if p]


def module_problems(params):
    """The guard of the public module gpuops.dlserver.gpu_validate (a user may call it without the
    role, so without the registry of input checks): the numbers that reach command lines within
    bounds, every peer's address a host name or IP address - by the same functions as the role's
    registered check (``bound_problems``, ``address_problem``), never a second definition."""
    problems = bound_problems(params, skip=('refresh_days',))
    for peer in params.get('peers') or []:
        address = peer.get('address') if isinstance(peer, dict) else None
        problems.append(address_problem(address, 'address of peer %r' % (
            (peer or {}).get('name') if isinstance(peer, dict) else peer,)))
    return [p for p in problems if p]
