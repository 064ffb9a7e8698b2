#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nvidia_driver_repo
short_description: Read the host and the driver repositories, and decide what the nvidia_driver role installs
version_added: 0.1.0
description:
  - The decisions of the C(gpuops.dlserver.nvidia_driver) role, reached in one round trip per phase.
    Changes nothing on the host; repositories are read into a scratch directory that is removed.
  - C(action=inputs) checks what the argument specification cannot (version and branch agree, URLs,
    checksums, fingerprints, ranges). The branch is the plan's (C(gpuops_plan.driver.branch), decided by
    C(plugins/module_utils/plan/driver_branch.py)); C(action=resolve) installs that branch.
  - C(action=resolve) refuses an interrupted dpkg or a half-installed driver package (naming the
    packages and C(dpkg --configure -a)), waits (bounded) for a dpkg/apt lock held by another process
    and names the holder, reads the host's apt sources, downloads the repository key once, checks its
    checksum and fingerprint and exports only the wanted key into a fresh keyring, reads the versions
    the repositories carry, the installed packages and kernels, the boot state (Secure Boot, nouveau,
    the MOK key's owner and mode), and decides the driver version, each package's exact version, the
    files the role writes and the reboot.
  - C(action=after_install) reads the installed kernels and C(dkms status) after the install and
    reports a kernel the install changed or a kernel DKMS did not build for.
  - C(action=verify) compares what the probe saw (C(gpuops_gpu)) and the loaded kernel module with the
    pinned version and the plan's flavour.
  - Decisions live in C(plugins/module_utils/packages/nvidia_repo.py).
author:
  - gpuops.dlserver contributors (@gpuops)
attributes:
  check_mode:
    support: full
    description: Reads only; it runs the same in check mode.
  diff_mode:
    support: none
    description: Returns no diff (it changes nothing).
options:
  action:
    description: What to do (see the description).
    type: str
    choices: [inputs, resolve, after_install, verify]
    required: true
  inputs:
    description: The role's inputs converted by its argument spec (C(__nvidia_driver)).
    type: dict
    default: {}
  platform:
    description:
      - The role's per-platform values (backend, package table, default branch, repository names,
        paths of the tools and files it uses).
    type: dict
    default: {}
  plan:
    description: The hardware plan (C(gpuops_plan)).
    type: dict
    default: {}
  gpu:
    description: The probe's facts (C(gpuops_gpu)).
    type: dict
    default: {}
  state:
    description: For C(after_install) and C(verify), the result of C(action=resolve).
    type: dict
    default: {}
  sysfs_root:
    description: Where sysfs is read (C(/module/nouveau), C(/module/nvidia/version)).
    type: path
    default: /sys
  lock_timeout:
    description: Seconds to wait for a dpkg/apt lock another process holds before failing.
    type: int
    default: 300
requirements:
  - gpg on the host where a repository key is checked
  - python3-apt for version ordering where it is installed (dpkg's algorithm is used otherwise)
"""

EXAMPLES = r"""
- name: Read the host and the repositories and choose the driver version
  gpuops.dlserver.nvidia_driver_repo:
    action: resolve
    inputs: "{{ __nvidia_driver }}"
    platform: "{{ __nvidia_driver_platform }}"
    plan: "{{ gpuops_plan }}"
    gpu: "{{ gpuops_gpu }}"
  register: __nvidia_driver_resolved
"""

RETURN = r"""
target:
  description: The driver version to install.
  returned: action is resolve
  type: str
  sample: 580.95.05
pinned:
  description: Each versioned package and its exact version.
  returned: action is resolve
  type: dict
  sample: {nvidia-driver-cuda: 580.95.05-1}
install:
  description: The package arguments of the install task (C(name=version) on apt).
  returned: action is resolve
  type: list
  elements: str
keyring:
  description: The repository key, checked, with only the wanted key in C(content) (armored).
  returned: action is resolve and a CUDA repository is used
  type: dict
files:
  description: Text of the files the role writes (sources, preferences, DKMS signing, modules-load).
  returned: action is resolve
  type: dict
activation:
  description: How the driver gets loaded (none, load, reboot, deferred, skipped, not_applicable) and the reboot decision.
  returned: action is resolve
  type: dict
status:
  description: The record the role writes to its status file.
  returned: action is resolve
  type: dict
problems:
  description: What the host or the repositories lack, each naming the variable to change.
  returned: always
  type: list
  elements: str
verify:
  description: What the loaded driver shows and the problems found (C(action=verify)).
  returned: action is verify
  type: dict
"""

import os
import shutil
import tempfile
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo as repo
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure, Host, fetch_key

APT_DIRS = ('sources.list.d', 'preferences.d', 'lists/partial', 'cache/archives/partial')
DPKG_LOCKS = ('/var/lib/dpkg/lock-frontend', '/var/lib/dpkg/lock', '/var/lib/apt/lists/lock')
DRIVER_PATTERNS = ('*nvidia*', 'libcuda*', 'nvlsm', 'infiniband-diags')


def lock_probe(host):
    """None when the lock is free, else who holds it (pid and command from /proc)."""
    import fcntl

    def probe(path):
        if not os.path.exists(path):
            return None
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.lockf(fd, fcntl.LOCK_UN)
            return None
        except (IOError, OSError):
            inode = os.fstat(fd).st_ino
        finally:
            os.close(fd)
        pids = repo.proc_locks_holders(host.read('/proc/locks'), inode) if os.path.exists('/proc/locks') else []
        pid = pids[0] if pids else None
        cmd = None
        if pid:
            try:
                cmd = host.read('/proc/%s/cmdline' % pid).replace('\0', ' ').strip()
            except (IOError, OSError):
                cmd = None
        return repo.lock_holder_text(path, pid, cmd)
    return probe


def check_dpkg(host, timeout):
    wait = repo.wait_for_locks(lock_probe(host), list(DPKG_LOCKS), timeout, time.sleep, time.time)
    if not wait['ok']:
        raise Failure('the package manager is busy: ' + wait['error'])
    dummy, audit, err = host.run(['dpkg', '--audit'], check=False)
    dummy, out, err = host.run(['dpkg-query', '-W', '-f', '${Package}\t${db:Status-Abbrev}\n'] + list(DRIVER_PATTERNS),
                               check=False)
    rows = [tuple(line.split('\t', 1)) for line in out.splitlines() if '\t' in line]
    problems = repo.dpkg_problems(audit, rows)
    if problems:
        raise Failure(problems[0], rc=1, stdout=audit)
    return wait


def apt_sources(host):
    files = {}
    if os.path.isfile('/etc/apt/sources.list'):
        files['/etc/apt/sources.list'] = host.read('/etc/apt/sources.list')
    if os.path.isdir('/etc/apt/sources.list.d'):
        for name in sorted(os.listdir('/etc/apt/sources.list.d')):
            path = '/etc/apt/sources.list.d/' + name
            if name.endswith(('.list', '.sources')) and os.path.isfile(path):
                files[path] = host.read(path)
    return repo.parse_sources(files)


def apt_query(host, packages, sources_text=None):
    """Versions of ``packages``: from a scratch apt directory reading ``sources_text``, or from the
    host's own apt cache when it is None."""
    if not packages:
        return {}
    work = tempfile.mkdtemp(prefix='gpuops-nvidia-repo.')
    try:
        options = []
        if sources_text is not None:
            for sub in APT_DIRS:
                os.makedirs(os.path.join(work, sub))
            with open(os.path.join(work, 'sources.list.d', 'query.sources'), 'w') as handle:
                handle.write(sources_text)
            options = ['-o', 'Dir::Etc::SourceList=/dev/null', '-o', 'Dir::Etc::SourceParts=%s/sources.list.d' % work,
                       '-o', 'Dir::Etc::Preferences=/dev/null',
                       '-o', 'Dir::Etc::PreferencesParts=%s/preferences.d' % work,
                       '-o', 'Dir::State::Lists=%s/lists' % work, '-o', 'Dir::State::Status=/var/lib/dpkg/status',
                       '-o', 'Dir::Cache=%s/cache' % work, '-o', 'APT::Sandbox::User=root',
                       '-o', 'Debug::NoLocking=true']
            rc, out, err = host.run(['apt-get'] + options + ['-q', 'update'], check=False)
            bad = [line for line in (err + out).splitlines() if line.startswith(('E:', 'Err:'))]
            if rc != 0 or bad:
                raise Failure('apt-get update of the repository failed: %s' % ' | '.join(bad)[-1200:], rc=rc,
                              stderr=err, stdout=out)
        dummy, out, dummy2 = host.run(['apt-cache'] + options + ['madison'] + list(packages), what='apt-cache madison')
        return repo.parse_madison(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def dnf_query(host, packages, url=None, keyring=None, repo_gpgcheck=True):
    """Versions in the dnf repository ``url`` (signatures checked with the checked key), or in the
    host's enabled repositories when url is None."""
    args = ['dnf', '-q', 'repoquery', '--qf', '%{name} %{epoch}:%{version}-%{release}']
    if url:
        name = 'gpuops-nvidia-query'
        args += ['--disablerepo=*', '--repofrompath=%s,%s' % (name, url), '--enablerepo=' + name,
                 '--setopt=%s.module_hotfixes=1' % name, '--setopt=%s.gpgcheck=1' % name,
                 '--setopt=%s.repo_gpgcheck=%d' % (name, 1 if repo_gpgcheck else 0),
                 '--setopt=%s.gpgkey=file://%s' % (name, keyring)]
    dummy, out, dummy2 = host.run(args + list(packages), what='dnf repoquery')
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in packages:
            found.setdefault(parts[0], []).append(parts[1][2:] if parts[1].startswith('0:') else parts[1])
    return found


def installed(host, backend, names):
    if not names:
        return {}
    if backend == 'dnf':
        dummy, out, dummy2 = host.run(['rpm', '-q', '--qf', '%{NAME}\t%{EPOCH}:%{VERSION}-%{RELEASE}\tii \n']
                                      + list(names), check=False)
        out = out.replace('(none):', '').replace('\t0:', '\t')
    else:
        dummy, out, dummy2 = host.run(['dpkg-query', '-W', '-f', '${Package}\t${Version}\t${db:Status-Abbrev}\n']
                                      + list(names), check=False)
    return repo.parse_dpkg_query(out, names)


def kernels(host, backend):
    if backend == 'dnf':
        rc, out, dummy = host.run(['rpm', '-q', '--qf', '%{VERSION}-%{RELEASE}.%{ARCH}\n', 'kernel-core'], check=False)
        return sorted(set(line.strip() for line in out.splitlines() if rc == 0 and line.strip()))
    dummy, out, dummy2 = host.run(['dpkg-query', '-W', '-f', '${Package}\t${db:Status-Abbrev}\n', 'linux-image-[0-9]*'],
                                  check=False)
    rows = [line.split('\t') for line in out.splitlines()]
    return sorted(set(r[0][len('linux-image-'):] for r in rows if len(r) == 2 and r[1][1:2] == 'i'))


def refresh_index(host, valid=3600):
    """Refresh the host's package index when it is older than ``valid`` seconds (what
    ansible.builtin.apt's cache_valid_time does): the headers are looked up there."""
    stamps = [path for path in ('/var/lib/apt/periodic/update-success-stamp', '/var/lib/apt/lists')
              if os.path.exists(path)]
    if stamps and time.time() - max(os.path.getmtime(path) for path in stamps) < valid:
        return False
    host.run(['apt-get', '-q', 'update'], what='apt-get update (the host\'s package index)')
    return True


def stat(path):
    if not path or not os.path.exists(path):
        return {'exists': False}
    info = os.stat(path)
    return {'exists': True, 'uid': info.st_uid, 'mode': '%04o' % (info.st_mode & 0o7777)}


def resolve(module, host):
    p = module.params
    inp, plat, plan, gpu = p['inputs'], p['platform'], p['plan'], p['gpu']
    backend = plat['backend']
    # The plan owns the branch (plugins/module_utils/plan/driver_branch.py); this installs it.
    branch = str(plan['driver']['branch']['value'] or '')
    load = bool(plan['driver']['load_modules']['value'])
    load_reason = plan['driver']['load_modules']['reason']
    facts = {'distribution': plat['distribution'], 'distro_branch': plat.get('distro_branch'), 'branch': branch,
             'flavour': plan['driver']['kernel_modules']['value']}
    pk = repo.choose_packages(plat['packages'], inp, plan, facts)
    if pk['problems']:
        raise Failure('; '.join(pk['problems']))
    lock = check_dpkg(host, p['lock_timeout']) if backend == 'apt' else {'waited': 0}
    index_refreshed = refresh_index(host) if backend == 'apt' else False
    url = repo.cuda_url(inp, plat['cuda_repo_name'], plat['cuda_arch'])
    key = None
    if pk['cuda_needed']:
        key = repo.keyring_spec(inp, url, plat['cuda_key'], backend)
        if key['problems']:
            raise Failure('; '.join(key['problems']))
    debian = None
    if inp['source'] == 'distro' and plat.get('distro_repository') == 'debian_components':
        missing, full, from_files = repo.debian_stanzas(apt_sources(host), plat['codename'], plat['components'],
                                                        inp.get('debian_mirror') or None, inp.get('debian_keyring'))
        if not full:
            raise Failure('No apt source of the Debian archive for %s (suite %s[-updates|-security], component main) '
                          'was found in /etc/apt/sources.list or /etc/apt/sources.list.d/. Set '
                          'nvidia_driver_debian_mirror to the Debian archive URL to add the contrib, non-free and '
                          'non-free-firmware components for' % (plat['codename'], plat['codename']))
        debian = {'missing': missing, 'full': full, 'from_files': from_files,
                  'missing_text': repo.render_deb822(missing) if missing else ''}
    repo_text = ('the CUDA repository ' + url if inp['source'] == 'cuda_repo'
                 else "the host's own apt repositories" if plat.get('distro_repository') in ('system', None, 'none')
                 else 'the Debian archive %s (%s)' % (' '.join(sorted(set(s['uri'] for s in debian['full']))),
                                                      ', '.join(plat['components'])))
    fm_repo_text = 'the CUDA repository ' + url if pk['fm_from_cuda'] else repo_text
    kernel_list = kernels(host, backend)
    running = plat['running_kernel']
    wanted_kernels = [running] + [k for k in kernel_list if k != running]
    headers = [plat['headers_package'].replace('{kernel}', k) for k in wanted_kernels]
    versions, keyring = {}, None
    work = tempfile.mkdtemp(prefix='gpuops-nvidia-key.')
    try:
        keyfile = None
        if key:
            keyfile, keyring = fetch_key(host, key, work)
        cuda_stanza = {'uri': url, 'suites': ['/'], 'components': [], 'signed_by': keyfile}
        main_pkgs = pk['versioned'] + pk['persistenced'] + pk['extra'] + (
            [] if pk['fm_from_cuda'] else pk['fabric_manager'] + pk['nvlsm'])
        fm_pkgs = pk['fabric_manager'] + pk['nvlsm'] if pk['fm_from_cuda'] else []

        def query(names, sources=None, system=False):
            try:
                if backend == 'dnf':
                    return dnf_query(host, names, None if system else url, keyfile, plat.get('repo_gpgcheck', True))
                return apt_query(host, names, None if system else sources)
            except Failure as exc:
                raise Failure('cannot read %s: %s. Check %s' % (
                    "the host's own apt repositories" if system else repo_text, exc.msg,
                    'nvidia_driver_debian_mirror and the host\'s apt sources' if inp['source'] == 'distro'
                    else 'nvidia_driver_cuda_repo_base_url (or nvidia_driver_cuda_repo_url), '
                         'nvidia_driver_cuda_keyring_url, nvidia_driver_cuda_keyring_checksum and '
                         'nvidia_driver_cuda_keyring_fingerprint'), rc=exc.rc, stderr=exc.stderr)

        system = inp['source'] == 'distro' and debian is None
        sources = repo.render_deb822([cuda_stanza]) if inp['source'] == 'cuda_repo' else \
            repo.render_deb822(debian['full']) if debian else None
        for found in (query(main_pkgs, sources, system),
                      query(fm_pkgs, repo.render_deb822([cuda_stanza])) if fm_pkgs else {},
                      query(headers, system=True) if backend == 'apt' else {}):
            for name, vers in found.items():
                versions[name] = repo.sort_desc(versions.get(name, []) + vers)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    names = sorted(set(versions) | set(headers) | set(pk['versioned'] + pk['fabric_manager'] + pk['other']))
    have = installed(host, backend, names)
    request = {'branch': branch, 'version': inp.get('version'), 'upgrade': inp.get('upgrade'),
               'versioned': pk['versioned'], 'fabric_manager': pk['fabric_manager'],
               'nvlsm': pk['nvlsm'], 'required': pk['persistenced'] + pk['extra'],
               'repo_text': repo_text, 'fm_repo_text': fm_repo_text}
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
    problems += repo.signing_problems(keys, stat(keys.get('private_key')), stat(keys.get('certificate')), sb['state'])
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
            + repo.render_deb822([dict(cuda_stanza, signed_by=plat['keyring_path'])])) if pk['cuda_needed'] else '',
        'cuda_preferences': (header + '\n# gpuops.dlserver.nvidia_driver: the CUDA repository only serves packages the '
                             'distribution lacks (%s).\nPackage: *\nPin: origin "%s"\nPin-Priority: 100\n'
                             % (', '.join(pk['fabric_manager'] + pk['nvlsm']), url.split('/')[2].split(':')[0]))
        if pk['fm_from_cuda'] else '',
        'driver_preferences': (header + '\n# gpuops.dlserver.nvidia_driver: NVIDIA driver %s (branch %s, %s kernel '
                               'modules) from %s.\n# Every package of the driver\'s family at exactly this version '
                               'wins (priority 1001, which also downgrades to it);\n# other versions keep their '
                               'default priority, so neither `apt upgrade` nor unattended-upgrades moves\n# the '
                               'driver. To change it, set nvidia_driver_version (or nvidia_driver_upgrade: true).\n'
                               'Package: %s /^(lib)?nvidia-/ /^libnv/ /^libcuda/ /^firmware-nvidia-gsp/\n'
                               'Pin: version %s-*\nPin-Priority: 1001\n'
                               % (result['target'], branch, facts['flavour'], repo_text,
                                  ' '.join(sorted(result['pinned'])), result['target'])) if backend == 'apt' else '',
        'modules_load': header + '\n' + ''.join(m + '\n' for m in pk['modules_load']),
        'dkms_signing': repo.dkms_signing_conf(keys, header),
    }
    own = [(plat.get('debian_sources_file'), files['debian_sources']),
           (plat.get('cuda_sources_file'), files['cuda_sources']),
           (plat.get('cuda_preferences_file'), files['cuda_preferences']),
           (plat.get('preferences_file'), files['driver_preferences']),
           (plat['keyring_path'], keyring['content'] if keyring else '')]
    own += [(path, '') for path in plat.get('legacy_files') or []]
    repo_files = [{'dest': dest, 'content': content} for dest, content in own if dest]
    status = {
        'required': True, 'reason': plan['driver']['reason'], 'in_container': plan['host']['in_container'],
        'load_modules': {'value': load, 'reason': load_reason},
        'source': inp['source'], 'branch': branch, 'version': result['target'],
        'kernel_modules': plan['driver']['kernel_modules'],
        'repository': {
            'description': repo_text,
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
        'kernels': kernel_list,
        'headers': {'packages': header_rows, 'installed': load,
                    'reason': 'DKMS builds the modules for every kernel whose headers are installed' if load
                    else '%s; no headers installed, so DKMS builds nothing here' % load_reason},
        'secure_boot': dict(sb, signing=bool(keys)),
        'nouveau': {'blacklist_file': plat['blacklist_file'], 'loaded': nouveau,
                    'initramfs_rebuild': initramfs['rebuild'], 'reason': initramfs['reason']},
        'fabric_manager': dict(plan['fabric_manager'], packages=pk['fabric_manager'],
                               packages_reason=pk['fabric_manager_reason'],
                               **{'from': fm_repo_text if pk['fabric_manager'] else None,
                                  'started': act['services_start'] and plan['fabric_manager']['start']}),
        'nvlink_subnet_manager': dict(plan['nvlink_subnet_manager'], packages=pk['nvlsm'] + pk['nvlsm_deps'],
                                      modules=[m for m in repo.NVLSM_MODULES if m in pk['modules_load']]),
        'persistence': dict(plan['persistence'], started=act['services_start'] and plan['persistence']['start']),
        'reboot': {'action': act['action'], 'reason': act['reason'],
                   'pending': act['reboot']['action'] in ('deferred', 'skipped'),
                   'decision': act['reboot']},
        'dpkg_lock_waited_s': lock['waited'],
    }
    return {'target': result['target'], 'pinned': result['pinned'], 'change': result['change'],
            'held': result['held'], 'keep': result['keep'], 'versions': versions, 'installed': have,
            'install': repo.install_names(result['pinned'], pk['other'], backend),
            'headers': header_rows, 'headers_install': headers_install, 'kernels': kernel_list,
            'packages': pk, 'repo_text': repo_text, 'repo_files': repo_files, 'index_refreshed': index_refreshed,
            'cuda_url': url, 'keyring': keyring, 'files': files,
            'activation': act, 'secure_boot': sb, 'initramfs': initramfs, 'status': status, 'problems': problems}


def after_install(module, host):
    state, backend = module.params['state'], module.params['platform']['backend']
    after = kernels(host, backend)
    problems = []
    before = state.get('kernels') or []
    if sorted(after) != sorted(before):
        problems.append('Installing the NVIDIA driver changed the installed kernels (added: %s; removed: %s). The '
                        'driver\'s dependencies pulled a kernel: review the packages %s offers before rebooting'
                        % (', '.join(sorted(set(after) - set(before))) or 'none',
                           ', '.join(sorted(set(before) - set(after))) or 'none', state.get('repo_text')))
    dkms = module.get_bin_path('dkms', opt_dirs=['/usr/sbin'])
    lines = host.run([dkms, 'status'], what='dkms status')[1].splitlines() if dkms else []
    nvidia = [line for line in lines if 'nvidia' in line]
    load = module.params['plan']['driver']['load_modules']['value']
    if load:
        built = set(line.split(',')[1].strip() for line in nvidia if ': installed' in line and line.count(',') >= 2)
        want = [h['kernel'] for h in state.get('headers') or [] if h['installed'] or h['available']]
        unbuilt = [k for k in want if k not in built]
        if not dkms or unbuilt:
            problems.append('DKMS did not build the NVIDIA kernel modules for kernel(s) %s (dkms status: %s). See the '
                            'make.log under /var/lib/dkms/ for the compiler error'
                            % (', '.join(unbuilt) or 'all', ' | '.join(nvidia) or 'dkms is not installed'))
    return {'kernels': after, 'dkms': {'status': nvidia, 'reason': 'built for the kernels with headers' if load else
                                       module.params['plan']['driver']['load_modules']['reason']
                                       + '; DKMS registered the module source but built nothing'},
            'problems': problems}


def verify(module, host):
    del host
    state = module.params['state']
    path = os.path.join(module.params['sysfs_root'], 'module', 'nvidia', 'version')
    version = None
    if os.path.exists(path):
        with open(path) as handle:
            version = handle.read().strip() or None
    record = repo.verify_problems(module.params['gpu'], version, state['target'],
                                  module.params['plan']['driver']['kernel_modules']['value'])
    return {'verify': record, 'problems': record['problems']}


def inputs(module, host):
    del host
    # The branch is the plan's (plugins/module_utils/plan/driver_branch.py), not decided here.
    return {'problems': repo.input_problems(module.params['inputs'])}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            action=dict(type='str', required=True, choices=['inputs', 'resolve', 'after_install', 'verify']),
            inputs=dict(type='dict', default={}),
            platform=dict(type='dict', default={}),
            plan=dict(type='dict', default={}),
            gpu=dict(type='dict', default={}),
            state=dict(type='dict', default={}),
            sysfs_root=dict(type='path', default='/sys'),
            lock_timeout=dict(type='int', default=300),
        ),
        supports_check_mode=True,
    )
    host = Host(module)
    action = {'inputs': inputs, 'resolve': resolve, 'after_install': after_install, 'verify': verify}
    try:
        result = action[module.params['action']](module, host)
    except Failure as exc:
        module.fail_json(msg='%s.' % exc.msg.rstrip('.'), rc=exc.rc, stderr=exc.stderr, stdout=exc.stdout,
                         problems=[exc.msg])
    if result['problems']:
        module.fail_json(msg='%s.' % '; '.join(result['problems']).rstrip('.'), **result)
    module.exit_json(changed=False, **result)


if __name__ == '__main__':
    main()
