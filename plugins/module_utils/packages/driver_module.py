# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one call of gpuops.dlserver.__private.nvidia_driver_host: ``run(module)`` dispatches the
action (driver_resolve's resolve, after_install, verify, restore; write_config and
write_repo here, which write the files the resolve renders on the host with core/files.put_files),
marks each file of the resolve ``current`` and ends the module. The module file keeps its
documentation and argument specification only (``ARGUMENT_SPEC`` here)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import mark_current, put_files
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_resolve
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure, Host, fail_problems

# No action checks the role's inputs: the registry of input checks (core/input_checks.py) did, on the
# controller, before the role's first call of this module.
ACTIONS = ['resolve', 'after_install', 'verify', 'restore', 'write_config', 'write_repo']
CONFIG_FILES = ['nouveau_blacklist', 'modules_load', 'dkms_signing']

ARGUMENT_SPEC = dict(
    action=dict(type='str', required=True, choices=ACTIONS),
    inputs=dict(type='dict', default={}),
    platform=dict(type='dict', default={}),
    plan=dict(type='dict', default={}),
    gpu=dict(type='dict', default={}),
    state=dict(type='dict', default={}),
    sysfs_root=dict(type='path', default='/sys'),
    lock_timeout=dict(type='int', default=300),
    cuda=dict(type='dict', default={}),
    failure=dict(type='dict', default={}),
    files=dict(type='list', elements='str', default=[], choices=CONFIG_FILES),
)


def write_config(p, module):
    """action=write_config: the configuration files named in ``files`` rendered as the resolve
    renders them (config_texts) and written here (core/files.put_files: atomic, root 0644,
    --diff, check mode; dkms_signing '' = the file removed). Reads no repository."""
    inp, plat, plan = p['inputs'], p['platform'], p['plan']
    plat = dict(plat, branch=str(plan['driver']['branch']['value'] or ''))
    dummy, pk = driver_resolve.choose_packages(inp, plat, plan)
    texts = driver_resolve.config_texts(plat, pk, dict((k, v) for k, v in (inp.get('secure_boot_keys') or {}).items() if v))
    wanted = [dict(driver_resolve.config_files(plat, texts)[key], key=key) for key in p['files']]
    done, diffs = put_files(wanted, module)
    return {'problems': [], 'changed': bool(diffs), 'diff': diffs,
            'written': [{'key': d['key'], 'dest': d['dest'], 'changed': d['changed']} for d in done]}


def write_repo(p, module, host):
    """action=write_repo: the read of action=resolve again (its repository files need the
    versions and the checked key it reads), then its repository files, keyring and version pin
    written here (core/files.put_files: atomic, root 0644, --diff, check mode; '' = removed)."""
    result = driver_resolve.resolve(p, host)
    if result['problems']:
        return {'problems': result['problems']}
    done, diffs = put_files(result['repo_files'], module)
    return {'problems': [], 'changed': bool(diffs), 'diff': diffs,
            'written': [{'dest': d['dest'], 'changed': d['changed']} for d in done]}


def restore(module, host):
    """The driver change failed: restore, read back, and fail with what happened."""
    try:
        record = driver_resolve.restore(module.params, host)
    except Exception as exc:  # pylint: disable=broad-except
        # whatever went wrong, the failure carries a record: the rolling upgrade reads it
        record = {'restored': False, 'changed': False, 'items': [], 'remaining': [], 'now': 'unknown',
                  'msg': 'The NVIDIA driver change failed at "%s": %s. The restore itself failed (%s): what the '
                         'node now has is unknown' % ((module.params['failure'] or {}).get('task') or '?',
                                                      (module.params['failure'] or {}).get('msg') or 'no message',
                                                      getattr(exc, 'msg', exc))}
    module.fail_json(msg=record['msg'], changed=record['changed'], transaction=record)


def run(module):
    """The module's whole call, ended with exit_json or fail_json."""
    host = Host(module)
    action = module.params['action']
    if action == 'restore':
        restore(module, host)
        return
    try:
        if action == 'write_config':
            result = write_config(module.params, module)
        elif action == 'write_repo':
            result = write_repo(module.params, module, host)
        else:
            result = getattr(driver_resolve, action)(module.params, host)
    except Failure as exc:
        exc.fail_json(module)
    if result['problems']:
        fail_problems(module, result)
    # each file says whether the host has it so already: the role writes only the others
    if result.get('repo_files'):
        result['repo_files'] = mark_current(result['repo_files'])
    if result.get('config_files'):
        result['config_files'] = dict((key, mark_current([entry])[0]) for key, entry in result['config_files'].items())
    if action == 'resolve':
        # converged: nothing the role's change phases manage differs (then also after and verified)
        try:
            result.update(driver_resolve.fast_path(module.params, host, result))
        except Failure as exc:
            exc.fail_json(module)
    module.exit_json(changed=result.pop('changed', False), **result)
