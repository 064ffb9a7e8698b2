#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_exporter_host
short_description: Read what gpuops.dlserver.node_exporter decides on
version_added: 0.2.0
description:
  - The one read of the host the C(gpuops.dlserver.node_exporter) role makes before it decides
    (C(plugins/module_utils/monitoring/node_exporter_host.py)).
  - "Reads: the passwd entry of the service account (an existing account the role did not create
    is refused by the decision), the web configuration (bcrypt hashes that still verify their
    password are kept), the role's last status file, and whether each TLS file exists and holds a
    PEM certificate or private key."
  - Changes nothing on the host.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpuops.dlserver.attributes.host_check_mode
options:
  user:
    description: The service account (C(node_exporter_user)).
    type: str
    required: true
  web_config:
    description: The web configuration file of node_exporter.
    type: path
    required: true
  status_file:
    description: The role's status file.
    type: path
    required: true
  tls_files:
    description: The TLS certificate and key files to check.
    type: list
    elements: path
    default: []
  package:
    description:
      - The distribution package of node_exporter (C(node_exporter_source=package)); its installed
        version is read with C(dpkg-query), so that a converged host skips the package manager.
      - Empty to read no package.
    type: str
    default: ""
  inputs:
    description:
      - The role's typed variables (C(__node_exporter)). Given, the module also reads the converged
        fast path's state (returned as C(node.state)) - the paths, unit text and scrape address come
        from C(plugins/module_utils/monitoring/node_exporter.py) C(layout()), as the role writes them.
      - The basic-auth passwords in it are masked in the result (no_log); run the task with C(no_log).
    type: dict
  platform:
    description: The platform variables (C(__node_exporter_platform)); with O(inputs).
    type: dict
    default: {}
  gpu:
    description: The probe's facts (C(gpuops_gpu)) the GPU textfile carries; with O(inputs).
    type: dict
    default: {}
  plan:
    description: The host's plan (C(gpuops_plan)) the GPU textfile carries; with O(inputs).
    type: dict
    default: {}
"""

EXAMPLES = r"""
- name: Read the host
  gpuops.dlserver.__private.node_exporter_host:
    user: node-exp
    web_config: /etc/node_exporter/web-config.yml
    status_file: /etc/gpuops/node_exporter.json
    tls_files: [/etc/node_exporter/tls/node.crt, /etc/node_exporter/tls/node.key]
    package: prometheus-node-exporter
  register: node
  no_log: true
"""

RETURN = r"""
node:
  description:
    - "C(account) (C(uid), C(gid), C(gecos), C(home), C(shell); null when absent), C(hashes) (user to bcrypt
      hash in the web configuration), C(status) (the last status record or null), C(files) (path to C(exists)
      and C(pem), which is C(certificate), C(private key), C(unreadable) or null), C(package) (C(name) and its
      installed C(version), null when it is not installed; null when no package was asked)."
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_module


def main():
    module = AnsibleModule(
        argument_spec=dict(
            user=dict(type='str', required=True),
            web_config=dict(type='path', required=True),
            status_file=dict(type='path', required=True),
            tls_files=dict(type='list', elements='path', default=[]),
            package=dict(type='str', default=''),
            inputs=dict(type='dict'),
            platform=dict(type='dict', default={}),
            gpu=dict(type='dict', default={}),
            plan=dict(type='dict', default={}),
        ),
        supports_check_mode=True,
    )
    node_exporter_module.run(module)


if __name__ == '__main__':
    main()
