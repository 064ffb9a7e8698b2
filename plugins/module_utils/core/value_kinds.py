# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Paths, numbers and values that reach a file the kernel or a tool reads, by what they mean (issue 37).

ONE table (``VARIABLES``: name -> ``(kind, params)``) classifies every path, number, duration,
port, limit, clock, sysctl and environment variable of every role, of common's entry points and of
the playbooks (rolling upgrade, probe, site batches); ``problems(role, inputs, context)`` checks the
variables of ``inputs`` by their kind, each problem naming the variable, the value's problem and
what would be accepted. The actions ``host_plan`` (every role, every host, before any change) and
``role_inputs`` run it after the URL and key checks (packages/url_trust.py).

Kinds (``KINDS``):

- paths: ``file`` (an absolute file path on the host: not relative, no ``.``/``..`` segment, no
  trailing slash, not a directory of the system), ``dir`` (an absolute directory: not relative, no
  ``..``, not a file name such as ``x.json``), ``prefix`` (a directory of its own where the role
  creates and owns content: neither ``/`` nor a system directory such as ``/usr``, not inside
  ``/proc``, ``/sys``, ``/dev``, ``/boot``), ``controller_file`` (a file on the controller: relative
  is fine, ``..`` segments are not);
- numbers: ``int`` (a whole number within ``low``..``high`` of its unit), ``port`` (1-65535),
  ``listen`` (``HOST:PORT``, its port 1-65535), ``duration`` (a Prometheus duration above ``0s``
  and at most ``max_s``), ``scrape_configs`` (a job's scrape_interval and scrape_timeout: neither
  ``0s``, the timeout not above the interval), ``power_watts`` and ``app_clocks`` (a plausible range, then
  against the GPUs the probe saw where ``context['facts']`` holds its data: the power limit range,
  and no clock above the GPU's maximum, ``max_clocks`` of gpu_facts; where the probe read no
  maximum, ``notices`` says "not checked: maximum unknown" in the run; nvidia-smi -ac checks that
  the pair is a supported one on the host), ``serial`` and ``percent`` (a play's batches);
- values that reach a file the kernel or a tool reads: ``sysctl`` (numbers and spaces, or the
  documented words of the key; within the key's domain where the table knows it; never negative
  where the kernel takes none), ``pam_limits`` (pam_limits(8): the item's domain, soft not above
  hard), ``systemd_limits`` (systemd's DefaultLimit*: soft not above hard, NOFILE within the
  kernel's nr_open ceiling), ``env`` (a KEY=VALUE file read by systemd's EnvironmentFile= and by
  gpu_validate: one line without quotes, backslashes, ``$`` or backticks that the reader would
  strip or expand, no blanks around it, no YAML boolean turned into ``True``).

A role's own checks of the same values (os_tuning's sysctl, limits and paths; dcgm_exporter's;
python_stack's) are not called from here: the registry of every role's checks
(core/input_checks.py ``REGISTRY``) runs them and this module's ``problems`` in the order it
states, leaving out a problem for a variable an earlier check named (one message per variable).

``CARELESS`` lists, per kind, the careless values the bad-input suite gives every variable of that
kind (tests/unit/roles/bad_input_cases.py), each with its expected outcome and the reason.

The number checks are in value_numbers.py, the checks of values that reach a file in
file_values.py; this module classifies and dispatches.

Pure, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.file_values import (
    env_problems, pam_limits_problems, sysctl_problems, systemd_limits_problems)
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.value_numbers import (
    clocks_notices, clocks_problems, duration_problem, int_problem, is_int as _is_int, listen_port, listen_problem,
    percent_problem, port_problem, power_problems, scrape_configs_problems, serial_problem, shown as _shown)
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import SYSTEM_DIRS
from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano_inputs import MAX_TIMEOUT, MAX_WORKERS
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.inputs import BOUNDS as VALIDATE_BOUNDS

KINDS = {
    'file': 'an absolute path of a file on the host',
    'dir': 'an absolute directory on the host',
    'path': 'an absolute path of a file or a directory on the host',
    'prefix': 'a directory of its own (an environment prefix or an install directory)',
    'controller_file': 'a file on the controller',
    'int': 'a whole number within its domain',
    'port': 'a TCP port',
    'listen': 'a listen address HOST:PORT',
    'duration': 'a Prometheus duration',
    'scrape_configs': 'scrape jobs with their own scrape_interval and scrape_timeout',
    'power_watts': 'a GPU power limit in watts',
    'app_clocks': 'GPU application clocks in MHz',
    'serial': "a play's batch size: a number, a percentage or a list of them",
    'percent': 'a percentage from 0 to 100',
    'sysctl': 'sysctl settings written to a sysctl.d file',
    'pam_limits': 'pam_limits entries written to a limits.d file',
    'systemd_limits': "the systemd manager's DefaultLimit* settings",
    'env': 'environment variables written to a KEY=VALUE file and a profile script',
}

_R = os_tuning_inputs.REBOOT_TIMEOUT_RANGE

# name -> (kind, params). params: low/high/unit (int), empty (what '' or null means: a documented
# "none"), file_words (dir: whether a file-like name is refused), virtual (dir: /sys and /proc are
# fine, the probe's fixture tree), tilde (a controller directory under ~), max_s (duration).
VARIABLES = {
    # common, entry point gpu (every host)
    'gpuops_sysfs_root': ('dir', {'virtual': True}),
    'gpuops_reboot_throttle': ('int', {'low': 0, 'high': 10000, 'unit': 'hosts rebooting at once (0: the batch)'}),
    'gpuops_lab_container_reboot': ('int', {'low': 0, 'high': 3600, 'unit': 'seconds (0: off; TEST-ONLY)'}),
    # cuda_toolkit
    'cuda_toolkit_status_file': ('file', {}),
    # dcgm_exporter
    'dcgm_exporter_listen_address': ('listen', {'check': 'dcgm'}),
    'dcgm_exporter_hostengine_address': ('listen', {'check': 'dcgm'}),
    'dcgm_exporter_collect_interval_ms': ('int', {'low': 100, 'high': 3600000, 'unit': 'milliseconds'}),
    'dcgm_exporter_binary': ('file', {}),
    'dcgm_exporter_status_file': ('file', {}),
    # gpu_validate (the number bounds are the role's own: validate/inputs.py BOUNDS)
    'gpu_validate_python': ('file', {'empty': 'the python of gpu_validate_python_env'}),
    'gpu_validate_env_prefix': ('prefix', {}),
    'gpu_validate_env_file': ('file', {}),
    'gpu_validate_dataset_path': ('path', {'empty': 'the dataset is not checked'}),
    'gpu_validate_record_dir': ('dir', {}),
    'gpu_validate_textfile_dir': ('dir', {'empty': 'no metrics file'}),
    'gpu_validate_port': ('port', {}),
    'gpu_validate_iperf3_port': ('port', {}),
    'gpu_validate_ib_port': ('port', {}),
    'gpu_validate_retired_page_limit': ('int', {'unit': 'retired pages'}),
    'gpu_validate_size_mib': ('int', {'unit': 'MiB'}),
    'gpu_validate_resnet50_batch': ('int', {'unit': 'images per batch'}),
    'gpu_validate_ib_seconds': ('int', {'unit': 'seconds'}),
    'gpu_validate_dcgm_diag_level': ('int', {'unit': '(DCGM diagnostic level)'}),
    'gpu_validate_dcgm_diag_timeout': ('int', {'unit': 'seconds'}),
    'gpu_validate_timeout': ('int', {'unit': 'seconds'}),
    'gpu_validate_refresh_days': ('int', {'unit': 'days'}),
    'gpu_validate_data_workers': ('int', {'unit': 'DataLoader workers (0: the node\'s CPU count)'}),
    'gpu_validate_data_images': ('int', {'unit': 'sample JPEGs'}),
    'gpu_validate_data_sample_mib': ('int', {'unit': 'MiB'}),
    'gpu_validate_data_seconds': ('int', {'unit': 'seconds'}),
    'gpu_validate_data_images_per_gpu': ('int', {'unit': 'images/s per GPU (0: the published rate)'}),
    # ipmi_exporter (the same listen-address parser as node_exporter's)
    'ipmi_exporter_listen_address': ('listen', {'check': 'node_exporter'}),
    'ipmi_exporter_config_dir': ('prefix', {}),
    'ipmi_exporter_status_file': ('file', {}),
    # node_exporter
    'node_exporter_cache_dir': ('dir', {'tilde': True}),
    'node_exporter_install_dir': ('prefix', {}),
    'node_exporter_config_dir': ('prefix', {}),
    'node_exporter_listen_address': ('listen', {'check': 'node_exporter'}),
    'node_exporter_textfile_dir': ('dir', {}),
    'node_exporter_tls_cert_file': ('file', {'empty': 'no TLS'}),
    'node_exporter_tls_key_file': ('file', {'empty': 'no TLS'}),
    'node_exporter_status_file': ('file', {}),
    # nvidia_container_toolkit
    'nvidia_container_toolkit_status_file': ('file', {}),
    # nvidia_driver
    'nvidia_driver_power_limit_watts': ('power_watts', {}),
    'nvidia_driver_application_clocks': ('app_clocks', {}),
    'nvidia_driver_reboot_timeout': ('int', {'low': _R[0], 'high': _R[1], 'unit': 'seconds'}),
    'nvidia_driver_debian_keyring': ('file', {}),
    'nvidia_driver_status_file': ('file', {}),
    # os_tuning
    'os_tuning_status_file': ('file', {}),
    'os_tuning_sysctl_defaults': ('sysctl', {}),
    'os_tuning_sysctl_group': ('sysctl', {}),
    'os_tuning_sysctl_overwrite': ('sysctl', {}),
    'os_tuning_sysctl_file': ('file', {}),
    'os_tuning_limits': ('pam_limits', {}),
    'os_tuning_limits_extra': ('pam_limits', {}),
    'os_tuning_limits_file': ('file', {}),
    'os_tuning_systemd_limits': ('systemd_limits', {}),
    'os_tuning_systemd_limits_file': ('file', {}),
    'os_tuning_reboot_timeout': ('int', {'low': _R[0], 'high': _R[1], 'unit': 'seconds'}),
    # prometheus
    'prometheus_config_file': ('file', {}),
    'prometheus_file_sd_dir': ('dir', {}),
    'prometheus_rules_dir': ('dir', {}),
    'prometheus_rules_files': ('controller_file', {'list': True}),
    'prometheus_promtool': ('file', {'empty': 'no promtool check'}),
    'prometheus_scrape_interval': ('duration', {'max_s': 300}),
    'prometheus_evaluation_interval': ('duration', {'max_s': 300}),
    'prometheus_extra_scrape_configs': ('scrape_configs', {}),
    'prometheus_node_exporter_tls_ca_file': ('file', {'empty': "the system's CAs"}),
    'prometheus_grafana_dashboards_dir': ('dir', {'empty': 'no dashboard'}),
    'prometheus_grafana_provisioning_dir': ('dir', {'empty': 'no provisioning file'}),
    'prometheus_status_file': ('file', {}),
    # python_stack
    'python_stack_prefix': ('prefix', {}),
    'python_stack_conda_prefix': ('prefix', {}),
    'python_stack_cache_dir': ('dir', {'empty': 'no package cache'}),
    'python_stack_keep_builds': ('int', {'low': 0, 'high': stack_inputs.MAX_KEEP_BUILDS, 'unit': 'builds'}),
    'python_stack_env_defaults': ('env', {}),
    'python_stack_env_file': ('file', {}),
    'python_stack_profile_file': ('file', {}),
    'python_stack_kernel_dir': ('dir', {}),
    'python_stack_status_file': ('file', {}),
    # storage
    'storage_status_file': ('file', {'empty': 'no status file'}),
    # volcano
    'volcano_kubeconfig': ('controller_file', {'empty': 'K8S_AUTH_KUBECONFIG, KUBECONFIG or ~/.kube/config'}),
    'volcano_wait_timeout': ('int', {'low': 1, 'high': MAX_TIMEOUT, 'unit': 'seconds'}),
    'volcano_smoke_timeout': ('int', {'low': 1, 'high': MAX_TIMEOUT, 'unit': 'seconds'}),
    'volcano_smoke_workers': ('int', {'low': 0, 'high': MAX_WORKERS, 'unit': 'workers (0: one per GPU node)'}),
    'volcano_status_file': ('file', {'empty': 'no status file'}),
    # playbooks (host_plan reads them where the play gives them; not declared in a role's spec)
    'gpuops_serial': ('serial', {}),
    'gpuops_max_fail_percentage': ('percent', {}),
    'gpuops_rolling_serial': ('serial', {}),
    'gpuops_rolling_kubeconfig': ('controller_file', {'empty': 'K8S_AUTH_KUBECONFIG or ~/.kube/config'}),
    'gpuops_rolling_drain_tasks': ('controller_file', {'empty': 'no drain tasks'}),
    'gpuops_rolling_resume_tasks': ('controller_file', {'empty': 'no resume tasks'}),
    'gpuops_rolling_drain_options': ('int', {'key': 'wait_timeout', 'low': 1, 'high': 86400, 'unit': 'seconds'}),
    'gpuops_report_path': ('controller_file', {'empty': 'no report file'}),
    'gpuops_validate_report_path': ('controller_file', {'empty': 'no HTML report'}),
}
for _name, (_low, _high) in VALIDATE_BOUNDS.items():
    if VARIABLES.get('gpu_validate_' + _name, ('', {}))[0] == 'int':
        VARIABLES['gpu_validate_' + _name][1].update(low=_low, high=_high)

# The playbooks' variables: no role declares them; host_plan reads them from the play.
PLAYBOOK_VARIABLES = ('gpuops_serial', 'gpuops_max_fail_percentage', 'gpuops_rolling_serial',
                      'gpuops_rolling_kubeconfig', 'gpuops_rolling_drain_tasks', 'gpuops_rolling_resume_tasks',
                      'gpuops_rolling_drain_options', 'gpuops_report_path', 'gpuops_validate_report_path')

# Variables whose name or type says path, number or environment but that are not of these classes.
NOT_THIS_CLASS = {
    'gpu_validate_address': 'a host name or IP address, not a port (validate/inputs.py ADDRESS_RE)',
    'prometheus_target_address': 'a host name or IP address, not a port (prometheus_config.target_address_error)',
    'volcano_priority_classes': 'Kubernetes objects; the API server checks their values (volcano_inputs)',
    'volcano_queues': 'Kubernetes objects; the API server checks their weights (volcano_inputs)',
    'nvidia_driver_secure_boot_keys': 'paths of the signing key and certificate, checked by the role before '
                                      'mokutil reads them (nvidia_repo.input_problems)',
    'volcano_node_label_prefix': 'a Kubernetes label prefix (dlserver.gpuops.io/), not a path (volcano_inputs)',
    '__common_status_file': 'private (common status entry point): the roles pass their own status_file',
    'bmc_address': 'a BMC\'s IP address or DNS name, not a path (bmc/credentials.py address_problem)',
    'gpuops_bmc_port': 'the BMC\'s RMCP+ UDP port, 1 to 65535, no service of the node (bmc/credentials.py)',
}

# Names and types the walk over every argument spec treats as of these classes
# (tests/unit/plugins/module_utils/core/test_value_kinds.py).
CLASS_NAME = re.compile(r'.*(_file|_files|_dir|_path|_prefix|_root|_binary|_keyring|_kubeconfig|_promtool'
                        r'|_interval|_interval_ms|_timeout|_port|_address|_limit|_limits|_limits_extra|_limit_watts'
                        r'|_clocks|_throttle|_serial|_percentage|_days|_seconds|_workers|_batch|_mib|_level'
                        r'|_builds|_sysctl_[a-z]+|_env_defaults|_drain_options)\Z')
CLASS_TYPES = ('int', 'float', 'path')

_CONTROL = re.compile(r'[\x00-\x1f\x7f\x85\u2028\u2029]')
_VIRTUAL = ('/proc', '/sys', '/dev', '/boot', '/run/systemd')
# A last path segment that names a file, not a directory.
_FILE_NAME = re.compile(r'.*\.(json|ya?ml|conf|cfg|ini|toml|prom|txt|log|sh|env|py|gpg|asc|pem|crt|key|csv|tar'
                        r'|gz|deb|rpm|whl)\Z', re.I)


# ---------------------------------------------------------------------------------------------
# Paths by what they may be
# ---------------------------------------------------------------------------------------------
def _segments(value):
    return value.split('/')


def path_problem(name, value, kind, params=None):
    """The problem of path ``value`` of variable ``name`` as a ``kind`` path, or None."""
    params = params or {}
    if value in (None, '') and 'empty' in params:
        return None
    what = KINDS[kind]
    if not isinstance(value, str) or value == '':
        return '%s must be %s, got %s' % (name, what, _shown(value))
    if _CONTROL.search(value):
        return '%s must be %s on one line (no newline or control character), got %s' % (name, what, _shown(value))
    segments = _segments(value)
    if '..' in segments:
        return ('%s: %s has a .. segment, which leaves the directory it seems to name; give the path without '
                '..' % (name, _shown(value)))
    if kind == 'controller_file':
        if value.endswith('/'):
            return '%s: %s names a directory; give the path of a file on the controller' % (name, _shown(value))
        return None
    if params.get('tilde') and value.startswith('~/'):
        return None
    if not value.startswith('/'):
        return ('%s: %s is a relative path, which would be read from wherever the task runs; give %s, e.g. '
                '/%s' % (name, _shown(value), what, value.lstrip('./')))
    if '.' in segments[1:] or '' in segments[1:-1]:
        return '%s: %s is not a normal path (a . or an empty segment); give it as /a/b' % (name, _shown(value))
    inside_virtual = any(value == v or value.startswith(v + '/') for v in _VIRTUAL)
    if kind == 'file':
        if value.endswith('/') or value in SYSTEM_DIRS:
            return '%s: %s names a directory; give the path of a file (e.g. %s/%s)' % (
                name, _shown(value), value.rstrip('/') or '/etc/gpuops', 'name.json')
        if inside_virtual and not value.startswith('/boot/'):
            return '%s: %s is inside a kernel file system (/proc, /sys, /dev, /run/systemd); give a file of its ' \
                   'own' % (name, _shown(value))
        return None
    stripped = value.rstrip('/') or '/'
    if kind != 'path' and _FILE_NAME.fullmatch(segments[-1] or 'x'):
        return ('%s: %s looks like a file name, where a directory is needed; give the directory (e.g. %s)'
                % (name, _shown(value), stripped.rsplit('/', 1)[0] or '/'))
    if kind == 'prefix' and (stripped in SYSTEM_DIRS or inside_virtual):
        return ('%s: %s is %s; the role creates and owns content there (environments, binaries, configuration): '
                'give a directory of its own below it, e.g. %s/gpuops' % (
                    name, _shown(value), 'the root directory' if stripped == '/' else 'a system directory',
                    '/opt' if stripped in ('/', '/usr', '/bin', '/sbin', '/lib') else stripped))
    if kind in ('dir', 'path') and (stripped == '/' or (inside_virtual and not params.get('virtual'))):
        return '%s: %s is %s; give a directory of its own' % (
            name, _shown(value), 'the root directory' if stripped == '/' else 'inside a kernel file system')
    return None


def variable_problems(name, value, inputs, context=None):
    """The problems of variable ``name`` (a row of VARIABLES) with ``value``; ``inputs``: the values of
    the same role by full name; ``context``: ``facts`` (the probe's gpuops_gpu) where known."""
    kind, params = VARIABLES[name]
    if kind in ('file', 'dir', 'path', 'prefix', 'controller_file'):
        values = value if params.get('list') and isinstance(value, list) else [value]
        return [p for p in (path_problem(name, v, kind, params) for v in values) if p]
    if kind == 'int':
        return [p for p in [int_problem(name, value, params)] if p]
    if kind == 'port':
        return [p for p in [port_problem(name, value)] if p]
    if kind == 'listen':
        return [p for p in [listen_problem(name, value, params)] if p]
    if kind == 'duration':
        return [p for p in [duration_problem(name, value, params)] if p]
    if kind == 'scrape_configs':
        return scrape_configs_problems(name, value, inputs)
    if kind == 'power_watts':
        return power_problems(name, value, context)
    if kind == 'app_clocks':
        return clocks_problems(name, value, context)
    if kind == 'serial':
        return [p for p in [serial_problem(name, value)] if p]
    if kind == 'percent':
        return [p for p in [percent_problem(name, value)] if p]
    if kind == 'sysctl':
        return sysctl_problems(name, value)
    if kind == 'pam_limits':
        return pam_limits_problems(name, value)
    if kind == 'systemd_limits':
        return systemd_limits_problems(name, value)
    if kind == 'env':
        return env_problems(name, value)
    raise ValueError('value_kinds: no check for kind %s' % kind)


def problems(role, inputs, context=None):
    """Every problem of the path, number and file-value variables among ``inputs`` (converted; short
    names without ``<role>_``, or full names as common's entry points and the playbooks have them).
    ``context``: a dict with ``groups``, ``insecure_hosts`` and, where known, ``facts`` (the probe's
    gpuops_gpu). The kind checks only; a role's own checks are the registry's (core/input_checks.py)."""
    inputs = inputs or {}
    prefix = '%s_' % role
    values = dict((k if k in VARIABLES else prefix + k, v) for k, v in inputs.items())
    found = []
    for name in sorted(values):
        if name in VARIABLES:
            found.extend(variable_problems(name, values[name], values, context))
    return found


# kind -> the notices of a variable of the kind: what a check could not check, said in the run
# instead of accepting it silently (a warning; never a refusal)
NOTICES = {
    'app_clocks': clocks_notices,
}


def notices(role, inputs, context=None):
    """What the checks of ``problems`` could not check for the variables among ``inputs`` (same names
    and context), each naming the variable: a requested GPU clock where the probe read no maximum."""
    inputs = inputs or {}
    prefix = '%s_' % role
    values = dict((k if k in VARIABLES else prefix + k, v) for k, v in inputs.items())
    found = []
    for name in sorted(values):
        if name in VARIABLES and VARIABLES[name][0] in NOTICES:
            found.extend(NOTICES[VARIABLES[name][0]](name, values[name], context))
    return found


# Ports one host opens: (role, short name, kind) — two of them on one port cannot both listen.
HOST_PORTS = (('node_exporter', 'listen_address', 'listen'), ('ipmi_exporter', 'listen_address', 'listen'),
              ('dcgm_exporter', 'listen_address', 'listen'),
              ('dcgm_exporter', 'hostengine_address', 'listen'), ('gpu_validate', 'port', 'port'),
              ('gpu_validate', 'iperf3_port', 'port'), ('gpu_validate', 'ib_port', 'port'))


def host_problems(inputs_by_role):
    """Problems across the roles of one host (``{role: converted inputs}``): two services on one port."""
    taken = {}
    found = []
    for role, key, kind in HOST_PORTS:
        value = (inputs_by_role.get(role) or {}).get(key)
        port = listen_port(value) if kind == 'listen' else (value if _is_int(value) else None)
        if port is None:
            continue
        name = '%s_%s' % (role, key)
        if port in taken:
            found.append('%s: port %d is also %s\'s on this host; only one of them can listen there: give one of '
                         'them another port' % (name, port, taken[port]))
        else:
            taken[port] = name
    return found


# The class of issue 37 each kind belongs to (the bad-input suite's summary counts per class).
CLASS_OF_KIND = dict([(k, 'paths by what they may be') for k in ('file', 'dir', 'path', 'prefix', 'controller_file')]
                     + [(k, 'numbers by their domain') for k in ('int', 'port', 'listen', 'duration', 'scrape_configs',
                                                                 'power_watts', 'app_clocks', 'serial', 'percent')]
                     + [(k, 'values that reach a file the kernel or a tool reads')
                        for k in ('sysctl', 'pam_limits', 'systemd_limits', 'env')])

# kind -> [(careless value, 'refused' | 'accepted', reason)]: what the bad-input suite gives every
# variable of the kind (tests/unit/roles/bad_input_cases.py).
CARELESS = {
    'file': [
        ('etc/gpuops/x.json', 'refused', 'a relative path used as an absolute one'),
        ('/etc/gpuops/../shadow', 'refused', 'a .. segment leaves the directory'),
        ('/etc/gpuops/', 'refused', 'a directory where a file is needed'),
        ('/etc', 'refused', 'a system directory where a file is needed'),
        ('/proc/sys/kernel/x', 'refused', 'inside a kernel file system'),
        ('/srv/gpuops/state/file.json', 'accepted', 'an absolute, normal file path of its own'),
    ],
    'dir': [
        ('var/lib/x', 'refused', 'a relative path used as an absolute one'),
        ('/var/lib/../../etc', 'refused', 'a .. segment leaves the directory'),
        ('/etc/gpuops/status.json', 'refused', 'a file name where a directory is needed'),
        ('/', 'refused', 'the root directory'),
        ('/srv/gpuops/data', 'accepted', 'an absolute directory'),
    ],
    'prefix': [
        ('/', 'refused', 'the root directory as an environment prefix or install directory'),
        ('/usr', 'refused', 'a system directory as an environment prefix or install directory'),
        ('/etc', 'refused', 'a system directory as an environment prefix or install directory'),
        ('/var/lib', 'refused', 'a system directory as an environment prefix or install directory'),
        ('opt/envs', 'refused', 'a relative path used as an absolute one'),
        ('/opt/x/../../usr', 'refused', 'a .. segment'),
        ('/srv/gpuops/envs', 'accepted', 'a directory of its own'),
    ],
    'path': [
        ('data/imagenet', 'refused', 'a relative path used as an absolute one'),
        ('/data/../etc', 'refused', 'a .. segment leaves the directory'),
        ('/', 'refused', 'the root directory'),
        ('/data/imagenet.tar', 'accepted', 'a file or a directory'),
    ],
    'controller_file': [
        ('../../etc/passwd', 'refused', 'a .. segment leaves the directory'),
        ('files/x/', 'refused', 'a directory where a file is needed'),
        ('/srv/site/file.yml', 'accepted', 'an absolute file on the controller'),
    ],
    'int': [
        (-5, 'refused', 'negative'),
        (10 ** 10, 'refused', 'absurdly large'),
    ],
    'port': [
        (0, 'refused', 'port 0 is no port to listen on'),
        (70000, 'refused', 'above 65535'),
        (-1, 'refused', 'negative'),
        (9911, 'accepted', 'a free port'),
    ],
    'listen': [
        (':0', 'refused', 'port 0'),
        ('0.0.0.0:70000', 'refused', 'above 65535'),
        ('0.0.0.0', 'refused', 'no port'),
        ('127.0.0.1:9911', 'accepted', 'a free port'),
    ],
    'duration': [
        ('0s', 'refused', '0s scrapes or evaluates nothing'),
        ('-30s', 'refused', 'negative'),
        ('500ms', 'refused', 'below one second'),
        ('1d', 'refused', 'longer than the 5m staleness: every series would have gaps'),
        ('30', 'refused', 'no unit'),
        ('1m30s', 'accepted', 'a duration within 1s and 5m'),
    ],
    'scrape_configs': [
        ([{'job_name': 'x', 'scrape_interval': '0s', 'static_configs': []}], 'refused', '0s scrape interval'),
        ([{'job_name': 'x', 'scrape_interval': '15s', 'scrape_timeout': '1m', 'static_configs': []}], 'refused',
         'scrape_timeout longer than scrape_interval'),
        ([{'job_name': 'x', 'scrape_interval': '15s', 'scrape_timeout': '10s', 'static_configs': []}], 'accepted',
         'a timeout within the interval'),
    ],
    'power_watts': [
        (-100, 'refused', 'negative watts'),
        (5000, 'refused', 'above what any GPU takes'),
        (0, 'refused', 'zero watts'),
        (300, 'accepted', "plausible; each GPU's own range is checked on the host (or against the probe's data)"),
    ],
    'app_clocks': [
        ({'memory_mhz': 1215, 'graphics_mhz': 99999}, 'refused', 'a graphics clock no GPU has'),
        ({'memory_mhz': -1, 'graphics_mhz': 1410}, 'refused', 'a negative memory clock'),
        ({'memory_mhz': 1215, 'graphics_mhz': 1410}, 'accepted', 'a pair nvidia-smi checks on the host'),
    ],
    'serial': [
        (0, 'refused', 'a batch of no host'),
        ('0%', 'refused', 'a batch of no host'),
        ('150%', 'refused', 'more than every host'),
        ([1, '20%'], 'accepted', 'the default form'),
    ],
    'percent': [
        (-1, 'refused', 'negative'),
        (101, 'refused', 'above 100'),
        (10, 'accepted', 'a share of a batch'),
    ],
    'sysctl': [
        ({'vm.swappiness': -5}, 'refused', 'negative, outside vm.swappiness 0-200'),
        ({'vm.swappiness': 1000}, 'refused', 'outside vm.swappiness 0-200'),
        ({'net.core.rmem_max': -1}, 'refused', 'negative where the kernel takes none'),
        ({'net.core.rmem_max': 'lots'}, 'refused', 'a word where the kernel reads a number'),
        ({'vm.swappiness': True}, 'refused', 'a YAML boolean written as True'),
        ({'net.ipv4.tcp_rmem': '4096 87380 16777216'}, 'accepted', 'numbers and spaces'),
        ({'net.ipv4.tcp_congestion_control': 'bbr'}, 'accepted', 'a documented word of the key'),
        ({'kernel.core_pattern': '|/bin/sh -c id'}, 'refused', 'a pipe to a program'),
    ],
    'pam_limits': [
        ([{'domain': '*', 'type': 'soft', 'item': 'nofile', 'value': -5}], 'refused', 'negative'),
        ([{'domain': '*', 'type': 'soft', 'item': 'nofile', 'value': 'unlimited'}], 'refused',
         'the kernel refuses unlimited for nofile'),
        ([{'domain': '*', 'type': 'soft', 'item': 'nofile', 'value': 10 ** 12}], 'refused', 'above fs.nr_open'),
        ([{'domain': '@gpu', 'type': 'soft', 'item': 'nproc', 'value': 9000},
          {'domain': '@gpu', 'type': 'hard', 'item': 'nproc', 'value': 100}], 'refused', 'soft above hard'),
        ([{'domain': '*', 'type': '-', 'item': 'maxlogins', 'value': 0}], 'refused', 'locks every login out'),
        ([{'domain': '@gpu', 'type': 'soft', 'item': 'nice', 'value': -5}], 'accepted', 'nice takes -20 to 19'),
    ],
    'systemd_limits': [
        ({'DefaultLimitNOFILE': '1048576:65536'}, 'refused', 'soft above hard'),
        ({'DefaultLimitNOFILE': 0}, 'refused', 'no file at all'),
        ({'DefaultLimitNOFILE': 10 ** 12}, 'refused', "above the kernel's nr_open ceiling"),
        ({'DefaultLimitNOFILE': '65536:1048576'}, 'accepted', 'soft below hard'),
    ],
    'env': [
        ({'NCCL_SOCKET_IFNAME': '"eth0"'}, 'refused', 'quotes the reader strips'),
        ({'LD_PRELOAD': '$HOME/x.so'}, 'refused', 'a $ the reader may expand'),
        ({'NCCL_DEBUG': ' INFO'}, 'refused', 'a blank around the value the reader strips'),
        ({'TF_ENABLE_ONEDNN_OPTS': False}, 'refused', 'a YAML boolean written as False'),
        ({'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True'}, 'accepted', 'read as written'),
        ({'TORCH_CUDA_ARCH_LIST': '8.0 8.6+PTX'}, 'accepted', 'spaces inside the value are read as written'),
    ],
}
