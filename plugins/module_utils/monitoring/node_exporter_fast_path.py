# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The converged fast path of the node_exporter role: whether the host already is what the role's
install, configure and textfile steps would leave, from ``node_exporter.decide()``'s decision and
the host read of ``node_exporter_host`` (table: data/node_exporter_fast_path_cases.yml). Pure
function, standard library only."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_storage

# The GECOS comment of the account the role creates: an existing account without it (root,
# www-data, nobody) is never taken over (its shell, home and group rewritten); the fast path
# checks it too. node_exporter.py imports it from here.
ACCOUNT_COMMENT = 'gpuops.dlserver node_exporter'

# systemctl is-enabled answers 0 (enabled) for these unit file states.
ENABLED_STATES = ('enabled', 'enabled-runtime', 'static', 'alias', 'indirect', 'generated', 'transient')


def fast_path(decision, inputs, node):
    """``{converged, drift}``: whether the host already is what the role's install, configure,
    textfile and verify steps would leave (``converged``: the role skips them all), and the
    names of what is not (``drift``, in step order). ``node`` is node_exporter_host's read; its
    ``state`` (the files, units, account and a scrape, read on the host) is compared here with
    what ``decision`` (decide()'s result) would write. No state read: not converged."""
    state = (node or {}).get('state')
    if not isinstance(state, dict) or state.get('error'):
        return {'converged': False, 'drift': ['host state not read']}
    drift = []
    release = decision['source'] == 'release'
    if release:
        rel = state.get('release') or {}
        if not rel.get('binary'):
            drift.append('release binary %s' % decision['binary'])
        if not rel.get('link'):
            drift.append('link %s' % decision['link'])
        # The checksum the installed release was verified with (written after the download's check):
        # another node_exporter_sha256 or checksums URL is verified again, by the download.
        if rel.get('checksum') != decision['release']['checksum']:
            drift.append('release checksum')
    elif not ((node.get('package') or {}).get('version')):
        drift.append('package')
    gid = state.get('gid')
    if gid is None:
        drift.append('group %s' % inputs['group'])
    acct = node.get('account') or {}
    if not (acct and acct.get('gid') == gid and gid is not None and acct.get('gecos') == ACCOUNT_COMMENT
            and acct.get('home') == '/nonexistent' and acct.get('shell') == '/usr/sbin/nologin'):
        drift.append('user %s' % inputs['user'])
    dirs = state.get('directories') or {}
    drift.extend('directory %s' % d for d in (inputs['config_dir'], inputs['textfile_dir']) if not dirs.get(d))
    web = state.get('web_config') or {}
    if decision['web_config'] is None:
        if web.get('exists', True):
            drift.append('web configuration (to remove)')
    elif not (web.get('attributes') and web.get('content') == decision['web_config_content']):
        drift.append('web configuration')
    if not release and not state.get('dropin_dir'):
        drift.append('drop-in directory')
    if not state.get('unit_file'):
        drift.append('unit %s' % decision['unit_file'])
    service = state.get('service') or {}
    if (service.get('UnitFileState') not in ENABLED_STATES or service.get('ActiveState') != 'active'
            or service.get('NeedDaemonReload') != 'no'):
        drift.append('service %s (%s, %s, reload needed: %s)' % (
            decision['service'], service.get('UnitFileState'), service.get('ActiveState'),
            service.get('NeedDaemonReload')))
    textfile = state.get('textfile') or {}
    if not textfile.get('current'):
        drift.append('textfile')
    drift.extend(node_exporter_storage.drift(decision['storage'], state.get('storage')))
    scrape = state.get('scrape') or {}
    verified = (scrape.get('status') == 200 and scrape.get('build_info')
                and (not inputs.get('gpu_textfile') or scrape.get('gpus_on_pci') == textfile.get('gpus_on_pci'))
                and (not decision['verify']['basic_auth'] or scrape.get('anonymous_status') == 401))
    if not verified:
        drift.append('scrape of %s' % decision['verify']['url'])
    return {'converged': not drift, 'drift': drift}
