# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the node_exporter role, as small pure functions.

- ``parse_listen_address()``: ``host:port`` / ``[v6]:port`` / ``:port`` checked, or an error
  naming the variable.
- ``collector_flags()``: the ``--collector.*`` / ``--no-collector.*`` flags from the enabled and
  disabled collector lists, every name checked against node_exporter's collectors.
- ``decide()``: every input check and decision of the role in one call - where the binary comes
  from and lives, the service name, the command line, the web configuration (TLS, basic auth
  with bcrypt hashes) and what verify expects. Returns ``{'errors': [...]}`` when an input is
  wrong, each message naming the variable to change.
- ``web_config()``: the content of node_exporter's ``--web.config.file``.

Every check runs before the role changes anything (the role calls ``decide()`` in preflight).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import re

# Collectors of node_exporter 1.5 (Debian 12) to 1.9. Names outside this set fail: a typo
# would otherwise stop node_exporter at start-up with "unknown long flag".
KNOWN_COLLECTORS = frozenset([
    'arp', 'bcache', 'bonding', 'btrfs', 'buddyinfo', 'cgroups', 'conntrack', 'cpu', 'cpu_vulnerabilities',
    'cpufreq', 'devstat', 'diskstats', 'dmi', 'drbd', 'drm', 'edac', 'entropy', 'ethtool', 'fibrechannel',
    'filefd', 'filesystem', 'hwmon', 'infiniband', 'interrupts', 'ipvs', 'ksmd', 'lnstat', 'loadavg',
    'logind', 'mdadm', 'meminfo', 'meminfo_numa', 'mountstats', 'netclass', 'netdev', 'netstat', 'network_route',
    'nfs', 'nfsd', 'ntp', 'nvme', 'os', 'perf', 'powersupplyclass', 'pressure', 'processes', 'qdisc', 'rapl',
    'runit', 'schedstat', 'selinux', 'slabinfo', 'sockstat', 'softirqs', 'softnet', 'stat', 'supervisord',
    'sysctl', 'systemd', 'tapestats', 'tcpstat', 'textfile', 'thermal_zone', 'time', 'timex', 'udp_queues',
    'uname', 'vmstat', 'watchdog', 'wifi', 'xfs', 'zfs', 'zoneinfo',
])

_HOSTNAME = re.compile(r'^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$')
_IPV4 = re.compile(r'^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$')
_IPV6 = re.compile(r'^[0-9A-Fa-f:.]+(%[A-Za-z0-9_.-]+)?$')
_FLAG = re.compile(r'^[a-z0-9][a-z0-9._-]*$')
_USER = re.compile(r'^[^:\s]+$')
_VERSION = re.compile(r'^\d+\.\d+\.\d+$')
_SHA256 = re.compile(r'^[0-9a-f]{64}$')
_BCRYPT_ALPHABET = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'


def parse_listen_address(value, variable='node_exporter_listen_address'):
    """``(host, port)`` of a listen address, or raise ValueError naming ``variable``."""
    text = value if isinstance(value, str) else ''
    match = re.match(r'^(\[(?P<v6>[^\]]+)\]|(?P<host>[^:\[\]]*)):(?P<port>\d{1,5})$', text)
    why = None
    if not match:
        why = 'must be HOST:PORT, [IPV6]:PORT or :PORT'
    else:
        port = int(match.group('port'))
        host = match.group('v6') if match.group('v6') is not None else match.group('host')
        if not 1 <= port <= 65535:
            why = 'port %d is outside 1-65535' % port
        elif match.group('v6') is not None and (':' not in host or not _IPV6.match(host)):
            why = '%r is not an IPv6 address' % host
        elif match.group('v6') is None and host and not (_IPV4.match(host) or (
                _HOSTNAME.match(host) and not re.match(r'^[\d.]+$', host))):
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
            for option in sorted(options):
                if not isinstance(option, str) or not _FLAG.match(option):
                    raise ValueError('node_exporter_enabled_collectors: %r is not an option name of collector %s'
                                     % (option, name))
                value = options[option]
                if isinstance(value, bool):
                    value = 'true' if value else 'false'
                flags.append('--collector.%s.%s=%s' % (name, option, value))
    return flags


def bcrypt_salt(seed):
    """A bcrypt salt (22 characters of bcrypt's alphabet) derived from ``seed``.

    The same user, password and host give the same hash on every run (idempotence); a
    different host or user gives another salt.
    """
    digest = hashlib.sha256(seed.encode('utf-8')).digest()
    # The 22nd character carries only 2 bits: bcrypt keeps those in '.Oeu'.
    return ''.join(_BCRYPT_ALPHABET[b % 64] for b in digest[:21]) + '.Oeu'[digest[21] % 4]


def hash_password(password, seed, rounds=10, bcrypt_module=None):
    """bcrypt hash of ``password`` with a salt derived from ``seed``."""
    if bcrypt_module is None:
        import bcrypt as bcrypt_module  # pylint: disable=import-outside-toplevel
    salt = ('$2b$%02d$' % rounds + bcrypt_salt(seed)).encode('ascii')
    return bcrypt_module.hashpw(password.encode('utf-8'), salt).decode('ascii')


def _check_users(users):
    if not isinstance(users, dict):
        raise ValueError('node_exporter_basic_auth_users must be a dict of user name to password, not %r'
                         % type(users).__name__)
    for user, password in users.items():
        if not isinstance(user, str) or not _USER.match(user):
            raise ValueError('node_exporter_basic_auth_users: %r is not a user name (no colon, no blank)' % (user,))
        if not isinstance(password, str) or not password:
            raise ValueError('node_exporter_basic_auth_users: the password of %r must be a non-empty string' % user)
        if len(password.encode('utf-8')) > 72:
            raise ValueError('node_exporter_basic_auth_users: the password of %r is longer than 72 bytes, which '
                             'bcrypt cannot hash' % user)


def web_config(inputs, seed, bcrypt_module=None):
    """Content (dict) of node_exporter's web configuration file, or None when none is needed."""
    tls = bool(inputs.get('tls_cert_file'))
    users = inputs.get('basic_auth_users') or {}
    if not tls and not users:
        return None
    config = {}
    if tls:
        config['tls_server_config'] = {'cert_file': inputs['tls_cert_file'], 'key_file': inputs['tls_key_file']}
    if users:
        config['basic_auth_users'] = dict(
            (user, hash_password(users[user], '%s|%s|%s' % (seed, user, users[user]), bcrypt_module=bcrypt_module))
            for user in sorted(users))
    return config


def _check_source(inputs, platform):
    source = inputs.get('source')
    if source not in ('release', 'package'):
        raise ValueError('node_exporter_source must be release or package, not %r' % (source,))
    if source == 'package' and not platform.get('package'):
        raise ValueError('node_exporter_source: package is not available on this platform (%s); use release'
                         % platform.get('name', 'unknown'))
    if source == 'release':
        if not _VERSION.match(str(inputs.get('version') or '')):
            raise ValueError('node_exporter_version must be a release version such as 1.9.1, not %r'
                             % (inputs.get('version'),))
        sha = str(inputs.get('sha256') or '')
        if sha and not _SHA256.match(sha):
            raise ValueError('node_exporter_sha256 must be empty (take it from node_exporter_checksums_url) or '
                             'the 64 hex digits of the release tarball\'s sha256, not %r' % sha)


def systemd_quote(arg):
    """One argument of an ExecStart= line, quoted and escaped the way systemd reads it."""
    escaped = arg.replace('%', '%%').replace('$', '$$')
    if re.search(r'[\s"\'\\;]', escaped) or not escaped:
        escaped = '"%s"' % escaped.replace('\\', '\\\\').replace('"', '\\"')
    return escaped


def decide(inputs, platform, host, arch):
    """Every check and decision of the role, see the module docstring.

    ``inputs``: the role's typed variables without prefix (``__node_exporter``); ``platform``:
    ``{name, package, package_binary, package_service}``; ``host``: inventory name (salt seed);
    ``arch``: ``ansible_architecture``.
    """
    errors = []

    def check(func, *args):
        try:
            return func(*args)
        except ValueError as exc:
            errors.append(str(exc))
            return None

    address = check(parse_listen_address, inputs.get('listen_address'))
    flags = check(collector_flags, inputs.get('enabled_collectors', []), inputs.get('disabled_collectors', []))
    check(_check_source, inputs, platform)
    check(_check_users, inputs.get('basic_auth_users') or {})
    cert, key = inputs.get('tls_cert_file') or '', inputs.get('tls_key_file') or ''
    if bool(cert) != bool(key):
        errors.append('node_exporter_tls_cert_file and node_exporter_tls_key_file must be set together '
                      '(cert: %r, key: %r)' % (cert, key))
    goarch = {'x86_64': 'amd64', 'aarch64': 'arm64', 'ppc64le': 'ppc64le'}.get(arch)
    if inputs.get('source') == 'release' and not goarch:
        errors.append('node_exporter_source: release has no build for architecture %r here; use package' % arch)
    if errors:
        return {'errors': errors}

    release = inputs['source'] == 'release'
    if release:
        name = 'node_exporter-%s.linux-%s' % (inputs['version'], goarch)
        install_dir = '%s/%s' % (inputs['install_dir'], inputs['version'])
        binary = '%s/node_exporter' % install_dir
        url = inputs['binary_url'].replace('{version}', inputs['version']).replace('{arch}', goarch)
        service = 'node_exporter'
    else:
        name, install_dir, url = None, None, None
        binary = platform['package_binary']
        service = platform['package_service']
    web = web_config(inputs, host)
    web_file = '%s/web-config.yml' % inputs['config_dir']
    args = ['--web.listen-address=%s' % inputs['listen_address'],
            '--collector.textfile.directory=%s' % inputs['textfile_dir']] + flags
    if web:
        args.append('--web.config.file=%s' % web_file)
    args.extend(inputs.get('extra_args') or [])
    host_part, port = address
    scheme = 'https' if inputs.get('tls_cert_file') else 'http'
    probe_host = host_part if host_part not in ('', '0.0.0.0', '::') else '127.0.0.1'
    if ':' in probe_host:
        probe_host = '[%s]' % probe_host
    return {
        'errors': [],
        'source': inputs['source'],
        'source_reason': ('upstream release %s, checksum-verified, from %s' % (inputs['version'], url)) if release
        else 'distribution package %s' % platform['package'],
        'release': {'name': name, 'url': url, 'archive': '%s.tar.gz' % name if name else None,
                    'sha256': inputs.get('sha256') or '',
                    'checksum': 'sha256:%s' % (inputs.get('sha256') or inputs['checksums_url'].replace(
                        '{version}', inputs['version']).replace('{arch}', goarch)),
                    'install_dir': install_dir} if release else None,
        'binary': binary,
        'link': '/usr/local/bin/node_exporter' if release else None,
        'service': service,
        'unit_file': '/etc/systemd/system/%s.service' % service if release
        else '/etc/systemd/system/%s.service.d/gpuops.conf' % service,
        'exec_start': [('/usr/local/bin/node_exporter' if release else binary)] + args,
        'exec_start_line': ' '.join(systemd_quote(a) for a in
                                    [('/usr/local/bin/node_exporter' if release else binary)] + args),
        'web_config': web,
        'web_config_file': web_file if web else None,
        'listen': {'host': host_part, 'port': port},
        'verify': {'url': '%s://%s:%d/metrics' % (scheme, probe_host, port), 'scheme': scheme,
                   'basic_auth': bool(inputs.get('basic_auth_users')),
                   'user': (sorted(inputs.get('basic_auth_users') or {}) or [None])[0]},
    }
