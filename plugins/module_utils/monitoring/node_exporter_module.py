# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one call of gpuops.dlserver.__private.node_exporter_host: ``run(module)`` reads the host
(monitoring/node_exporter_host.py) and ends the module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import platform as _platform
import re

from ansible.module_utils.urls import open_url

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_host
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_sources


def run(module):
    """The module's whole call, ended with exit_json or fail_json."""
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
