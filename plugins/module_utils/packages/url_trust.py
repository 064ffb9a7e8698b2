# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every URL and key variable of the collection, classified by what it fetches (issue 37).

ONE table (``VARIABLES``) says, per role variable that holds a URL, a checksum, a key fingerprint
or a local key file: what it is (``KINDS``: an apt repository, a repository key, a binary, a
checksum list, a Python package index, an installer, a Helm chart repository, a manifest, an
endpoint that is configured and never fetched, a checksum, a fingerprint, a local file), which
schemes the tool that fetches it accepts, and what pins what arrives when the scheme itself does
not verify it (plain ``http://``):

- an apt repository (``http://``, ``https://``, ``file:``) is verified by its key, pinned by
  fingerprint: any of the three is fine;
- a repository key over plain http is verified by a pinned fingerprint (or sha256): with neither
  it pins nothing, and no opt-in accepts it (the role's own check on the host refuses it too);
- a binary or installer over plain http needs its sha256 from the inventory, or a checksum list
  fetched over a verified scheme; a checksum list over plain http pins nothing;
- a Helm chart repository over plain http pins nothing (Helm verifies no provenance here);
- a Python package index over plain http is used only where ``python_stack_insecure_index_hosts``
  names its host (python_stack's own opt-in, kept);
- everything else fetched over plain http with nothing pinned is accepted only where the host is
  named in ``gpuops_insecure_http_hosts`` (the documented opt-in for an internal mirror on plain
  HTTP: it names the risk, accepting unverified downloads from those hosts).

Key identities are checked wherever they are given (every host, whether or not a role there uses
the repository): a fingerprint is the full 40 hex digits (a short or long key id anyone can
collide, or an ``0x``-prefixed id, is refused); a checksum is sha256 (``md5:``, ``sha1:``,
``sha512:`` and bare digests of their length are named as such).

``problems(role, inputs, insecure_hosts)`` -> problems naming the variable, the value's problem
and what would be accepted; the actions host_plan (every role, every host, and common's
``cuda_repo`` entry point) and role_inputs run it. Pure, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# kind -> (what it is, the schemes its fetching tool can use, whether plain http needs a pin)
KINDS = {
    'apt_repository': ('an apt repository', ('https', 'http', 'file'), False),
    'key': ('a repository key', ('https', 'http', 'file'), True),
    'binary': ('a binary download', ('https', 'http', 'file'), True),
    'checksum_list': ('a checksum list', ('https', 'http', 'file'), True),
    'python_index': ('a Python package index', ('https', 'http', 'file'), True),
    'installer': ('an installer download', ('https', 'http', 'file'), True),
    'chart_repository': ('a Helm chart repository', ('https', 'http'), True),
    'manifest': ('a Kubernetes manifest (URL or a file on the controller)', ('https', 'http'), True),
    'endpoint': ('an address written into a configuration (never fetched by the collection)', ('https', 'http'),
                 False),
    'mirror_base': ('the base URL of the collection\'s artifact mirror', ('https', 'http', 'file'), False),
    'sha256': ('a sha256 checksum', (), False),
    'fingerprint': ('an OpenPGP key fingerprint', (), False),
    'local_file': ('a file on the host (never fetched)', (), False),
    'opt_in': ('a list of hosts trusted over plain HTTP (an opt-in)', (), False),
    'image': ('a container image or registry (an image reference, not a URL)', (), False),
}


def _uses_conda(inputs):
    """Whether an environment of python_stack uses the conda backend (the installer is fetched)."""
    default = inputs.get('backend')
    return any(isinstance(e, dict) and (e.get('backend') or default) == 'conda'
               and e.get('state', 'present') == 'present' for e in inputs.get('environments') or [])


# variable -> row. kind: KINDS; empty: what '' means ('default': a default applies, 'unset':
# nothing is fetched, 'refused': a value is needed); pins: variables whose value pins what arrives
# over plain http; form (sha256): 'bare' (64 hex), 'prefixed' (sha256:<hex>) or 'either';
# used: the inputs (short names) under which the role fetches it (None: always); opt_in: the
# variable naming trusted plain-http hosts for this kind; nested: the dict keys of list elements.
VARIABLES = {
    # common, entry point gpu
    'gpuops_mirror_url': {'kind': 'mirror_base', 'empty': 'unset'},
    'gpuops_nvml_index_url': {'kind': 'python_index', 'empty': 'default', 'pins': ['gpuops_nvml_sha256'],
                              'note': 'pip installs with --require-hashes: the wheel is pinned by gpuops_nvml_sha256'},
    'gpuops_nvml_sha256': {'kind': 'sha256', 'form': 'bare'},
    'gpuops_insecure_http_hosts': {'kind': 'opt_in'},
    # common, entry point cuda_repo (one value, or one per distribution)
    'gpuops_cuda_repo_base_url': {'kind': 'apt_repository', 'empty': 'default'},
    'gpuops_cuda_repo_url': {'kind': 'apt_repository', 'empty': 'default'},
    'gpuops_cuda_repo_key_url': {'kind': 'key', 'empty': 'default', 'per_distribution': True,
                                 'pins': ['gpuops_cuda_repo_key_fingerprint', 'gpuops_cuda_repo_key_checksum'],
                                 'table_pinned': True},
    'gpuops_cuda_repo_key_checksum': {'kind': 'sha256', 'form': 'either', 'per_distribution': True},
    'gpuops_cuda_repo_key_fingerprint': {'kind': 'fingerprint', 'per_distribution': True},
    # dcgm_exporter
    'dcgm_exporter_image_registry': {'kind': 'image'},
    # node_exporter
    'node_exporter_binary_url': {'kind': 'binary', 'empty': 'refused', 'used': {'source': 'release'},
                                 'pins': ['node_exporter_sha256'], 'list_var': 'node_exporter_checksums_url'},
    'node_exporter_checksums_url': {'kind': 'checksum_list', 'empty': 'refused', 'used': {'source': 'release'},
                                    'pins': ['node_exporter_sha256']},
    'node_exporter_sha256': {'kind': 'sha256', 'form': 'bare'},
    'node_exporter_tls_key_file': {'kind': 'local_file'},
    # nvidia_container_toolkit
    'nvidia_container_toolkit_repo_url': {'kind': 'apt_repository', 'empty': 'refused'},
    'nvidia_container_toolkit_keyring_url': {'kind': 'key', 'empty': 'refused',
                                             'pins': ['nvidia_container_toolkit_keyring_fingerprint',
                                                      'nvidia_container_toolkit_keyring_checksum']},
    'nvidia_container_toolkit_keyring_checksum': {'kind': 'sha256', 'form': 'either'},
    'nvidia_container_toolkit_keyring_fingerprint': {'kind': 'fingerprint'},
    'nvidia_container_toolkit_smoke_test_image': {'kind': 'image'},
    # nvidia_driver: Debian's archive, verified by the archive keyring on the host
    'nvidia_driver_debian_mirror': {'kind': 'apt_repository', 'empty': 'default'},
    'nvidia_driver_debian_keyring': {'kind': 'local_file'},
    'nvidia_driver_secure_boot_keys': {'kind': 'local_file'},
    # prometheus
    'prometheus_grafana_datasource_url': {'kind': 'endpoint', 'empty': 'unset'},
    # python_stack
    'python_stack_pip_index_url': {'kind': 'python_index', 'empty': 'default',
                                   'opt_in': 'python_stack_insecure_index_hosts'},
    'python_stack_pytorch_index_url': {'kind': 'python_index', 'empty': 'unset',
                                       'opt_in': 'python_stack_insecure_index_hosts'},
    'python_stack_nvidia_index_url': {'kind': 'python_index', 'empty': 'unset',
                                      'opt_in': 'python_stack_insecure_index_hosts'},
    'python_stack_insecure_index_hosts': {'kind': 'opt_in'},
    'python_stack_conda_installer_url': {'kind': 'installer', 'empty': 'refused', 'used': _uses_conda,
                                         'pins': ['python_stack_conda_installer_sha256']},
    'python_stack_conda_installer_sha256': {'kind': 'sha256', 'form': 'bare'},
    'python_stack_uv_sha256': {'kind': 'sha256', 'form': 'bare'},
    'python_stack_environments': {'kind': 'python_index', 'nested': ['index_url', 'extra_index_urls'],
                                  'empty': 'default', 'opt_in': 'python_stack_insecure_index_hosts'},
    # volcano
    'volcano_chart_repo_url': {'kind': 'chart_repository', 'empty': 'unset', 'used': {'install_method': 'helm'}},
    'volcano_manifest_src': {'kind': 'manifest', 'empty': 'unset', 'used': {'install_method': 'manifest'},
                             'pins': ['volcano_manifest_checksum'], 'local_path': True},
    'volcano_manifest_checksum': {'kind': 'sha256', 'form': 'prefixed'},
    'volcano_device_plugin_image': {'kind': 'image'},
    'volcano_smoke_image': {'kind': 'image'},
}

# Names that look like a URL or key variable: a unit test fails for every such variable of every
# argument spec that VARIABLES does not classify (tests/unit/plugins/module_utils/test_url_trust.py).
URLISH = re.compile(r'.*(_url|_urls|_key|_keys|_keyring|_keyring_url|_checksum|_checksums|_fingerprint|_sha256'
                    r'|_mirror|_index_hosts|_insecure_http_hosts|_registry|_src|_key_file|_image)\Z')

_URL = re.compile(r'(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<host>[^/\s?#]*)(?P<rest>[^\s]*)')
_HOST = re.compile(r'[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?')
_HEX = re.compile(r'[0-9a-fA-F]+')
_ALGORITHMS = {32: 'md5', 40: 'sha1', 56: 'sha224', 96: 'sha384', 128: 'sha512'}
_SHA256_FORMS = {'bare': '64 hex digits', 'prefixed': 'sha256:<64 hex digits>',
                 'either': 'sha256:<64 hex digits> (or the 64 hex digits)'}


def _shown(value):
    text = value if len(value) <= 80 else value[:77] + '...'
    return repr(text)


def url_host(url):
    """The host[:port] of a URL ('' for none)."""
    match = _URL.fullmatch(url or '')
    return match.group('host').rsplit('@', 1)[-1] if match else ''


def scheme_problem(name, value, row):
    """The problem of ``value``'s form for a URL variable of ``row``'s kind, or None."""
    what, schemes, dummy = KINDS[row['kind']]
    accepted = ', '.join('%s://' % s for s in schemes)
    if not isinstance(value, str):
        return '%s must be a URL (%s) string, got %r' % (name, accepted, value)
    if any(ord(ch) < 32 or ch == '\x7f' for ch in value) or re.search(r'\s', value):
        return '%s must be one URL without blanks, newlines or control characters (%s), got %s' % (
            name, what, _shown(value))
    match = _URL.fullmatch(value)
    if match is None:
        if row.get('local_path') and value.startswith('/'):
            return None
        return '%s has no scheme (%s): %s; give a full URL, %s%s' % (
            name, what, _shown(value), accepted, ' or an absolute path on the controller' if row.get('local_path')
            else '')
    scheme = match.group('scheme').lower()
    if scheme not in schemes:
        return '%s: %s:// cannot be used for %s (the tool that fetches it speaks %s), got %s' % (
            name, scheme, what, accepted, _shown(value))
    if scheme != 'file' and not _HOST.fullmatch(url_host(value)):
        return '%s: %s names no host (%s), got %s' % (name, what, accepted, _shown(value))
    if scheme == 'file' and not match.group('rest').startswith('/') and match.group('host'):
        return '%s: a file: URL names a path on the host, file:///path, got %s' % (name, _shown(value))
    return None


def fingerprint_problem(name, value):
    """The problem of an OpenPGP fingerprint value, or None ('' is fine: the default applies)."""
    if value in (None, ''):
        return None
    if not isinstance(value, str):
        return '%s must be a 40-hex-digit OpenPGP fingerprint, got %r' % (name, value)
    compact = re.sub(r'\s', '', value)  # as repo_trust.clean_fingerprint
    if compact[:2].lower() == '0x':
        return ('%s: %s is an 0x-prefixed key id; give the full fingerprint, 40 hex digits without 0x '
                '(gpg --show-keys --with-fingerprint prints it)' % (name, _shown(value)))
    if _HEX.fullmatch(compact) and len(compact) in (8, 16):
        return ('%s: %s is a %s key id, which anyone can give a key of their own; give the full fingerprint, '
                '40 hex digits' % (name, _shown(value), 'short (8-hex-digit)' if len(compact) == 8
                                   else 'long (16-hex-digit)'))
    if not (_HEX.fullmatch(compact) and len(compact) == 40):
        return '%s must be a 40-hex-digit OpenPGP fingerprint (blanks between groups allowed), got %s' % (
            name, _shown(value))
    return None


def sha256_problem(name, value, form='either'):
    """The problem of a sha256 value in ``form`` ('bare', 'prefixed', 'either'), or None ('' is fine)."""
    if value in (None, ''):
        return None
    wanted = _SHA256_FORMS[form]
    if not isinstance(value, str):
        return '%s must be %s, got %r' % (name, wanted, value)
    algorithm, sep, digest = value.partition(':')
    if not sep:
        algorithm, digest = '', value
    algorithm = algorithm.lower()
    if algorithm and algorithm != 'sha256':
        return '%s: %s is a %s checksum; only sha256 is accepted: %s' % (name, _shown(value), algorithm, wanted)
    if _HEX.fullmatch(digest) and len(digest) in _ALGORITHMS:
        return '%s: %s has the length of a %s digest; only sha256 is accepted: %s' % (
            name, _shown(value), _ALGORITHMS[len(digest)], wanted)
    if not (_HEX.fullmatch(digest) and len(digest) == 64):
        return '%s must be %s, got %s' % (name, wanted, _shown(value))
    if form == 'bare' and algorithm:
        return '%s must be the 64 hex digits without sha256:, got %s' % (name, _shown(value))
    if form == 'prefixed' and not algorithm:
        return '%s must be sha256:<64 hex digits> (the prefix too), got %s' % (name, _shown(value))
    return None


def _values(value, per_distribution):
    """[(suffix, value)]: one value, or each of a per-distribution dict (named name[key])."""
    if per_distribution and isinstance(value, dict):
        return [('[%s]' % k, v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))]
    return [('', value)]


def _used(row, inputs):
    if callable(row.get('used')):
        return row['used'](inputs)
    return all(inputs.get(key) == wanted for key, wanted in (row.get('used') or {}).items())


def _pinned(row, inputs, full):
    """The variables pinning what arrives, with the values set (names), or []."""
    return [p for p in row.get('pins') or [] if full(p) is not None and full(p) not in ('', {})]


def _plain_http_problem(name, url, row, inputs, full, insecure_hosts):
    """The problem of ``url`` fetched over plain http with nothing pinned, or None."""
    if not (isinstance(url, str) and url.lower().startswith('http://')) or not KINDS[row['kind']][2]:
        return None
    what = KINDS[row['kind']][0]
    host = url_host(url)
    if row.get('opt_in'):
        if host in (full(row['opt_in']) or []):
            return None
        return ('%s: %s %s is plain HTTP: anyone on the network path can answer for it; use https://, or name %s '
                'in %s to trust it anyway' % (name, what, _shown(url), host, row['opt_in']))
    if _pinned(row, inputs, full):
        return None
    if row.get('table_pinned') and not full(name):
        return None  # the table's key file of the directory: pinned by the table's fingerprint
    if row.get('list_var'):
        listed = full(row['list_var']) or ''
        if isinstance(listed, str) and re.match(r'(?i)(https|file)://', listed):
            return None  # a checksum list over a verified scheme pins the binary
    pins = ' or '.join(row.get('pins') or [])
    if row['kind'] == 'key':
        # no opt-in: pinning the key's fingerprint costs one line, and the role's own check on the host
        # (repo_trust.key_problems) refuses such a key all the same
        return ('%s: %s %s comes over plain http and nothing pins it: set %s (a pinned fingerprint verifies the '
                'key; a sha256 pins the file), or use https://' % (name, what, _shown(url), pins))
    if host in (insecure_hosts or []):
        return None
    elif row['kind'] == 'checksum_list':
        fix = 'set %s, or fetch the list over https://' % pins
    elif row.get('list_var'):
        fix = 'set %s, or fetch %s over https://' % (pins, row['list_var'])
    elif pins:
        fix = 'set %s' % pins
    else:
        fix = 'use https://'
    return ('%s: %s %s comes over plain http and nothing pins it: %s, or name %s in gpuops_insecure_http_hosts '
            'to accept unverified downloads from it' % (name, what, _shown(url), fix, host or 'its host'))


def variable_problems(name, value, inputs, full, insecure_hosts=()):
    """The problems of variable ``name`` (a row of VARIABLES) with ``value``; ``full(var)`` reads
    another variable of the same inputs by its full name (None where it is not among them)."""
    row = VARIABLES[name]
    kind = row['kind']
    problems = []
    if kind == 'fingerprint':
        for suffix, item in _values(value, row.get('per_distribution')):
            problems.append(fingerprint_problem(name + suffix, item))
    elif kind == 'sha256':
        for suffix, item in _values(value, row.get('per_distribution')):
            problems.append(sha256_problem(name + suffix, item, row.get('form', 'either')))
    elif kind == 'opt_in':
        bad = [h for h in value or [] if not (isinstance(h, str) and _HOST.fullmatch(h))]
        if bad:
            problems.append('%s: %s is not a host[:port] (one line, no scheme)' % (
                name, ', '.join(repr(h) for h in bad)))
    elif row.get('nested'):
        for index, item in enumerate(value or []):
            if not isinstance(item, dict):
                continue
            # an entry by its name where it has one (as python_stack's own messages name it)
            label = item['name'] if isinstance(item.get('name'), str) and re.fullmatch(r'[\w.-]+', item['name']) \
                else str(index)
            for key in row['nested']:
                urls = item.get(key)
                for pos, url in enumerate(urls if isinstance(urls, list) else [urls]):
                    where = '%s[%s].%s%s' % (name, label, key, '[%d]' % pos if isinstance(urls, list) else '')
                    if url in (None, ''):
                        continue
                    error = scheme_problem(where, url, row)
                    problems.append(error or _plain_http_problem(where, url, row, inputs, full, insecure_hosts))
    elif KINDS[kind][1]:
        used = _used(row, inputs)
        for suffix, item in _values(value, row.get('per_distribution')):
            if item in (None, ''):
                if row.get('empty') == 'refused' and used:
                    problems.append('%s is empty and no default applies: give %s (%s)' % (
                        name + suffix, KINDS[kind][0], ', '.join('%s://' % s for s in KINDS[kind][1])))
                continue
            error = scheme_problem(name + suffix, item, row)
            if error is None and used:
                error = _plain_http_problem(name + suffix, item, row, inputs, full, insecure_hosts)
            problems.append(error)
    return [p for p in problems if p]


def problems(role, inputs, insecure_hosts=()):
    """Every problem of the URL and key variables among ``inputs`` (converted, short names without
    ``<role>_``; full names as common's entry points have them). ``insecure_hosts``: the hosts of
    gpuops_insecure_http_hosts."""
    inputs = inputs or {}
    prefix = '%s_' % role

    def full_name(short):
        return short if short in VARIABLES else prefix + short

    values = dict((full_name(k), v) for k, v in inputs.items())

    def full(name):
        return values.get(name)

    found = []
    for name in sorted(values):
        if name in VARIABLES:
            found.extend(variable_problems(name, values[name], inputs, full, insecure_hosts))
    return found


def insecure_hosts_problem(value):
    """(hosts, problem or None) of gpuops_insecure_http_hosts as the play gives it."""
    if value in (None, '', []):
        return [], None
    if not isinstance(value, list):
        return [], 'gpuops_insecure_http_hosts must be a list of host[:port], got %r' % (value,)
    found = variable_problems('gpuops_insecure_http_hosts', value, {}, lambda n: None)
    return (list(value), None) if not found else ([], found[0])


def classify(name):
    """The row of ``name`` with its kind's description, or None where the table has none."""
    row = VARIABLES.get(name)
    if row is None:
        return None
    what, schemes, needs_pin = KINDS[row['kind']]
    return dict(row, what=what, schemes=list(schemes), plain_http_needs_pin=needs_pin)


_NAMED = re.compile(r'[a-z][a-z0-9_]*')


def not_yet_named(found, already):
    """The problems of ``found`` whose variable no problem of ``already`` names (a role's own check
    may have said it first, in its own words: one message per variable)."""
    out = []
    for problem in found:
        match = _NAMED.match(problem)
        name = match.group(0) if match else ''
        if not name or not any(name in other for other in already):
            out.append(problem)
    return out
