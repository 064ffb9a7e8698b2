# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA's CUDA repository per distribution: ONE table for the whole collection.

``nvidia_driver`` (cuda_repo source, Fabric Manager), ``dcgm_exporter`` (host DCGM) and the
coming ``cuda_toolkit`` all install from ``<base>/<directory>/<arch>/``; each distribution's
directory is signed by its own key, which lives in the directory as ``<key_file>``.

SOURCE: NVIDIA's cuda-repo-management README, section "GPG keys" ("Active pubkeys for
https://developer.download.nvidia.com/compute/cuda/repos/": debian12 ``3bf863cc``, debian13
``8793F200``, the RPM distributions ``D42D0685``) and the key files of the repositories
(``<directory>/<arch>/<key_file>``); full fingerprints as ``gpg --show-keys`` prints them for
those files. The EL key has no fingerprint here: the user names it or pins the file by sha256.

Pure data and functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_trust

URL_RE = re.compile(r'(https?|file)://[^\s]+')
VARIABLES = ('gpuops_cuda_repo_base_url', 'gpuops_cuda_repo_url', 'gpuops_cuda_repo_key_url',
             'gpuops_cuda_repo_key_checksum', 'gpuops_cuda_repo_key_fingerprint')

KEY_3BF863CC = {'key_file': '3bf863cc.pub', 'fingerprint': 'EB693B3035CD5710E231E123A4B469963BF863CC'}
KEY_8793F200 = {'key_file': '8793F200.pub', 'fingerprint': '02182E60104FCDC26EAE1B8597A5D4CB8793F200'}
KEY_D42D0685 = {'key_file': 'D42D0685.pub', 'fingerprint': ''}

_KEYS_README = ('NVIDIA cuda-repo-management README, "GPG keys" (https://github.com/NVIDIA/cuda-repo-management): '
                'active pubkey %s for %s (the stored copy of that README, of 2024-02-27, has no such section yet)')
_READ = '2026-12-07'


def _repo(key, directory, seen):
    return dict(key, directory=directory, read=_READ,
                source=(_KEYS_README % (key['key_file'].split('.')[0], directory)) + '; checked against: ' + seen)


# (distribution family key, version) -> directory and key, each row with its source and the date it
# was read (docs/vendor-facts.md lists them; lookup() leaves both out of what it returns). Versions:
# Debian's major, Ubuntu's release without the dot, EL's major. The key files were checked on
# 2026-12-07 against public install scripts that fetch <directory>/x86_64/<key_file> (found by code
# search); the full fingerprints are as `gpg --show-keys` printed them for the key files.
REPOSITORIES = {
    ('debian', '12'): _repo(KEY_3BF863CC, 'debian12', 'public install scripts fetch debian12/x86_64/3bf863cc.pub '
                            '(public GitHub file ritascarlet/HyprDebianInstaller NvidiaCudaInstaller.sh)'),
    ('debian', '13'): _repo(KEY_8793F200, 'debian13', 'fingerprint 02182E60104FCDC26EAE1B8597A5D4CB8793F200 as '
                            'public repository-review files quote it for debian13/x86_64/8793F200.pub (public GitHub '
                            'files, index ids 68706970270 and 68563569232)'),
    ('ubuntu', '2204'): _repo(KEY_3BF863CC, 'ubuntu2204', 'key id A4B469963BF863CC as a public diagnostic script '
                              'expects it for ubuntu2204/x86_64 (found by code search)'),
    ('ubuntu', '2404'): _repo(KEY_3BF863CC, 'ubuntu2404', 'public install scripts fetch ubuntu2404/x86_64/3bf863cc.pub '
                              '(public GitHub files, index ids 61066529323 and 67250229432)'),
    ('rhel', '9'): dict(_repo(KEY_D42D0685, 'rhel9', 'no fingerprint in the table: the user names it or pins the '
                              'file by sha256'),
                        unconfirmed='the key file of rhel9 was not checked here (EL is not run in CI)'),
}
_NOT_RETURNED = ('source', 'read', 'unconfirmed')

REPOSITORIES_DIRS = tuple(sorted(row['directory'] for row in REPOSITORIES.values()))

# ansible_facts.architecture -> the repository's architecture directory, each row with its source.
_REPO_INDEX = ('NVIDIA CUDA repository index, %s (public directory listing): %s')
ARCH_ROWS = (
    {'machine': 'x86_64', 'directory': 'x86_64', 'read': _READ,
     'source': ('NVIDIA cloud-native docs, Red Hat Device Edge guide (NVIDIA/cloud-native-docs at 52dcb7b, '
                'edge/nvidia-gpu-with-device-edge.rst): "--add-repo=https://developer.download.nvidia.com/compute/cuda/'
                'repos/rhel9/x86_64/cuda-rhel9.repo"')},
    {'machine': 'aarch64', 'directory': 'sbsa', 'read': _READ,
     'source': _REPO_INDEX % ('https://developer.download.nvidia.com/compute/cuda/repos/fedora44/sbsa/',
                              '"cusparselt-0.10.0-1.aarch64.rpm", "nvfwupd-2.1.3-1.aarch64.rpm" (the sbsa directory holds '
                              'the aarch64 packages)'),
     'unconfirmed': 'the Debian and Ubuntu sbsa directories were not listed here; public install scripts fetch '
                    'ubuntu2404/sbsa/cuda-keyring_1.1-1_all.deb on aarch64 (public GitHub file, index id 56680411505)'},
)
ARCHES = dict((row['machine'], row['directory']) for row in ARCH_ROWS)

# Distributions whose CUDA repository is NVIDIA's EL one: ansible_facts.distribution lowercased, each row with
# its source and read date (the names: ansible-core's distribution facts; which of them NVIDIA's EL repository
# serves: NVIDIA's installation guides).
_ANSIBLE_EL = ('ansible-core 2.19.14 lib/ansible/module_utils/facts/system/distribution.py OS_FAMILY_MAP "RedHat" '
               'family lists "%s" (ansible_facts.distribution)')
EL_LIKE_ROWS = (
    {'distribution': 'redhat', 'read': _READ,
     'source': _ANSIBLE_EL % 'RedHat' + '; CUDA Installation Guide for Linux 12.6 (https://docs.nvidia.com/cuda/'
                                        'archive/12.6.3/pdf/CUDA_Installation_Guide_Linux.pdf), section 6.2 "RHEL / Rocky"'},
    {'distribution': 'rocky', 'read': _READ,
     'source': _ANSIBLE_EL % 'Rocky' + '; CUDA Installation Guide for Linux 12.6, section 6.2 "RHEL / Rocky"'},
    {'distribution': 'almalinux', 'read': _READ, 'source': _ANSIBLE_EL % 'AlmaLinux',
     'unconfirmed': 'no NVIDIA guide read names AlmaLinux: that NVIDIA\'s rhel repository serves it is the '
                    'collection\'s reading of RHEL binary compatibility'},
    {'distribution': 'centos', 'read': _READ, 'source': _ANSIBLE_EL % 'CentOS',
     'unconfirmed': 'the CUDA 12.6 guide read names RHEL and Rocky, not CentOS (Stream): not confirmed'},
    {'distribution': 'oraclelinux', 'read': _READ,
     'source': _ANSIBLE_EL % 'OracleLinux' + '; NVIDIA Driver Installation Guide, "Oracle Linux" (https://docs.nvidia.'
                                             'com/datacenter/tesla/driver-installation-guide/oracle-linux.html): "Oracle Linux 8, Oracle Linux 9"',
                                             'unconfirmed': 'the guide\'s repository directory for Oracle Linux was not read (the section seen covers '
                                             'kernel headers)'},
)
EL_LIKE = tuple(row['distribution'] for row in EL_LIKE_ROWS)

DEFAULT_BASE_URL = 'https://developer.download.nvidia.com/compute/cuda/repos'


def lookup(distribution, major, version, architecture):
    """The CUDA repository of a host: directory, arch, key_file, fingerprint and reason.

    ``distribution``/``major``/``version``/``architecture`` are the Ansible facts
    (``Debian``/``13``/``13.1``/``x86_64``). Raises ValueError for a platform NVIDIA has no
    repository for (or that the table does not know yet).
    """
    family = str(distribution or '').lower()
    if family in EL_LIKE:
        key = ('rhel', str(major))
    elif family == 'ubuntu':
        key = ('ubuntu', str(version or '').replace('.', ''))
    else:
        key = (family, str(major))
    row = REPOSITORIES.get(key)
    if row is None:
        raise ValueError('NVIDIA\'s CUDA repository has no directory for %s %s in the collection\'s table '
                         '(known: %s)' % (distribution, version or major,
                                          ', '.join(r['directory'] for r in REPOSITORIES.values())))
    arch = ARCHES.get(str(architecture))
    if arch is None:
        raise ValueError('NVIDIA\'s CUDA repository has no directory for the architecture %s (known: %s)'
                         % (architecture, ', '.join(sorted(ARCHES))))
    row = dict((k, v) for k, v in row.items() if k not in _NOT_RETURNED)
    return dict(row, arch=arch, path='%s/%s' % (row['directory'], arch),
                reason='%s %s on %s: %s/%s, signed by %s' % (distribution, version or major, architecture,
                                                             row['directory'], arch, row['key_file']))


def repository(facts, base_url='', url='', key_url='', fingerprint='', checksum=''):
    """The CUDA repository to use and how its key is checked, from the table and the user's
    overrides (``url``: the whole repository; ``key_url``, ``fingerprint``, ``checksum``: the
    key). With neither fingerprint nor checksum given, the table's fingerprint is used.

    ``facts``: distribution, major, version, architecture. Returns url, key_url, fingerprint,
    sha256, directory, arch, key_file and reason; raises ValueError as ``lookup`` does.
    """
    row = lookup(facts.get('distribution'), facts.get('major'), facts.get('version'), facts.get('architecture'))
    repo_url = (url or '%s/%s' % ((base_url or DEFAULT_BASE_URL).rstrip('/'), row['path'])).rstrip('/') + '/'
    own = bool(fingerprint or checksum)
    return dict(row, url=repo_url, key_url=key_url or repo_url + row['key_file'],
                fingerprint=fingerprint if own else row['fingerprint'], sha256=checksum,
                key_reason='the key given in the variables' if own
                else 'the table\'s key of %s (%s)' % (row['directory'], row['key_file']))


# The codenames a per-distribution value may also be keyed by, per table directory.
# Each repository directory's distribution codename, as distro-info-data (0.58+deb12u6, the Debian 12 package
# read on 2026-12-07) lists it: /usr/share/distro-info/debian.csv and ubuntu.csv.
_DISTRO_INFO = 'distro-info-data 0.58+deb12u6 /usr/share/distro-info/%s.csv: "%s"'
CODENAME_ROWS = (
    {'directory': 'debian12', 'codename': 'bookworm', 'read': _READ,
     'source': _DISTRO_INFO % ('debian', '12,Bookworm,bookworm,2021-08-14,2023-06-10,...')},
    {'directory': 'debian13', 'codename': 'trixie', 'read': _READ,
     'source': _DISTRO_INFO % ('debian', '13,Trixie,trixie,2023-06-10,2025-08-09,...')},
    {'directory': 'ubuntu2204', 'codename': 'jammy', 'read': _READ,
     'source': _DISTRO_INFO % ('ubuntu', '22.04 LTS,Jammy Jellyfish,jammy,2021-10-14,2022-04-21,...')},
    {'directory': 'ubuntu2404', 'codename': 'noble', 'read': _READ,
     'source': _DISTRO_INFO % ('ubuntu', '24.04 LTS,Noble Numbat,noble,2023-10-12,2024-04-25,...')},
)
CODENAMES = dict((row['directory'], row['codename']) for row in CODENAME_ROWS)
# Variables that take one value or one per distribution (the key files differ between directories).
PER_DISTRIBUTION = ('gpuops_cuda_repo_key_checksum', 'gpuops_cuda_repo_key_fingerprint', 'gpuops_cuda_repo_key_url')
_DIST_KEY = re.compile(r'[a-z][a-z0-9]*')


def per_distribution(name, value, facts):
    """(value for this host, problem or None) of a variable that takes one value or a dict keyed by
    the table's directory (``debian12``, ``debian13``, ``ubuntu2204``, ``ubuntu2404``, ``rhel9``) or
    a codename (``bookworm``, ``trixie``, ``jammy``, ``noble``): Debian 12 and 13 are signed by
    different key files, so one checksum cannot serve both. A key that is neither, a value that is
    not a string, or a host whose directory and codename both have entries that differ, is a
    problem naming the variable; a host the dict has no entry for takes ``''`` (the table's
    default for that distribution)."""
    if value is None or value == '':
        return '', None
    if isinstance(value, str):
        return value, None
    if not isinstance(value, dict):
        return '', '%s must be a string or a dict keyed by distribution (%s), got %r' % (
            name, ', '.join(sorted(set(REPOSITORIES_DIRS) | set(CODENAMES.values()))), value)
    known = set(REPOSITORIES_DIRS) | set(CODENAMES.values())
    bad = sorted(repr(k) for k in value if not isinstance(k, str) or not _DIST_KEY.fullmatch(k) or k not in known)
    if bad:
        return '', '%s: unknown distribution key(s) %s (known: %s)' % (name, ', '.join(bad), ', '.join(sorted(known)))
    wrong = sorted(k for k, v in value.items() if not isinstance(v, str))
    if wrong:
        return '', '%s: the value of %s must be a string' % (name, ', '.join(wrong))
    try:
        directory = lookup(facts.get('distribution'), facts.get('major'), facts.get('version'),
                           facts.get('architecture'))['directory']
    except ValueError:
        return '', None  # the lookup's own error names the platform
    found = [value[k] for k in (directory, CODENAMES.get(directory)) if k and value.get(k)]
    if len(set(found)) > 1:
        return '', '%s: %s and %s give different values for this host' % (name, directory, CODENAMES[directory])
    return (found[0] if found else ''), None


def from_inputs(inputs, facts):
    """``gpuops_cuda_repo``: the repository of ``repository`` from the collection's one set of
    CUDA-repository variables (``gpuops_cuda_repo_*``, converted by the common role's argument
    spec), with every value checked first. Raises ValueError naming each wrong variable."""
    value = dict((name, (inputs or {}).get(name) or '') for name in VARIABLES)
    problems = []
    for name in PER_DISTRIBUTION:
        value[name], problem = per_distribution(name, value[name], facts)
        if problem:
            problems.append(problem)
    for name in ('gpuops_cuda_repo_base_url', 'gpuops_cuda_repo_url'):
        if value[name] and not URL_RE.fullmatch(value[name]):
            problems.append('%s must be an https://, http:// or file:// URL, got %r' % (name, value[name]))
    try:
        repo = repository(facts, value['gpuops_cuda_repo_base_url'], value['gpuops_cuda_repo_url'],
                          value['gpuops_cuda_repo_key_url'], repo_trust.clean_fingerprint(
                              value['gpuops_cuda_repo_key_fingerprint']),
                          repo_trust.clean_sha256(value['gpuops_cuda_repo_key_checksum']))
    except ValueError as exc:
        problems.append('%s: set gpuops_cuda_repo_url and the gpuops_cuda_repo_key_* variables' % exc)
        repo = None
    if repo:
        unset = [n for n in PER_DISTRIBUTION if isinstance((inputs or {}).get(n), dict) and not value[n]]
        note = ' (%s: a dict without an entry for %s or %s)' % (
            ', '.join(unset), repo['directory'], CODENAMES.get(repo['directory'], '-')) if unset else ''
        problems.extend(problem + note for problem in repo_trust.key_problems({
            'url': repo['key_url'], 'sha256': repo['sha256'], 'fingerprint': repo['fingerprint'],
            'url_var': 'gpuops_cuda_repo_key_url', 'checksum_var': 'gpuops_cuda_repo_key_checksum',
            'fingerprint_var': 'gpuops_cuda_repo_key_fingerprint'}))
    if problems:
        raise ValueError('; '.join(problems))
    return repo
