# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.node_exporter_plan.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: node_exporter_plan
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Check the node_exporter role's inputs and decide how node_exporter is installed and
  run
description:
- Every check and decision of the C(gpuops.dlserver.node_exporter) role (C(plugins/module_utils/monitoring/node_exporter.py))
  - the listen address, each collector against node_exporter's collector list, the source (upstream release
  with URL and checksum, or the distribution package), paths, service name, command line, and the web
  configuration (TLS, basic auth with bcrypt hashes with a random salt; a hash already on the host is kept
  while it verifies its password, so a second run writes the same file).
- Refuses, naming the variable, an existing account the role did not create (root, www-data, ...), user and
  group names that are not system names, system directories and paths that are not absolute and normal,
  control characters in any value that reaches the unit, TLS files that are missing or hold no PEM
  certificate or key, and basic auth over plain HTTP without C(node_exporter_basic_auth_allow_http).
- Fails (raises, like every filter of the collection), naming each variable, on an invalid listen address, an
  unknown collector, a malformed version or checksum, a certificate without key, or a password bcrypt cannot
  hash, and on every refusal above; the message never contains a password.
- Needs the Python package C(bcrypt) on the controller when basic auth users are set.
positional: _input, platform, host, arch, node
options:
  _input:
    description: The role's typed variables without prefix (C(__node_exporter)).
    type: dict
    required: true
  platform:
    description: C(name), C(package), C(package_binary), C(package_service) of the platform.
    type: dict
    required: true
  host:
    description: The inventory name of the host.
    type: str
    required: true
  arch:
    description: C(ansible_architecture) of the host.
    type: str
    required: true
  node:
    description: What C(gpuops.dlserver.__private.node_exporter_host) read on the host (its C(node)).
    type: dict
    required: false
"""

EXAMPLES = r"""
- name: Read node_exporter's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: node_exporter
    fact: node_exporter_inputs

- name: Read what node_exporter needs of the host
  gpuops.dlserver.__private.node_exporter_host:
  register: node_read

- name: Decide
  ansible.builtin.set_fact:
    node_exporter_decision: >-
      {{ node_exporter_inputs | gpuops.dlserver.__private.node_exporter_plan(platform, inventory_hostname,
                                                                   ansible_facts['architecture'], node_read.node) }}
  vars:
    platform: {name: Debian 12, package: prometheus-node-exporter, package_binary: /usr/bin/prometheus-node-exporter,
               package_service: prometheus-node-exporter}
"""

RETURN = r"""
_value:
  description:
    - C(errors) (always empty, bad input fails the filter), C(source), C(source_reason), C(release)
      (C(name), C(url), C(archive), C(sha256), C(checksum), C(install_dir), C(partial_dir); null for the package),
      C(binary), C(link),
      C(service), C(unit_file), C(exec_start) (list), C(account) (C(name), C(group), C(comment)),
      C(web_config) (dict or null), C(web_config_file),
      C(listen), C(verify) (C(url), C(scheme), C(basic_auth), C(user)).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter as _node_exporter


def node_exporter_plan(inputs, platform, host, arch, node=None):
    try:
        result = _node_exporter.decide(dict(inputs), dict(platform), str(host), str(arch), dict(node or {}))
    except ImportError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.node_exporter_plan: node_exporter_basic_auth_users needs the '
                                 'Python package bcrypt on the controller (pip install bcrypt): %s' % exc)
    except (TypeError, ValueError, KeyError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.node_exporter_plan: %s' % exc)
    if result.get('errors'):
        raise AnsibleFilterError('gpuops.dlserver.node_exporter: bad input, nothing was changed: %s'
                                 % '; '.join(result['errors']))
    return result


class FilterModule(object):
    """gpuops.dlserver.__private.node_exporter_plan."""

    def filters(self):
        return {'node_exporter_plan': node_exporter_plan}
