# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who installed the NVIDIA driver on the host: its packages, where they came from, a runfile.

The probe's package depth (``gpu_facts``): the driver's installed packages (``{name: version}``,
dpkg or rpm state: installed counts even when the module is not loaded yet), the origin of each
(``cuda_repo``: NVIDIA's CUDA repository or a mirror keeping its layout; ``distro``: the
distribution's archive; ``other``: any other repository, or a package no configured repository
carries), whether NVIDIA's ``.run`` installer was used, and whether the collection's own record
of its driver install is there. ``plan/adopt.py`` decides from these.

Parsers are pure functions of the commands' text; ``read(...)`` runs the commands through the
caller's runner. Standard library only, Python 3.8+ (runs on targets).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_policy

# The packages that carry the driver's kernel modules (their version is the driver's):
# Debian (nvidia-graphics-drivers, -tesla-<branch>), NVIDIA's CUDA repository (Debian, Ubuntu,
# EL), Ubuntu's archive (nvidia-dkms-<branch>[-server][-open], nvidia-headless-*).
DRIVER_PACKAGE = re.compile(
    r'nvidia-kernel(?:-open)?-dkms|nvidia-open-kernel-dkms|nvidia-tesla-\d{3,4}-kernel-dkms'
    r'|nvidia-dkms-\d{3,4}(?:-server)?(?:-open)?|nvidia-headless-\d{3,4}(?:-server)?(?:-open)?'
    r'|nvidia-driver-cuda|kmod-nvidia(?:-[a-z0-9]+)*(?:-dkms)?')
_PACKAGE_NAME = re.compile(r'[a-z0-9][a-z0-9+.-]*')
_VERSION = re.compile(r'[A-Za-z0-9.+~:_-]+')
# Debian origins (the Origin: field of a Release file) of the distribution's own archives, each row with its
# source and read date. Ubuntu Pro's two ESM archives have origins of their own (infra and apps).
_UU = 'mvo5/unattended-upgrades 2.13 data/50unattended-upgrades.%s: %s'
DISTRO_ORIGIN_ROWS = (
    {'origin': 'Debian', 'read': '2026-12-07',
     'source': 'the InRelease file of deb.debian.org/debian bookworm as apt fetched it on the build host: "Origin: '
               'Debian"; ' + _UU % ('Debian', '"origin=Debian,codename=${distro_codename},label=Debian"')},
    {'origin': 'Debian Backports', 'read': '2026-12-07',
     'source': _UU % ('Debian', '"o=Debian Backports,n=${distro_codename}-backports,l=Debian Backports"')},
    {'origin': 'Ubuntu', 'read': '2026-12-07',
     'source': _UU % ('Ubuntu', '"${distro_id}:${distro_codename}-security" (distro_id: Ubuntu)')},
    {'origin': 'UbuntuESM', 'read': '2026-12-07',
     'source': _UU % ('Ubuntu', '"${distro_id}ESM:${distro_codename}-infra-security"')},
    {'origin': 'UbuntuESMApps', 'read': '2026-12-07',
     'source': _UU % ('Ubuntu', '"${distro_id}ESMApps:${distro_codename}-apps-security"')},
)
DISTRO_ORIGINS = tuple(row['origin'] for row in DISTRO_ORIGIN_ROWS)
# NVIDIA's CUDA repository keeps this layout, and so do the collection's mirrors of it.
CUDA_REPO_PATH = '/compute/cuda/repos/'
# The .run installer leaves itself behind (nvidia-uninstall links to it); its log, or nvidia-smi,
# on a host without any driver package is the same sign (the log outlives an uninstall).
RUNFILE_INSTALLER = '/usr/bin/nvidia-installer'
RUNFILE_LOG = '/var/log/nvidia-installer.log'
NVIDIA_SMI = '/usr/bin/nvidia-smi'
# The collection's record of its driver install: the version pin the nvidia_driver role writes.
MARKER_PATHS = ('/etc/apt/preferences.d/gpuops-nvidia-driver.pref',)
# Components a role installs that the host may have from elsewhere: role -> (package, or a name
# prefix ending in *, and the role's marker: the toolkit's version pin, the DCGM exporter's counters
# file, which only that role writes).
COMPONENTS = {
    'nvidia_container_toolkit': ('nvidia-container-toolkit',
                                 '/etc/apt/preferences.d/gpuops-nvidia-container-toolkit.pref'),
    'dcgm_exporter': ('datacenter-gpu-manager*', '/etc/dcgm-exporter/gpuops-counters.csv'),
}
# Exporter units a role finds on the host (``units``: those present): NVIDIA's packaged
# nvidia-dcgm-exporter.service enabled, or an exporter unit written into /etc/systemd/system
# (the role's own dcgm-exporter.service is accounted for by its marker).
COMPONENT_UNITS = {
    'dcgm_exporter': ('/etc/systemd/system/multi-user.target.wants/nvidia-dcgm-exporter.service',
                      '/etc/systemd/system/nvidia-dcgm-exporter.service',
                      '/etc/systemd/system/dcgm-exporter.service'),
}
# NVIDIA's libnvidia-container repository (the toolkit's) keeps this path, and so do mirrors of it.
TOOLKIT_REPO_PATH = '/libnvidia-container/'
RPM_VENDOR_CUDA = 'NVIDIA Corporation'

DPKG_FORMAT = '${db:Status-Abbrev}\t${Package}\t${Version}\n'
RPM_FORMAT = '%{NAME}\t%{EPOCHNUM}:%{VERSION}-%{RELEASE}\t%{VENDOR}\n'


class PackageReadError(ValueError):
    """A command's output is not what the parser knows."""


def is_driver_package(name):
    return bool(DRIVER_PACKAGE.fullmatch(name or ''))


def parse_dpkg_query(text):
    """``{name: version}`` of the installed packages in ``dpkg-query -W -f '<DPKG_FORMAT>'`` output.

    Installed = the state letter (second of the status abbreviation) is ``i`` (installed) or a
    half-done state (U, F, W, t: unpacked, half-configured, triggers pending): the files are
    there. Removed packages with leftover conffiles (``rc``) are not. Architecture qualifiers
    (``:amd64``) are dropped.
    """
    found = {}
    for line in (text or '').splitlines():
        if not line.strip():
            continue
        parts = line.split('\t')
        if len(parts) != 3:
            raise PackageReadError('dpkg-query: unexpected line %r' % line)
        status, name, version = parts[0], parts[1].split(':')[0], parts[2]
        if len(status) < 2 or status[1] not in 'iUFWt':
            continue
        if not _PACKAGE_NAME.fullmatch(name) or not _VERSION.fullmatch(version):
            raise PackageReadError('dpkg-query: unexpected package %r version %r' % (name, version))
        found[name] = version
    return found


def parse_rpm_query(text):
    """``{name: (version, vendor)}`` from ``rpm -qa --qf '<RPM_FORMAT>'`` (epoch 0 dropped)."""
    found = {}
    for line in (text or '').splitlines():
        if not line.strip():
            continue
        parts = line.split('\t')
        if len(parts) != 3:
            raise PackageReadError('rpm: unexpected line %r' % line)
        name, version, vendor = parts
        if version.startswith('0:'):
            version = version[2:]
        if not _PACKAGE_NAME.fullmatch(name) or not _VERSION.fullmatch(version):
            raise PackageReadError('rpm: unexpected package %r version %r' % (name, version))
        found[name] = (version, vendor.strip())
    return found


def parse_apt_policy(text):
    """``{package: [source, ...]}``: where ``apt-cache policy PKG...`` says the INSTALLED version comes from.

    Each source is ``{'url', 'dist'}`` (``dist`` is ``suite/component`` for an archive, ``''``
    for a flat repository like NVIDIA's CUDA repository); ``/var/lib/dpkg/status`` (the package
    is installed) is left out, so an empty list means no configured repository carries the
    installed version. Packages that are not installed are left out. Parsed strictly by the
    collection's one ``apt-cache policy`` parser (packages/apt_policy.py).
    """
    try:
        table = apt_policy.parse(text, strict=True)
    except apt_policy.AptPolicyError as exc:
        raise PackageReadError(str(exc))
    result = {}
    for package, entry in table.items():
        for row in entry['versions']:
            if row['installed']:
                result[package] = [{'url': s['url'], 'dist': s['dist']} for s in row['sources']
                                   if s['url'] != apt_policy.DPKG_STATUS]
    return result


_FILES_SOURCE = re.compile(r' *(-?\d+) (\S+) (?:(\S*) (\S+) Packages|\s*Packages)\Z')
_FILES_RELEASE = re.compile(r' +release (.*)\Z')


def parse_apt_package_files(text):
    """``{(url, dist): origin}`` from ``apt-cache policy`` without arguments ("Package files:").

    ``origin`` is the ``o=`` of the source's ``release`` line ('' when the Release file has none).
    """
    result = {}
    current = None
    for line in (text or '').splitlines():
        match = _FILES_SOURCE.fullmatch(line)
        if match:
            current = (match.group(2), match.group(3) or '')
            result[current] = ''
            continue
        match = _FILES_RELEASE.fullmatch(line)
        if match and current is not None:
            fields = dict(part.split('=', 1) for part in match.group(1).split(',') if '=' in part)
            result[current] = fields.get('o', '')
    return result


def origin_of(sources, releases):
    """``cuda_repo``, ``toolkit_repo``, ``distro`` or ``other``: where the installed version came from.

    ``sources``: parse_apt_policy's list for the package; ``releases``: parse_apt_package_files.
    """
    kinds = set()
    for source in sources:
        if CUDA_REPO_PATH in source['url']:
            kinds.add('cuda_repo')
        elif TOOLKIT_REPO_PATH in source['url']:
            kinds.add('toolkit_repo')
        elif releases.get((source['url'], source['dist'])) in DISTRO_ORIGINS:
            kinds.add('distro')
        else:
            kinds.add('other')
    if not kinds:
        return 'other'
    for kind in ('cuda_repo', 'toolkit_repo', 'distro'):
        if kind in kinds:
            return kind
    return 'other'


def component_package(pattern, name):
    """Whether package ``name`` is the component's: the name, or a prefix ending in ``*``."""
    if pattern.endswith('*'):
        return name.startswith(pattern[:-1])
    return name == pattern


def combined_origin(origins):
    """One origin for a component of several packages: theirs when they agree, else the one that
    is not the role's (``other`` before ``distro``); None when nothing is installed."""
    found = set(o or 'other' for o in origins)
    if not found:
        return None
    if len(found) == 1:
        return found.pop()
    return 'other' if 'other' in found else ('distro' if 'distro' in found else sorted(found)[0])


def _answer(answered, reason=None):
    return {'answered': answered, 'reason': reason}


def read(run_command, get_bin_path, exists=os.path.exists):
    """The package part of the probe's ``driver`` facts, and the components' (``components``).

    ``{installed_packages, package_origins, runfile, marker, packages_read, components}``, where
    ``components`` maps a role of COMPONENTS to ``{version, origin, marker, packages}`` (version and
    origin null when not installed; packages: every installed package of the component and its
    version); never raises: ``packages_read`` says why the package state could not
    be read (``components`` is then empty).
    """
    out = {'installed_packages': {}, 'package_origins': {}, 'runfile': False,
           'marker': any(exists(path) for path in MARKER_PATHS), 'components': {}}
    try:
        out['packages_read'] = _read_packages(run_command, get_bin_path, out)
    except PackageReadError as exc:
        out['installed_packages'], out['package_origins'], out['components'] = {}, {}, {}
        out['packages_read'] = _answer(False, str(exc))
    without_package = out['packages_read']['answered'] and not out['installed_packages']
    out['runfile'] = exists(RUNFILE_INSTALLER) or (without_package and (exists(NVIDIA_SMI) or exists(RUNFILE_LOG)))
    if out['packages_read']['answered']:
        origins = out.pop('component_origins', {})
        versions = out.pop('component_versions', {})
        for role, (package, marker) in sorted(COMPONENTS.items()):
            names = sorted(n for n in versions if component_package(package, n))
            out['components'][role] = {'version': versions[names[0]] if names else None,
                                       'origin': combined_origin([origins.get(n) for n in names]),
                                       'marker': exists(marker),
                                       'packages': dict((n, versions[n]) for n in names)}
            if role in COMPONENT_UNITS:
                out['components'][role]['units'] = [path for path in COMPONENT_UNITS[role] if exists(path)]
    out.pop('component_origins', None)
    out.pop('component_versions', None)
    return out


def _read_packages(run_command, get_bin_path, out):
    dpkg = get_bin_path('dpkg-query') if get_bin_path else None
    rpm = get_bin_path('rpm') if get_bin_path else None
    if run_command is None or not (dpkg or rpm):
        return _answer(False, 'neither dpkg-query nor rpm found')
    if dpkg:
        rc, text, err = run_command([dpkg, '-W', '-f', DPKG_FORMAT])
        if rc != 0:
            return _answer(False, 'dpkg-query failed (rc %d): %s' % (rc, (err or '').strip()))
        everything = parse_dpkg_query(text)
        installed = dict((n, v) for n, v in everything.items() if is_driver_package(n))
        components = dict((n, v) for n, v in everything.items()
                          if any(component_package(p, n) for p, dummy in COMPONENTS.values()))
        out['installed_packages'], out['component_versions'] = installed, components
        wanted = sorted(set(installed) | set(components))
        if not wanted:
            return _answer(True)
        origins, reason = _apt_origins(run_command, get_bin_path, wanted)
        out['package_origins'] = dict((n, origins[n]) for n in installed)
        out['component_origins'] = dict((n, origins[n]) for n in components)
        return _answer(True, reason)
    # EL: NVIDIA's packages carry its vendor; the toolkit role does not run there yet
    rc, text, err = run_command([rpm, '-qa', '--qf', RPM_FORMAT])
    if rc != 0:
        return _answer(False, 'rpm -qa failed (rc %d): %s' % (rc, (err or '').strip()))
    found = dict((n, v) for n, v in parse_rpm_query(text).items() if is_driver_package(n))
    out['installed_packages'] = dict((n, v[0]) for n, v in found.items())
    out['package_origins'] = dict((n, 'cuda_repo' if v[1] == RPM_VENDOR_CUDA else 'other') for n, v in found.items())
    return _answer(True)


def _apt_origins(run_command, get_bin_path, wanted):
    """``({package: origin}, reason)`` for the installed ``wanted`` packages (apt-cache policy)."""
    unknown = dict((n, 'other') for n in wanted)
    apt_cache = get_bin_path('apt-cache')
    if not apt_cache:
        return unknown, "apt-cache not found: the packages' origin is unknown"
    rc, policy, err = run_command([apt_cache, 'policy'] + wanted)
    rc_files, files, dummy = run_command([apt_cache, 'policy']) if rc == 0 else (rc, '', '')
    if rc != 0 or rc_files != 0:
        return unknown, 'apt-cache policy failed (rc %d): %s' % (rc or rc_files, (err or '').strip())
    sources = parse_apt_policy(policy)
    releases = parse_apt_package_files(files)
    return dict((n, origin_of(sources.get(n, []), releases)) for n in wanted), None
