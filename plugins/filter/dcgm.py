# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.dcgm_exporter_config: the dcgm_exporter role's inputs and the host's
plan -> the counters CSV, the command line, packages and the status record.

The documentation is in dcgm_exporter_config.yml next to this file; the rules are in
plugins/module_utils/dcgm.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.dcgm import decide, verify_metrics


def _plain(value):
    """Deep-copy Ansible's tagged/lazy containers into plain Python types."""
    if isinstance(value, dict):
        return dict((str(k), _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def dcgm_exporter_config(inputs, plan, gpu=None, platform=None, strict=True):
    """Return the dcgm_exporter decisions for ``inputs`` (the role's typed variables) and ``plan``."""
    if not isinstance(inputs, dict):
        raise AnsibleFilterError('gpuops.dlserver.dcgm_exporter_config: the inputs must be a dictionary '
                                 '(the fact __dcgm_exporter), got %s' % type(inputs).__name__)
    if not isinstance(plan, dict):
        raise AnsibleFilterError('gpuops.dlserver.dcgm_exporter_config: the plan must be a dictionary '
                                 '(the fact gpuops_plan), got %s' % type(plan).__name__)
    result = decide(_plain(inputs), _plain(plan), _plain(gpu) or {}, _plain(platform) or {})
    if result['errors'] and strict:
        raise AnsibleFilterError('gpuops.dlserver.dcgm_exporter_config: %s'
                                 % '; '.join(e['message'] for e in result['errors']))
    return result


def dcgm_exporter_verify(text, expected):
    """Compare the exporter's /metrics text with the metric names of the counters file."""
    return verify_metrics(_plain(text) or '', _plain(expected) or [])


class FilterModule(object):
    """gpuops.dlserver dcgm_exporter filters."""

    def filters(self):
        return {'dcgm_exporter_config': dcgm_exporter_config, 'dcgm_exporter_verify': dcgm_exporter_verify}
