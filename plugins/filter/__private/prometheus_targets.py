# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.prometheus_targets.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: prometheus_targets
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Scrape targets of the node_exporter and dcgm_exporter jobs from the inventory
description:
- For each host, its node_exporter target and its dcgm-exporter target, from what the host published in
  its plan (C(gpuops_plan), computed from its typed inputs by M(gpuops.dlserver.host_plan)) - the address
  C(host.scrape_address) (C(prometheus_target_address), else C(ansible_host), else the inventory name) and
  the ports of C(exporters.node_exporter.listen_address) (C(node_exporter_listen_address), default 9100)
  and C(exporters.dcgm_exporter.listen_address) (C(dcgm_exporter_listen_address), default 9400). No other
  role's raw variable is read; a host without a plan in this run gets C(ansible_host) and the default ports.
- A host is a dcgm-exporter target when its hardware plan (C(gpuops_plan)) runs the dcgm_exporter role;
  when the plan of that host is not known in this run, when it is in the given GPU group.
- Every target carries the label C(node), the inventory name, on which the collection's GPU rules join
  node_exporter's GPU textfile facts and dcgm-exporter's metrics (C(plugins/module_utils/monitoring/prometheus_config.py)).
- With O(ipmi_exporter_host), each host's BMC (C(bmc.address) and C(bmc.module) of its plan, from C(bmc_address)
  and C(ipmi_exporter_module)) is a target of the job C(ipmi_exporter), scraped through that host's ipmi_exporter
  (its plan's C(bmc.serves) must hold the module).
positional: _input, hosts, dcgm_group, ipmi_exporter_host
options:
  _input:
    description: C(hostvars).
    type: dict
    required: true
  hosts:
    description: Inventory names of the hosts to scrape.
    type: list
    elements: str
    required: true
  dcgm_group:
    description: The group whose hosts run dcgm-exporter when their plan is not known.
    type: str
    required: true
  ipmi_exporter_host:
    description: The inventory host whose ipmi_exporter scrapes the BMCs (C(prometheus_ipmi_exporter_host)); empty, no BMC job.
    type: str
    default: ''
"""

EXAMPLES = r"""
- name: Targets of every host
  ansible.builtin.set_fact:
    targets: "{{ hostvars | gpuops.dlserver.__private.prometheus_targets(groups['all'], 'gpu_nodes') }}"
"""

RETURN = r"""
_value:
  description:
  - C(hosts) (per host and job C(scrape), C(reason), C(target)) and C(file_sd) (per job the list written
    to C(<job>.yml) of the file_sd directory).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import prometheus_config as _prometheus


def prometheus_targets(hostvars, hosts, dcgm_group, ipmi_exporter_host=''):
    try:
        exporter = None
        if ipmi_exporter_host:
            if ipmi_exporter_host not in hostvars:
                raise ValueError('prometheus_ipmi_exporter_host: %s is not a host of the inventory' % ipmi_exporter_host)
            exporter = _prometheus.ipmi_exporter_address(str(ipmi_exporter_host), hostvars[ipmi_exporter_host])
        entries = []
        for name in hosts:
            vars_ = hostvars[name]
            entry = _prometheus.host_targets(str(name), vars_, list(vars_.get('group_names') or []), str(dcgm_group))
            entry['name'] = str(name)
            entry['ipmi_exporter'] = _prometheus.bmc_target(str(name), vars_, exporter)
            entries.append(entry)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc))
    except (TypeError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.prometheus_targets: hostvars must map every host of hosts to its '
                                 'variables (%s: %s)' % (type(exc).__name__, exc))
    return {'hosts': dict((e['name'], {'node_exporter': e['node_exporter'], 'dcgm_exporter': e['dcgm_exporter'],
                                       'ipmi_inband': e['ipmi_inband'], 'ipmi_exporter': e['ipmi_exporter']})
                          for e in entries),
            'file_sd': _prometheus.file_sd(entries)}


class FilterModule(object):
    """gpuops.dlserver.__private.prometheus_targets."""

    def filters(self):
        return {'prometheus_targets': prometheus_targets}
