# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.validate_html_report: the fleet's HTML page at the end of playbooks/validate.yml.

One filter per file; the code is ``plugins/module_utils/validate/report_html.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: validate_html_report
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: The fleet's gpu_validate verdicts as one self-contained HTML page
description:
  - A row per host, failures first - verdict, device, summary, a bar per measured fraction of peak and the data path -
    from each host's C(gpu_validate_report) fact; a host without it is C(not run). Inline CSS and SVG only; every
    value is escaped.
positional: _input, hostvars, generated
options:
  _input:
    description: The hosts (C(ansible_play_hosts_all)).
    type: list
    elements: str
    required: true
  hostvars:
    description: C(hostvars).
    type: dict
    required: true
  generated:
    description: A line saying when and where the page was made (shown under the title).
    type: str
    default: ''
"""

EXAMPLES = r"""
- name: Write the fleet's HTML report
  ansible.builtin.copy:
    content: "{{ ansible_play_hosts_all | gpuops.dlserver.__private.validate_html_report(hostvars) }}"
    dest: /tmp/gpuops-validate-report.html
    mode: "0644"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
_value:
  description: The HTML page.
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.report import fleet_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.report_html import from_hostvars


def validate_html_report(hosts, hostvars, generated=''):
    try:
        hosts = fleet_inputs(hosts, hostvars)
        return from_hostvars(hosts, hostvars, str(generated or ''))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.validate_html_report: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.validate_html_report."""

    def filters(self):
        return {'validate_html_report': validate_html_report}
