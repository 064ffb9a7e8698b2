# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.probe_report: one host's read-only report (playbooks/probe.yml).

One filter per file, so that the file name is the filter name; the code is
``plugins/module_utils/plan/probe_report.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: probe_report
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: One host's read-only report - what a run of the collection would change, and reboot
description:
  - Builds the report C(playbooks/probe.yml) prints and writes for one host - its GPUs, the loaded and the
    installed driver, whether the plan is free of conflicts, and per role whether a run would run it,
    change something (C(true), C(false), or C(null) where the probe did not look that deep) and reboot.
  - The driver role is inspected deeply - its read of the host and the repositories (module
    C(gpuops.dlserver.__private.nvidia_driver_host), action C(resolve), in check mode) says which version it would
    install and whether a reboot would follow. Reboots already pending from earlier runs come from the
    host's reboot marker (C(/run/gpuops/reboot-required)).
  - node_exporter is inspected with its own decision on the host (O(node_exporter)) - whether the role
    would change something and what (its drift), the release it would install beside an installed
    distribution package, and a release URL that does not answer (predicted to fail).
  - The other roles' settings are those the registry of input checks judged (O(settings), from
    M(gpuops.dlserver.host_plan) with C(settings_checks)) - a role whose settings fail them is predicted
    to fail (C(fails)); otherwise its change is unknown (C(null)). C(verdict) counts the roles inspected,
    that would change, that would fail and that are unknown.
positional: _input, host, resolved, marker, settings, node_exporter
options:
  _input:
    description: The host's plan (C(gpuops_plan)).
    type: dict
    required: true
  host:
    description: The host's name (C(inventory_hostname)).
    type: str
    required: true
  resolved:
    description: The result of C(gpuops.dlserver.__private.nvidia_driver_host) (action C(resolve)) on the host, or C({})
      when the driver role was not inspected.
    type: dict
    required: false
  marker:
    description: The text of the host's reboot marker, or C(null) when there is none.
    type: str
    required: false
  settings:
    description: What the registry of input checks found per role (C(gpuops_settings)), or C({}) when not asked for.
    type: dict
    required: false
  node_exporter:
    description:
      - node_exporter's read of the host, or C({}) when the role was not inspected - C(plan) (the role's
        decision C(__node_exporter_plan) with C(converged), C(drift), C(source), C(release)), C(package) (the
        distribution package's name and installed version), C(error) (the preflight's refusal) and
        C(release_error) (the failed HEAD requests of the release URLs, the C(uri) loop's failed result).
    type: dict
    required: false
"""

EXAMPLES = r"""
- name: Build this host's report
  ansible.builtin.set_fact:
    gpuops_probe: "{{ gpuops_plan | gpuops.dlserver.__private.probe_report(inventory_hostname, driver_read, marker_text) }}"
  vars:
    driver_read: {}
    marker_text: "nvidia_driver: driver 580.95.05 is loaded: driver 580.105.08 needs a reboot"
"""

RETURN = r"""
_value:
  description:
    - C(host), C(gpus), C(architectures), C(driver) (C(loaded), C(version), C(installed), C(target),
      C(branch)), C(plan) (C(ok), C(errors), C(warnings)), C(roles) (per role C(run), C(change),
      C(reboot), C(reason), and C(fails) where its settings checks predict a failure), C(changes) (the
      roles a run would change), C(not_inspected), C(verdict) (C(inspected), C(would_change),
      C(would_fail), C(unknown), C(not_run)) and C(reboot) (C(would_follow), C(roles), C(pending)),
      and C(security_updates_held_back) (C(checked), C(packages), C(take)), the driver security updates its pin or
      hold keeps back.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.probe_report import (
    ReportError, host_report, release_failure,
)


def probe_report(plan, host, resolved=None, marker=None, settings=None, node_exporter=None):
    try:
        read = None
        if node_exporter:
            read = dict(node_exporter)
            read['release_error'] = release_failure(read.get('release_error'))
        return host_report(host, plan, resolved or None, marker, settings or None, read)
    except ReportError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.probe_report: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.probe_report."""

    def filters(self):
        return {'probe_report': probe_report}
