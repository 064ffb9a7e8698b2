# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters node_exporter_plan, prometheus_targets, prometheus_config: the monitoring roles' decisions."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils import node_exporter as _node_exporter
from ansible_collections.gpuops.dlserver.plugins.module_utils import prometheus_config as _prometheus


def node_exporter_plan(inputs, platform, host, arch):
    try:
        result = _node_exporter.decide(dict(inputs), dict(platform), str(host), str(arch))
    except ImportError as exc:
        raise AnsibleFilterError('gpuops.dlserver.node_exporter_plan: node_exporter_basic_auth_users needs the '
                                 'Python package bcrypt on the controller (pip install bcrypt): %s' % exc)
    return result


def prometheus_targets(hostvars, hosts, dcgm_group):
    try:
        entries = []
        for name in hosts:
            vars_ = hostvars[name]
            entry = _prometheus.host_targets(str(name), vars_, list(vars_.get('group_names') or []), str(dcgm_group))
            entry['name'] = str(name)
            entries.append(entry)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))
    return {'hosts': dict((e['name'], {'node_exporter': e['node_exporter'], 'dcgm_exporter': e['dcgm_exporter']})
                          for e in entries),
            'file_sd': _prometheus.file_sd(entries)}


def prometheus_config(inputs):
    errors = _prometheus.check_inputs(dict(inputs))
    if errors:
        raise AnsibleFilterError('; '.join(errors))
    return _prometheus.scrape_config(dict(inputs))


class FilterModule(object):
    """gpuops.dlserver monitoring filters."""

    def filters(self):
        return {'node_exporter_plan': node_exporter_plan, 'prometheus_targets': prometheus_targets,
                'prometheus_config': prometheus_config}
