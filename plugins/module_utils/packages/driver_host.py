# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the module gpuops.dlserver.__private.nvidia_driver_host reads on the host: dpkg's state and
locks, the apt sources, the versions the repositories carry (a scratch apt directory, read by
apt's sandbox user; dnf repoquery), installed packages and kernels, the package index's age.

The edge is ``repo_trust.Host``; the decisions are ``nvidia_repo``'s and ``dpkg_state``'s.
Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import tempfile
import time

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_sources as sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import dpkg_state
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo as repo
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure

APT_DIRS = ('sources.list.d', 'preferences.d', 'lists/partial', 'cache/archives/partial')
DPKG_LOCKS = ('/var/lib/dpkg/lock-frontend', '/var/lib/dpkg/lock', '/var/lib/apt/lists/lock')
# The package globs whose state the driver transaction saves (driver_sources.DRIVER_PATTERN_ROWS, with sources).
DRIVER_PATTERNS = tuple(row['glob'] for row in driver_sources.DRIVER_PATTERN_ROWS)


def scratch_dir(prefix):
    """A private temporary directory that apt's sandbox user can read (0755, removed by the caller)."""
    work = tempfile.mkdtemp(prefix=prefix)
    os.chmod(work, 0o755)
    return work


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
        pids = dpkg_state.proc_locks_holders(host.read('/proc/locks'), inode) if os.path.exists('/proc/locks') else []
        pid = pids[0] if pids else None
        cmd = None
        if pid:
            try:
                cmd = host.read('/proc/%s/cmdline' % pid).replace('\0', ' ').strip()
            except (IOError, OSError):
                cmd = None
        return dpkg_state.lock_holder_text(path, pid, cmd)
    return probe


def check_dpkg(host, timeout):
    wait = dpkg_state.wait_for_locks(lock_probe(host), list(DPKG_LOCKS), timeout, time.sleep, time.time)
    if not wait['ok']:
        raise Failure('the package manager is busy: ' + wait['error'])
    dummy, audit, err = host.run(['dpkg', '--audit'], check=False)
    dummy, out, err = host.run(['dpkg-query', '-W', '-f', '${Package}\t${db:Status-Abbrev}\n'] + list(DRIVER_PATTERNS),
                               check=False)
    rows = [tuple(line.split('\t', 1)) for line in out.splitlines() if '\t' in line]
    problems = dpkg_state.dpkg_problems(audit, rows)
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
    return sources.parse_sources(files)


def apt_query(host, packages, sources_text=None):
    """Versions of ``packages``: from a scratch apt directory reading ``sources_text``, or from the
    host's own apt cache when it is None."""
    if not packages:
        return {}
    work = scratch_dir('gpuops-nvidia-repo.')
    try:
        options = []
        if sources_text is not None:
            for sub in APT_DIRS:
                os.makedirs(os.path.join(work, sub))
            with open(os.path.join(work, 'sources.list.d', 'query.sources'), 'w') as handle:
                handle.write(sources_text)
            os.chmod(os.path.join(work, 'sources.list.d', 'query.sources'), 0o644)
            # No APT::Sandbox::User override: apt downloads and parses the untrusted metadata as its
            # sandbox user (_apt), which can read the scratch directory (0755) and the keyring.
            options = ['-o', 'Dir::Etc::SourceList=/dev/null', '-o', 'Dir::Etc::SourceParts=%s/sources.list.d' % work,
                       '-o', 'Dir::Etc::Preferences=/dev/null',
                       '-o', 'Dir::Etc::PreferencesParts=%s/preferences.d' % work,
                       '-o', 'Dir::State::Lists=%s/lists' % work, '-o', 'Dir::State::Status=/var/lib/dpkg/status',
                       '-o', 'Dir::Cache=%s/cache' % work, '-o', 'Debug::NoLocking=true']
            rc, out, err = host.run(['apt-get'] + options + ['-q', 'update'], check=False)
            bad = [line for line in (err + out).splitlines() if line.startswith(('E:', 'Err:'))]
            if rc != 0 or bad:
                raise Failure('apt-get update of the repository failed: %s' % ' | '.join(bad)[-1200:], rc=rc,
                              stderr=err, stdout=out)
        dummy, out, dummy2 = host.run(['apt-cache'] + options + ['madison'] + list(packages), what='apt-cache madison')
        return sources.parse_madison(out)
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
        dummy, out, dummy2 = host.run(['dpkg-query', '-W', '-f', sources.DPKG_QUERY_FORMAT]
                                      + list(names), check=False)
    return sources.parse_dpkg_query(out, names)


def family(host):
    """{name: {version, held}} of every installed package of the driver's family (apt)."""
    dummy, out, dummy2 = host.run(['dpkg-query', '-W', '-f', sources.DPKG_QUERY_FORMAT] + list(DRIVER_PATTERNS),
                                  check=False)
    names = [line.split('\t', 1)[0] for line in out.splitlines()]
    return sources.parse_dpkg_query(out, names)


def read_files(host, paths):
    """{path: text or None (absent)} of the role's own repository and pin files."""
    found = {}
    for path in paths:
        try:
            found[path] = host.read(path) if os.path.isfile(path) else None
        except UnicodeDecodeError:
            continue  # a binary keyring: not text the restore could put back (the fingerprint check guards it)
    return found


def snapshot(host, paths):
    """What a driver change can touch (driver_transaction): the files' text and the driver's packages."""
    return {'files': read_files(host, paths), 'packages': family(host)}


def kernels(host, backend):
    if backend == 'dnf':
        rc, out, dummy = host.run(['rpm', '-q', '--qf', '%{VERSION}-%{RELEASE}.%{ARCH}\n', 'kernel-core'], check=False)
        return sorted(set(line.strip() for line in out.splitlines() if rc == 0 and line.strip()))
    dummy, out, dummy2 = host.run(['dpkg-query', '-W', '-f', '${Package}\t${db:Status-Abbrev}\n', 'linux-image-[0-9]*'],
                                  check=False)
    rows = [line.split('\t') for line in out.splitlines()]
    return sorted(set(r[0][len('linux-image-'):] for r in rows if len(r) == 2 and r[1][1:2] == 'i'))


def refresh_index(host, check_mode, valid=3600):
    """Refresh the host's package index when it is older than ``valid`` seconds (what
    ansible.builtin.apt's cache_valid_time does): the headers are looked up there. Check mode
    reads only: the index is left as it is and the result says it may be stale."""
    stamps = [path for path in ('/var/lib/apt/periodic/update-success-stamp', '/var/lib/apt/lists')
              if os.path.exists(path)]
    age = time.time() - max(os.path.getmtime(path) for path in stamps) if stamps else None
    decision = repo.index_refresh(age, valid, check_mode)
    if decision['refresh']:
        host.run(['apt-get', '-q', 'update'], what='apt-get update (the host\'s package index)')
    return decision


def stat(path):
    if not path or not os.path.exists(path):
        return {'exists': False}
    info = os.stat(path)
    return {'exists': True, 'uid': info.st_uid, 'mode': '%04o' % (info.st_mode & 0o7777)}
