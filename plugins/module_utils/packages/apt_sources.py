# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""apt sources and preferences, parsed and rendered in one place.

The host's sources (one-line ``.list`` and deb822 ``.sources``), the Debian archive stanzas
a role adds components to, deb822 text of a repository (``render_deb822``), the apt pin of a
version (``render_pin``) and of an origin (``render_origin_pin``), and the output of
``apt-cache madison`` and ``dpkg-query``. Every value that reaches a file is checked with a full
match first (``check_field``): a newline in a URL, suite or package name would add fields.

Used by gpuops.dlserver.__private.nvidia_driver_host and gpuops.dlserver.__private.package_repository. Pure
functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

OWN_PREFIX = 'gpuops-nvidia-'


def _one_line_entries(text, path):
    entries = []
    for raw in text.splitlines():
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        options = {}
        match = re.fullmatch(r'(deb|deb-src)\s+\[([^\]]*)\]\s+(.*)', line, re.DOTALL)
        if match:
            kind, opts, rest = match.groups()
            for item in opts.split():
                if '=' in item:
                    key, value = item.split('=', 1)
                    options[key.lower()] = value
        else:
            parts = line.split(None, 1)
            if len(parts) != 2 or parts[0] not in ('deb', 'deb-src'):
                continue
            kind, rest = parts
        words = rest.split()
        if len(words) < 2:
            continue
        entries.append({'file': path, 'format': 'one-line', 'types': [kind], 'uris': [words[0]],
                        'suites': [words[1]], 'components': words[2:], 'signed_by': options.get('signed-by'),
                        'enabled': options.get('enabled', 'yes').lower() not in ('no', 'false', '0')})
    return entries


def _deb822_stanzas(text):
    stanzas, fields, key = [], {}, None
    for raw in text.splitlines() + ['']:
        if raw.startswith('#'):
            continue
        if not raw.strip():
            if fields:
                stanzas.append(fields)
            fields, key = {}, None
            continue
        if raw[0] in ' \t' and key is not None:
            value = raw.strip()
            fields[key] += '\n' + ('' if value == '.' else value)
            continue
        if ':' not in raw:
            continue
        key, value = raw.split(':', 1)
        key = key.strip().lower()
        fields[key] = value.strip()
    return stanzas


def _deb822_entries(text, path):
    entries = []
    for fields in _deb822_stanzas(text):
        signed = fields.get('signed-by')
        entries.append({'file': path, 'format': 'deb822', 'types': fields.get('types', '').split(),
                        'uris': fields.get('uris', '').split(), 'suites': fields.get('suites', '').split(),
                        'components': fields.get('components', '').split(),
                        'signed_by': signed.strip() if signed else None,
                        'enabled': fields.get('enabled', 'yes').strip().lower() not in ('no', 'false', '0')})
    return entries


def parse_sources(files, own_prefix=OWN_PREFIX):
    """Every apt source entry of ``files`` ({shown path: text}), except the files named ``own_prefix*``
    (the role's own)."""
    entries = []
    for path in sorted(files, key=lambda p: (p != '/etc/apt/sources.list', p)):
        name = path.rsplit('/', 1)[-1]
        if name.startswith(own_prefix):
            continue
        if name == 'sources.list' or name.endswith('.list'):
            entries.extend(_one_line_entries(files[path], path))
        elif name.endswith('.sources'):
            entries.extend(_deb822_entries(files[path], path))
    return entries


def debian_stanzas(entries, codename, components, mirror=None, keyring=None):
    """Stanzas giving the Debian archive(s) the host uses the wanted ``components``.

    ``(missing, full, sources)``: ``missing`` adds only what the host's entries lack (what the
    role writes), ``full`` every wanted component (what the scratch query reads), ``sources``
    the files the archive entries came from. With ``mirror`` the host's entries are not read.
    """
    suites = (codename, codename + '-updates', codename + '-security')
    if mirror:
        found = [{'uri': mirror, 'suite': s, 'signed_by': keyring, 'present': [], 'file': None} for s in suites[:2]]
    else:
        by_key = {}
        for entry in entries:
            if not entry['enabled'] or 'deb' not in entry['types']:
                continue
            for uri in entry['uris']:
                for suite in entry['suites']:
                    if suite not in suites:
                        continue
                    key = (uri.rstrip('/') + '/', suite)
                    item = by_key.setdefault(key, {'uri': key[0], 'suite': suite, 'signed_by': None,
                                                   'present': [], 'file': entry['file'], 'main': False})
                    item['present'].extend(c for c in entry['components'] if c not in item['present'])
                    item['main'] = item['main'] or 'main' in entry['components']
                    if entry['signed_by'] and not item['signed_by']:
                        item['signed_by'] = entry['signed_by']
        found = [item for key, item in sorted(by_key.items()) if item['main']]

    def group(with_missing):
        stanzas = []
        for item in found:
            comps = [c for c in components if not with_missing or c not in item['present']]
            if not comps:
                continue
            for stanza in stanzas:
                if (stanza['uri'], stanza['signed_by'], stanza['components']) == (item['uri'], item['signed_by'], comps):
                    stanza['suites'].append(item['suite'])
                    break
            else:
                stanzas.append({'uri': item['uri'], 'suites': [item['suite']], 'components': comps,
                                'signed_by': item['signed_by']})
        return stanzas

    return group(True), group(False), sorted(set(item['file'] for item in found if item['file']))


def render_deb822(stanzas, header=None):
    """deb822 text of ``stanzas`` (uri, suites, components, signed_by)."""
    out = []
    if header:
        out.extend('# ' + line if line else '#' for line in header.splitlines())
        out.append('')
    for stanza in stanzas:
        check_field('uri', stanza['uri'], 'the repository URL')
        for value in stanza['suites']:
            check_field('suite', value, 'the repository suite')
        for value in stanza.get('components') or []:
            check_field('component', value, 'the repository component')
        out.append('Types: deb')
        out.append('URIs: %s' % stanza['uri'])
        out.append('Suites: %s' % ' '.join(stanza['suites']))
        if stanza.get('components'):
            out.append('Components: %s' % ' '.join(stanza['components']))
        signed = stanza.get('signed_by')
        if signed:
            lines = signed.split('\n')
            out.append('Signed-By: %s' % lines[0])
            out.extend(' ' + (line if line else '.') for line in lines[1:])
        out.append('')
    return '\n'.join(out)


def parse_madison(text):
    """{package: [versions]} from ``apt-cache madison`` output."""
    found = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split('|')]
        if len(parts) < 3 or not parts[0] or not parts[1] or 'Sources' in parts[2]:
            continue
        found.setdefault(parts[0], [])
        if parts[1] not in found[parts[0]]:
            found[parts[0]].append(parts[1])
    return found


# The dpkg-query -W format parse_dpkg_query reads: dpkg-query -W -f DPKG_QUERY_FORMAT <names>.
DPKG_QUERY_FORMAT = '${Package}\t${Version}\t${db:Status-Abbrev}\n'


def parse_dpkg_query(text, names):
    """{name: {version, held}} of the installed packages among ``names`` (dpkg-query -W output
    with ${Package}\\t${Version}\\t${db:Status-Abbrev})."""
    found = {}
    for line in text.splitlines():
        parts = line.split('\t')
        if len(parts) == 3 and parts[0] in names and parts[2][1:2] == 'i':
            found[parts[0]] = {'version': parts[1], 'held': parts[2][:1] == 'h'}
    return found


# --------------------------------------------------------------------------- checked fields

_FIELD_RE = {
    'uri': re.compile(r'(https?|file)://[^\s]+'),
    'suite': re.compile(r'[A-Za-z0-9./_+~-]+'),
    'component': re.compile(r'[A-Za-z0-9._+-]+'),
    # a package name, or a name prefix with one trailing glob (nvidia-*): never a /regex/, which
    # apt would test against every package name on every run (driver_resolve.DRIVER_FAMILY)
    'package': re.compile(r'[a-z0-9][a-z0-9.+-]*\*?'),
    'version': re.compile(r'[A-Za-z0-9.+~:*-]+'),
    'path': re.compile(r'/[^\s]+'),
    'origin': re.compile(r'[A-Za-z0-9.-]+'),
}


def check_field(kind, value, variable):
    """``value`` when it is a valid apt ``kind`` (full match: no newline, no blank); else ValueError naming ``variable``."""
    if not isinstance(value, str) or not _FIELD_RE[kind].fullmatch(value):
        raise ValueError('%s: %r is not a valid %s for an apt file' % (variable, value, kind))
    return value


def _comment(text):
    return ''.join('# %s\n' % line if line else '#\n' for line in (text or '').splitlines())


def render_pin(packages, version, why='', variable='the pinned version'):
    """The apt preferences stanza that keeps ``packages`` at ``version`` (a pattern such as
    ``1.19.1-*``): priority 1001, which also downgrades to it, so neither ``apt upgrade`` nor
    unattended-upgrades moves them."""
    if not packages:
        raise ValueError('%s: no packages to pin' % variable)
    for name in packages:
        check_field('package', name, variable)
    check_field('version', version, variable)
    return '%sPackage: %s\nPin: version %s\nPin-Priority: 1001\n' % (_comment(why), ' '.join(packages), version)


def render_origin_pin(host, priority=100, why=''):
    """The apt preferences stanza that gives every package of the origin ``host`` ``priority``
    (100: installed only when asked for by name or when nothing else has it)."""
    check_field('origin', host, 'the repository host')
    return '%sPackage: *\nPin: origin "%s"\nPin-Priority: %d\n' % (_comment(why), host, int(priority))


def origin_of(url):
    """The host name apt matches ``Pin: origin`` against (no port, no credentials)."""
    netloc = url.split('://', 1)[-1].split('/', 1)[0]
    return netloc.rsplit('@', 1)[-1].split(':')[0]
