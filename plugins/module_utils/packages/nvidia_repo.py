# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the nvidia_driver role, as small pure functions (module nvidia_driver_host).

Each decision is a value plus a reason, tested from YAML case tables
(tests/unit/plugins/module_utils/data/nvidia_repo_*.yml):

- versions: the driver version to install and each package's exact version (``decide``), in
  the package manager's ordering (``pkgversion``: dpkg on apt, RPM on dnf);
- packages: which packages a host gets for a source, flavour and branch, Fabric Manager and
  NVLSM names per distribution and branch (``choose_packages``, ``fabric_manager_packages``);
- the package index: refreshed before the lookup, or only read in check mode (``index_refresh``);
- boot: Secure Boot, signing key checks, DKMS signing configuration, initramfs, the reboot
  decision (``activation``, through reboot.decide);
- verify: what a loaded driver must show (``verify_problems``).

The package-repository library beside it (``pkgversion``, ``apt_sources``, ``dpkg_state``,
``repo_trust``, ``cuda_repos``) is shared with the other roles; the host side of the module is
``driver_resolve.py``. Standard library only (plus python3-apt when present).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import shlex

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions as driver_versions
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import owned_path_error
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import pkgversion
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan import reboot as reboot_utils

URL_RE = re.compile(r'(https?|file)://\S+')
PACKAGE_RE = re.compile(r'[a-z0-9][a-z0-9.+-]+')
MODULE_RE = re.compile(r'[a-z0-9_-]+')
STATUS_FILE_RE = re.compile(r'/\S*[^/\s]')
# NVLSM (the NVLink subnet manager of NVLink 5 systems) talks to the switch trays through
# the InfiniBand user MAD interface: it needs infiniband-diags and the ib_umad module
# (driver_sources.NVLSM_PACKAGE_ROWS and NVLSM_MODULE_ROWS say what that rests on).
NVLSM_EXTRA_PACKAGES = [row['package'] for row in driver_sources.NVLSM_PACKAGE_ROWS]
NVLSM_MODULES = [row['module'] for row in driver_sources.NVLSM_MODULE_ROWS]


# --------------------------------------------------------------------------- versions

# Package ordering is packages/pkgversion.py's (dpkg and RPM); these names stay for the callers.
# Driver versions and branches are parsed by core/versions.py (driver_version, driver_branch) only.
split_version = pkgversion.split_version
compare_versions = pkgversion.dpkg_compare
sort_desc = pkgversion.sort_desc


def upstream_of(version):
    """The driver version inside a package version: 535.261.03 of 535.261.03-1~deb12u1 ('' when
    ``version`` is no driver version)."""
    parsed = driver_versions.driver_version_or_none(version)
    return parsed['upstream'] if parsed else ''


def branch_of(version):
    """The driver branch of a (package) version: 535 of 1:535.261.03-1~deb12u1; None when it is none."""
    return driver_versions.branch(version)


def summarise(versions, versioned, branch, backend='apt'):
    """For the packages that carry the driver version: the driver versions of ``branch`` that
    every one has (newest first, in the ordering of ``backend``), and per package the newest
    package version of each."""
    branch = int(branch) if branch not in (None, '') else None
    full = {}
    for name, found in versions.items():
        per = {}
        for version in sort_desc(found, backend):
            if upstream_of(version):
                per.setdefault(upstream_of(version), version)
        full[name] = per
    branches = set()
    for name in versioned:
        branches.update(b for b in (branch_of(v) for v in versions.get(name, [])) if b is not None)
    common = None
    for name in versioned:
        ups = []
        for version in sort_desc(versions.get(name, []), backend):
            if branch_of(version) == branch and upstream_of(version) not in ups:
                ups.append(upstream_of(version))
        common = ups if common is None else [u for u in common if u in ups]
    return {'full': full, 'branches': sorted(branches), 'common': common or [],
            'missing': sorted(name for name in versions if not versions[name])}


# --------------------------------------------------------------------------- inputs

def input_problems(inp):
    """What the argument specification cannot check, each problem naming its variable."""
    problems = []

    def url_ok(name, allow_empty=True):
        value = inp.get(name) or ''
        if (allow_empty and value == '') or URL_RE.fullmatch(value):
            return
        problems.append('nvidia_driver_%s must be an http(s):// or file:// URL%s, got "%s"'
                        % (name, ' (or "")' if allow_empty else '', value))

    version = inp.get('version') or ''
    parsed = driver_versions.driver_version_or_none(version)
    if version and parsed is None:
        problems.append('nvidia_driver_version must be a driver version such as 580.95.05 or a package '
                        'version such as 580.95.05-1, got %r' % (version,))
    raw_branch = inp.get('branch')
    branch = driver_versions.driver_branch_or_none(raw_branch)
    if raw_branch not in (None, '') and branch is None:
        problems.append('nvidia_driver_branch must be a branch number such as 580 or "R580", got %r'
                        % (raw_branch,))
    elif parsed is not None and branch is not None and parsed['branch'] != branch:
        problems.append('nvidia_driver_version %s belongs to branch %s, not to nvidia_driver_branch %s: set one '
                        'of them to match the other (or leave the branch unset)'
                        % (version, parsed['branch'], raw_branch))
    power = inp.get('power_limit_watts')
    if power is not None and not 50 <= power <= 2000:
        problems.append('nvidia_driver_power_limit_watts must be between 50 and 2000 W (or null), got %s' % power)
    clocks = dict((k, v) for k, v in (inp.get('application_clocks') or {}).items() if v is not None)
    if clocks and not (clocks.get('memory_mhz', 0) > 0 and clocks.get('graphics_mhz', 0) > 0):
        problems.append('nvidia_driver_application_clocks needs both memory_mhz and graphics_mhz (positive MHz), or {}')
    keys = dict((k, v) for k, v in (inp.get('secure_boot_keys') or {}).items() if v)
    if keys and not (keys.get('private_key') and keys.get('certificate')):
        problems.append('nvidia_driver_secure_boot_keys needs both private_key and certificate (paths on the host), '
                        'or {}')
    # The CUDA repository and its key: gpuops_cuda_repo_*, checked by the filter cuda_repository.
    url_ok('debian_mirror')
    # The keyring that signs the Debian mirror: a file path written into the Signed-By line.
    keyring_error = owned_path_error(inp.get('debian_keyring'), 'nvidia_driver_debian_keyring')
    if keyring_error or len(inp.get('debian_keyring') or '') > 1024:
        problems.append(keyring_error or 'nvidia_driver_debian_keyring: a path of at most 1024 characters')
    timeout = inp.get('reboot_timeout')
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 60 <= timeout <= 86400:
        problems.append('nvidia_driver_reboot_timeout must be between 60 and 86400 seconds, got %s' % timeout)
    status = inp.get('status_file') or ''
    if not STATUS_FILE_RE.fullmatch(status):
        problems.append('nvidia_driver_status_file must be an absolute file path, got %s' % status)
    problems.extend('nvidia_driver_modules_load: "%s" is not a kernel module name' % m
                    for m in inp.get('modules_load') or [] if not MODULE_RE.fullmatch(m))
    problems.extend('nvidia_driver_packages_extra: "%s" is not a package name' % p
                    for p in inp.get('packages_extra') or [] if not PACKAGE_RE.fullmatch(p))
    return problems


# --------------------------------------------------------------------------- packages

def fabric_manager_packages(distribution, source, branch):
    """Fabric Manager package names for a distribution, source and branch.

    NVIDIA's CUDA repositories (apt and dnf) ship ``nvidia-fabricmanager`` from R580 on (the
    ``nvidia-fabricmanager-580`` name is only a virtual package there), the branch-suffixed
    ``nvidia-fabricmanager-<branch>`` below 580 (apt) and ``nvidia-fabric-manager`` in the EL
    module streams below 580. Ubuntu's own archive keeps the suffix on every branch (source
    package fabric-manager-<branch> builds nvidia-fabricmanager-<branch>, R580 included).
    """
    number = driver_versions.driver_branch_or_none(branch) or 0
    if source == 'distro' and distribution == 'Ubuntu':
        return {'value': ['nvidia-fabricmanager-%s' % branch],
                'reason': "Ubuntu's archive names Fabric Manager nvidia-fabricmanager-<branch>"}
    if number >= 580:
        return {'value': ['nvidia-fabricmanager'],
                'reason': 'from R580 NVIDIA ships nvidia-fabricmanager (nvidia-fabricmanager-%s is only virtual)'
                          % branch}
    if distribution in ('RedHat', 'Rocky', 'AlmaLinux', 'CentOS') or source == 'dnf':
        return {'value': ['nvidia-fabric-manager'],
                'reason': 'below R580 the EL module streams ship nvidia-fabric-manager'}
    return {'value': ['nvidia-fabricmanager-%s' % branch],
            'reason': 'below R580 the CUDA repository ships nvidia-fabricmanager-<branch>'}


def choose_packages(pkgsets, inp, plan, facts):
    """Which packages the host gets, and from which repository.

    ``pkgsets``: the platform's package table (vars); ``inp``: the converted inputs (source,
    packages_extra, cuda_repo_for_fabric_manager); ``plan``: the gpu_plan decisions;
    ``facts``: distribution, distro_branch, branch, flavour.
    """
    source = inp['source']
    branch = facts['branch']
    flavour = facts['flavour']
    problems = []
    if source not in pkgsets:
        return {'problems': ['nvidia_driver_source: %s is not available on %s (it ships no NVIDIA driver); use one '
                             'of: %s' % (source, facts['distribution'], ', '.join(sorted(pkgsets)))]}
    pkgset = pkgsets[source]
    distro_branch = facts.get('distro_branch')
    which = 'current' if source != 'distro' or distro_branch in (None, branch) else 'other'
    versioned = [p.replace('{branch}', branch) for p in pkgset[which][flavour]]
    if not versioned:
        problems.append('Debian packages the open kernel modules (nvidia-open-kernel-dkms) only for its own branch '
                        '%s; for branch %s set nvidia_driver_kernel_modules: proprietary (where the GPUs allow it), '
                        'nvidia_driver_branch: %s, or nvidia_driver_source: cuda_repo'
                        % (distro_branch, branch, distro_branch))
    fm_required = plan['fabric_manager']['required']
    nvlsm_required = plan['nvlink_subnet_manager']['required']
    fm_from_cuda = bool((fm_required or nvlsm_required) and source == 'distro'
                        and not pkgset.get('fabric_manager_available', True))
    fm_source = 'cuda_repo' if fm_from_cuda else source
    if fm_from_cuda and not inp.get('cuda_repo_for_fabric_manager'):
        problems.append('%s ships no Fabric Manager, which this host needs (%s); set '
                        'nvidia_driver_cuda_repo_for_fabric_manager: true (the CUDA repository serves Fabric Manager '
                        'only) or nvidia_driver_source: cuda_repo'
                        % (facts['distribution'], plan['fabric_manager']['reason']))
    fm = fabric_manager_packages(facts['distribution'], fm_source, branch) if fm_required else \
        {'value': [], 'reason': 'not needed: %s' % plan['fabric_manager']['reason']}
    nvlsm = ['nvlsm'] if nvlsm_required else []
    nvlsm_deps = list(NVLSM_EXTRA_PACKAGES) if nvlsm_required else []
    persistenced = list(pkgset.get('persistenced') or []) if plan['persistence']['enabled'] else []
    extra = list(inp.get('packages_extra') or [])
    other = []
    for name in persistenced + ([] if fm_from_cuda else nvlsm) + nvlsm_deps + extra:
        if name not in other and name not in versioned:
            other.append(name)
    modules_load = list(inp.get('modules_load') or [])
    modules_load += [m for m in (NVLSM_MODULES if nvlsm_required else []) if m not in modules_load]
    return {
        'problems': problems, 'versioned': versioned, 'persistenced': persistenced,
        'fabric_manager': fm['value'], 'fabric_manager_reason': fm['reason'],
        'nvlsm': nvlsm, 'nvlsm_deps': nvlsm_deps, 'other': other, 'extra': extra,
        'fm_from_cuda': fm_from_cuda, 'cuda_needed': source == 'cuda_repo' or fm_from_cuda,
        'modules_load': modules_load,
    }


def index_status(decision, valid=3600):
    """What the status file keeps of ``index_refresh``'s decision: whether the versions read may be
    stale, not whether this run refreshed the index (a run an hour later refreshes it again and
    changes nothing else: the file must stay as it is)."""
    if decision is None:
        return None
    if decision.get('stale'):
        return {'stale': True, 'reason': decision['reason']}
    return {'stale': False, 'reason': 'the package index is refreshed before it is read when older than %d s' % valid}


def index_refresh(age, valid, check_mode):
    """Whether the host's package index is refreshed before the headers are looked up there.

    ``age``: seconds since the last update (None: never). Check mode changes nothing, so an old
    index is only reported: the versions read from it may be stale.
    """
    # The reason names the threshold, not the age: it goes into the status file, which a run
    # that changes nothing must leave as it is.
    if age is not None and age < valid:
        return {'refresh': False, 'stale': False,
                'reason': 'the package index is younger than %d s' % valid}
    what = 'the package index was never updated' if age is None else \
        'the package index is older than %d s' % valid
    if check_mode:
        return {'refresh': False, 'stale': True,
                'reason': '%s; check mode does not refresh it, so the versions read from it may be stale' % what}
    return {'refresh': True, 'stale': False, 'reason': '%s: refreshed (apt-get update)' % what}


# --------------------------------------------------------------------------- versions to install

def _full_version(summary, name, target, installed):
    per = summary['full'].get(name, {})
    if target in per:
        return per[target]
    have = installed.get(name, {}).get('version')
    if have and upstream_of(have) == target:
        return have
    return None


def decide(request, versions, installed):
    """The driver version to install and every package's exact version, or the problems.

    ``request``: branch, version (the user's, may be ""), upgrade, versioned (packages that
    carry the driver version, the kernel-module package first), fabric_manager, nvlsm,
    required, repo_text / fm_repo_text, backend (``apt``: dpkg ordering, ``dnf``: RPM ordering).
    ``versions``: {package: [versions]};
    ``installed``: {package: {version, held}}.
    """
    branch = str(request.get('branch') or '')
    # the user's version without its epoch: 580.95.05, or the package version 580.95.05-1
    asked = driver_versions.driver_version_or_none(request.get('version'))
    wanted = '' if asked is None else asked['upstream'] + ('-' + asked['revision'] if asked['revision'] else '')
    versioned = list(request.get('versioned') or [])
    fm = list(request.get('fabric_manager') or [])
    repo = request.get('repo_text') or 'the repository'
    fm_repo = request.get('fm_repo_text') or repo
    backend = request.get('backend') or 'apt'
    summary = summarise(dict((n, versions.get(n, [])) for n in versioned), versioned, branch, backend)
    fm_summary = summarise(dict((n, versions.get(n, [])) for n in fm), fm, branch, backend)
    first = versioned[0] if versioned else None
    have = installed.get(first, {}).get('version') if first else None
    have_up = upstream_of(have) if have else ''
    if wanted:
        target = asked['upstream']
    elif have_up and str(branch_of(have_up)) == branch and not request.get('upgrade'):
        target = have_up
    else:
        target = summary['common'][0] if summary['common'] else ''
    keep = bool(target) and target == have_up
    problems = []
    missing = [n for n in list(request.get('required') or []) + versioned if not versions.get(n)]
    if missing:
        problems.append('package(s) %s not found in %s (branch %s). Check nvidia_driver_branch, '
                        'nvidia_driver_kernel_modules and nvidia_driver_source'
                        % (', '.join(sorted(set(missing))), repo, branch))
    elif not keep and (not branch.isdigit() or int(branch) not in summary['branches']):
        problems.append('nvidia_driver_branch %s: %s has no driver of this branch; branches there: %s'
                        % (branch, repo, ', '.join(str(b) for b in summary['branches']) or 'none'))
    elif not keep and target not in summary['common']:
        per = '; '.join('%s: %s' % (n, ' '.join(sorted(summary['full'].get(n, {}), reverse=True)) or 'none')
                        for n in versioned)
        what = 'nvidia_driver_version %s' % request.get('version') if wanted else 'branch %s' % branch
        problems.append('%s: %s has no version that every one of %s carries; versions of branch %s there: %s '
                        '(per package: %s)' % (what, repo, ', '.join(versioned), branch,
                                               ', '.join(summary['common']) or 'none', per))
    elif '-' in wanted and not keep and summary['full'].get(first, {}).get(target) != wanted:
        problems.append('nvidia_driver_version %s: %s has %s %s for driver %s; give the driver version alone '
                        '(%s) or that package version' % (request.get('version'), repo, first,
                                                          summary['full'].get(first, {}).get(target, 'none'),
                                                          target, target))
    pinned = {}
    if not problems:
        for name in versioned:
            pinned[name] = wanted if ('-' in wanted and not keep) else _full_version(summary, name, target, installed)
        for name in fm:
            exact = _full_version(fm_summary, name, target, installed)
            if not exact:
                problems.append('this host needs Fabric Manager at exactly the driver version %s, but %s has %s in '
                                'versions %s. Set nvidia_driver_version to a version both the driver and Fabric '
                                'Manager carry' % (target, fm_repo, name,
                                                   ', '.join(sorted(fm_summary['full'].get(name, {}), reverse=True))
                                                   or 'none'))
            pinned[name] = exact
        lacking = [n for n in request.get('nvlsm') or [] if not versions.get(n)]
        if lacking:
            problems.append('this host needs the NVLink subnet manager, but %s lacks %s' % (fm_repo, ', '.join(lacking)))
    change = bool(pinned) and any(installed.get(n, {}).get('version') != v for n, v in pinned.items())
    return {'target': target, 'installed_version': have_up, 'keep': keep, 'pinned': pinned, 'change': change,
            'held': sorted(n for n in pinned if installed.get(n, {}).get('held')),
            'branches': summary['branches'], 'common': summary['common'],
            'carried': list(summary['full'].get(first, {})) if first else [], 'problems': problems}


def install_names(pinned, other, backend):
    """name=version (apt) or name-version (dnf) of the pinned packages, then the others by name."""
    sep = '=' if backend == 'apt' else '-'
    return ['%s%s%s' % (n, sep, v) for n, v in sorted(pinned.items())] + list(other)


# --------------------------------------------------------------------------- boot

def secure_boot(load, load_reason, efi, mokutil, mokutil_path, sb_state_text):
    """Secure Boot state: not_checked (kernel not this host's), not_efi, unknown, enabled, disabled."""
    if not load:
        return {'state': 'not_checked', 'reason': load_reason}
    if not efi:
        return {'state': 'not_efi', 'reason': 'no EFI firmware (/sys/firmware/efi): no Secure Boot'}
    if not mokutil:
        return {'state': 'unknown', 'reason': '%s is not installed: Secure Boot state unknown' % mokutil_path}
    state = 'enabled' if 'SecureBoot enabled' in (sb_state_text or '') else 'disabled'
    return {'state': state, 'reason': 'mokutil --sb-state: %s' % (sb_state_text or '').strip()}


def signing_problems(keys, key_stat, cert_stat, sb_state):
    """MOK signing: the pair exists, the private key is root's and mode 0600; Secure Boot needs it."""
    private, cert = (keys or {}).get('private_key'), (keys or {}).get('certificate')
    problems = []
    if sb_state == 'enabled' and not private:
        problems.append('Secure Boot is enabled: the kernel refuses unsigned NVIDIA modules. Set '
                        'nvidia_driver_secure_boot_keys to a MOK key pair enrolled with mokutil --import '
                        '({private_key: /path/MOK.priv, certificate: /path/MOK.der}), or disable Secure Boot')
    if not private:
        return problems
    for path, stat in ((private, key_stat), (cert, cert_stat)):
        if not stat or not stat.get('exists'):
            problems.append('nvidia_driver_secure_boot_keys: %s does not exist on the host' % path)
    if key_stat and key_stat.get('exists') and (key_stat.get('uid') != 0 or key_stat.get('mode') != '0600'):
        problems.append('nvidia_driver_secure_boot_keys: the private key %s must be owned by root with mode 0600 '
                        '(it is uid %s, mode %s): chown root:root and chmod 0600 it'
                        % (private, key_stat.get('uid'), key_stat.get('mode')))
    return problems


def dkms_signing_conf(keys, header):
    """The DKMS framework.conf.d file (a shell sources it): every path quoted with shlex.quote."""
    if not (keys or {}).get('private_key'):
        return ''
    return ('%s\n# gpuops.dlserver.nvidia_driver: Secure Boot signing key pair (nvidia_driver_secure_boot_keys).\n'
            'mok_signing_key=%s\nmok_certificate=%s\n'
            % (header, shlex.quote(keys['private_key']), shlex.quote(keys['certificate'])))


def initramfs(load, load_reason, tool, tool_exists):
    if not load:
        return {'rebuild': False, 'reason': load_reason}
    if tool_exists:
        return {'rebuild': True, 'reason': 'rebuilt with %s when the nouveau blacklist changes' % tool}
    return {'rebuild': False, 'reason': '%s is not installed: no initramfs to rebuild' % tool}


def activation(target, load, load_reason, loaded, loaded_version, nouveau_loaded, reboot_allowed, timeout):
    """How the installed driver ``target`` gets loaded, and the reboot decision (reboot.decide).

    needed: another driver version or nouveau holds the GPUs. ``load`` (the plan's
    load_modules) says whether the kernel is this host's; a reboot the user defers is
    deferred even where it could not happen (reboot.decide).
    """
    if loaded and loaded_version == target:
        why = 'driver %s is loaded' % target
        needed = False
    elif loaded or nouveau_loaded:
        why = '%s: driver %s needs a reboot' % ('driver %s is loaded' % loaded_version if loaded
                                                else 'nouveau is loaded', target)
        needed = True
    else:
        why = 'no NVIDIA driver or nouveau is loaded'
        needed = False
    decision = reboot_utils.decide(needed, why, reboot_allowed, 'nvidia_driver_reboot', host_owned=load,
                                   not_owned_reason=load_reason, timeout=timeout)
    if not load:
        action, reason = 'not_applicable', load_reason
    elif needed:
        action, reason = decision['action'], decision['reason']
    elif loaded:
        action, reason = 'none', why
    else:
        action, reason = 'load', why + ': the modules are loaded right after the install'
    return {'action': action, 'reason': reason, 'services_start': action in ('none', 'load', 'reboot'),
            'reboot': decision}


# --------------------------------------------------------------------------- verify

def verify_problems(gpu, module_version, target, flavour):
    """What the loaded driver must show: the pinned version in NVML and the kernel module, the
    plan's flavour, every PCI GPU seen by NVML."""
    driver = gpu.get('driver') or {}
    answered = gpu.get('source') in ('nvml', 'nvidia-smi')
    unseen = []
    for item in gpu.get('gpus') or []:
        if ('uuid' not in item or 'error' in item) and item.get('pci_bus_id') not in unseen:
            unseen.append(item.get('pci_bus_id'))
    problems = []
    if not driver.get('loaded'):
        problems.append('the nvidia kernel module is not loaded')
    elif not answered:
        problems.append('neither NVML nor nvidia-smi answered (%s): NVML and the kernel module disagree or the '
                        'driver is broken' % '; '.join(d.get('reason', '') for d in gpu.get('depths_tried') or []
                                                       if not d.get('answered')))
    if answered and driver.get('version') != target:
        problems.append('NVML reports driver %s, the pinned version is %s' % (driver.get('version'), target))
    if module_version and module_version != target:
        problems.append('the kernel module is version %s, the pinned version is %s' % (module_version, target))
    flavor = driver.get('kernel_module_flavor')
    if flavor not in (None, flavour):
        problems.append('the %s kernel modules are loaded, the plan wants the %s ones' % (flavor, flavour))
    if answered and unseen:
        problems.append('NVML does not see GPU(s) %s that PCI shows (fallen off the bus, Xid error, or not '
                        'initialised)' % ', '.join(unseen))
    return {'ran': True, 'source': gpu.get('source'), 'loaded': bool(driver.get('loaded')),
            'nvml_version': driver.get('version') if answered else None, 'kernel_module_version': module_version,
            'kernel_module_flavor': flavor, 'cuda_version': driver.get('cuda_version'),
            'pci_gpus': gpu.get('gpu_count'), 'gpus_not_seen': unseen, 'problems': problems}


def verify_skip_reason(action, action_reason, check_mode, change):
    if action == 'not_applicable':
        return 'the kernel module is not loaded here: ' + action_reason
    if action in ('deferred', 'skipped'):
        return 'waiting for the reboot: ' + action_reason
    if check_mode and change:
        return 'check mode: the driver change is not applied'
    return ''


# --------------------------------------------------------------------------- converged fast path

REBOOT_MARKER_LINE = 'nvidia_driver:'
ENABLED_STATES = ('enabled',)
DISABLED_STATES = ('disabled', 'masked', 'masked-runtime')
RUNNING_STATES = ('active', 'activating', 'reloading', 'deactivating')


def service_wants(plan, status, names):
    """What the configure step wants of each service: [{name, enabled, started}] (``enabled``
    False: stopped and disabled where the unit exists). ``status`` is the resolve's record
    (persistence.started, fabric_manager.started); ``names``: {persistenced, fabric_manager}."""
    wants = [{'name': names['persistenced'], 'enabled': bool(plan['persistence']['enabled']),
              'started': bool(plan['persistence']['enabled'] and status['persistence']['started'])}]
    if plan['fabric_manager']['required']:
        wants.append({'name': names['fabric_manager'], 'enabled': True,
                      'started': bool(status['fabric_manager']['started'])})
    return wants


def converged(state, marker_text, unit_states, wants, checks=None):
    """Whether the repository, install, configure and verify phases would change nothing.

    ``state``: the resolve's result with repo_files and config_files marked ``current``;
    ``marker_text``: the reboot marker's text ('' when absent); ``unit_states``: {unit.service:
    {LoadState, UnitFileState, ActiveState}} (systemctl show); ``wants``: service_wants();
    ``checks``: {'after': problems, 'verify': problems} of the after-install and verification
    reads made for the fast path (None: not made). Returns {converged, reasons}.
    """
    reasons = []
    if state.get('backend') != 'apt':
        reasons.append('the dnf backend is not fast-pathed (module streams and version locks are read by the tasks)')
    for entry in state.get('repo_files') or []:
        if not entry.get('current'):
            reasons.append('%s %s' % (entry['dest'], 'differs' if entry.get('content') else 'to be removed'))
    for key, entry in sorted((state.get('config_files') or {}).items()):
        if entry.get('dest') and not entry.get('current'):
            reasons.append('%s (%s) %s' % (entry['dest'], key, 'differs' if entry.get('content') else 'to be removed'))
    inst = state.get('install_state') or {}
    if state.get('change'):
        reasons.append('the driver version changes to %s' % state.get('target'))
    if inst.get('install'):
        reasons.append('packages to install: %s' % ', '.join(inst.get('missing') or state.get('install') or []))
    if inst.get('hold'):
        reasons.append('not held: %s' % ', '.join(inst['hold']))
    if state.get('headers_install'):
        reasons.append('kernel headers to install: %s' % ', '.join(state['headers_install']))
    act = state.get('activation') or {}
    if act.get('action') == 'load':
        reasons.append('the kernel modules are to be loaded')
    if (act.get('reboot') or {}).get('needed'):
        reasons.append('a reboot is needed (%s)' % act.get('reason'))
    if any(line.startswith(REBOOT_MARKER_LINE) for line in (marker_text or '').splitlines()):
        reasons.append('the reboot marker still carries a line of nvidia_driver')
    for want in wants:
        unit = want['name'] + '.service'
        found = (unit_states or {}).get(unit) or {}
        file_state, active = found.get('UnitFileState') or 'unknown', found.get('ActiveState') or 'unknown'
        if want['enabled']:
            if found.get('LoadState') != 'loaded' or file_state not in ENABLED_STATES:
                reasons.append('%s is not enabled (%s)' % (unit, file_state))
            if want['started'] and active != 'active':
                reasons.append('%s is not active (%s)' % (unit, active))
        elif found.get('LoadState') != 'not-found' and (
                not found or file_state not in DISABLED_STATES or active in RUNNING_STATES):
            reasons.append('%s is to be stopped and disabled (%s, %s)' % (unit, file_state, active))
    if checks is not None:
        reasons.extend(checks.get('after') or [])
        reasons.extend(checks.get('verify') or [])
    return {'converged': not reasons, 'reasons': reasons}
