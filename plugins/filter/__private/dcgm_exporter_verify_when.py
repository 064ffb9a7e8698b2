# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.dcgm_exporter_verify_when.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: dcgm_exporter_verify_when
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Whether dcgm_exporter verifies the exporter in this run
description:
- Takes the registered results of the role's tasks that change the host (by name; C({}) for a task that did not
  run, or true/false for a change the role tracks itself) and whether this is a dry run (C(ansible_check_mode)).
- A run always verifies what it leaves. A dry run verifies only where no task would change anything (a converged
  host), where the page is the one a run would verify and the status file records the same verification, so
  C(--check) changes nothing there. Elsewhere the exporter is not (yet) what a run leaves, and the result says
  which tasks would change.
- The decision is C(verify_when) in C(plugins/module_utils/monitoring/dcgm_verify.py).
positional: _input, check_mode
options:
  _input:
    description: Name to registered result (a dict) or true/false.
    type: dict
    required: true
  check_mode:
    description: Whether this is a dry run (C(ansible_check_mode)).
    type: bool
    required: true
"""

EXAMPLES = r"""
- name: Write the exporter's unit
  ansible.builtin.copy:
    content: "[Unit]\nDescription=example\n"
    dest: /etc/systemd/system/dcgm-exporter.service
    mode: "0644"
  register: unit_written

- name: Verify only where a dry run would change nothing
  ansible.builtin.uri:
    url: http://localhost:9400/metrics
  check_mode: false
  when: (verify_results | gpuops.dlserver.__private.dcgm_exporter_verify_when(ansible_check_mode)).run
  vars:
    verify_results:
      unit: "{{ unit_written }}"
"""

RETURN = r"""
_value:
  description: The decision.
  type: dict
  contains:
    run:
      description: Whether to verify the exporter.
      type: bool
    changed:
      description: The names whose result changed (or would change, in a dry run).
      type: list
      elements: str
    reason:
      description: The decision in words.
      type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.dcgm_verify import VerifyError, verify_when


def dcgm_exporter_verify_when(results, check_mode):
    """Whether dcgm_exporter verifies the exporter in this run."""
    try:
        return verify_when(plain(results), plain(check_mode))
    except VerifyError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.dcgm_exporter_verify_when: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.dcgm_exporter_verify_when."""

    def filters(self):
        return {'dcgm_exporter_verify_when': dcgm_exporter_verify_when}
