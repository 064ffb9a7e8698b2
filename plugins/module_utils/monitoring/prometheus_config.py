# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the prometheus role: scrape targets from the inventory, and prometheus.yml.

- ``host_targets()``: for one inventory host, its node_exporter, dcgm-exporter and in-band
  ipmi_exporter targets (address, port, whether and why it is scraped). A host is a dcgm-exporter target when its
  hardware plan runs the dcgm_exporter role, or - when the plan is not known on the Prometheus
  host's run - when it is in the configured GPU group.
- ``file_sd()``: the file-based service discovery lists of both jobs; every target carries the
  label ``node`` (the inventory name), on which the GPU rules join the two jobs.
- ``scrape_config()``: the content of prometheus.yml for a Prometheus the role installs.

Pure functions, tested from ``tests/unit/plugins/module_utils/data/prometheus_config_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

from ansible.module_utils.six.moves.collections_abc import Mapping

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import owned_path_error
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.node_exporter import parse_listen_address

# The jobs with one target per host; ipmi_inband: the /metrics of an ipmi_exporter that serves its own
# host's BMC in-band (the host plan's bmc.local, on a host of the group ipmi_exporter).
INBAND_JOB = 'ipmi_inband'
JOBS = ('node_exporter', 'dcgm_exporter', INBAND_JOB)
# The BMC job: multi-target, scraped through the ipmi_exporter of prometheus_ipmi_exporter_host.
IPMI_JOB = 'ipmi_exporter'
# The group whose hosts run ipmi_exporter (playbooks/monitoring.yml).
IPMI_GROUP = 'ipmi_exporter'
_WILDCARD = ('', '0.0.0.0', '::')


def target_address_error(value, variable='prometheus_target_address'):
    """None, or why ``value`` (the address Prometheus scrapes a host at: a host name, an IPv4 or an
    IPv6 address, bracketed or not) cannot be written into the file_sd targets. Empty is the default
    (``ansible_host``, else the inventory name)."""
    if value == '' or value is None:
        return None
    text = value if isinstance(value, str) else ''
    inner = text[1:-1] if text.startswith('[') and text.endswith(']') else text
    try:
        if ':' in inner:
            address, _sep, zone = inner.partition('%')
            ipaddress.IPv6Address(address)
            if _sep and not re.fullmatch(r'[A-Za-z0-9_.-]{1,15}', zone):
                raise ValueError(zone)
        elif inner != text or not inner:
            raise ValueError(text)
        else:
            parse_listen_address('%s:1' % inner, variable)
    except ValueError:
        return ('%s: %r is not a host name, an IPv4 or an IPv6 address (one line, nothing else; the file_sd '
                'targets get <address>:<port>)' % (variable, value))
    return None


def _target(address, listen, variable, default_port):
    host, port = parse_listen_address(listen or ':%d' % default_port, variable)
    target_host = address if host in _WILDCARD else host
    if ':' in target_host and not target_host.startswith('['):
        target_host = '[%s]' % target_host
    return '%s:%d' % (target_host, port)


def dcgm_scrape(plan, in_group, dcgm_group):
    """``(scrape, reason)`` of a host's dcgm-exporter target.

    The group (prometheus_dcgm_exporter_group) decides, and the reason says only that, so the
    record is the same whether or not the host is in this run (issue 34: a canary-then-rest
    workflow rewrote the prometheus status file with --limit). Where the host's plan is in this
    run and disagrees with the group (a host of the group without an NVIDIA GPU, or a GPU host
    outside it), the plan, which saw the hardware, wins, and the reason says that this decision
    depends on the host being in the run, and how to make the inventory agree.
    """
    group = 'it is %sin group %s (prometheus_dcgm_exporter_group)' % ('' if in_group else 'not ', dcgm_group)
    decision = (plan.get('roles') or {}).get('dcgm_exporter')
    if not isinstance(decision, dict) or 'run' not in decision or bool(decision['run']) == in_group:
        return in_group, group
    return bool(decision['run']), (
        'hardware plan of this run: %s; but %s: a run that leaves this host out follows the group (%s)'
        % (decision.get('reason', ''), group,
           'add the host to %s' % dcgm_group if decision['run'] else 'take the host out of %s' % dcgm_group))


def host_targets(name, hostvars, groups, dcgm_group):
    """``{node_exporter: {...}, dcgm_exporter: {...}}`` of one host; ValueError names the variable.

    Reads only what the host published in its plan of this run (``gpuops_plan``, a run-only host
    variable: ``host.scrape_address``, ``exporters.<name>.listen_address``, ``roles.dcgm_exporter``,
    from the host's typed inputs), never another role's raw variables. A host without a plan in
    this run fails, naming the host and what is missing: its exporters' ports and scrape address
    are known only from its plan (a default port would be a guess).
    """
    plan = hostvars.get('gpuops_plan')
    if not isinstance(plan, dict):
        raise ValueError(
            'prometheus: host %s has no plan in this run (gpuops_plan, which publishes its scrape address and its '
            'exporters\' listen addresses): include %s in the run (a --limit that leaves scraped hosts out cannot '
            'write their targets), or take it out of the scraped groups' % (name, name))
    exporters = plan.get('exporters') if isinstance(plan.get('exporters'), dict) else {}

    def listen(exporter):
        published = exporters.get(exporter)
        return published.get('listen_address') if isinstance(published, dict) else None

    address = (plan.get('host') or {}).get('scrape_address') or hostvars.get('ansible_host') or name
    node = {'scrape': True, 'reason': 'every host in the node_exporter group runs node_exporter',
            'target': _target(address, listen('node_exporter'), 'node_exporter_listen_address (host %s)' % name, 9100)}
    scrape, reason = dcgm_scrape(plan, dcgm_group in groups, dcgm_group)
    dcgm = {'scrape': scrape, 'reason': reason,
            'target': _target(address, listen('dcgm_exporter'), 'dcgm_exporter_listen_address (host %s)' % name, 9400)}
    return {'node_exporter': node, 'dcgm_exporter': dcgm, INBAND_JOB: inband_target(name, plan, groups, address)}


def inband_target(name, plan, groups, address):
    """``{scrape, reason, target}`` of a host's in-band BMC metrics: its ipmi_exporter's ``/metrics``
    where the host is in the group ipmi_exporter and its plan says the exporter serves the host's BMC
    in-band (``bmc.local``: ipmi_exporter_local and the probe's /dev/ipmi0)."""
    bmc = plan.get('bmc') if isinstance(plan.get('bmc'), dict) else {}
    if IPMI_GROUP not in groups:
        return {'scrape': False, 'reason': 'not in group %s: no ipmi_exporter runs here' % IPMI_GROUP, 'target': None}
    if not bmc.get('local'):
        why = bmc.get('local_reason') or 'the plan says nothing'
        return {'scrape': False, 'target': None,
                'reason': 'ipmi_exporter does not serve this host\'s BMC in-band: %s' % why}
    return {'scrape': True, 'reason': 'ipmi_exporter serves this host\'s BMC in-band (%s)' % bmc.get('local_reason'),
            'target': _target(address, bmc.get('listen_address'), 'ipmi_exporter_listen_address (host %s)' % name, 9290)}


def ipmi_exporter_address(name, hostvars):
    """``(address, serves)`` of the ipmi_exporter that scrapes the BMCs: host ``name``'s scrape address and
    the port of its ``ipmi_exporter_listen_address``, and the modules it serves, all from its plan of this
    run. ValueError naming prometheus_ipmi_exporter_host where the host has no plan or serves no BMC."""
    # hostvars[host] is Ansible's HostVarsVars in a play: a Mapping, not a dict
    plan = hostvars.get('gpuops_plan') if isinstance(hostvars, Mapping) else None
    bmc = (plan or {}).get('bmc') if isinstance(plan, dict) else None
    if not isinstance(bmc, dict) or not bmc.get('serves'):
        raise ValueError('prometheus_ipmi_exporter_host: host %s %s; set ipmi_exporter_remote: true and '
                         'ipmi_exporter_modules there (and include it in the run), or leave '
                         'prometheus_ipmi_exporter_host empty' % (
                             name, 'has no plan in this run' if not isinstance(plan, dict)
                             else 'serves no BMC (its plan: bmc.serves is empty)'))
    listen = bmc.get('listen_address')
    address = (plan.get('host') or {}).get('scrape_address') or hostvars.get('ansible_host') or name
    return _target(address, listen, 'ipmi_exporter_listen_address (host %s)' % name, 9290), list(bmc['serves'])


def bmc_target(name, hostvars, exporter):
    """``{scrape, reason, target, module}`` of host ``name``'s BMC (its plan's ``bmc``: ``bmc_address``,
    ``ipmi_exporter_module``); ``exporter``: ipmi_exporter_address()'s answer, or None (no BMC job)."""
    # hostvars[host] is Ansible's HostVarsVars in a play: a Mapping, not a dict
    plan = hostvars.get('gpuops_plan') if isinstance(hostvars, Mapping) else None
    bmc = plan.get('bmc') if isinstance(plan, dict) and isinstance(plan.get('bmc'), dict) else {}
    if exporter is None:
        return {'scrape': False, 'reason': 'prometheus_ipmi_exporter_host is empty: no BMC is scraped',
                'target': None, 'module': None}
    if not bmc.get('address'):
        return {'scrape': False, 'reason': 'no bmc_address for this host', 'target': None, 'module': None}
    module = bmc.get('module') or 'default'
    if module not in exporter[1]:
        raise ValueError('ipmi_exporter_module (host %s): module %r is not one the ipmi_exporter of '
                         'prometheus_ipmi_exporter_host serves (%s): add it to ipmi_exporter_modules there'
                         % (name, module, ', '.join(exporter[1])))
    return {'scrape': True, 'reason': 'bmc_address %s through %s (module %s)' % (bmc['address'], exporter[0], module),
            'target': bmc['address'], 'module': module, 'exporter': exporter[0]}


def file_sd(hosts):
    """File-SD lists per job from ``[{name, node_exporter: {...}, dcgm_exporter: {...}, ipmi_inband: {...},
    ipmi_exporter: {...}}]`` (a job a host entry lacks: not scraped there).
    A BMC's entry targets its address, with the exporter that scrapes it and the module as labels that the
    job's relabelling turns into ``<exporter>/ipmi?target=<bmc>&module=<m>``."""
    result = dict((job, []) for job in JOBS + (IPMI_JOB,))
    for host in sorted(hosts, key=lambda h: h['name']):
        for job in JOBS:
            if (host.get(job) or {}).get('scrape'):
                result[job].append({'targets': [host[job]['target']], 'labels': {'node': host['name']}})
        bmc = host.get(IPMI_JOB) or {}
        if bmc.get('scrape'):
            result[IPMI_JOB].append({'targets': [bmc['target']],
                                     'labels': {'node': host['name'], '__param_module': bmc['module'],
                                                '__exporter_address': bmc['exporter']}})
    return result


def ipmi_job(file_sd_dir):
    """The BMC job: each target (a BMC address) is scraped at its exporter's ``/ipmi?target=&module=``;
    ``instance`` is the BMC, ``node`` the host. Session timeouts of several collectors add up, so the job
    scrapes every minute with a 50 s timeout."""
    return {'job_name': IPMI_JOB, 'metrics_path': '/ipmi', 'scrape_interval': '1m', 'scrape_timeout': '50s',
            'file_sd_configs': [{'files': ['%s/%s.yml' % (file_sd_dir, IPMI_JOB)]}],
            'relabel_configs': [
                {'source_labels': ['__address__'], 'target_label': '__param_target'},
                {'source_labels': ['__param_target'], 'target_label': 'instance'},
                {'source_labels': ['__exporter_address'], 'target_label': '__address__'},
            ]}


def inband_job(file_sd_dir):
    """The in-band BMC job: each host's ipmi_exporter at ``/metrics`` (its own BMC through /dev/ipmi0),
    with the BMC job's interval and timeout (FreeIPMI's collectors are slow)."""
    return {'job_name': INBAND_JOB, 'scrape_interval': '1m', 'scrape_timeout': '50s',
            'file_sd_configs': [{'files': ['%s/%s.yml' % (file_sd_dir, INBAND_JOB)]}]}


def _job(name, inputs, file_sd_dir, auth):
    job = {'job_name': name, 'file_sd_configs': [{'files': ['%s/%s.yml' % (file_sd_dir, name)]}]}
    if auth:
        job['scheme'] = inputs['node_exporter_scheme']
        if inputs.get('node_exporter_basic_auth_username'):
            job['basic_auth'] = {'username': inputs['node_exporter_basic_auth_username'],
                                 'password': inputs.get('node_exporter_basic_auth_password') or ''}
        if inputs['node_exporter_scheme'] == 'https':
            tls = {}
            if inputs.get('node_exporter_tls_ca_file'):
                tls['ca_file'] = inputs['node_exporter_tls_ca_file']
            if inputs.get('node_exporter_tls_insecure_skip_verify'):
                tls['insecure_skip_verify'] = True
            if tls:
                job['tls_config'] = tls
    return job


_DURATION = re.compile(r'([0-9]+(ms|s|m|h|d|w|y))+')
_GROUP = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}')
_HOST = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.:-]{0,252}')
_LABEL = re.compile(r'[A-Za-z_][A-Za-z0-9_]{0,127}')
_TARGET = re.compile(r'(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}')
_CONTROL = re.compile(r'[\x00-\x1f\x7f\u0085\u2028\u2029]')


def _value_errors(inputs):
    """Values that reach prometheus.yml, the file system or promtool's command line."""
    errors = []
    for variable in ('status_file', 'promtool', 'node_exporter_tls_ca_file'):
        value = inputs.get(variable)
        if value or variable == 'status_file':
            errors.extend(e for e in [owned_path_error(value, 'prometheus_' + variable)] if e)
    for variable in ('scrape_interval', 'evaluation_interval'):
        if not _DURATION.fullmatch(str(inputs.get(variable) or '')):
            errors.append('prometheus_%s: %r is not a Prometheus duration such as 30s or 1m'
                          % (variable, inputs.get(variable)))
    if inputs.get('ipmi_exporter_host') and not _HOST.fullmatch(str(inputs['ipmi_exporter_host'])):
        errors.append('prometheus_ipmi_exporter_host: %r is not an inventory host name' % (inputs['ipmi_exporter_host'],))
    for variable in ('node_exporter_group', 'dcgm_exporter_group'):
        if not _GROUP.fullmatch(str(inputs.get(variable) or '')):
            errors.append('prometheus_%s: %r is not an inventory group name' % (variable, inputs.get(variable)))
    for key, value in sorted((inputs.get('external_labels') or {}).items(), key=lambda kv: str(kv[0])):
        if not _LABEL.fullmatch(str(key)) or not isinstance(value, (str, int, float)) or _CONTROL.search(str(value)):
            errors.append('prometheus_external_labels: %r: %r is not a label name and a one-line value' % (key, value))
    errors.extend('prometheus_alertmanager_targets: %r is not HOST:PORT' % (target,)
                  for target in inputs.get('alertmanager_targets') or [] if not _TARGET.fullmatch(str(target)))
    errors.extend('prometheus_rules_files: %r is not a file on the controller' % (path,)
                  for path in inputs.get('rules_files') or [] if not path or _CONTROL.search(str(path)))
    return errors


def check_inputs(inputs):
    """Errors (list of str, each naming the variable) the argument spec cannot catch."""
    errors = []
    user = inputs.get('node_exporter_basic_auth_username') or ''
    password = inputs.get('node_exporter_basic_auth_password') or ''
    if bool(user) != bool(password):
        errors.append('prometheus_node_exporter_basic_auth_username and prometheus_node_exporter_basic_auth_password '
                      'must be set together')
    for variable in ('file_sd_dir', 'rules_dir', 'config_file'):
        value = inputs.get(variable) or ''
        if not value.startswith('/'):
            errors.append('prometheus_%s must be an absolute path, not %r' % (variable, value))
        else:
            errors.extend(e for e in [owned_path_error(value, 'prometheus_' + variable)] if e)
    errors.extend(_value_errors(inputs))
    errors.extend(e for e in [target_address_error(inputs.get('target_address'))] if e)
    # Grafana provisioning (templates grafana-*.yml.j2): directories the role creates, a URL.
    for variable in ('grafana_dashboards_dir', 'grafana_provisioning_dir'):
        error = inputs.get(variable) and owned_path_error(inputs[variable], 'prometheus_' + variable)
        if error:
            errors.append(error)
    url = inputs.get('grafana_datasource_url') or ''
    if url and not re.fullmatch(r'https?://[^\s\x00-\x1f\x7f"\'\\]+', url):
        errors.append('prometheus_grafana_datasource_url: %r is not an http(s):// URL' % (url,))
    for index, job in enumerate(inputs.get('extra_scrape_configs') or []):
        if not isinstance(job, dict) or not job.get('job_name'):
            errors.append('prometheus_extra_scrape_configs[%d] must be a scrape config with a job_name' % index)
        elif job['job_name'] in JOBS + (IPMI_JOB,):
            errors.append('prometheus_extra_scrape_configs[%d]: job_name %s is the role\'s own job' % (index, job['job_name']))
    return errors


def rule_files(inputs):
    """Paths of the rule files on the Prometheus host: the collection's (GPU, storage, BMC), then the user's."""
    return ['%s/gpuops-gpu.rules.yml' % inputs['rules_dir'], '%s/gpuops-storage.rules.yml' % inputs['rules_dir'],
            '%s/gpuops-bmc.rules.yml' % inputs['rules_dir']] + [
        '%s/%s' % (inputs['rules_dir'], path.rstrip('/').rsplit('/', 1)[-1]) for path in inputs.get('rules_files') or []]


def scrape_config(inputs):
    """prometheus.yml (dict) for the Prometheus the role installs."""
    config = {
        'global': {'scrape_interval': inputs['scrape_interval'],
                   'evaluation_interval': inputs['evaluation_interval'],
                   'external_labels': dict(inputs.get('external_labels') or {})},
        'rule_files': rule_files(inputs),
        'scrape_configs': [
            {'job_name': 'prometheus', 'static_configs': [{'targets': ['localhost:9090']}]},
            _job('node_exporter', inputs, inputs['file_sd_dir'], True),
            _job('dcgm_exporter', inputs, inputs['file_sd_dir'], False),
            inband_job(inputs['file_sd_dir']),
        ] + ([ipmi_job(inputs['file_sd_dir'])] if inputs.get('ipmi_exporter_host') else []) + list(inputs.get('extra_scrape_configs') or []),
    }
    if not config['global']['external_labels']:
        del config['global']['external_labels']
    if inputs.get('alertmanager_targets'):
        config['alerting'] = {'alertmanagers': [{'static_configs': [{'targets': list(inputs['alertmanager_targets'])}]}]}
    return config
