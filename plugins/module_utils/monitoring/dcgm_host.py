# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a dcgm_exporter run would change anything on this host: the converged fast path.

``converged(config, state)``: ``config`` is what the filter gpuops.dlserver.__private.dcgm_exporter_config
decided (``__dcgm_exporter_config``: mode, packages_missing, stop_units, container); ``state`` is
what the module gpuops.dlserver.__private.dcgm_exporter_host read in one round trip: ``gpg`` (present),
``directory`` (the configuration directory is root:root 0755), ``counters`` and ``unit_file``
(each file has the decided bytes, root:root 0644), ``units`` ({unit: {enabled, active}} as systemctl
reads them), ``engine`` and ``image`` (container mode), ``page`` (the verification of the metrics
page, read only where everything else is current). Each reason names what would change.

Pure function, standard library only, Python 3.8+ (case table
tests/unit/plugins/module_utils/data/dcgm_host_cases.yml).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

SERVICE = 'dcgm-exporter'
HOSTENGINE = 'nvidia-dcgm'
# systemctl is-enabled / is-active answers that a disable / stop task would change
_ENABLED = ('enabled', 'enabled-runtime', 'linked', 'linked-runtime')
_RUNNING = ('active', 'activating', 'reloading', 'deactivating')
# The one reason left where everything else is current: the module then reads the page.
PAGE_NOT_READ = 'the metrics page was not read'


def running_units(config, service=SERVICE, hostengine=HOSTENGINE):
    """The units the role keeps enabled and started, in the order it starts them."""
    return ([hostengine] if config.get('mode') == 'host' else []) + [service]


def converged(config, state, service=SERVICE, hostengine=HOSTENGINE):
    """``{current, reasons}``: see the module docstring."""
    reasons = []
    host = config.get('mode') == 'host'
    if host and not state.get('gpg'):
        reasons.append('gpg is not installed (the repository key is checked with it)')
    if host and config.get('packages_missing'):
        reasons.append('not installed: %s' % ', '.join(config['packages_missing']))
    if not host:
        if not state.get('engine'):
            reasons.append('the container engine is not installed')
        elif not state.get('image'):
            reasons.append('the image %s is not pulled' % ((config.get('container') or {}).get('image')))
    if not state.get('directory'):
        reasons.append('the configuration directory would change')
    if not state.get('counters'):
        reasons.append('the counters file %s would change' % config.get('csv_path'))
    if not state.get('unit_file'):
        reasons.append('the unit file would change')
    units = state.get('units') or {}
    for unit in running_units(config, service, hostengine):
        seen = units.get(unit) or {}
        if seen.get('enabled') != 'enabled':
            reasons.append('%s is not enabled (%s)' % (unit, seen.get('enabled') or 'not read'))
        if seen.get('active') != 'active':
            reasons.append('%s is not running (%s)' % (unit, seen.get('active') or 'not read'))
    for unit in config.get('stop_units') or []:
        seen = units.get(unit) or {}
        if seen.get('enabled') in _ENABLED or seen.get('active') in _RUNNING or not seen:
            reasons.append('%s, which the role takes over, is not stopped and disabled' % unit)
    if not reasons:
        page = state.get('page')
        if not isinstance(page, dict):
            reasons.append(PAGE_NOT_READ)
        elif not page.get('ok'):
            reasons.append('verification: %s' % page.get('reason'))
    return {'current': not reasons, 'reasons': reasons}
