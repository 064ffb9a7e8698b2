# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of the volcano role's inputs that reach files, Helm, kubeconfig look-ups and the smoke
job's command line (issue 19); ``volcano.input_errors`` runs ``access_errors(inputs)`` with the
rest, before the cluster is read and before anything is applied.

Every pattern is a full match (``re.fullmatch``), so a trailing newline is refused; paths are
absolute and normal (``core/systemd.owned_path_error``) and at most ``MAX_PATH`` characters;
numbers are bounded. Each message names the variable.

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import control_error, owned_path_error
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano_tables import CHART_REPO_URL, DNS1123_SUBDOMAIN

MAX_PATH = 1024
MAX_URL = 2048
MAX_REFERENCE = 512
MAX_TIMEOUT = 86400
MAX_WORKERS = 4096
# A kubeconfig context name (kubernetes-admin@kubernetes, arn:aws:eks:...:cluster/name, gke_p_z_c).
CONTEXT = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.@:/+-]{0,252}')
# An Ansible inventory group name.
GROUP = re.compile(r'[A-Za-z_][A-Za-z0-9_]{0,254}')
# An inventory host name (a name, an IPv4 or an IPv6 address).
INVENTORY_HOST = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.:-]{0,252}')
# A key of the chart's values (one level of a dotted path).
HELM_KEY = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}')
# The smoke job's executable: a command name or an absolute path (it is exec'ed, never a shell line).
EXECUTABLE = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.+-]{0,254}|(/[A-Za-z0-9_.+-]+)+')


def path_error(value, variable):
    """None, or why ``value`` is not an absolute, normal path (naming ``variable``)."""
    if isinstance(value, str) and len(value) > MAX_PATH:
        return '%s: a path of %d characters is longer than %d' % (variable, len(value), MAX_PATH)
    return owned_path_error(value, variable)


def _too_long(value, limit):
    return isinstance(value, str) and len(value) > limit


def helm_values_error(values, variable='volcano_helm_values'):
    """None, or why the chart values hold a key that is no chart key, or a control character."""
    if isinstance(values, dict):
        for key in sorted(values, key=str):
            if not isinstance(key, str) or not HELM_KEY.fullmatch(key):
                return '%s: %r is not a chart value key (letters, digits, _ . -)' % (variable, key)
            error = helm_values_error(values[key], variable)
            if error:
                return error
        return None
    if isinstance(values, list):
        for item in values:
            error = helm_values_error(item, variable)
            if error:
                return error
        return None
    return control_error(values, variable)


def node_names_errors(names):
    """Problems of volcano_node_names (inventory host name -> Kubernetes node name)."""
    errors = []
    for host in sorted(names or {}, key=str):
        node = names[host]
        if not isinstance(host, str) or not INVENTORY_HOST.fullmatch(host):
            errors.append('volcano_node_names: %r is not an inventory host name' % (host,))
        elif not isinstance(node, str) or len(node) > 253 or not DNS1123_SUBDOMAIN.fullmatch(node):
            errors.append('volcano_node_names: %s: %r is not a Kubernetes node name (a DNS-1123 subdomain)'
                          % (host, node))
    return errors


def smoke_command_errors(command):
    """Problems of volcano_smoke_command: an executable, then arguments on one line each."""
    if not command:
        return ['volcano_smoke_command must name the command each worker runs']
    first = command[0]
    if not isinstance(first, str) or not EXECUTABLE.fullmatch(first) or \
            any(part in ('.', '..') for part in first.split('/')[1:]):
        return ['volcano_smoke_command: %r is not a command name or an absolute path (the job runs it without a '
                'shell: put a shell line after [sh, -c])' % (first,)]
    errors = []
    for arg in command[1:]:
        error = control_error(arg, 'volcano_smoke_command')
        if error or not isinstance(arg, str) or not arg or len(arg) > 4096:
            errors.append(error or 'volcano_smoke_command: argument %r must be non-empty text of at most 4096 '
                          'characters' % (arg,))
    return errors


def access_errors(inputs):
    """Problems of the inputs that reach files, Helm, the kubeconfig and the smoke job."""
    errors = []
    if inputs.get('kubeconfig'):
        errors.append(path_error(inputs['kubeconfig'], 'volcano_kubeconfig'))
    context = inputs.get('context')
    if context and not (isinstance(context, str) and CONTEXT.fullmatch(context)):
        errors.append('volcano_context %r is not a kubeconfig context name (letters, digits, _ . @ : / + -, at '
                      'most 253)' % (context,))
    if inputs.get('status_file'):
        errors.append(path_error(inputs['status_file'], 'volcano_status_file'))
    group = inputs.get('node_group')
    if not (isinstance(group, str) and GROUP.fullmatch(group)):
        errors.append('volcano_node_group %r is not an inventory group name' % (group,))
    errors.extend(node_names_errors(inputs.get('node_names')))
    errors.append(helm_values_error(inputs.get('helm_values') or {}))
    errors.extend(smoke_command_errors(inputs.get('smoke_command') or []))
    chart = inputs.get('chart_ref')
    if inputs.get('install_method') == 'helm' and isinstance(chart, str) and (
            _too_long(chart, MAX_REFERENCE) or '..' in chart.split('/')):
        errors.append('volcano_chart_ref %r must be at most %d characters without .. components'
                      % (chart[:80], MAX_REFERENCE))
    if _too_long(inputs.get('chart_repo_url'), MAX_URL):
        errors.append('volcano_chart_repo_url is longer than %d characters' % MAX_URL)
    for key in ('device_plugin_image', 'smoke_image'):
        if _too_long(inputs.get(key), MAX_REFERENCE):
            errors.append('volcano_%s is longer than %d characters' % (key, MAX_REFERENCE))
    src = inputs.get('manifest_src')
    if inputs.get('install_method') == 'manifest' and src:
        if isinstance(src, str) and src.startswith(('http://', 'https://')):
            if _too_long(src, MAX_URL) or not CHART_REPO_URL.fullmatch(src):
                errors.append('volcano_manifest_src %r is not an http(s) URL without blanks (at most %d characters)'
                              % (src[:80], MAX_URL))
        else:
            errors.append(path_error(src, 'volcano_manifest_src'))
    for key, low, high in (('wait_timeout', 1, MAX_TIMEOUT), ('smoke_timeout', 1, MAX_TIMEOUT),
                           ('smoke_workers', 0, MAX_WORKERS)):
        value = inputs.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > high:
            errors.append('volcano_%s %d is above %d' % (key, value, high))
    return [e for e in errors if e]
