# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.dcgm_exporter_verify.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: dcgm_exporter_verify
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Compare what dcgm-exporter serves with its counters file
description:
- Takes the text of the exporter's C(/metrics) page and the metric names the counters file lists (C(metric_names)
  of the filter C(gpuops.dlserver.__private.dcgm_exporter_config)).
- The result is ok when at least one C(DCGM_FI_*) metric is served and every one served is listed. Listed
  fields that are not served (fields the GPUs do not support are left out by dcgm-exporter) are reported,
  not failed.
positional: _input, expected
options:
  _input:
    description: The text of the C(/metrics) page.
    type: str
    required: true
  expected:
    description: The metric names of the counters file.
    type: list
    elements: str
    required: true
"""

EXAMPLES = r"""
- name: Read the exporter's page
  ansible.builtin.uri:
    url: http://localhost:9400/metrics
    return_content: true
  register: dcgm_page

- name: Compare the page with the metrics the exporter should serve
  ansible.builtin.assert:
    that: (dcgm_page.content | gpuops.dlserver.__private.dcgm_exporter_verify(expected)).ok
  vars:
    expected: [DCGM_FI_DEV_GPU_TEMP, DCGM_FI_DEV_POWER_USAGE, DCGM_FI_DEV_XID_ERRORS]
"""

RETURN = r"""
_value:
  description: The comparison.
  type: dict
  contains:
    ok:
      description: At least one field served, and none outside the counters file.
      type: bool
    served:
      description: The C(DCGM_FI_*) metric names served.
      type: list
      elements: str
    not_served:
      description: Listed names that were not served.
      type: list
      elements: str
    unexpected:
      description: Served names that the counters file does not list.
      type: list
      elements: str
    reason:
      description: The comparison in words.
      type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.dcgm_verify import verify_metrics
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain


def dcgm_exporter_verify(text, expected):
    """Compare the exporter's /metrics text with the metric names of the counters file."""
    text, expected = plain(text), plain(expected)
    if text is not None and not isinstance(text, str):
        raise AnsibleFilterError('gpuops.dlserver.__private.dcgm_exporter_verify: the /metrics page must be text, got %r'
                                 % type(text).__name__)
    if expected is not None and (not isinstance(expected, list) or not all(isinstance(n, str) for n in expected)):
        raise AnsibleFilterError('gpuops.dlserver.__private.dcgm_exporter_verify: expected (the counters file\'s metric_names) '
                                 'must be a list of names, got %r' % (expected,))
    return verify_metrics(text or '', expected or [])


class FilterModule(object):
    """gpuops.dlserver.__private.dcgm_exporter_verify."""

    def filters(self):
        return {'dcgm_exporter_verify': dcgm_exporter_verify}
