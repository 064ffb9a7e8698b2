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
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
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

import platform as _platform
import re

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import open_url

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_host
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_sources


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
    params = module.params
    node = node_exporter_host.read(params['user'], params['web_config'], params['status_file'], params['tls_files'])
    node['package'] = None
    if params['package']:
        name = params['package']
        if not node_exporter_host.PACKAGE_RE.fullmatch(name):
            module.fail_json(msg='package %r: not a package name' % name)
        dpkg = module.get_bin_path('dpkg-query')
        out = module.run_command([dpkg, '-W', '-f', apt_sources.DPKG_QUERY_FORMAT, name])[1] \
            if dpkg else ''
        row = apt_sources.parse_dpkg_query(out, [name]).get(name)
        node['package'] = {'name': name, 'version': row['version'] if row else None}
    if params['inputs'] is not None:
        # Only the passwords are secret: a no_log on the whole dict would mask every path it holds
        # wherever it appears in the result (the directories, the web configuration's text).
        module.no_log_values.update(str(p) for p in (params['inputs'].get('basic_auth_users') or {}).values() if p)
        node['state'] = _state(module, params)
    module.exit_json(changed=False, node=node)


# A systemd unit name, the whole value (it reaches systemctl's command line).
_UNIT_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9@._:-]*')
TEXTFILE_REBOOT_MARKER = '/run/gpuops/reboot-required'
TEXTFILE_OS_TUNING_STATUS = '/etc/gpuops/os_tuning.json'


def _state(module, params):
    inputs = params['inputs']
    try:
        lay = node_exporter.layout(inputs, params['platform'] or {}, _platform.machine())
    except (ValueError, KeyError, TypeError) as exc:
        return {'error': str(exc)}
    systemctl = module.get_bin_path('systemctl')

    def show(service):
        if not systemctl or not _UNIT_RE.fullmatch(service or ''):
            return ''
        argv = [systemctl, 'show', service]
        for prop in node_exporter_host.SERVICE_PROPERTIES:
            argv += ['-p', prop]
        return module.run_command(argv)[1]

    users = inputs.get('basic_auth_users') or {}

    def scrape(url, authenticated):
        user = lay['verify']['user'] if authenticated else None
        try:
            response = open_url(url, validate_certs=False, timeout=5, url_username=user,
                                url_password=users.get(user) if user else None, force_basic_auth=bool(user))
            return response.getcode(), response.read().decode('utf-8', 'replace')
        except Exception as exc:  # pylint: disable=broad-except
            # HTTPError carries the status (401 is what an anonymous scrape must get); anything
            # else (refused, timeout, TLS) is no answer: not converged, the role's steps run.
            return getattr(exc, 'code', None), ''

    return node_exporter_host.state(lay, params['gpu'], params['plan'], bool(inputs.get('gpu_textfile')),
                                    TEXTFILE_REBOOT_MARKER, TEXTFILE_OS_TUNING_STATUS, show=show, scrape=scrape)


if __name__ == '__main__':
    main()
