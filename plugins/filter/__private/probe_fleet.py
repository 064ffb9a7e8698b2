# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.probe_fleet: the fleet's read-only report (playbooks/probe.yml).

One filter per file, so that the file name is the filter name; the code is
``plugins/module_utils/plan/probe_report.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: probe_fleet
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: The fleet's read-only report - one line per host, then per role, and the JSON document
description:
  - Gathers the per-host reports of C(gpuops.dlserver.__private.probe_report) that C(playbooks/probe.yml) published
    as C(gpuops_probe) into one document - C(hosts) (report per host), C(missing) (hosts without a report, which
    failed or were unreachable), C(changes) and C(reboots) (the hosts a run would change or reboot),
    and C(table), the lines the playbook prints.
  - Reads only C(gpuops_probe) of each host.
positional: _input, hosts
options:
  _input:
    description: C(hostvars).
    type: dict
    required: true
  hosts:
    description: The hosts of the play, in order (C(ansible_play_hosts_all)).
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Print the fleet's report
  ansible.builtin.debug:
    msg: "{{ (hostvars | gpuops.dlserver.__private.probe_fleet(ansible_play_hosts_all)).table }}"
  run_once: true
"""

RETURN = r"""
_value:
  description: C(report_version), C(hosts), C(missing), C(changes), C(reboots), C(table).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.probe_report import ReportError, fleet_report


def probe_fleet(hostvars, hosts):
    try:
        if not isinstance(hosts, (list, tuple)):
            raise ReportError('probe report: hosts must be a list of host names, got %r' % (hosts,))
        reports = {}
        for host in hosts:
            try:
                reports[host] = hostvars[host].get('gpuops_probe')
            except (KeyError, TypeError, AttributeError):
                reports[host] = None
        return fleet_report(reports, list(hosts))
    except ReportError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.probe_fleet: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.probe_fleet."""

    def filters(self):
        return {'probe_fleet': probe_fleet}
