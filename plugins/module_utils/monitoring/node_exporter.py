# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the node_exporter role, as small pure functions.

- ``parse_listen_address()``: ``host:port`` / ``[v6]:port`` / ``:port`` checked, or an error
  naming the variable.
- ``collector_flags()``: the ``--collector.*`` / ``--no-collector.*`` flags from the enabled and
  disabled collector lists, every name checked against node_exporter's collectors.
- ``decide()``: every input check and decision of the role in one call - where the binary comes
  from and lives, the service name, the command line, the account, the web configuration (TLS,
  basic auth with bcrypt hashes) and what verify expects. Returns ``{'errors': [...]}`` when an
  input is wrong, each message naming the variable to change.
- ``web_config()``: the content of node_exporter's ``--web.config.file``.

Every check runs before the role changes anything (the role calls ``decide()`` in preflight).
Every value that reaches the unit, a file or the user database is checked with a full match
and refused when it holds a control character (``plugins/module_utils/core/systemd.py``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_storage
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.node_exporter_fast_path import ACCOUNT_COMMENT, fast_path
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import (
    control_error, owned_path_error, quote_arg as systemd_quote, sandbox_lines)

# Collectors node_exporter 1.5 (Debian 12) to 1.9 registers on Linux (node_exporter_sources.COLLECTOR_ROWS,
# each with its source). Names outside this set fail: a typo would otherwise stop node_exporter at start-up
# with "unknown long flag".
KNOWN_COLLECTORS = frozenset(row['collector'] for row in node_exporter_sources.COLLECTOR_ROWS)

# Every pattern is used with fullmatch: a trailing $ would let a trailing newline through.
_HOSTNAME = re.compile(r'(?=.{1,253}\Z)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*')
_IPV4 = re.compile(r'(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}')
_IPV6 = re.compile(r'[0-9A-Fa-f:.]+(%[A-Za-z0-9_.-]+)?')
_LISTEN = re.compile(r'(\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]*)):(?P<port>\d{1,5})')
_FLAG = re.compile(r'[a-z0-9][a-z0-9._-]*')
_EXTRA_ARG = re.compile(r'--[a-z0-9][a-z0-9._-]*(=[^\x00-\x1f\x7f]*)?')
_USER = re.compile(r'[^:\s]+')
# useradd's default NAME_REGEX for system accounts (Debian), 32 characters at most.
_SYSTEM_NAME = re.compile(r'[a-z_][a-z0-9_-]{0,31}')
_VERSION = re.compile(r'\d+\.\d+\.\d+')
_SHA256 = re.compile(r'[0-9a-f]{64}')
_URL = re.compile(r'(https?|file)://[^\s\x00-\x1f\x7f]+')

DEFAULT_CHECKSUMS_URL = 'https://github.com/prometheus/node_exporter/releases/download/v{version}/sha256sums.txt'
# sha256 of upstream's release tarballs (v1.9.1), so the default install does not take its checksum from the
# origin that serves the tarball (node_exporter_sources.PINNED_SHA256_ROWS, each with its source).
PINNED_SHA256 = dict(((row['version'], row['goarch']), row['sha256'])
                     for row in node_exporter_sources.PINNED_SHA256_ROWS)
BCRYPT_ROUNDS = 10
GOARCH = dict((row['machine'], row['goarch']) for row in node_exporter_sources.GOARCH_ROWS)
# The unit the role writes (the upstream release's own unit, or a drop-in over the package's),
# rendered here rather than by a template, so that node_exporter_host compares it with the host's.
UNIT_HEADER = '# Ansible managed (gpuops.dlserver.node_exporter)\n'
UNIT_RELEASE = (
    '[Unit]\n'
    'Description=Prometheus node_exporter {version} (gpuops.dlserver)\n'
    'Documentation=https://github.com/prometheus/node_exporter\n'
    'Wants=network-online.target\n'
    'After=network-online.target\n'
    '\n'
    '[Install]\n'
    'WantedBy=multi-user.target\n'
    '\n'
    '[Service]\n'
    'Type=simple\n')
UNIT_PACKAGE = (
    '[Service]\n'
    '# Replaces the package\'s command line (its /etc/default file is no longer read) and user.\n'
    'EnvironmentFile=\n'
    'ExecStart=\n')
UNIT_SERVICE = (
    'ExecStart={exec_start}\n'
    'User={user}\n'
    'Group={group}\n'
    'Restart=on-failure\n'
    'RestartSec=5\n') + sandbox_lines().replace('{', '{{').replace('}', '}}')


def parse_listen_address(value, variable='node_exporter_listen_address'):
    """``(host, port)`` of a listen address, or raise ValueError naming ``variable``."""
    text = value if isinstance(value, str) else ''
    match = _LISTEN.fullmatch(text)
    why = None
    if not match:
        why = 'must be HOST:PORT, [IPV6]:PORT or :PORT'
    else:
        port = int(match.group('port'))
        host = match.group('v6') if match.group('v6') is not None else match.group('host')
        if not 1 <= port <= 65535:
            why = 'port %d is outside 1-65535' % port
        elif match.group('v6') is not None and (':' not in host or not _IPV6.fullmatch(host)):
            why = '%r is not an IPv6 address' % host
        elif match.group('v6') is None and host and not (_IPV4.fullmatch(host) or (
                _HOSTNAME.fullmatch(host) and not re.fullmatch(r'[\d.]+', host))):
            why = '%r is neither an IPv4 address nor a host name' % host
    if why:
        raise ValueError('%s: %r is not a listen address (%s), e.g. "0.0.0.0:9100", "10.0.0.5:9100", '
                         '"[::1]:9100" or ":9100"' % (variable, value, why))
    return host, port


def _collector_entry(entry, variable):
    """``(name, {flag: value})`` of one entry of the enabled collectors list."""
    if isinstance(entry, str):
        return entry, {}
    if isinstance(entry, dict) and len(entry) == 1:
        name, options = list(entry.items())[0]
        if options is None:
            options = {}
        if isinstance(name, str) and isinstance(options, dict):
            return name, options
    raise ValueError('%s: each entry is a collector name or {name: {option: value}}, not %r' % (variable, entry))


def collector_flags(enabled, disabled):
    """Command-line flags for the collectors; ValueError naming the variable on bad input."""
    flags = []
    seen = {}
    for variable, entries in (('node_exporter_enabled_collectors', enabled),
                              ('node_exporter_disabled_collectors', disabled)):
        if not isinstance(entries, list):
            raise ValueError('%s must be a list, not %r' % (variable, entries))
        for entry in entries:
            if variable.endswith('disabled_collectors'):
                if not isinstance(entry, str):
                    raise ValueError('%s: each entry is a collector name, not %r' % (variable, entry))
                name, options = entry, {}
            else:
                name, options = _collector_entry(entry, variable)
            if name not in KNOWN_COLLECTORS:
                raise ValueError('%s: unknown collector %r; node_exporter has: %s'
                                 % (variable, name, ', '.join(sorted(KNOWN_COLLECTORS))))
            if name in seen:
                if seen[name] == variable:
                    raise ValueError('%s: collector %r is listed twice' % (variable, name))
                raise ValueError('collector %r is both enabled and disabled (node_exporter_enabled_collectors, '
                                 'node_exporter_disabled_collectors)' % name)
            seen[name] = variable
            if variable.endswith('disabled_collectors'):
                flags.append('--no-collector.%s' % name)
                continue
            if name == 'textfile' and options:
                raise ValueError('node_exporter_enabled_collectors: the textfile collector takes its directory from '
                                 'node_exporter_textfile_dir, not from options')
            flags.append('--collector.%s' % name)
            for option in sorted(options, key=str):
                if not isinstance(option, str) or not _FLAG.fullmatch(option):
                    raise ValueError('node_exporter_enabled_collectors: %r is not an option name of collector %s'
                                     % (option, name))
                value = options[option]
                if isinstance(value, bool):
                    value = 'true' if value else 'false'
                if not isinstance(value, (str, int, float)):
                    raise ValueError('node_exporter_enabled_collectors: the value of option %s of collector %s must '
                                     'be a string, a number or a boolean, not %r' % (option, name, value))
                error = control_error(str(value), 'node_exporter_enabled_collectors')
                if error:
                    raise ValueError(error)
                flags.append('--collector.%s.%s=%s' % (name, option, value))
    return flags


def hash_password(password, current=None, rounds=BCRYPT_ROUNDS, bcrypt_module=None):
    """bcrypt hash of ``password``: ``current`` (the hash on the host) while it verifies, else a
    new hash with a random salt (bcrypt.gensalt): a second run changes nothing, and whoever
    reads the file tests a guess no faster than bcrypt allows."""
    if bcrypt_module is None:
        import bcrypt as bcrypt_module  # pylint: disable=import-outside-toplevel
    secret = password.encode('utf-8')
    if isinstance(current, str) and current.startswith(('$2a$', '$2b$', '$2y$')):
        try:
            if bcrypt_module.checkpw(secret, current.encode('ascii')):
                return current
        except ValueError:
            pass
    return bcrypt_module.hashpw(secret, bcrypt_module.gensalt(rounds)).decode('ascii')


def _check_users(users):
    if not isinstance(users, dict):
        raise ValueError('node_exporter_basic_auth_users must be a dict of user name to password, not %r'
                         % type(users).__name__)
    for user, password in users.items():
        if not isinstance(user, str) or not _USER.fullmatch(user):
            raise ValueError('node_exporter_basic_auth_users: %r is not a user name (no colon, no blank)' % (user,))
        if not isinstance(password, str) or not password:
            raise ValueError('node_exporter_basic_auth_users: the password of %r must be a non-empty string' % user)
        if len(password.encode('utf-8')) > 72:
            raise ValueError('node_exporter_basic_auth_users: the password of %r is longer than 72 bytes, which '
                             'bcrypt cannot hash' % user)


def web_config(inputs, current=None, bcrypt_module=None):
    """Content (dict) of node_exporter's web configuration file, or None when none is needed.

    ``current``: ``{user: hash}`` on the host; a hash that still verifies its password is kept.
    """
    tls = bool(inputs.get('tls_cert_file'))
    users = inputs.get('basic_auth_users') or {}
    if not tls and not users:
        return None
    config = {}
    if tls:
        config['tls_server_config'] = {'cert_file': inputs['tls_cert_file'], 'key_file': inputs['tls_key_file']}
    if users:
        current = current or {}
        config['basic_auth_users'] = dict(
            (user, hash_password(users[user], current.get(user), bcrypt_module=bcrypt_module))
            for user in sorted(users))
    return config


def _check_source(inputs):
    source = inputs.get('source')
    if source not in ('release', 'package'):
        raise ValueError('node_exporter_source must be release or package, not %r' % (source,))
    if source == 'release':
        if not _VERSION.fullmatch(str(inputs.get('version') or '')):
            raise ValueError('node_exporter_version must be a release version such as 1.9.1, not %r'
                             % (inputs.get('version'),))
        sha = str(inputs.get('sha256') or '')
        if sha and not _SHA256.fullmatch(sha):
            raise ValueError('node_exporter_sha256 must be empty (take it from node_exporter_checksums_url) or '
                             'the 64 hex digits of the release tarball\'s sha256, not %r' % sha)


def _check_names(inputs):
    errors = []
    for key in ('user', 'group'):
        value = inputs.get(key)
        if not isinstance(value, str) or not _SYSTEM_NAME.fullmatch(value):
            errors.append('node_exporter_%s: %r is not a system %s name (a lower-case letter or _, then letters, '
                          'digits, _ or -, 32 characters at most)' % (key, value, key))
    return errors


def _check_paths(inputs):
    keys = ['install_dir', 'config_dir', 'textfile_dir', 'status_file']
    keys += [k for k in ('tls_cert_file', 'tls_key_file') if inputs.get(k)]
    errors = [e for e in (owned_path_error(inputs.get(k), 'node_exporter_' + k) for k in keys) if e]
    cache = inputs.get('cache_dir')
    error = control_error(cache, 'node_exporter_cache_dir')
    if error or not isinstance(cache, str) or not cache.startswith(('/', '~')) or '/../' in cache + '/':
        errors.append(error or 'node_exporter_cache_dir: %r is not an absolute (or ~) directory on the controller'
                      % (cache,))
    return errors


def _check_urls(inputs):
    return ['node_exporter_%s: %r is not an http(s):// or file:// URL without blanks or control characters'
            % (name, inputs.get(name)) for name in ('binary_url', 'checksums_url')
            if inputs.get('source') == 'release' and not _URL.fullmatch(str(inputs.get(name) or ''))]


def _check_extra_args(args):
    if not isinstance(args, list):
        return ['node_exporter_extra_args must be a list of --flag=value strings, not %r' % (args,)]
    errors = []
    for arg in args:
        error = control_error(arg, 'node_exporter_extra_args')
        if error:
            errors.append(error)
        elif not isinstance(arg, str) or not _EXTRA_ARG.fullmatch(arg):
            errors.append('node_exporter_extra_args: %r is not a node_exporter flag (--name or --name=value)' % (arg,))
    return errors


def check_account(user, account, status):
    """None, or an error naming node_exporter_user when ``account`` (the host's passwd entry of
    ``user``: uid, gecos, home, shell; None when absent) is an account the role did not create.

    The role marks the account it creates with ACCOUNT_COMMENT; an account an earlier version
    created without it is recognised by the shape it gave it, on a host where the role ran
    (``status``: the role's last status file).
    """
    if not account or account.get('gecos') == ACCOUNT_COMMENT:
        return None
    legacy = (bool((status or {}).get('run')) and account.get('uid') not in (0, None) and account.get('gecos') == ''
              and account.get('home') == '/nonexistent' and str(account.get('shell', '')).endswith('/nologin'))
    if legacy:
        return None
    return ('node_exporter_user: the account %s exists and was not created by this role (uid %s, home %s, shell %s): '
            'the role would take it over (nologin shell, home /nonexistent, group node_exporter_group). Choose a name '
            'that does not exist yet; the role creates it' % (user, account.get('uid'), account.get('home'),
                                                              account.get('shell')))


def _check_tls_files(inputs, files):
    errors = []
    for key, kind in (('tls_cert_file', 'certificate'), ('tls_key_file', 'private key')):
        path = inputs.get(key)
        seen = (files or {}).get(path) if path else None
        if seen is None:
            continue
        if not seen.get('exists'):
            errors.append('node_exporter_%s: %s does not exist on the host; node_exporter would not start after the '
                          'restart' % (key, path))
        elif seen.get('pem') not in (kind, 'unreadable'):
            errors.append('node_exporter_%s: %s holds no PEM %s; node_exporter would not start after the restart'
                          % (key, path, kind))
    return errors


def _release_checksum(inputs, goarch):
    """(sha256, checksum argument of get_url): the given or pinned sha256, else the checksums URL."""
    sha = inputs.get('sha256') or ''
    if not sha and inputs.get('checksums_url') == DEFAULT_CHECKSUMS_URL:
        sha = PINNED_SHA256.get((inputs['version'], goarch), '')
    if sha:
        return sha, 'sha256:%s' % sha
    return '', 'sha256:%s' % inputs['checksums_url'].replace('{version}', inputs['version']).replace('{arch}', goarch)


def unit_text(source, version, exec_start_line, user, group):
    """The text of the unit the role writes: the release's own unit, or the package's drop-in."""
    head = UNIT_RELEASE.format(version=version) if source == 'release' else UNIT_PACKAGE
    return UNIT_HEADER + head + UNIT_SERVICE.format(exec_start=exec_start_line, user=user, group=group)


def web_config_text(config):
    """The web configuration file's text, as ``to_nice_yaml(indent=2)`` wrote it (controller side)."""
    import yaml  # pylint: disable=import-outside-toplevel
    return yaml.safe_dump(_plain(config), indent=2, allow_unicode=True, default_flow_style=False)


def _plain(value):
    """``value`` with plain str, dict and list (the controller's templated values are subclasses of
    them, which safe_dump refuses)."""
    if isinstance(value, dict):
        return dict((str(k), _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def layout(inputs, platform, arch):
    """Where node_exporter comes from and lives, its unit and command line, and what verify
    scrapes: everything that depends on the inputs alone (no bcrypt, no host read), so that the
    host side (node_exporter_host) compares the same paths and unit text the role writes.
    Raises ValueError on a bad listen address or collector list."""
    host_part, port = parse_listen_address(inputs.get('listen_address'))
    flags = collector_flags(inputs.get('enabled_collectors', []), inputs.get('disabled_collectors', []))
    source = inputs.get('source')
    release = source == 'release'
    goarch = GOARCH.get(arch)
    if release:
        name = 'node_exporter-%s.linux-%s' % (inputs['version'], goarch)
        install_dir = '%s/%s' % (inputs['install_dir'], inputs['version'])
        binary = '%s/node_exporter' % install_dir
        service = 'node_exporter'
        rel = {'name': name, 'archive': '%s.tar.gz' % name, 'install_dir': install_dir,
               'partial_dir': '%s.partial' % install_dir, 'checksum_file': '%s/.gpuops-checksum' % install_dir,
               'url': inputs['binary_url'].replace('{version}', inputs['version']).replace('{arch}', str(goarch))}
    else:
        binary, service, rel = platform.get('package_binary'), platform.get('package_service'), None
    web_file = '%s/web-config.yml' % inputs['config_dir']
    web = bool(inputs.get('tls_cert_file') or inputs.get('basic_auth_users'))
    args = ['--web.listen-address=%s' % inputs['listen_address'],
            '--collector.textfile.directory=%s' % inputs['textfile_dir']] + flags
    if web:
        args.append('--web.config.file=%s' % web_file)
    args.extend(inputs.get('extra_args') or [])
    exec_start = [('/usr/local/bin/node_exporter' if release else binary)] + args
    exec_line = ' '.join(systemd_quote(a) for a in exec_start)
    scheme = 'https' if inputs.get('tls_cert_file') else 'http'
    probe_host = host_part if host_part not in ('', '0.0.0.0', '::') else '127.0.0.1'
    if ':' in probe_host:
        probe_host = '[%s]' % probe_host
    return {
        'source': source, 'goarch': goarch, 'release': rel, 'binary': binary,
        'link': '/usr/local/bin/node_exporter' if release else None,
        'service': service,
        'unit_file': '/etc/systemd/system/%s.service' % service if release
        else '/etc/systemd/system/%s.service.d/gpuops.conf' % service,
        'unit_content': unit_text(source, inputs.get('version'), exec_line, inputs['user'], inputs['group']),
        'exec_start': exec_start, 'exec_start_line': exec_line,
        'web_config_wanted': web, 'web_config_file': web_file,
        'directories': [inputs['config_dir'], inputs['textfile_dir']], 'account_group': inputs['group'],
        'textfile': '%s/gpuops.prom' % inputs['textfile_dir'],
        'storage': node_exporter_storage.layout(inputs),
        'listen': {'host': host_part, 'port': port},
        'verify': {'url': '%s://%s:%d/metrics' % (scheme, probe_host, port), 'scheme': scheme,
                   'basic_auth': bool(inputs.get('basic_auth_users')),
                   'user': (sorted(inputs.get('basic_auth_users') or {}) or [None])[0]},
    }


def input_problems(inputs):
    """Every problem of the role's typed inputs that its argument spec cannot check, each naming the
    variable (run by the registry of input checks, core/input_checks.py, before any change)."""
    errors = _check_names(inputs) + _check_paths(inputs)
    for func, args in ((parse_listen_address, (inputs.get('listen_address'),)),
                       (collector_flags, (inputs.get('enabled_collectors', []), inputs.get('disabled_collectors', []))),
                       (_check_source, (inputs,)), (_check_users, (inputs.get('basic_auth_users') or {},))):
        try:
            func(*args)
        except ValueError as exc:
            errors.append(str(exc))
    errors.extend(_check_extra_args(inputs.get('extra_args') or []))
    errors.extend(_check_urls(inputs))
    if inputs.get('basic_auth_users') and not inputs.get('tls_cert_file') and not inputs.get('basic_auth_allow_http'):
        errors.append('node_exporter_basic_auth_users: basic auth over plain HTTP sends the password in clear on '
                      'every scrape; set node_exporter_tls_cert_file and node_exporter_tls_key_file, or '
                      'node_exporter_basic_auth_allow_http: true to accept that')
    cert, key = inputs.get('tls_cert_file') or '', inputs.get('tls_key_file') or ''
    if bool(cert) != bool(key):
        errors.append('node_exporter_tls_cert_file and node_exporter_tls_key_file must be set together '
                      '(cert: %r, key: %r)' % (cert, key))
    return errors


def decide(inputs, platform, host, arch, node=None):
    """Every check and decision of the role, see the module docstring.

    ``inputs``: the role's typed variables without prefix (``__node_exporter``); ``platform``:
    ``{name, package, package_binary, package_service}``; ``host``: inventory name (unused
    since the salt is random); ``arch``: ``ansible_architecture``; ``node``: what
    ``gpuops.dlserver.__private.node_exporter_host`` read (``account``, ``status``, ``hashes`` of the web
    configuration, ``files``: TLS path -> exists, pem), None when the host was not read.
    """
    del host
    node = node or {}
    # The inputs themselves were checked before any change by the registry of input checks
    # (core/input_checks.py runs input_problems); only what needs this host's platform, its
    # architecture and what the host holds (TLS files, the account) is checked here.
    errors = []
    if inputs.get('source') == 'package' and not platform.get('package'):
        errors.append('node_exporter_source: package is not available on this platform (%s); use release'
                      % platform.get('name', 'unknown'))
    if inputs.get('source') == 'release' and not GOARCH.get(arch):
        errors.append('node_exporter_source: release has no build for architecture %r here; use package' % arch)
    if not errors:
        errors.extend(_check_tls_files(inputs, node.get('files')))
        account_error = check_account(inputs['user'], node.get('account'), node.get('status'))
        if account_error:
            errors.append(account_error)
    if errors:
        return {'errors': errors}

    lay = layout(inputs, platform, arch)
    release = lay['source'] == 'release'
    checksum = _release_checksum(inputs, lay['goarch']) if release else None
    current = node.get('hashes') if isinstance(node.get('hashes'), dict) else {}
    web = web_config(inputs, current)
    web_file = lay['web_config_file']
    url = lay['release']['url'] if release else None
    result = {
        'errors': [],
        'source': lay['source'],
        'source_reason': ('upstream release %s, checksum-verified, from %s' % (inputs['version'], url)) if release
        else 'distribution package %s' % platform['package'],
        # checksums_url: the sha256sums.txt get_url fetches ('' where the sha256 is given or pinned)
        'release': dict(lay['release'], sha256=checksum[0], checksum=checksum[1],
                        checksums_url='' if checksum[0] else checksum[1][len('sha256:'):]) if release else None,
        'binary': lay['binary'],
        'link': lay['link'],
        'service': lay['service'],
        'unit_file': lay['unit_file'],
        'unit_content': lay['unit_content'],
        'exec_start': lay['exec_start'],
        'exec_start_line': lay['exec_start_line'],
        'account': {'name': inputs['user'], 'group': inputs['group'], 'comment': ACCOUNT_COMMENT},
        'web_config': web,
        'web_config_file': web_file if web else None,
        'web_config_content': web_config_text(web) if web else None,
        'listen': lay['listen'],
        'verify': lay['verify'],
        'storage': lay['storage'],
    }
    result.update(fast_path(result, inputs, node))
    return result
