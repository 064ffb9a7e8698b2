# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the nvidia_container_toolkit role: versions, known vulnerabilities, inputs.

Small pure functions, each a value plus a reason, tested from YAML case tables
(tests/unit/plugins/module_utils/data/container_toolkit_*.yml), reached through the module
gpuops.dlserver.__private.nvidia_container_toolkit_host.

``VULNERABILITIES`` is the collection's table of the container-escape (and related)
vulnerabilities NVIDIA published for the NVIDIA Container Toolkit, each with the first release
that fixes it and the NVIDIA security bulletin that says so. A version below a fix is refused
(``vulnerable``) unless the user accepts each CVE by name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo as repo
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_trust

# The four packages NVIDIA's install guide installs and pins, all at one version (each row with its source).
_INSTALL_GUIDE = ('NVIDIA Container Toolkit install guide, "Install the NVIDIA Container Toolkit packages" '
                  '(NVIDIA/cloud-native-docs container-toolkit/install-guide.md at 52dcb7b; https://docs.nvidia.com/'
                  'datacenter/cloud-native/container-toolkit/latest/install-guide.html): "%s=${NVIDIA_CONTAINER_TOOLKIT_VERSION}"')
PACKAGE_ROWS = tuple({'package': name, 'source': _INSTALL_GUIDE % name, 'read': '2026-12-07'}
                     for name in ('nvidia-container-toolkit', 'nvidia-container-toolkit-base', 'libnvidia-container-tools',
                                  'libnvidia-container1'))
PACKAGES = [row['package'] for row in PACKAGE_ROWS]
ENGINES = ('docker', 'containerd', 'crio')
VERSION_RE = re.compile(r'^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.+~]+)?\Z')
CVE_RE = re.compile(r'^CVE-[0-9]{4}-[0-9]{4,}\Z')
# A TOML table or key name of the runtime's config.toml.
KEY_RE = re.compile(r'[A-Za-z0-9_.-]{1,128}')
# An image reference: registry/name[:tag][@sha256:digest], no blank, quote or control character.
IMAGE_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}')
BULLETIN_2024_09 = 'https://nvidia.custhelp.com/app/answers/detail/a_id/5582'
BULLETIN_2024_10 = 'https://nvidia.custhelp.com/app/answers/detail/a_id/5585'
BULLETIN_2025_01 = 'https://nvidia.custhelp.com/app/answers/detail/a_id/5599'
BULLETIN_2025_02 = 'https://nvidia.custhelp.com/app/answers/detail/a_id/5616'
BULLETIN_2025_07 = 'https://nvidia.custhelp.com/app/answers/detail/a_id/5659'
BULLETIN_2026_06 = 'https://nvidia.custhelp.com/app/answers/detail/a_id/5850'
# The date every row below was last read against its bulletin (docs/vendor-facts.md lists the rows).
READ = '2026-12-07'

# The data: one row per CVE. ``fixed`` is the first NVIDIA Container Toolkit release (all four
# packages share the version) that is not affected; ``severity`` is the CVSS v3.1 base severity
# NVIDIA gives in the bulletin and the CVE record (CVEProject/cvelistV5). Fixed versions as in
# NVIDIA's bulletins and the table of NVIDIA/cloud-native-docs gpu-operator/security.rst ("CVEs").
# CVE-2024-0135/0136/0137: the CVE records first said "up to and including v1.17.0"; bulletin 5599
# and the GPU Operator's table were corrected to "up to and including 1.17.2", fixed in 1.17.3
# (NVIDIA/libnvidia-container issue 298), which is what the table keeps.
VULNERABILITIES = [
    {'cve': 'CVE-2024-0132', 'severity': 'critical',
     'summary': 'time-of-check time-of-use race: a crafted container image escapes to the host '
                '(container escape; not in CDI mode)',
     'fixed': '1.16.2', 'source': BULLETIN_2024_09, 'read': READ},
    {'cve': 'CVE-2024-0133', 'severity': 'medium',
     'summary': 'a crafted container image creates empty files or directories on the host file system',
     'fixed': '1.16.2', 'source': BULLETIN_2024_09, 'read': READ},
    {'cve': 'CVE-2024-0134', 'severity': 'medium',
     'summary': 'a crafted container image creates unauthorized files on the host',
     'fixed': '1.17.0', 'source': BULLETIN_2024_10, 'read': READ},
    {'cve': 'CVE-2024-0135', 'severity': 'high',
     'summary': 'a crafted container image modifies a host binary (improper isolation)',
     'fixed': '1.17.3', 'source': BULLETIN_2025_01, 'read': READ},
    {'cve': 'CVE-2024-0136', 'severity': 'high',
     'summary': 'a crafted container image gives untrusted code read and write access to host devices '
                '(non-default configuration only)',
     'fixed': '1.17.3', 'source': BULLETIN_2025_01, 'read': READ},
    {'cve': 'CVE-2024-0137', 'severity': 'medium',
     'summary': 'a crafted container image runs untrusted code in the host\'s network namespace '
                '(non-default configuration only)',
     'fixed': '1.17.3', 'source': BULLETIN_2025_01, 'read': READ},
    {'cve': 'CVE-2025-23359', 'severity': 'high',
     'summary': 'time-of-check time-of-use race that bypasses the CVE-2024-0132 fix: host directories mounted '
                'into the container (container escape; not in CDI mode)',
     'fixed': '1.17.4', 'source': BULLETIN_2025_02, 'read': READ},
    {'cve': 'CVE-2025-23266', 'severity': 'critical',
     'summary': '"NVIDIAScape": the createContainer hook honours LD_PRELOAD of a crafted image, running code '
                'as root on the host (container escape)',
     'fixed': '1.17.8', 'source': BULLETIN_2025_07, 'read': READ},
    {'cve': 'CVE-2025-23267', 'severity': 'high',
     'summary': 'the update-ldcache hook follows links of a crafted image (data tampering, denial of service)',
     'fixed': '1.17.8', 'source': BULLETIN_2025_07, 'read': READ},
    {'cve': 'CVE-2026-24260', 'severity': 'high',
     'summary': 'time-of-check time-of-use race (code execution, escalation of privileges, data tampering)',
     'fixed': '1.19.1', 'source': BULLETIN_2026_06, 'read': READ},
]


def upstream(version):
    """1.17.8 of 1.17.8, 1.17.8-1 and 1.17.8-1+gpuops.testdouble."""
    return repo.split_version(version)[1] if '-' in version else version


def vulnerable(version, accepted=None, table=None):
    """The known vulnerabilities of ``version`` and whether it is refused.

    ``accepted``: CVE ids the user accepts by name (nvidia_container_toolkit_accept_cves).
    Returns ``refused`` (bool), ``cves`` (rows that affect the version), ``accepted`` (rows
    accepted), ``fixed_in`` (the first release that fixes every one of them) and ``reason``.
    """
    table = VULNERABILITIES if table is None else table
    accepted = set(accepted or [])
    up = upstream(version)
    rows = [row for row in table if repo.compare_versions(up, row['fixed']) < 0]
    open_rows = [row for row in rows if row['cve'] not in accepted]
    fixed_in = None
    for row in rows:
        if fixed_in is None or repo.compare_versions(row['fixed'], fixed_in) > 0:
            fixed_in = row['fixed']
    if not rows:
        reason = 'no known vulnerability of the collection\'s table affects %s' % up
    elif open_rows:
        reason = ('%s is affected by %s; the first release fixing them is %s'
                  % (up, ', '.join(r['cve'] for r in open_rows), fixed_in))
    else:
        reason = ('%s is affected by %s, each accepted by nvidia_container_toolkit_accept_cves'
                  % (up, ', '.join(r['cve'] for r in rows)))
    return {'refused': bool(open_rows), 'cves': rows, 'open': [r['cve'] for r in open_rows],
            'accepted': [r['cve'] for r in rows if r['cve'] in accepted], 'fixed_in': fixed_in, 'reason': reason}


def refusal_text(version, verdict, what):
    """The failure message for a refused version (``what``: the variable or the installed packages)."""
    lines = ['%s (%s) is a known-vulnerable NVIDIA Container Toolkit version:' % (upstream(version), what)]
    for row in verdict['cves']:
        if row['cve'] in verdict['open']:
            lines.append('%s (%s, fixed in %s): %s; see %s'
                         % (row['cve'], row['severity'], row['fixed'], row['summary'], row['source']))
    lines.append('Set nvidia_container_toolkit_version to %s or newer, or accept each CVE by name in '
                 'nvidia_container_toolkit_accept_cves' % verdict['fixed_in'])
    return ' '.join(lines)


def version_problems(inp):
    """The refusal of a known-vulnerable ``version`` whose CVEs ``accept_cves`` does not all accept
    (``VULNERABILITIES``); none for a version input_problems refuses by its form."""
    version = inp.get('version') or ''
    if not isinstance(version, str) or not VERSION_RE.fullmatch(version):
        return []
    verdict = vulnerable(version, inp.get('accept_cves'))
    return [refusal_text(version, verdict, 'nvidia_container_toolkit_version')] if verdict['refused'] else []


def repo_sha(checksum):
    """The hex digest of a ``sha256:<hex>`` (or bare hex) checksum, lower case; '' when unset."""
    value = (checksum or '').strip().lower()
    return value[len('sha256:'):] if value.startswith('sha256:') else value


def input_problems(inp):
    """What the argument specification cannot check, each problem naming its variable."""
    problems = []
    version = inp.get('version') or ''
    if not VERSION_RE.fullmatch(version):
        problems.append('nvidia_container_toolkit_version must be a version such as 1.17.8 or a package version '
                        'such as 1.17.8-1, got "%s"' % version)
    value = inp.get('repo_url') or ''
    if not repo.URL_RE.fullmatch(value):
        problems.append('nvidia_container_toolkit_repo_url must be an http(s):// or file:// URL, got "%s"' % value)
    # The key: the same checks as every repository's (packages/repo_trust.py).
    problems.extend(repo_trust.key_problems({
        'url': inp.get('keyring_url') or '', 'sha256': inp.get('keyring_checksum') or '',
        'fingerprint': inp.get('keyring_fingerprint') or '', 'url_var': 'nvidia_container_toolkit_keyring_url',
        'checksum_var': 'nvidia_container_toolkit_keyring_checksum',
        'fingerprint_var': 'nvidia_container_toolkit_keyring_fingerprint'}))
    unknown = [e for e in inp.get('engines') or [] if e not in ENGINES]
    if unknown:
        problems.append('nvidia_container_toolkit_engines: unknown engine(s) %s; use any of %s (or [] for the '
                        'engines the host has)' % (', '.join('"%s"' % e for e in unknown), ', '.join(ENGINES)))
    bad = [c for c in inp.get('accept_cves') or [] if not CVE_RE.fullmatch(c)]
    if bad:
        problems.append('nvidia_container_toolkit_accept_cves: %s is not a CVE id (CVE-YYYY-NNNN)' % ', '.join(bad))
    settings = inp.get('runtime_settings') or {}
    for table, values in settings.items():
        if not isinstance(values, dict):
            problems.append('nvidia_container_toolkit_runtime_settings.%s must be a table (a dict of settings), '
                            'got %s' % (table, type(values).__name__))
        elif not all(isinstance(k, str) and KEY_RE.fullmatch(k) for k in [table] + list(values)):
            problems.append('nvidia_container_toolkit_runtime_settings.%s: table and setting names are letters, '
                            'digits, _ . - (got %s)' % (table, ', '.join(repr(k) for k in [table] + list(values))))
    image = inp.get('smoke_test_image')
    if not isinstance(image, str) or not IMAGE_RE.fullmatch(image) or '..' in image:
        problems.append('nvidia_container_toolkit_smoke_test_image must be an image reference such as '
                        'nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04, got %r' % (image,))
    status = inp.get('status_file') or ''
    if not repo.STATUS_FILE_RE.fullmatch(status):
        problems.append('nvidia_container_toolkit_status_file must be an absolute file path, got "%s"' % status)
    return problems


def choose_engines(wanted, present):
    """The engines to configure: the user's list, else the ones the host has."""
    if wanted:
        missing = [e for e in wanted if not present.get(e)]
        return {'value': list(wanted),
                'reason': 'nvidia_container_toolkit_engines%s' % (
                    ' (not installed yet: %s; their configuration is written, not validated)' % ', '.join(missing)
                    if missing else '')}
    found = [e for e in ENGINES if present.get(e)]
    return {'value': found, 'reason': 'the engines installed on the host' if found
            else 'no container engine is installed (Docker, containerd, CRI-O) and nvidia_container_toolkit_engines '
                 'is empty'}


# The release that first ships nvidia-cdi-refresh.path/.service (NVIDIA/nvidia-container-toolkit
# CHANGELOG.md, v1.18.0-rc.1: "Add nvidia-cdi-refresh service").
CDI_REFRESH_UNITS_SINCE = '1.18.0'


def cdi_decision(cdi_wanted, driver_loaded, driver_reason, in_container, version=None):
    """Whether the CDI specification is generated here (nvidia-ctk cdi generate needs a loaded driver)
    and whether the refresh units are enabled (``units``).

    The toolkit's packages enable both nvidia-cdi-refresh.path and .service (RPM: %systemd_post of
    both units, packaging/rpm/SPECS/nvidia-container-toolkit.spec; Debian: dh_installsystemd, both
    units carry ``[Install] WantedBy=multi-user.target``, deployments/systemd/). The service must be
    enabled: the specification is written to /var/run/cdi, a tmpfs, and the .path unit reacts only to
    driver or toolkit changes, so only the service regenerates it at boot. The units are enabled
    wherever CDI is wanted and the release ships them; they are started only where ``generate``.
    """
    units = bool(cdi_wanted) and (version is None or versions.numeric(upstream(version), 'toolkit version', 3)
                                  >= versions.numeric(CDI_REFRESH_UNITS_SINCE))
    if not cdi_wanted:
        return {'generate': False, 'units': False, 'reason': 'nvidia_container_toolkit_cdi is false'}
    if in_container:
        return {'generate': False, 'units': units,
                'reason': 'the host is a container guest: the GPUs and the driver are the host\'s'}
    if not driver_loaded:
        return {'generate': False, 'units': units,
                'reason': 'the NVIDIA driver is not loaded (%s): nvidia-ctk cdi generate needs it; '
                          'the refresh units generate the specification once it is' % driver_reason}
    return {'generate': True, 'units': units, 'reason': 'the NVIDIA driver is loaded'}


def smoke_decision(enabled, driver_loaded, engines, in_container):
    """Whether the smoke test (a GPU container) runs."""
    if not enabled:
        return {'run': False, 'reason': 'nvidia_container_toolkit_smoke_test is false'}
    if in_container:
        return {'run': False, 'reason': 'the host is a container guest'}
    if not driver_loaded:
        return {'run': False, 'reason': 'the NVIDIA driver is not loaded, so no container can see a GPU'}
    if 'docker' not in engines:
        return {'run': False, 'reason': 'the smoke test runs through Docker, which is not configured here'}
    return {'run': True, 'reason': 'the driver is loaded and Docker is configured'}


def restart_decision(changing_engines, docker, allowed):
    """Whether the role may restart Docker to apply its configuration (value + reason).

    ``changing_engines``: the engines whose files change (each is restarted); ``docker``: the
    running daemon's ``live_restore`` (bool or None) and ``running`` containers (int or None);
    ``allowed``: nvidia_container_toolkit_restart_running_containers. Restarting dockerd without
    live-restore stops every running container, GPU jobs included; containerd's tasks outlive a
    containerd restart (their shims keep running), so only Docker is weighed.
    """
    if 'docker' not in changing_engines:
        return {'ok': True, 'reason': 'Docker is not restarted: its configuration does not change'}
    running = (docker or {}).get('running') or 0
    if not running:
        return {'ok': True, 'reason': 'Docker is restarted; no container runs'}
    if (docker or {}).get('live_restore'):
        return {'ok': True, 'reason': 'Docker is restarted; live-restore is on, so its %d running container(s) keep '
                                      'running' % running}
    if allowed:
        return {'ok': True, 'reason': 'Docker is restarted although live-restore is off: its %d running container(s) '
                                      'are stopped (nvidia_container_toolkit_restart_running_containers is true)'
                                      % running}
    return {'ok': False, 'reason': 'Docker must be restarted to apply the NVIDIA runtime, live-restore is off and %d '
                                   'container(s) run: the restart would stop them, GPU jobs included. Drain the node, '
                                   'or enable live-restore ("live-restore": true in daemon.json, applied by a reload), '
                                   'or set nvidia_container_toolkit_restart_running_containers: true to restart anyway; '
                                   'nothing was changed' % running}


# The systemd units of the toolkit (from 1.18.0) that refresh the CDI spec, each row with its source.
_CDI_GUIDE = ('NVIDIA Container Toolkit, Support for Container Device Interface, "Managing the CDI Refresh Service" '
              '(NVIDIA/cloud-native-docs container-toolkit/cdi-support.md at 52dcb7b): "The `nvidia-cdi-refresh` service '
              'consists of two systemd units: - `%s`: %s"; NVIDIA/nvidia-container-toolkit v1.19.1 packaging/debian/'
              'nvidia-container-toolkit-base.install: "%s /etc/systemd/system/"')
CDI_UNIT_ROWS = tuple({'unit': unit, 'source': _CDI_GUIDE % (unit, what, unit), 'read': '2026-12-07'} for unit, what in (
    ('nvidia-cdi-refresh.path', 'Monitors for changes to the system and triggers the service.'),
    ('nvidia-cdi-refresh.service', 'Generates the CDI specifications for all available devices based on the default '
                                   'configuration and any overrides in the environment file.')))
CDI_UNITS = tuple(row['unit'] for row in CDI_UNIT_ROWS)


def converged(state):
    """``{current, reasons}``: whether a run would change nothing on this host (the converged fast
    path: the role then records its status and stops).

    ``state``, what the resolve read once: ``change`` (a toolkit package missing or at another
    version), ``install_state`` (dpkg_state.install_state: ``install``, ``hold``), ``runtime``
    (``current``: the toolkit's config.toml has the merged settings, root:root 0644), ``files``
    (the engines' files to write: only those not current), ``cdi`` (cdi_decision: ``units``,
    ``generate``), ``units`` ({unit: {enabled, active}} as systemctl reads them), ``problems`` (what
    the verification of the host found wrong). Each reason names what would change.
    """
    reasons = []
    install = state.get('install_state') or {}
    if state.get('change') or install.get('install'):
        reasons.append('the toolkit packages are not all installed at the pinned version')
    elif install.get('hold'):
        reasons.append('not held: %s' % ', '.join(install['hold']))
    if not (state.get('runtime') or {}).get('current'):
        reasons.append('the toolkit\'s config.toml would change')
    for item in state.get('files') or []:
        reasons.append('%s would change (%s)' % (item['dest'], item['engine']))
    cdi = state.get('cdi') or {}
    units = state.get('units') or {}
    for unit in CDI_UNITS:
        seen = units.get(unit) or {}
        if cdi.get('units') and seen.get('enabled') != 'enabled':
            reasons.append('%s is not enabled (%s)' % (unit, seen.get('enabled') or 'not read'))
        if cdi.get('generate') and seen.get('active') != 'active':
            reasons.append('%s is not active (%s)' % (unit, seen.get('active') or 'not read'))
    reasons.extend('verification: %s' % p for p in state.get('problems') or [])
    return {'current': not reasons, 'reasons': reasons}
