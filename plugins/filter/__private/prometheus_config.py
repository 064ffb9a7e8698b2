# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.prometheus_config.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: prometheus_config
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: The prometheus.yml of the gpuops.dlserver.prometheus role
description:
- Global intervals and external labels, the rule files (the collection's C(gpuops-gpu.rules.yml) and the
  basenames of C(rules_files), in C(rules_dir)), Prometheus' own job, the jobs C(node_exporter) (scheme,
  basic auth and TLS settings for node_exporter's web configuration) and C(dcgm_exporter) read from the
  file_sd directory, the user's extra scrape configurations and the Alertmanager targets (C(plugins/module_utils/monitoring/prometheus_config.py)).
- Fails, naming the variable, on a user name without password, relative paths or an extra scrape configuration
  that reuses a job name of the role.
options:
  _input:
    description: The role's typed variables without prefix (C(__prometheus)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Read the prometheus role's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: prometheus
  register: prometheus_inputs

- name: Render prometheus.yml
  ansible.builtin.copy:
    content: "{{ prometheus_inputs.inputs | gpuops.dlserver.__private.prometheus_config | to_nice_yaml }}"
    dest: /etc/prometheus/prometheus.yml
    mode: "0644"
"""

RETURN = r"""
_value:
  description: The configuration as a dict, to be written as YAML.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import prometheus_config as _prometheus


def prometheus_config(inputs):
    if not isinstance(inputs, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.prometheus_config: the inputs (__prometheus) must be a dict, got %r'
                                 % type(inputs).__name__)
    # the inputs were checked before any change by the registry of input checks (core/input_checks.py
    # runs prometheus_config.check_inputs in the role's preflight and in host_plan on every host)
    return _prometheus.scrape_config(dict(inputs))


class FilterModule(object):
    """gpuops.dlserver.__private.prometheus_config."""

    def filters(self):
        return {'prometheus_config': prometheus_config}
