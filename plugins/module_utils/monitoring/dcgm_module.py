# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one call of gpuops.dlserver.__private.dcgm_exporter_host: ``run(module)`` reads the host
(monitoring/dcgm_host.py), checks the CUDA repository in the same round trip and ends the module."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible.module_utils.urls import open_url

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import files as core_files
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm_host
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.dcgm_verify import verify_metrics
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_files
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure, Host, fail_problems

UNIT_RE = re.compile(r'[A-Za-z0-9@_.:-]{1,255}')
URL_RE = re.compile(r'http://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}/metrics')
IMAGE_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}')
GPG = '/usr/bin/gpg'


def units_state(module, units):
    """{unit: {enabled, active}}: one systemctl call for each question."""
    systemctl = module.get_bin_path('systemctl')
    found = dict((u, {'enabled': 'not read', 'active': 'not read'}) for u in units)
    if not systemctl or not units:
        return found
    for key, verb in (('enabled', 'is-enabled'), ('active', 'is-active')):
        dummy, out, dummy2 = module.run_command([systemctl, verb] + list(units))
        lines = out.splitlines()
        for index, unit in enumerate(units):
            found[unit][key] = lines[index].strip() if index < len(lines) and lines[index].strip() else 'not-found'
    return found


def read_page(url, expected, timeout):
    try:
        text = open_url(url, timeout=timeout, validate_certs=False).read().decode('utf-8', 'replace')
    except Exception as exc:  # pylint: disable=broad-except
        return {'ok': False, 'served': [], 'not_served': list(expected), 'unexpected': [],
                'reason': 'the page %s could not be read: %s' % (url, exc)}
    return verify_metrics(text, expected)


def run(module):
    """The module's whole call, ended with exit_json or fail_json."""
    params = module.params
    config = params['config']
    if not config.get('run'):
        module.exit_json(changed=False, host={}, verified=None, repository=None,
                         converged={'current': True, 'reasons': [], 'note': 'the role does nothing here'})
    mode = config.get('mode')
    if mode == 'host' and params['backend'] != 'apt':
        module.fail_json(msg='dcgm_exporter_mode: host installs DCGM with apt (Debian, Ubuntu); this host has %s: '
                             'set dcgm_exporter_mode: container' % params['backend'])
    units = dcgm_host.running_units(config, params['service'], params['hostengine_service']) \
        + list(config.get('stop_units') or [])
    bad = [u for u in units if not isinstance(u, str) or not UNIT_RE.fullmatch(u)]
    if bad:
        module.fail_json(msg='not a unit name: %s' % ', '.join(repr(u) for u in bad))
    state = {
        'gpg': os.path.exists(GPG) if mode == 'host' else None,
        'directory': core_files.directory_current(params['config_dir']),
        'counters': core_files.file_current(config['csv_path'], config['csv']),
        'unit_file': core_files.file_current(params['unit_file'], config['unit']),
        'units': units_state(module, units),
        'engine': None, 'image': None, 'page': None,
    }
    if mode == 'container':
        container = config.get('container') or {}
        engine, image = container['argv'][0], container['image']
        if not IMAGE_RE.fullmatch(image or ''):
            module.fail_json(msg='dcgm_exporter_image_*: %r is not an image reference' % (image,))
        state['engine'] = os.path.exists(engine)
        if state['engine']:
            rc = module.run_command([engine, 'image', 'inspect', '--format', '{{.Id}}', image])[0]
            state['image'] = rc == 0
    verdict = dcgm_host.converged(config, state, params['service'], params['hostengine_service'])
    if verdict['reasons'] == [dcgm_host.PAGE_NOT_READ]:
        # everything else is current: verify now, in the same round trip
        url = config.get('verify_url') or ''
        if not URL_RE.fullmatch(url):
            module.fail_json(msg='verify_url %r is not the exporter\'s metrics URL' % (url,))
        state['page'] = read_page(url, config.get('metric_names') or [], params['page_timeout'])
        verdict = dcgm_host.converged(config, state, params['service'], params['hostengine_service'])
    module.exit_json(changed=False, host=state, verified=state['page'], converged=verdict,
                     repository=check_repository(module, params['repository']) if state['gpg'] else None)


def check_repository(module, options):
    """The CUDA repository (host mode), checked as package_repository checks it; fails the module on
    a bad option or a key that cannot be fetched or trusted, naming the variable."""
    try:
        result = repo_files.check_option(Host(module), options)
    except Failure as exc:
        exc.fail_json(module)
    if result and result['problems']:
        fail_problems(module, {'problems': result['problems']})
    return result
