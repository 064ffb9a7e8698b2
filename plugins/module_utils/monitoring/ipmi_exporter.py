# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the ipmi_exporter role (Prometheus' ipmi_exporter, Debian's prometheus-ipmi-exporter
with FreeIPMI), as small pure functions.

- ``problems()``: every check of the role's converted inputs (run by the registry of input checks,
  core/input_checks.py, which host_plan and role_inputs run): the listen address, the modules (one per credential
  set: user and password through ``bmc/credentials.py``, driver, privilege, collectors, timeout,
  workaround flags), the modes, the account. A password is never shown, not even in a problem
  about itself.
- ``decide()`` (on inputs the registry accepted): where the exporter runs in-band (``/dev/ipmi0``), its configuration file (modules,
  credentials: written 0640 root:<group>, never in the unit), the drop-in over the package's unit
  (sandboxed by ``core/systemd.py`` ``sandbox_lines``, the same lines as node_exporter's), the udev
  rule that gives the exporter's group the in-band device, and what verify scrapes.

Every value that reaches the unit, the configuration or a URL is checked with a full match.
Pure, tested from ``tests/unit/plugins/module_utils/data/ipmi_exporter_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import credentials
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import (
    owned_path_error, quote_arg, sandbox_lines)
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import ipmi_exporter_sources as sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.node_exporter import parse_listen_address

KNOWN_COLLECTORS = tuple(row['collector'] for row in sources.COLLECTOR_ROWS)
DRIVERS = tuple(row['driver'] for row in sources.DRIVER_ROWS)
PRIVILEGES = tuple(row['privilege'] for row in sources.PRIVILEGE_ROWS)
MODULE_KEYS = ('user', 'password', 'driver', 'privilege', 'timeout', 'collectors', 'workaround_flags',
               'exclude_sensor_ids')
MODULE_DEFAULTS = {'driver': 'LAN_2_0', 'privilege': 'user', 'timeout': 10000, 'collectors': ['bmc', 'ipmi', 'chassis', 'sel'],
                   'workaround_flags': [], 'exclude_sensor_ids': []}
DEVICE = '/dev/ipmi0'
STATE_DIR = 'gpuops-ipmi-exporter'
UDEV_RULE_FILE = '/etc/udev/rules.d/60-gpuops-ipmi-exporter.rules'
UNIT_HEADER = '# Ansible managed (gpuops.dlserver.ipmi_exporter)\n'

# Every pattern is used with fullmatch: a trailing $ would let a trailing newline through.
_MODULE_NAME = re.compile(r'[A-Za-z0-9_-]{1,64}')
_FLAG = re.compile(r'[a-z0-9]{1,32}')
_SYSTEM_NAME = re.compile(r'[a-z_][a-z0-9_-]{0,31}')
_IPMI_UP = re.compile(r'ipmi_up\{collector="([a-z-]+)"\} ([0-9.eE+-]+|NaN)')


def _listed(values):
    return ', '.join(values)


def _module_problems(name, module):
    """Problems of one module ``name`` (a credential set); the password is never shown."""
    where = 'ipmi_exporter_modules.%s' % name
    if not isinstance(module, dict):
        return ['%s must be a dict with user and password (and driver, privilege, collectors ...), got a %s'
                % (where, type(module).__name__)]
    found = ['%s.%s is not a setting of a module (%s)' % (where, key, _listed(MODULE_KEYS))
             for key in sorted(str(k) for k in module) if key not in MODULE_KEYS]
    found.extend(p for p in (credentials.user_problem(where + '.user', module.get('user')),
                             credentials.password_problem(where + '.password', module.get('password'))) if p)
    values = dict(MODULE_DEFAULTS, **dict((k, v) for k, v in module.items() if v is not None))
    if values['driver'] not in DRIVERS:
        found.append('%s.driver must be one of %s (FreeIPMI\'s driver type of a remote BMC), got %r'
                     % (where, _listed(DRIVERS), values['driver']))
    if values['privilege'] not in PRIVILEGES:
        found.append('%s.privilege must be one of %s, got %r' % (where, _listed(PRIVILEGES), values['privilege']))
    timeout = values['timeout']
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 1001 <= timeout <= 120000:
        found.append('%s.timeout must be the session timeout in milliseconds, 1001 to 120000 (above FreeIPMI\'s '
                     'retransmission timeout of 1000), got %r' % (where, timeout))
    found.extend(collector_problems(where + '.collectors', values['collectors']))
    flags = values['workaround_flags']
    if not isinstance(flags, list) or not all(isinstance(f, str) and _FLAG.fullmatch(f) for f in flags):
        found.append('%s.workaround_flags must be a list of FreeIPMI workaround flags (lower-case letters and '
                     'digits, e.g. discretereading), got %r' % (where, flags))
    ids = values['exclude_sensor_ids']
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i <= 65535
                                            for i in ids):
        found.append('%s.exclude_sensor_ids must be a list of sensor record ids (0 to 65535), got %r' % (where, ids))
    return found


def collector_problems(variable, collectors, empty=False):
    """Problems of a collector list (the names ipmi_exporter 1.6.1 accepts, each once, at least one
    unless ``empty``)."""
    if not isinstance(collectors, list) or not (collectors or empty):
        return ['%s must be a non-empty list of collectors (%s), got %r'
                % (variable, _listed(KNOWN_COLLECTORS), collectors)]
    unknown = [c for c in collectors if c not in KNOWN_COLLECTORS]
    if unknown:
        return ['%s: %r is not a collector of ipmi_exporter 1.6.1 (%s)'
                % (variable, unknown[0], _listed(KNOWN_COLLECTORS))]
    if len(set(collectors)) != len(collectors):
        return ['%s names a collector twice: %r' % (variable, collectors)]
    return []


def problems(inputs):
    """Every problem of the role's converted inputs (short names), each naming its variable."""
    inputs = inputs or {}
    found = []
    try:
        parse_listen_address(inputs.get('listen_address'), 'ipmi_exporter_listen_address')
    except ValueError as exc:
        found.append(str(exc))
    modules = inputs.get('modules') or {}
    if not isinstance(modules, dict):
        found.append('ipmi_exporter_modules must be a dict of module name -> credential set, got a %s'
                     % type(modules).__name__)
        modules = {}
    for name in sorted(modules, key=str):
        if not isinstance(name, str) or not _MODULE_NAME.fullmatch(name):
            found.append('ipmi_exporter_modules: %r is not a module name (1 to 64 letters, digits, _ or -: it is '
                         'the module= of each scrape URL)' % (name,))
            continue
        found.extend(_module_problems(name, modules[name]))
    if inputs.get('remote') and not modules:
        found.append('ipmi_exporter_modules must hold at least one module (user and password of the BMCs) where '
                     'ipmi_exporter_remote is true: the exporter has no credentials to reach a BMC with')
    module = inputs['module']
    if not isinstance(module, str) or not _MODULE_NAME.fullmatch(module):
        found.append('ipmi_exporter_module: %r is not a module name (1 to 64 letters, digits, _ or -)' % (module,))
    for index, target in enumerate(inputs.get('verify_targets') or []):
        where = 'ipmi_exporter_verify_targets[%d]' % index
        if not isinstance(target, dict) or set(target) - {'target', 'module'}:
            found.append('%s must be a dict with target (a BMC address) and module, got %r' % (where, target))
            continue
        found.extend(p for p in [credentials.address_problem(where + '.target', target.get('target'))] if p)
        if (target.get('module') or 'default') not in modules:
            found.append('%s.module: %r is not a module of ipmi_exporter_modules (%s)'
                         % (where, target.get('module') or 'default', _listed(sorted(modules, key=str)) or 'none'))
    # empty: the in-band module collects nothing, /metrics serves the exporter's own process metrics
    found.extend(collector_problems('ipmi_exporter_local_collectors', inputs.get('local_collectors'), empty=True))
    if inputs.get('local') == 'never' and not inputs.get('remote'):
        found.append('ipmi_exporter_local: never with ipmi_exporter_remote: false leaves the exporter nothing to '
                     'serve; set ipmi_exporter_remote: true (the monitoring host) or ipmi_exporter_local: auto')
    for variable in ('user', 'group'):
        value = inputs.get(variable)
        if not isinstance(value, str) or not _SYSTEM_NAME.fullmatch(value):
            found.append('ipmi_exporter_%s: %r is not a system account name (a-z, 0-9, _ and -, at most 32)'
                         % (variable, value))
    error = owned_path_error(inputs.get('config_dir'), 'ipmi_exporter_config_dir')
    found.extend([error] if error else [])
    return found


def config(inputs, local):
    """The exporter's configuration (modules): the user's modules with their defaults, and where it
    runs in-band a module ``default`` with the local collectors unless the user named one."""
    modules = {}
    for name, module in sorted((inputs.get('modules') or {}).items()):
        values = dict(MODULE_DEFAULTS, **dict((k, v) for k, v in module.items() if v is not None))
        entry = {'user': values['user'], 'pass': values['password'], 'driver': values['driver'],
                 'privilege': values['privilege'], 'timeout': values['timeout'], 'collectors': list(values['collectors'])}
        if values['workaround_flags']:
            entry['workaround_flags'] = list(values['workaround_flags'])
        if values['exclude_sensor_ids']:
            entry['exclude_sensor_ids'] = list(values['exclude_sensor_ids'])
        modules[str(name)] = entry
    if local and 'default' not in modules:
        modules['default'] = {'collectors': list(inputs['local_collectors'])}
    return {'modules': modules}


def config_text(conf):
    """The configuration file's text: JSON, which the exporter's YAML reader reads as YAML, every string
    quoted, so no value is read as anything else."""
    return '# Ansible managed (gpuops.dlserver.ipmi_exporter)\n' + json.dumps(conf, indent=2, sort_keys=True) + '\n'


def unit_text(platform, inputs, config_file, local):
    """The drop-in over the package's unit: the role's command line, account and sandbox; no secret."""
    exec_line = ' '.join(quote_arg(a) for a in (platform['package_binary'], '--config.file=%s' % config_file,
                                                '--web.listen-address=%s' % inputs['listen_address']))
    return (UNIT_HEADER + '[Service]\n'
            '# Replaces the package\'s command line (its /etc/default file is no longer read) and user.\n'
            'EnvironmentFile=\n'
            'ExecStart=\n'
            'ExecStart=%s\n'
            'User=%s\n'
            'Group=%s\n'
            '# FreeIPMI keeps its SDR cache under $HOME/.freeipmi\n'
            'Environment=HOME=/var/lib/%s\n'
            'Restart=on-failure\n'
            'RestartSec=5\n' % (exec_line, quote_arg(inputs['user']), quote_arg(inputs['group']), STATE_DIR)
            + sandbox_lines(devices=[DEVICE] if local else (), writable=[STATE_DIR]))


def local_mode(setting, device_present):
    """``(local, reason)``: whether the exporter serves the host's own BMC in-band at ``/metrics``, from
    ``ipmi_exporter_local`` (``setting``: auto, always, never) and whether the probe found ``/dev/ipmi0``
    (``device_present``). One decision: the plan publishes it (``bmc.local``, the prometheus role's
    in-band job) and decide() configures the exporter by it."""
    if setting in ('always', 'never'):
        return setting == 'always', 'ipmi_exporter_local: %s' % setting
    if device_present:
        return True, '%s exists: in-band metrics at /metrics' % DEVICE
    return False, 'no %s on this host (no in-band BMC device: the kernel\'s ipmi_si and ipmi_devintf)' % DEVICE


def decide(inputs, platform, bmc):
    """Every decision of the role on one host; ValueError (every problem, each naming its variable)
    on bad input. ``platform``: ``{name, package, package_binary, package_service}``;
    ``bmc``: the host plan's ``bmc`` (``local`` and ``local_reason``: local_mode() of the probe's
    in-band device, published by the plan; the prometheus role's in-band job reads the same). The inputs were checked by the
    registry of input checks (core/input_checks.py runs problems() above) before the role's first
    task; what is refused here needs the host: a platform without the package."""
    if not (platform or {}).get('package'):
        raise ValueError('ipmi_exporter: %s has no prometheus-ipmi-exporter package; the role supports Debian 12 and 13'
                         % (platform or {}).get('name', 'this platform'))
    local, local_reason = bool((bmc or {}).get('local')), (bmc or {}).get('local_reason') or 'the plan says nothing'
    config_file = '%s/config.yml' % inputs['config_dir']
    conf = config(inputs, local)
    host, port = parse_listen_address(inputs['listen_address'], 'ipmi_exporter_listen_address')
    probe = host if host not in ('', '0.0.0.0', '::') else '127.0.0.1'
    probe = '[%s]' % probe if ':' in probe else probe
    base = 'http://%s:%d' % (probe, port)
    run = local or bool(inputs['remote'])
    served = [what for what, on in (('the fleet\'s BMCs (ipmi_exporter_remote)', inputs['remote']),
                                    ('the host\'s own BMC in-band', local)) if on]
    reason = ('serves %s' % ' and '.join(served)) if run else (
        'nothing to serve: ipmi_exporter_remote is false and %s' % local_reason)
    return {
        'run': run,
        'reason': reason,
        'local': local,
        'local_reason': local_reason,
        'remote': bool(inputs['remote']),
        'modules': sorted(conf['modules']),
        'verify_targets': [{'target': t['target'], 'module': t.get('module') or 'default',
                            'url': '%s/ipmi?target=%s&module=%s' % (base, t['target'], t.get('module') or 'default')}
                           for t in inputs.get('verify_targets') or []],
        'package': platform['package'],
        'service': platform['package_service'],
        'config_file': config_file,
        'config_content': config_text(conf),
        'unit_file': '/etc/systemd/system/%s.service.d/gpuops.conf' % platform['package_service'],
        'unit_content': unit_text(platform, inputs, config_file, local),
        'udev_rule_file': UDEV_RULE_FILE,
        'udev_rule': ('# Ansible managed (gpuops.dlserver.ipmi_exporter): the exporter\'s group reads the BMC\n'
                      'KERNEL=="ipmi[0-9]*", GROUP="%s", MODE="0660"\n' % inputs['group']) if local else None,
        'listen': {'host': host, 'port': port},
        'verify': {'metrics_url': '%s/metrics' % base, 'ipmi_url': '%s/ipmi' % base},
    }


def remote_verdict(target, module, content, status):
    """One line of verify for one BMC scraped through the exporter: ``ipmi_up`` of each collector."""
    if status != 200:
        return {'target': target, 'module': module, 'ok': False,
                'line': 'BMC %s (module %s): the exporter answered HTTP %s' % (target, module, status)}
    matches = (_IPMI_UP.fullmatch(line) for line in (content or '').splitlines())
    ups = dict((m.group(1), m.group(2)) for m in matches if m)
    if not ups:
        return {'target': target, 'module': module, 'ok': False,
                'line': 'BMC %s (module %s): the answer holds no ipmi_up' % (target, module)}
    down = sorted(c for c, v in ups.items() if float(v) != 1)
    said = ('every collector answers (%s)' % _listed(sorted(ups)) if not down else
            'no answer for %s (ipmi_up 0: BMC unreachable or credentials refused)' % _listed(down))
    return {'target': target, 'module': module, 'ok': True, 'up': not down,
            'line': 'BMC %s (module %s): %s' % (target, module, said)}
