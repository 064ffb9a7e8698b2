# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lists by their meaning and security posture: values well-formed but wrong or unsafe (issue 37).

ONE table (``VARIABLES``: variable -> (kind, params)) classifies every list, inventory group,
service account, container image, package name, pip spec, credential and TLS-client variable of
every role (and the playbook variables whose check can run on a host); ``NOT_THIS_CLASS`` names the
variables of those shapes that are deliberately not checked here, each with its reason. A unit test
walks every argument spec and fails for a variable of those shapes that neither table names.

What each kind refuses (each problem names the variable, the value's problem and what is accepted):

- ``unique``: an item listed twice (``[crio, crio]``) - it would configure one thing twice. The
  params say what identifies an item: the whole string, a collector's name, a flag's name
  (``--x=1`` and ``--x=2``), a kernel parameter's name (``iommu=pt`` and ``iommu=off``; the
  parameters the kernel takes repeatedly are exempt), a file's base name (two rules files that land
  on the same path), a DCGM field (given twice, or differently in two lists).
- ``unique_by``: a list of mappings with two entries for the same key (``name``, ``job_name``, a
  limit's ``domain``/``type``/``item``), across the lists named together.
- ``inventory_group``: a group the inventory does not have - refused naming the inventory's groups.
  Decided: a group absent at its DEFAULT name is legitimate (a CPU-only fleet has no ``gpu_nodes``;
  the feature then configures nothing, as documented); a group the user named is a typo until the
  inventory has it. A group the inventory has but that is empty, and a group absent at its default
  name, are accepted (hosts may join later) but not silently: ``notices`` names the variable and the
  group in the run (a warning of the role's preflight), since the feature configures nothing.
- ``scrape``: credentials or TLS client settings on a plain-HTTP scrape (Prometheus sends the
  password in clear; a CA or skip-verify setting does nothing, and the operator believes the scrape
  verified) - opt-in ``gpuops_allow_basic_auth_over_http``. ``scrape_configs`` does the same for
  each extra scrape job, and refuses two jobs with one ``job_name``.
- ``served_credentials``: node_exporter basic-auth users without TLS (the role's own opt-in
  ``node_exporter_basic_auth_allow_http`` is honoured, as before).
- ``service_user`` / ``service_group``: an exporter running as an account that grants privilege
  (``PRIVILEGED_USERS``, ``PRIVILEGED_GROUPS``, uid/gid 0) - opt-in
  ``gpuops_allow_privileged_service_accounts``.
- ``image`` / ``image_tag``: a container image by a moving tag (none, ``latest``, ``main``,
  ``stable``..., or a tag without a full ``major.minor.patch`` version) where a version or a digest is
  expected - opt-in ``gpuops_allow_moving_image_tags``.
- ``package`` / ``packages``: an empty or malformed package name where a package is required, a
  package listed twice.
- ``pip_environments``: two environments with one name; in an environment declared pinned
  (``pinned: true`` on the entry, default ``python_stack_pinned``), a pip entry without an exact
  version (``==X`` / ``===X``) - a lock file (``lock_file``) is pinned by design.
- ``opt_in``: the opt-ins themselves (booleans, converted by common's argument spec).

``problems(role, inputs, context)``: inputs are the role's converted inputs (short names without
``<role>_``; common's and the playbook's keep their full names); context is built by the actions
(``groups``: the inventory's groups -> hosts, None where unknown; ``insecure_hosts``; ``allow``:
the opt-ins by short name). The checks of an item given twice are in value_lists.py; this module classifies, checks the
rest and dispatches.

Pure, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.value_lists import unique_by_problems, unique_problems
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.value_numbers import shown as _shown

# Accounts that grant privilege to whoever runs as them, with why (decided from what each grants on
# Debian/Ubuntu/RHEL: root's powers, files owned by the account, a group's device or socket access).
PRIVILEGED_USERS = {
    'root': 'uid 0, every power on the host',
    'toor': 'a second uid-0 account where it exists',
    'daemon': 'a system account that owns system files and runs legacy daemons',
    'bin': 'owns system binaries on older systems',
    'sys': 'a system account that owns system files',
    'nobody': 'shared by every service that uses it: one compromised service reaches the others',
}
PRIVILEGED_GROUPS = {
    'root': 'gid 0: group-owns most system files',
    'wheel': 'runs any command as root through sudo (RHEL)',
    'sudo': 'runs any command as root through sudo (Debian, Ubuntu)',
    'admin': 'runs any command as root through sudo (older Ubuntu)',
    'shadow': 'reads the password hashes (/etc/shadow)',
    'disk': 'reads and writes the raw block devices, so any file',
    'docker': 'the Docker socket: root on the host',
    'lxd': 'the LXD socket: root on the host',
    'incus-admin': 'the Incus socket: root on the host',
    'libvirt': 'starts machines with the host\'s devices and files',
    'kmem': 'reads kernel memory (/dev/kmem, /dev/mem)',
    'adm': 'reads the system logs',
    'systemd-journal': 'reads the whole journal',
    'staff': 'writes /usr/local, which root runs from (Debian)',
    'sys': 'group-owns system files',
    'bin': 'group-owns system binaries on older systems',
    'daemon': 'group-owns daemon files',
    'nogroup': 'shared by every service that uses it',
}
# Tags that name no release: whatever was pushed last
MOVING_TAGS = ('latest', 'main', 'master', 'stable', 'edge', 'nightly', 'dev', 'develop', 'head', 'rolling',
               'lts', 'current', 'release', 'testing', 'unstable', 'canary', 'beta', 'alpha', 'next')

OPT_INS = {
    'moving_image_tags': 'gpuops_allow_moving_image_tags',
    'basic_auth_over_http': 'gpuops_allow_basic_auth_over_http',
    'privileged_service_accounts': 'gpuops_allow_privileged_service_accounts',
}

# variable -> (kind, params). Role variables by full name; the playbook's (rolling upgrade) too.
VARIABLES = {
    # common (entry point gpu): the opt-ins, and the opt-in list of url_trust
    'gpuops_allow_moving_image_tags': ('opt_in', {}),
    'gpuops_allow_basic_auth_over_http': ('opt_in', {}),
    'gpuops_allow_privileged_service_accounts': ('opt_in', {}),
    'gpuops_insecure_http_hosts': ('unique', {'what': 'host'}),
    # cuda_toolkit
    'cuda_toolkit_versions': ('unique', {'what': 'CUDA toolkit version'}),
    # dcgm_exporter
    'dcgm_exporter_counters': ('unique', {'what': 'DCGM field', 'identity': 'counter',
                                          'with': ['dcgm_exporter_profiling_counters', 'dcgm_exporter_counters_extra']}),
    'dcgm_exporter_profiling_counters': ('unique', {'what': 'DCGM field', 'identity': 'counter'}),
    'dcgm_exporter_counters_extra': ('unique', {'what': 'DCGM field', 'identity': 'counter'}),
    'dcgm_exporter_image_tag': ('image_tag', {'image': ['dcgm_exporter_image_registry', 'dcgm_exporter_image_name']}),
    'dcgm_exporter_exporter_package': ('package', {'empty': 'the exporter binary is put there by other means '
                                                            '(documented)'}),
    # gpu_validate
    'gpu_validate_checks': ('unique', {'what': 'check'}),
    'gpu_validate_peer_group': ('inventory_group', {'default': '', 'empty': 'no cross-node check'}),
    # ipmi_exporter
    'ipmi_exporter_local_collectors': ('unique', {'what': 'collector'}),
    'ipmi_exporter_user': ('service_user', {}),
    'ipmi_exporter_group': ('service_group', {}),
    # node_exporter
    'node_exporter_enabled_collectors': ('unique', {'what': 'collector', 'identity': 'collector'}),
    'node_exporter_disabled_collectors': ('unique', {'what': 'collector'}),
    'node_exporter_extra_args': ('unique', {'what': 'flag', 'identity': 'flag'}),
    'node_exporter_user': ('service_user', {}),
    'node_exporter_group': ('service_group', {}),
    'node_exporter_basic_auth_users': ('served_credentials', {'tls': 'node_exporter_tls_cert_file',
                                                              'opt_in': 'node_exporter_basic_auth_allow_http'}),
    'node_exporter_basic_auth_allow_http': ('opt_in', {}),
    # nvidia_container_toolkit
    'nvidia_container_toolkit_accept_cves': ('unique', {'what': 'CVE'}),
    'nvidia_container_toolkit_engines': ('unique', {'what': 'container engine'}),
    'nvidia_container_toolkit_smoke_test_image': ('image', {}),
    # nvidia_driver
    'nvidia_driver_modules_load': ('unique', {'what': 'kernel module'}),
    'nvidia_driver_packages_extra': ('packages', {}),
    # os_tuning
    'os_tuning_limits': ('unique_by', {'keys': ['domain', 'type', 'item'], 'with': ['os_tuning_limits_extra']}),
    'os_tuning_limits_extra': ('unique_by', {'keys': ['domain', 'type', 'item']}),
    'os_tuning_kernel_cmdline': ('unique', {'what': 'kernel parameter', 'identity': 'cmdline'}),
    'os_tuning_unattended_blacklist': ('unique', {'what': 'package pattern'}),
    # prometheus
    'prometheus_rules_files': ('unique', {'what': 'rules file', 'identity': 'basename'}),
    'prometheus_alertmanager_targets': ('unique', {'what': 'Alertmanager target'}),
    'prometheus_extra_scrape_configs': ('scrape_configs', {}),
    'prometheus_node_exporter_group': ('inventory_group', {'default': 'all'}),
    'prometheus_dcgm_exporter_group': ('inventory_group', {'default': 'gpu_nodes'}),
    'prometheus_node_exporter_scheme': ('scrape', {}),
    'prometheus_node_exporter_basic_auth_username': ('scrape', {}),
    'prometheus_node_exporter_basic_auth_password': ('scrape', {}),
    'prometheus_node_exporter_tls_ca_file': ('scrape', {}),
    'prometheus_node_exporter_tls_insecure_skip_verify': ('scrape', {}),
    # python_stack
    'python_stack_environments': ('pip_environments', {}),
    'python_stack_pinned': ('opt_in', {}),
    'python_stack_insecure_index_hosts': ('unique', {'what': 'host'}),
    'python_stack_conda_channels': ('unique', {'what': 'conda channel'}),
    # volcano
    'volcano_scheduler_actions': ('unique', {'what': 'action'}),
    'volcano_scheduler_configurations': ('unique_by', {'keys': ['name']}),
    'volcano_queues': ('unique_by', {'keys': ['name']}),
    'volcano_priority_classes': ('unique_by', {'keys': ['name']}),
    'volcano_node_group': ('inventory_group', {'default': 'gpu_nodes'}),
    'volcano_device_plugin_image': ('image', {}),
    'volcano_smoke_image': ('image', {}),
    # playbooks/rolling_driver_upgrade.yml (host_plan reads it where the inventory or -e sets it)
    'gpuops_rolling_k8s_group': ('inventory_group', {'default': 'k8s_nodes'}),
}

# The playbook variables of VARIABLES (no argument spec declares them): host_plan reads them.
PLAYBOOK_VARIABLES = ('gpuops_rolling_k8s_group',)

# Variables of the shapes above that are deliberately not checked here, and why.
NOT_THIS_CLASS = {
    'volcano_smoke_command': 'a command line: an argument may repeat on purpose',
    'ipmi_exporter_verify_targets': 'BMCs verify scrapes; each address by bmc/credentials.py, each module among '
                                    'ipmi_exporter_modules (monitoring/ipmi_exporter.py)',
    'gpuops_bmc_user': 'a BMC user name; IPMI\'s character set and length (bmc/credentials.py user_problem)',
    'gpuops_bmc_password': 'a BMC password, never shown; IPMI\'s length (bmc/credentials.py password_problem)',
    'gpu_validate_sel_workaround_flags': 'FreeIPMI workaround flags of the SEL read over the LAN; each a full match '
                                         '(bmc/sel_lan.py FLAG_RE) by validate/inputs.py and again by the module',
    'volcano_scheduler_tiers': 'plugins listed twice are refused by volcano_scheduling.py (its own check, per tier '
                               'and across tiers)',
    'dcgm_exporter_image_registry': 'a registry (url_trust.py); the version is in dcgm_exporter_image_tag',
    'dcgm_exporter_image_name': 'a repository name; the version is in dcgm_exporter_image_tag',
    'node_exporter_tls_cert_file': 'the server side of TLS (node_exporter.py checks certificate and key together)',
    'node_exporter_tls_key_file': 'the server side of TLS (url_trust.py: a local file)',
    'os_tuning_limits_file': 'a path (value_kinds.py)',
    'os_tuning_sysctl_defaults': 'a mapping: one key per layer; the layers override by design (defaults < group < '
                                 'overwrite); the only other spelling of a key (slash form) is refused by '
                                 'os_tuning_inputs.py',
    'os_tuning_sysctl_group': 'as os_tuning_sysctl_defaults',
    'os_tuning_sysctl_overwrite': 'as os_tuning_sysctl_defaults',
    'gpu_validate_python_env': 'the name of a python_stack environment, not a package',
    'python_stack_uv_version': 'a version of the installer the role pins by sha256',
    'volcano_device_plugin_runtime_class': 'a Kubernetes RuntimeClass name, no image',
    'gpu_validate_allow_cpu': 'lets the checks run on a host without a GPU: no risk to accept',
    'storage_volumes': 'dataset volumes: names, mount points and drives named twice are refused by '
                       'storage/inputs.py (its own check, VALUE_CHECKS)',
}

# Names of the shapes the walk expects classified (besides every list variable and list sub-option).
SHAPES = re.compile(r'.*(_group|_groups|_user|_users|_image|_image_tag|_package|_packages|_pip|_username|_password'
                    r'|_auth|_credentials?|_token|_secret|_tls_[a-z_]+|_scheme|_pinned|_allow_[a-z_]+)\Z')

_GROUP = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_PACKAGE = re.compile(r'[a-z0-9][a-z0-9.+-]+')
_IMAGE = re.compile(r'(?P<repo>[a-z0-9][a-z0-9._-]*(?::[0-9]{1,5})?(?:/[a-z0-9][a-z0-9._-]*)*)'
                    r'(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?P<digest>@sha256:[0-9a-f]{64})?')
_TAG = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}')
_VERSION_TAG = re.compile(r'v?[0-9]+\.[0-9]+\.[0-9]+(?:[-+_.].*)?', re.S)
_EXACT_PIN = re.compile(r'(?:===|==)[ \t]*[0-9A-Za-z][A-Za-z0-9.+!_-]*')
_PIP_NAME = re.compile(r'[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*)')


# --------------------------------------------------------------------------- groups

def group_problem(name, value, params, groups):
    """A group the inventory does not have (None: fine, or the inventory unknown)."""
    if not isinstance(value, str):
        return None  # the argument spec refuses other types
    if value == '' and 'empty' in params:
        return None
    if not _GROUP.fullmatch(value):
        return '%s: %s is not an inventory group name (letters, digits, _)' % (name, _shown(value))
    if groups is None or value in groups or value == params.get('default'):
        # unknown inventory; a group it has; its default name, absent: that feature configures nothing
        return None
    names = sorted(g for g in groups if g not in ('all', 'ungrouped'))
    return ('%s: group %s is not in the inventory, so it would match no host and configure nothing; the '
            'inventory\'s groups: %s' % (name, _shown(value), ', '.join(names) or '(none but all)'))


def group_notice(name, value, params, groups):
    """What a group accepted by group_problem leaves unconfigured, or None: a group the inventory has
    with no host in it, or a group absent at its default name (both match no host)."""
    if groups is None or not isinstance(value, str) or value == '' or not _GROUP.fullmatch(value):
        return None
    if value in groups:
        if groups[value]:
            return None
        return ('%s: group %s is in the inventory but has no host, so it matches no host and configures nothing '
                'until a host joins it' % (name, _shown(value)))
    if value == params.get('default'):
        return ('%s: group %s (the default) is not in the inventory, so it matches no host and configures '
                'nothing; add the group to the inventory, or set %s to a group of it' % (name, _shown(value), name))
    return None  # a group the user named that the inventory lacks: group_problem refuses it


# --------------------------------------------------------------------------- posture

def scrape_problems(inputs, full, allow):
    """Credentials or TLS client settings on prometheus's plain-HTTP node_exporter scrape."""
    if full('prometheus_node_exporter_scheme') != 'http':
        return []
    sent = [v for v in ('prometheus_node_exporter_basic_auth_username', 'prometheus_node_exporter_basic_auth_password')
            if full(v) and not allow.get('basic_auth_over_http')]
    tls = [v for v in ('prometheus_node_exporter_tls_ca_file', 'prometheus_node_exporter_tls_insecure_skip_verify')
           if full(v)]
    found = []
    if sent:
        found.append('prometheus_node_exporter_scheme is http but %s %s set: Prometheus would send the password in '
                     'clear to every node_exporter; set prometheus_node_exporter_scheme: https (node_exporter_tls_*'
                     ' on the exporters), or gpuops_allow_basic_auth_over_http: true to accept that'
                     % (' and '.join(sent), 'is' if len(sent) == 1 else 'are'))
    if tls:
        found.append('prometheus_node_exporter_scheme is http but %s %s set: TLS client settings do nothing on a '
                     'plain-HTTP scrape, which nothing verifies; set prometheus_node_exporter_scheme: https, or '
                     'leave %s unset' % (' and '.join(tls), 'is' if len(tls) == 1 else 'are', ' and '.join(tls)))
    return found


def scrape_configs_problems(name, value, allow):
    """Extra scrape jobs: one job_name twice; credentials or TLS settings over plain HTTP."""
    found = unique_by_problems(name, value, {'keys': ['job_name']}, lambda n: None)
    for index, job in enumerate(value if isinstance(value, list) else []):
        if not isinstance(job, dict):
            continue
        scheme = job.get('scheme', 'http')
        secret = [k for k in ('basic_auth', 'authorization', 'oauth2', 'bearer_token', 'bearer_token_file')
                  if job.get(k)]
        tls = ['tls_config'] if job.get('tls_config') else []
        label = job.get('job_name') if isinstance(job.get('job_name'), str) else index
        if scheme != 'https' and secret and not allow.get('basic_auth_over_http'):
            found.append('%s[%s]: %s over scheme %s: Prometheus would send the credentials in clear; set scheme: '
                         'https, or gpuops_allow_basic_auth_over_http: true to accept that'
                         % (name, label, ', '.join(secret), scheme))
        if scheme != 'https' and tls:
            found.append('%s[%s]: tls_config over scheme %s does nothing (a plain-HTTP scrape verifies nothing); set '
                         'scheme: https or drop tls_config' % (name, label, scheme))
    return found


def served_credentials_problem(name, value, params, full):
    if not value or full(params['tls']) or full(params['opt_in']):
        return None
    return ('%s: basic-auth users without TLS (%s empty): node_exporter would take the passwords in clear; set %s, '
            'or %s: true to accept that' % (name, params['tls'], params['tls'], params['opt_in']))


def account_problem(name, value, kind, allow):
    if not isinstance(value, str) or allow.get('privileged_service_accounts'):
        return None
    table = PRIVILEGED_USERS if kind == 'service_user' else PRIVILEGED_GROUPS
    what = 'user' if kind == 'service_user' else 'group'
    why = table.get(value)
    if value.strip() == '0' or (value.isdigit() and int(value) == 0):
        why = '%sid 0 is root' % what[0]
    if why is None:
        return None
    return ('%s: %s %s grants privilege (%s): an exporter runs as its own unprivileged %s (the default, %s); name '
            'another, or gpuops_allow_privileged_service_accounts: true to accept that'
            % (name, what, _shown(value), why, what, 'node-exp'))


def _tag_problem(name, tag, reference):
    """A moving tag (or none), or None for a version tag."""
    if tag is None or tag == '':
        return '%s: %s has no tag, so it means :latest, whatever was pushed last' % (name, _shown(reference))
    if tag.lower() in MOVING_TAGS:
        return '%s: %s is a moving tag (%s), whatever was pushed last' % (name, _shown(reference), tag)
    if not _VERSION_TAG.fullmatch(tag):
        return ('%s: tag %s of %s names no full release version (major.minor.patch), so it can move to another '
                'release' % (name, _shown(tag), _shown(reference)))
    return None


_PIN_FIX = ('give a version tag (major.minor.patch, e.g. 12.8.1-base-ubuntu24.04) or a digest (@sha256:...), or '
            'gpuops_allow_moving_image_tags: true to accept a moving image')


def image_problem(name, value, allow):
    if not isinstance(value, str):
        return None
    match = _IMAGE.fullmatch(value)
    if match is None:
        return '%s: %s is not an image reference ([registry/]repository[:tag][@sha256:digest]), got it as given' % (
            name, _shown(value))
    if match.group('digest') or allow.get('moving_image_tags'):
        return None
    problem = _tag_problem(name, match.group('tag'), value)
    return '%s; %s' % (problem, _PIN_FIX) if problem else None


def image_tag_problem(name, value, allow, reference=None):
    if not isinstance(value, str):
        return None
    if value and not _TAG.fullmatch(value) and not re.fullmatch(r'sha256:[0-9a-f]{64}', value):
        return '%s: %s is not an image tag (letters, digits, _ . -; at most 128)' % (name, _shown(value))
    if value.startswith('sha256:') or allow.get('moving_image_tags'):
        return None
    problem = _tag_problem(name, value or None, '%s:%s' % (reference, value) if reference and value else
                           reference or value)
    return '%s; %s' % (problem, _PIN_FIX) if problem else None


def package_problem(name, value, params):
    if not isinstance(value, str):
        return None
    if value == '' and params.get('empty'):
        return None
    if not _PACKAGE.fullmatch(value):
        return ('%s: %s is not a package name (lower-case letters, digits, . + -; two characters or more)%s'
                % (name, _shown(value), '' if value else '; a package is required here'))
    return None


def packages_problems(name, value):
    found = [package_problem(name, item, {}) for item in (value if isinstance(value, list) else [])]
    found = ['%s (each entry)' % p for p in found if p]
    return found + unique_problems(name, value, {'what': 'package'}, lambda n: None)


def _pip_pinned(item):
    """Whether a pip requirement pins one exact version (==X or ===X, one specifier)."""
    match = _PIP_NAME.match(item)
    if not match:
        return False
    rest = item[match.end():].split(';', 1)[0].strip()
    rest = re.sub(r'^\[[^\]]*\]', '', rest).strip()
    return bool(_EXACT_PIN.fullmatch(rest))


def environments_problems(name, value, inputs):
    found = unique_by_problems(name, value, {'keys': ['name']}, lambda n: None)
    default = inputs.get('pinned', False) is True
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, dict):
            continue
        pinned = item.get('pinned', default)
        if pinned is not True or item.get('state', 'present') != 'present':
            continue
        loose = [p for p in item.get('pip') or [] if isinstance(p, str) and p.strip() and not _pip_pinned(p)]
        if loose:
            found.append('%s[%s]: declared pinned (%s) but %s pin%s no version, so pip takes whatever is newest: '
                         'give each ==X (or ===X), use a lock_file (uv pip compile --generate-hashes), or declare '
                         'the environment pinned: false'
                         % (name, item.get('name'), 'pinned: true' if 'pinned' in item else 'python_stack_pinned',
                            ', '.join(_shown(p) for p in loose), '' if len(loose) > 1 else 's'))
    return found


# --------------------------------------------------------------------------- the check

def variable_problems(name, value, full, context):
    """The problems of variable ``name`` (a row of VARIABLES) with ``value``."""
    kind, params = VARIABLES[name]
    allow = context.get('allow') or {}
    if kind == 'unique':
        return unique_problems(name, value, params, full)
    if kind == 'unique_by':
        return unique_by_problems(name, value, params, full)
    if kind == 'inventory_group':
        return [p for p in [group_problem(name, value, params, context.get('groups'))] if p]
    if kind == 'scrape':
        return scrape_problems(None, full, allow) if name == 'prometheus_node_exporter_scheme' else []
    if kind == 'scrape_configs':
        return scrape_configs_problems(name, value, allow)
    if kind == 'served_credentials':
        return [p for p in [served_credentials_problem(name, value, params, full)] if p]
    if kind in ('service_user', 'service_group'):
        return [p for p in [account_problem(name, value, kind, allow)] if p]
    if kind == 'image':
        return [p for p in [image_problem(name, value, allow)] if p]
    if kind == 'image_tag':
        parts = [full(p) for p in params.get('image') or []]
        reference = '/'.join(p for p in parts if isinstance(p, str) and p) or None
        return [p for p in [image_tag_problem(name, value, allow, reference)] if p]
    if kind == 'package':
        return [p for p in [package_problem(name, value, params)] if p]
    if kind == 'packages':
        return packages_problems(name, value)
    if kind == 'pip_environments':
        return environments_problems(name, value, context.get('short') or {})
    return []


def problems(role, inputs, context=None):
    """Every problem of the list and posture variables among ``inputs`` (converted; short names
    without ``<role>_``, full names where common's or the playbook's). ``context``: ``groups``
    (inventory groups -> hosts, or None: unknown), ``insecure_hosts``, ``allow`` (opt-ins)."""
    inputs = inputs or {}
    context = dict(context or {})
    prefix = '%s_' % role
    # common's and the playbook's names are full (gpuops_*); a role's are short (prometheus's
    # node_exporter_group is prometheus_node_exporter_group, not node_exporter's variable)
    values = dict(((k if k.startswith('gpuops_') else prefix + k), v) for k, v in inputs.items())
    context['short'] = inputs
    found = []
    for name in sorted(values):
        if name in VARIABLES:
            found.extend(variable_problems(name, values[name], values.get, context))
    return found


def notices(role, inputs, context=None):
    """What the checks of ``problems`` accept but the run should hear (same names and context), each
    naming the variable: an inventory group that matches no host (empty, or absent at its default)."""
    inputs = inputs or {}
    groups = (context or {}).get('groups')
    prefix = '%s_' % role
    values = dict(((k if k.startswith('gpuops_') else prefix + k), v) for k, v in inputs.items())
    found = []
    for name in sorted(values):
        kind, params = VARIABLES.get(name, ('', {}))
        if kind == 'inventory_group':
            found.extend(n for n in [group_notice(name, values[name], params, groups)] if n)
    return found


def context_of(groups=None, insecure_hosts=(), allow=None):
    """The context the actions build (module_utils stays free of Ansible)."""
    return {'groups': groups, 'insecure_hosts': list(insecure_hosts or []),
            'allow': dict((short, bool((allow or {}).get(short))) for short in OPT_INS)}


# --------------------------------------------------------------------------- careless values
# The tables of the careless-value suite live in value_posture_careless.py (kept apart: they are
# test data, not checks); re-exported here, where the suite reads every value module's tables.
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.value_posture_careless import (  # noqa: E402,F401 pylint: disable=wrong-import-position,unused-import
    CARELESS, CARELESS_BY_VARIABLE, CLASS_OF_KIND, REFUSED_THROUGH_OTHERS)


def careless_values(name):
    """[(value, expected, reason)] the suite gives variable ``name``."""
    kind = VARIABLES[name][0]
    return CARELESS_BY_VARIABLE.get(name) or CARELESS.get(kind) or []
