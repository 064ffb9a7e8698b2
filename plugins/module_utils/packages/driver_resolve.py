# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The actions resolve, after_install and verify of gpuops.dlserver.__private.nvidia_driver_host.

``resolve`` reads the host and the repositories once (``driver_host``), checks the CUDA key
(``repo_trust``), and hands everything to the pure decisions of ``nvidia_repo``; it renders the
files the role writes (``render_files``) and the status record (``status_record``). The module
keeps its argument specification, one call and ``exit_json``. Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import parse_unit_states
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_sources as sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import dpkg_state
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import held_updates
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_host as dh
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_transaction as txn
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo as repo
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import pkgversion
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure, fetch_key

CUDA_VARS = {'url_var': 'gpuops_cuda_repo_key_url', 'checksum_var': 'gpuops_cuda_repo_key_checksum',
             'fingerprint_var': 'gpuops_cuda_repo_key_fingerprint'}


def cuda_key(cuda, needed):
    """The CUDA repository URL and the spec of its key (``gpuops_cuda_repo``, the filter
    gpuops.dlserver.__private.cuda_repository's result); no key when the host does not use the repository."""
    url = (cuda or {}).get('url') or ''
    if not needed:
        return url, None
    if not url:
        raise Failure('the CUDA repository is needed but gpuops_cuda_repo is not set (roles/common/tasks/cuda_repo.yml)')
    return url, dict(CUDA_VARS, url=cuda['key_url'], sha256=cuda.get('sha256') or '',
                     fingerprint=cuda.get('fingerprint') or '')


def choose_packages(inp, plat, plan):
    """The facts the package choice reads and the choice (repo.choose_packages); raises Failure."""
    facts = {'distribution': plat['distribution'], 'distro_branch': plat.get('distro_branch'), 'branch': plat['branch'],
             'flavour': plan['driver']['kernel_modules']['value']}
    pk = repo.choose_packages(plat['packages'], inp, plan, facts)
    if pk['problems']:
        raise Failure('; '.join(pk['problems']))
    return facts, pk


def config_texts(plat, pk, keys):
    """The text of the driver's configuration files (nouveau_blacklist, modules_load, dkms_signing;
    '' = the file removed)."""
    header = plat['header']
    return {'modules_load': header + '\n' + ''.join(m + '\n' for m in pk['modules_load']),
            'dkms_signing': repo.dkms_signing_conf(keys, header),
            'nouveau_blacklist': header + '\n' + NOUVEAU_BLACKLIST}


def resolve(p, host):
    """The whole read of ``action=resolve``: repositories, versions, boot state, and the decisions."""
    inp, plat, plan, gpu = p['inputs'], p['platform'], p['plan'], p['gpu']
    backend = plat['backend']
    # The plan owns the branch (plugins/module_utils/plan/driver_branch.py); this installs it.
    branch = str(plan['driver']['branch']['value'] or '')
    plat = dict(plat, branch=branch)
    load = bool(plan['driver']['load_modules']['value'])
    load_reason = plan['driver']['load_modules']['reason']
    facts, pk = choose_packages(inp, plat, plan)
    if not branch:
        # the plan left it open: no row of packages/driver_branches.py for this platform and source
        raise Failure('the plan chose no driver branch: %s. Set nvidia_driver_branch'
                      % plan['driver']['branch'].get('reason'))
    lock = dh.check_dpkg(host, p['lock_timeout']) if backend == 'apt' else {'waited': 0}
    index = dh.refresh_index(host, host.module.check_mode) if backend == 'apt' else None
    url, key = cuda_key(p['cuda'], pk['cuda_needed'])
    debian = None
    if inp['source'] == 'distro' and plat.get('distro_repository') == 'debian_components':
        missing, full, from_files = sources.debian_stanzas(dh.apt_sources(host), plat['codename'], plat['components'],
                                                           inp.get('debian_mirror') or None, inp.get('debian_keyring'))
        if not full:
            raise Failure('No apt source of the Debian archive for %s (suite %s[-updates|-security], component main) '
                          'was found in /etc/apt/sources.list or /etc/apt/sources.list.d/. Set '
                          'nvidia_driver_debian_mirror to the Debian archive URL to add the contrib, non-free and '
                          'non-free-firmware components for' % (plat['codename'], plat['codename']))
        debian = {'missing': missing, 'full': full, 'from_files': from_files,
                  'missing_text': sources.render_deb822(missing) if missing else ''}
    repo_text = ('the CUDA repository ' + url if inp['source'] == 'cuda_repo'
                 else "the host's own apt repositories" if plat.get('distro_repository') in ('system', None, 'none')
                 else 'the Debian archive %s (%s)' % (' '.join(sorted(set(s['uri'] for s in debian['full']))),
                                                      ', '.join(plat['components'])))
    fm_repo_text = 'the CUDA repository ' + url if pk['fm_from_cuda'] else repo_text
    kernel_list = dh.kernels(host, backend)
    running = plat['running_kernel']
    wanted_kernels = [running] + [k for k in kernel_list if k != running]
    headers = [plat['headers_package'].replace('{kernel}', k) for k in wanted_kernels]
    versions, keyring = {}, None
    work = dh.scratch_dir('gpuops-nvidia-key.')
    try:
        keyfile = None
        if key:
            keyfile, keyring = fetch_key(host, key, work)
            os.chmod(keyfile, 0o644)
        cuda_stanza = {'uri': url, 'suites': ['/'], 'components': [], 'signed_by': keyfile}
        main_pkgs = pk['versioned'] + pk['persistenced'] + pk['extra'] + (
            [] if pk['fm_from_cuda'] else pk['fabric_manager'] + pk['nvlsm'])
        fm_pkgs = pk['fabric_manager'] + pk['nvlsm'] if pk['fm_from_cuda'] else []

        def query(names, text=None, system=False):
            try:
                if backend == 'dnf':
                    return dh.dnf_query(host, names, None if system else url, keyfile, plat.get('repo_gpgcheck', True))
                return dh.apt_query(host, names, None if system else text)
            except Failure as exc:
                raise Failure('cannot read %s: %s. Check %s' % (
                    "the host's own apt repositories" if system else repo_text, exc.msg,
                    'nvidia_driver_debian_mirror and the host\'s apt sources' if inp['source'] == 'distro'
                    else 'gpuops_cuda_repo_base_url (or gpuops_cuda_repo_url), gpuops_cuda_repo_key_url, '
                         'gpuops_cuda_repo_key_checksum and gpuops_cuda_repo_key_fingerprint'),
                    rc=exc.rc, stderr=exc.stderr)

        system = inp['source'] == 'distro' and debian is None
        query_text = sources.render_deb822([cuda_stanza]) if inp['source'] == 'cuda_repo' else \
            sources.render_deb822(debian['full']) if debian else None
        for found in (query(main_pkgs, query_text, system),
                      query(fm_pkgs, sources.render_deb822([cuda_stanza])) if fm_pkgs else {},
                      query(headers, system=True) if backend == 'apt' else {}):
            for name, vers in found.items():
                versions[name] = pkgversion.sort_desc(versions.get(name, []) + vers, backend)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    names = sorted(set(versions) | set(headers) | set(pk['versioned'] + pk['fabric_manager'] + pk['other']))
    have = dh.installed(host, backend, names)
    request = {'branch': branch, 'version': inp.get('version'), 'upgrade': inp.get('upgrade'),
               'versioned': pk['versioned'], 'fabric_manager': pk['fabric_manager'],
               'nvlsm': pk['nvlsm'], 'required': pk['persistenced'] + pk['extra'],
               'repo_text': repo_text, 'fm_repo_text': fm_repo_text, 'backend': backend}
    result = repo.decide(request, versions, have)
    header_rows = [{'kernel': k, 'package': h, 'running': k == running, 'installed': h in have,
                    'available': bool(versions.get(h)) if backend == 'apt' else None}
                   for k, h in zip(wanted_kernels, headers)]
    problems = list(result['problems'])
    # Boot state (only where the kernel is this host's).
    sysfs = p['sysfs_root']
    efi = os.path.isdir('/sys/firmware/efi') if load else False
    mokutil = os.path.exists(plat['mokutil']) if load else False
    sb_text = host.run([plat['mokutil'], '--sb-state'], check=False)[1] if load and efi and mokutil else ''
    sb = repo.secure_boot(load, load_reason, efi, mokutil, plat['mokutil'], sb_text)
    keys = dict((k, v) for k, v in (inp.get('secure_boot_keys') or {}).items() if v)
    problems += repo.signing_problems(keys, dh.stat(keys.get('private_key')), dh.stat(keys.get('certificate')), sb['state'])
    nouveau = load and os.path.isdir(os.path.join(sysfs, 'module', 'nouveau'))
    drv = gpu.get('driver') or {}
    act = repo.activation(result['target'], load, load_reason, bool(drv.get('loaded')), drv.get('version'),
                          nouveau, inp.get('reboot'), inp.get('reboot_timeout'))
    initramfs = repo.initramfs(load, load_reason, plat['initramfs_tool'], os.path.exists(plat['initramfs_tool']))
    if load and backend == 'apt':
        row = header_rows[0]
        if not (row['installed'] or row['available']):
            problems.append('%s (the headers of the running kernel %s) is not in the host\'s repositories, so DKMS '
                            'cannot build the NVIDIA modules for the kernel this host runs. Boot a kernel whose headers '
                            'the repositories carry, or add the repository that has them, and run the role again'
                            % (row['package'], running))
    headers_install = [h['package'] for h in header_rows if not h['installed'] and h['available']] if load else []
    files, repo_files = render_files(plat, pk, result, keys, debian, url, keyring, repo_text, facts['flavour'],
                                     companion_pins(pk, versions, have, backend))
    held_back = driver_held_back(host, backend, result['pinned'], pk, have)
    ctx = {'load': load, 'load_reason': load_reason, 'repo_text': repo_text, 'fm_repo_text': fm_repo_text,
           'held_back': held_back,
           'debian': debian, 'url': url, 'keyring': keyring, 'kernels': kernel_list, 'headers': header_rows,
           'secure_boot': sb, 'signing': bool(keys), 'nouveau': nouveau, 'initramfs': initramfs,
           'activation': act, 'lock': lock, 'index': index}
    status = status_record(inp, plat, plan, pk, result, files, ctx)
    transaction = before_change(host, backend, result, have, repo_files)
    return {'transaction': transaction, 'backend': backend, 'target': result['target'], 'pinned': result['pinned'], 'change': result['change'],
            'companions': companions(pk),
            'held': result['held'], 'keep': result['keep'], 'versions': versions, 'installed': have,
            'install': repo.install_names(result['pinned'], pk['other'], backend),
            'install_state': dpkg_state.install_state(result['pinned'], pk['other'], have, result['change']),
            'headers': header_rows, 'headers_install': headers_install, 'kernels': kernel_list,
            'packages': pk, 'repo_text': repo_text, 'repo_files': repo_files, 'index': index,
            'config_files': config_files(plat, files),
            'cuda_url': url, 'keyring': keyring, 'files': files,
            'activation': act, 'secure_boot': sb, 'initramfs': initramfs, 'status': status, 'problems': problems}


def driver_held_back(host, backend, pinned, pk, have):
    """Newer versions the pin or the hold keeps back from the driver packages and their companions
    (a security update of the driver), as os_tuning reports kernels: held_updates.read. The record
    describes the host as the role leaves it - every pinned package at its pinned version and held,
    the installed companions - so the first run (which reads the host before its install) and the
    run after it write the same status."""
    if backend != 'apt':
        return dict(held_updates.NOT_CHECKED, reason='not checked: the dnf version lock is not read yet')
    pinned = dict(pinned or {})
    watched = set(pinned) | set(n for n in set(pk['persistenced']) | set(pk['fabric_manager']) if n in have)
    holds = [n for n in watched if n in pinned or have.get(n, {}).get('held')]
    return held_updates.read(host, watched, holds, base=pinned)


def companions(pk):
    """The driver's companions whose held-back updates are read beside the pinned packages."""
    return sorted(set(pk['persistenced']) | set(pk['fabric_manager']))


def before_change(host, backend, result, have, repo_files):
    """The snapshot a failed change is restored to (driver_transaction), and the holds of the
    installed driver that the new package set lacks (released in the same change)."""
    if backend != 'apt':
        return {'before': None, 'release': [],
                'release_reason': 'dnf: the version lock is released and set again by the role; no snapshot is restored',
                'previous': result.get('installed_version') or ''}
    before = dh.snapshot(host, [f['dest'] for f in repo_files if f.get('dest')])
    previous = result.get('installed_version') or next(
        (repo.upstream_of(have[n]['version']) for n in sorted(result['pinned']) if n in have), '')
    stale = txn.stale_holds(before['packages'], result['pinned'], previous)
    return {'before': before, 'release': stale['release'], 'release_reason': stale['reason'], 'previous': previous}


def restore(p, host):
    """``action=restore``: a task of the driver change failed; put back what the snapshot of the
    resolve recorded, read it back, and say what happened (driver_transaction.outcome). Always
    returns ``failed``: the change did fail."""
    state, failure = p['state'], p['failure'] or {}
    record = state.get('transaction') or {}
    before = record.get('before')
    step, error = failure.get('task') or '?', txn.failure_message(failure)
    target, previous = state.get('target') or '?', record.get('previous') or ''
    pin_path = (p['platform'] or {}).get('preferences_file')
    if before is None:
        return {'restored': False, 'changed': False, 'items': [], 'remaining': [], 'now': 'unknown',
                'msg': 'The NVIDIA driver change to %s failed at "%s": %s. Nothing was restored (%s); what the node '
                       'now has is unknown to the role.' % (target, step, error, record.get('release_reason') or
                                                                  'no snapshot was taken')}
    paths = list(before['files'])
    now = dh.snapshot(host, paths)
    plan = txn.restore_plan(before, now)
    if host.module.check_mode:
        return txn.outcome(step, error, target, previous, plan, [], now, pin_path, check_mode=True)
    restore_error = ''
    try:
        for entry in plan['write']:
            write_text(entry['dest'], entry['content'])
        for path in plan['remove']:
            os.remove(path)
        if any('/sources.list.d/' in f['dest'] for f in plan['write']) or \
                any('/sources.list.d/' in path for path in plan['remove']):
            host.run(['apt-get', '-q', 'update'], what='apt-get update (the restored sources)')
        if plan['install']:
            host.run(['apt-get', '-q', '-y', '--no-install-recommends', '--allow-downgrades',
                      '--allow-change-held-packages', 'install'] + plan['install'],
                     what='apt-get install (the previous driver packages)', env={'DEBIAN_FRONTEND': 'noninteractive'})
        if plan['hold']:
            host.run(['apt-mark', 'hold'] + plan['hold'], what='apt-mark hold')
        if plan['unhold']:
            host.run(['apt-mark', 'unhold'] + plan['unhold'], what='apt-mark unhold')
    except Failure as exc:
        restore_error = exc.msg
    except (IOError, OSError) as exc:
        restore_error = str(exc)
    after = dh.snapshot(host, paths)
    return txn.outcome(step, error, target, previous, plan, txn.differences(before, after), after, pin_path,
                       restore_error=restore_error)


def write_text(dest, content):
    """Write ``content`` to ``dest`` atomically (0644, root), as the role's copy task does."""
    tmp = dest + '.gpuops-restore'
    with open(tmp, 'w') as handle:
        handle.write(content)
    os.chmod(tmp, 0o644)
    os.rename(tmp, dest)


def companion_pins(pk, versions, have, backend):
    """{package: version} of the driver's companions that carry versions of their own (Debian's
    nvidia-persistenced): the installed version, else the newest the source carries. Pinned beside
    the driver so that another repository on the host (NVIDIA's CUDA repository, added for DCGM or
    a toolkit) cannot replace them on ``apt upgrade``."""
    if backend != 'apt':
        return {}
    pins = {}
    for name in pk['persistenced']:
        version = (have.get(name) or {}).get('version') or (versions.get(name) or [None])[0]
        if version:
            pins[name] = version
    return pins


# The driver's family in its apt pin: every package whose name starts with nvidia-, libnv
# (libnvidia-*, libnvcuvid1, ...), libcuda or firmware-nvidia-gsp, at the driver's version.
# Globs, not /regular expressions/: apt tests such an entry against every package name each
# time it computes a policy, and a regular expression made every apt-get, apt-cache and
# apt-mark run on a pinned Debian 12 host cost 1.8 s of CPU more (63,721 names); the globs
# cost 0.18 s (measured on a lab node).
# (driver_sources.DRIVER_FAMILY_ROWS: each glob with its source)
DRIVER_FAMILY = tuple(row['glob'] for row in driver_sources.DRIVER_FAMILY_ROWS)


NOUVEAU_BLACKLIST = ('# gpuops.dlserver.nvidia_driver: the NVIDIA driver owns the GPUs; nouveau must not bind them.\n'
                     'blacklist nouveau\noptions nouveau modeset=0\n')


def config_files(plat, files):
    """The driver's configuration files that the role's configure step writes, by key
    (nouveau_blacklist, modules_load, dkms_signing): {dest, content} ('' = the file removed).
    The module marks each ``current`` on the host."""
    return dict((key, {'dest': plat.get(path_key), 'content': files[key]})
                for key, path_key in (('nouveau_blacklist', 'blacklist_file'), ('modules_load', 'modules_load_file'),
                                      ('dkms_signing', 'dkms_mok_file')))


def render_files(plat, pk, result, keys, debian, url, keyring, repo_text, flavour, companions=None):
    """The text of every file the role writes for the driver, and the list of (dest, content)."""
    backend, branch = plat['backend'], plat['branch']
    header = plat['header']
    files = {
        'debian_sources': (header + '\n# gpuops.dlserver.nvidia_driver: the %s components of the Debian archive %s, '
                           'which the NVIDIA driver packages live in.\n' % (
                               ', '.join(plat['components']),
                               'from ' + ', '.join(debian['from_files']) if debian['from_files']
                               else '(nvidia_driver_debian_mirror)') + debian['missing_text'])
        if debian and debian['missing_text'] else '',
        'cuda_sources': (header + '\n# gpuops.dlserver.nvidia_driver: NVIDIA\'s CUDA repository%s.\n' % (
            ' (Fabric Manager only: see the CUDA preferences file)' if pk['fm_from_cuda'] else '')
            + sources.render_deb822([{'uri': url, 'suites': ['/'], 'components': [],
                                      'signed_by': plat['keyring_path']}])) if pk['cuda_needed'] else '',
        'cuda_preferences': (header + '\n' + sources.render_origin_pin(
            sources.origin_of(url), 100, 'gpuops.dlserver.nvidia_driver: the CUDA repository only serves packages the '
            'distribution lacks (%s).' % ', '.join(pk['fabric_manager'] + pk['nvlsm']))) if pk['fm_from_cuda'] else '',
        'driver_preferences': (header + '\n' + sources.render_pin(
            sorted(result['pinned']) + list(DRIVER_FAMILY),
            '%s-*' % result['target'],
            'gpuops.dlserver.nvidia_driver: NVIDIA driver %s (branch %s, %s kernel modules) from %s.\n'
            'Every package of the driver\'s family at exactly this version wins (priority 1001, which also '
            'downgrades to it);\nother versions keep their default priority, so neither `apt upgrade` nor '
            'unattended-upgrades moves\nthe driver. To change it, set nvidia_driver_version (or '
            'nvidia_driver_upgrade: true).' % (result['target'], branch, flavour, repo_text), 'nvidia_driver_version')
            + ''.join('\n' + sources.render_pin(
                [name], version, 'gpuops.dlserver.nvidia_driver: %s has versions of its own in %s; kept at this one so '
                'that no other repository\non the host (NVIDIA\'s CUDA repository, added for DCGM or a toolkit) '
                'replaces it.' % (name, repo_text), 'nvidia_driver_version')
                for name, version in sorted((companions or {}).items())))
        if backend == 'apt' and result['pinned'] and not result['problems'] else '',
    }
    files.update(config_texts(plat, pk, keys))
    own = [(plat.get('debian_sources_file'), files['debian_sources']),
           (plat.get('cuda_sources_file'), files['cuda_sources']),
           (plat.get('cuda_preferences_file'), files['cuda_preferences']),
           (plat.get('preferences_file'), files['driver_preferences']),
           (plat['keyring_path'], keyring['content'] if keyring else '')]
    own += [(path, '') for path in plat.get('legacy_files') or []]
    repo_files = [{'dest': dest, 'content': content} for dest, content in own if dest]
    return files, repo_files


def status_record(inp, plat, plan, pk, result, files, ctx):
    """The record the role writes to its status file."""
    keyring, act, debian = ctx['keyring'], ctx['activation'], ctx['debian']
    load, load_reason, url = ctx['load'], ctx['load_reason'], ctx['url']
    branch = plat['branch']
    status = {
        'required': True, 'reason': plan['driver']['reason'], 'in_container': plan['host']['in_container'],
        'load_modules': {'value': load, 'reason': load_reason},
        'source': inp['source'], 'branch': branch, 'version': result['target'],
        # every driver version the repository carries (newest first): what a rollback can go back to
        'repository_versions': result.get('carried', []),
        'kernel_modules': plan['driver']['kernel_modules'],
        'repository': {
            'description': ctx['repo_text'],
            'debian_components_file': plat['debian_sources_file'] if files['debian_sources'] else None,
            'debian_components_from': debian['from_files'] if debian else [],
            'cuda_url': url if pk['cuda_needed'] else None,
            'cuda_for_fabric_manager_only': pk['fm_from_cuda'],
            'cuda_keyring': plat['keyring_path'] if pk['cuda_needed'] else None,
            'cuda_keyring_download_sha256': keyring['sha256'] if keyring else None,
            'cuda_keyring_fingerprints': keyring['fingerprints'] if keyring else [],
            'cuda_keyring_not_trusted': keyring['dropped'] if keyring else [],
            'preferences_file': plat.get('preferences_file')},
        'packages': result['pinned'], 'held': sorted(result['pinned']), 'other_packages': pk['other'],
        'kernels': ctx['kernels'],
        'headers': {'packages': ctx['headers'], 'installed': load,
                    'reason': 'DKMS builds the modules for every kernel whose headers are installed' if load
                    else '%s; no headers installed, so DKMS builds nothing here' % load_reason},
        'secure_boot': dict(ctx['secure_boot'], signing=ctx['signing']),
        'nouveau': {'blacklist_file': plat['blacklist_file'], 'loaded': ctx['nouveau'],
                    'initramfs_rebuild': ctx['initramfs']['rebuild'], 'reason': ctx['initramfs']['reason']},
        'fabric_manager': dict(plan['fabric_manager'], packages=pk['fabric_manager'],
                               packages_reason=pk['fabric_manager_reason'],
                               **{'from': ctx['fm_repo_text'] if pk['fabric_manager'] else None,
                                  'started': act['services_start'] and plan['fabric_manager']['start']}),
        'nvlink_subnet_manager': dict(plan['nvlink_subnet_manager'], packages=pk['nvlsm'] + pk['nvlsm_deps'],
                                      modules=[m for m in repo.NVLSM_MODULES if m in pk['modules_load']]),
        'persistence': dict(plan['persistence'], started=act['services_start'] and plan['persistence']['start']),
        'reboot': {'action': act['action'], 'reason': act['reason'],
                   'pending': act['reboot']['action'] in ('deferred', 'skipped'),
                   'decision': act['reboot']},
        'security_updates_held_back': ctx.get('held_back') or dict(held_updates.NOT_CHECKED),
        'dpkg_lock_waited_s': ctx['lock']['waited'],
        'package_index': repo.index_status(ctx['index']),
    }
    return status


def after_install(p, host):
    """``action=after_install``: the kernels and DKMS builds after the install."""
    state, backend = p['state'], p['platform']['backend']
    after = dh.kernels(host, backend)
    problems = []
    before = state.get('kernels') or []
    if sorted(after) != sorted(before):
        problems.append('Installing the NVIDIA driver changed the installed kernels (added: %s; removed: %s). The '
                        'driver\'s dependencies pulled a kernel: review the packages %s offers before rebooting'
                        % (', '.join(sorted(set(after) - set(before))) or 'none',
                           ', '.join(sorted(set(before) - set(after))) or 'none', state.get('repo_text')))
    dkms, dkms_problems = dkms_check(host, p['plan'], state.get('headers') or [])
    return {'kernels': after, 'dkms': dkms, 'problems': problems + dkms_problems,
            'security_updates_held_back': held_back_after(host, backend, state)}


def held_back_after(host, backend, state):
    """The held-back record read after the install (the repositories configured, the packages
    installed and held): what the status file records, the same as the next run's resolve reads."""
    pinned = state.get('pinned') or {}
    names = sorted(set(pinned) | set(state.get('companions') or []))
    have = dh.installed(host, backend, names) if backend == 'apt' and names else {}
    return driver_held_back(host, backend, pinned, {'persistenced': state.get('companions') or [],
                                                    'fabric_manager': []}, have)


def dkms_check(host, plan, headers):
    """``dkms status``: the NVIDIA lines, and a problem for each kernel with headers that DKMS did
    not build for (where the kernel is this host's)."""
    dkms = host.module.get_bin_path('dkms', opt_dirs=['/usr/sbin'])
    lines = host.run([dkms, 'status'], what='dkms status')[1].splitlines() if dkms else []
    nvidia = [line for line in lines if 'nvidia' in line]
    load = plan['driver']['load_modules']['value']
    problems = []
    if load:
        built = set(line.split(',')[1].strip() for line in nvidia if ': installed' in line and line.count(',') >= 2)
        want = [h['kernel'] for h in headers if h['installed'] or h['available']]
        unbuilt = [k for k in want if k not in built]
        if not dkms or unbuilt:
            problems.append('DKMS did not build the NVIDIA kernel modules for kernel(s) %s (dkms status: %s). See the '
                            'make.log under /var/lib/dkms/ for the compiler error'
                            % (', '.join(unbuilt) or 'all', ' | '.join(nvidia) or 'dkms is not installed'))
    return ({'status': nvidia, 'reason': 'built for the kernels with headers' if load else
             plan['driver']['load_modules']['reason'] + '; DKMS registered the module source but built nothing'},
            problems)


def module_version(sysfs_root):
    """The loaded nvidia kernel module's version (sysfs), or None."""
    path = os.path.join(sysfs_root, 'module', 'nvidia', 'version')
    version = None
    if os.path.exists(path):
        with open(path) as handle:
            version = handle.read().strip() or None
    return version


def unit_states(host, names):
    """{unit.service: {Id, LoadState, UnitFileState, ActiveState}} in one ``systemctl show``; {}
    where systemctl is missing or fails (the units then count as not current)."""
    systemctl = host.module.get_bin_path('systemctl')
    if not names or not systemctl:
        return {}
    rc, out, dummy = host.run([systemctl, 'show', '-p', 'Id,LoadState,UnitFileState,ActiveState']
                              + [name + '.service' for name in names], check=False)
    return parse_unit_states(out) if rc == 0 else {}


def fast_path(p, host, state):
    """``action=resolve``, after the files were marked current: whether the role's change phases
    (repository, install, configure, verify) would change nothing (``converged``). Where the
    decisions say so, the after-install check (dkms status) and the verification (this run's
    probe, the kernel module's version in sysfs) are made here, in the same round trip, and
    returned as ``after`` and ``verified`` (the records the skipped tasks would register); a
    problem either finds makes the host not converged, and the tasks then run and fail loudly."""
    plat, plan = p['platform'], p['plan']
    marker = plat.get('reboot_marker') or ''
    marker_text = host.read(marker) if marker and os.path.isfile(marker) else ''
    names = {'persistenced': plat.get('persistenced_service') or 'nvidia-persistenced',
             'fabric_manager': plat.get('fabric_manager_service') or 'nvidia-fabricmanager'}
    wants = repo.service_wants(plan, state['status'], names)
    verdict = repo.converged(state, marker_text, unit_states(host, [w['name'] for w in wants]), wants)
    out = {'converged': verdict}
    if not verdict['converged']:
        return out
    dkms, after_problems = dkms_check(host, plan, state.get('headers') or [])
    checks = {'after': after_problems, 'verify': []}
    out['after'] = {'kernels': state.get('kernels') or [], 'dkms': dkms, 'problems': after_problems,
                    'security_updates_held_back': state['status'].get('security_updates_held_back')}
    if (state.get('activation') or {}).get('action') == 'none':
        record = repo.verify_problems(p['gpu'], module_version(p['sysfs_root']), state['target'],
                                      plan['driver']['kernel_modules']['value'])
        checks['verify'] = record['problems']
        out['verified'] = {'verify': record, 'problems': record['problems']}
    problems = checks['after'] + checks['verify']
    if problems:
        return {'converged': {'converged': False, 'reasons': problems}}
    return out


def verify(p, host):
    """``action=verify``: what the loaded driver shows against the pinned version."""
    del host
    state = p['state']
    record = repo.verify_problems(p['gpu'], module_version(p['sysfs_root']), state['target'],
                                  p['plan']['driver']['kernel_modules']['value'])
    return {'verify': record, 'problems': record['problems']}
