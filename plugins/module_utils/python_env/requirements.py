# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Package requirements of python_stack environments: names, pip requirements, lock files.

Runs on the managed nodes (module python_stack_host), so standard library only, Python 3.8+.
The subset of PEP 508 the role accepts (name, extras, version specifiers, marker; no direct
references, no options) is matched whole (``re.fullmatch``): a newline is never part of a
requirement.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NAME = re.compile(r'[A-Za-z0-9][A-Za-z0-9_.-]{0,63}')
# A PEP 508 requirement as the role accepts it: name, optional extras, optional version
# specifiers, optional marker (one line). Direct references and options are refused.
_REQ = re.compile(
    r'[ \t]*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)[ \t]*'
    r'(?P<extras>\[[ \t]*[A-Za-z0-9._-]+(?:[ \t]*,[ \t]*[A-Za-z0-9._-]+)*[ \t]*\])?[ \t]*'
    r'(?P<spec>(?:(?:===|==|!=|~=|<=|>=|<|>)[ \t]*[A-Za-z0-9.*+!_-]+[ \t]*,?[ \t]*)*)'
    r'(?P<marker>;[^\n]*)?')
_CONDA_PKG = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]*(?:::[A-Za-z0-9_.-]+)?(?:[ \t]*[=<>!~]{1,3}[ \t]*[A-Za-z0-9.*+_,|<>=!-]+)?')
_VERSION = re.compile(r'(\d+)\.(\d+)')
_EXACT = re.compile(r'==[ \t]*([0-9][A-Za-z0-9.+!_-]*)')


def valid_name(name):
    """Whether ``name`` is an environment name (letters, digits, ., _, -; at most 64)."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def valid_conda_package(item):
    """Whether ``item`` is a conda match spec the role accepts (name[=version])."""
    return isinstance(item, str) and _CONDA_PKG.fullmatch(item.strip()) is not None


def canonical(name):
    """PEP 503 normalised project name."""
    return re.sub(r'[-_.]+', '-', name).lower()


def parse_requirement(text):
    """(dict or None, reason): name, canonical, extras, spec, marker of one pip requirement."""
    if not isinstance(text, str) or not text.strip():
        return None, 'a package must be a non-empty string, not %r' % (text,)
    if text.strip().startswith('-') or '://' in text or ' @ ' in text:
        return None, ('package %r: options and direct URLs are not accepted in the package list; '
                      'set index_url / extra_index_urls instead' % text)
    match = _REQ.fullmatch(text)
    if not match:
        return None, 'package %r is not a valid requirement (PEP 508: name[extras]<specifiers>)' % text
    spec = re.sub(r'\s+', '', match.group('spec') or '').rstrip(',')
    extras = []
    if match.group('extras'):
        extras = sorted(e.strip() for e in match.group('extras').strip('[] ').split(','))
    return ({'name': match.group('name'), 'canonical': canonical(match.group('name')), 'extras': extras,
             'spec': spec, 'marker': (match.group('marker') or '').strip()}, 'valid requirement')


def render_requirement(req):
    """The requirement line for a parsed requirement."""
    text = req['name']
    if req['extras']:
        text += '[%s]' % ','.join(req['extras'])
    text += req['spec']
    if req['marker']:
        text += ' ' + req['marker']
    return text


def version_tuple(text):
    """(major, minor) of a package version's release segment (PEP 440: ``2.9.1``, ``2.9.0rc1``,
    ``2.13.0+cpu``), or None. Driver and CUDA versions go through core/versions.py instead."""
    match = _VERSION.match(str(text or ''))
    return (int(match.group(1)), int(match.group(2))) if match else None


def exact_version(spec):
    """The version pinned by ``==X`` (a single specifier), else None."""
    match = _EXACT.fullmatch(spec or '')
    return match.group(1) if match else None


def lock_requirements(text):
    """The requirements of a lock file (pip-compile / uv pip compile output: one pin per line,
    ``--hash`` continuation lines, comments, options), as requirement strings."""
    out = []
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip().rstrip('\\').strip()
        if not line or line.startswith('-'):
            continue
        line = line.split(' --hash', 1)[0].split('\t', 1)[0].strip()
        req, _reason = parse_requirement(line)
        if req is not None:
            out.append(render_requirement(req))
    return out


# Lock files (issue 37): every entry an exact pin or pinned by a hash, before anything is installed
_EXACT_PIN = re.compile(r'(?:===|==)[0-9A-Za-z][A-Za-z0-9.+!_-]*')
_HASH = re.compile(r'--hash[ \t]*[= \t][ \t]*(sha256:[0-9a-fA-F]{64}|sha384:[0-9a-fA-F]{96}|sha512:[0-9a-fA-F]{128})'
                   r'(?=[ \t]|\Z)')
_ANY_HASH = re.compile(r'--hash\b[^ \t]*(?:[ \t]+(?![-])[^ \t]+)?')
_URL_HASH = re.compile(r'#(?:[^ \t]*&)?sha256=[0-9a-fA-F]{64}(?:&[^ \t]*)?\Z')
_COMMENT = re.compile(r'(?:^|[ \t])#.*\Z')
# options of a requirements file that install something this check cannot see pinned
_UNPINNED_OPTIONS = ('-e', '--editable', '-r', '--requirement', '-c', '--constraint')
_PIN_FIX = ('give an exact pin (name==X or name===X) or its --hash, e.g. regenerate the file with uv pip compile '
            '--generate-hashes (or pip-compile --generate-hashes)')


def _logical_lines(text):
    """[(first line number, text)]: the file's lines with backslash continuations joined (pip's reading)."""
    out, buf, start = [], [], None
    for number, line in enumerate(text.split('\n'), 1):
        line = line.rstrip('\r')
        if start is None:
            start = number
        if line.endswith('\\'):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((start, ' '.join(buf)))
        buf, start = [], None
    if buf:
        out.append((start, ' '.join(buf)))
    return out


def lock_entry_problem(entry):
    """The reason one logical line of a lock file is not an exact pin, or None (a pin, a hash-pinned
    entry, an option that installs nothing, a comment, a blank line)."""
    line = _COMMENT.sub('', entry).strip()
    if not line:
        return None
    if re.search(r'[\x00-\x08\x0b-\x1f\x7f\x85\u2028\u2029]', line):
        return 'a control character inside the entry (one entry per line)'
    if line.startswith('-'):
        option = re.split(r'[ \t=]', line, 1)[0]
        if option in _UNPINNED_OPTIONS or re.match(r'-[erc][^-]', line):
            return 'option %s installs what this file does not pin (another file or a checkout)' % option
        return None  # an index, find-links or binary option: it installs nothing itself
    hashed = bool(_HASH.search(line))
    requirement = _ANY_HASH.sub('', line).strip()
    if '://' in requirement or ' @ ' in requirement or requirement.startswith('@'):
        if hashed or _URL_HASH.search(requirement.split(';', 1)[0].strip()):
            return None
        return 'a direct reference without a sha256 (#sha256= or --hash)'
    req, reason = parse_requirement(requirement)
    if req is None:
        return 'not a requirement (%s)' % reason
    if _EXACT_PIN.fullmatch(req['spec']) or hashed:
        return None
    return ('no version at all' if not req['spec'] else 'version %s is a range, not one version' % req['spec'])


def lock_problems(text, where):
    """Every entry of a lock file's ``text`` that is not an exact pin (``==X``/``===X``) or pinned by a
    hash (``--hash=sha256:...``, ``#sha256=`` on a direct reference), each naming ``where`` (the
    variable and the file) and the line: pip would install whatever matches such an entry."""
    if not isinstance(text, str):
        return ['%s is not text' % where]
    found = []
    for number, entry in _logical_lines(text):
        why = lock_entry_problem(entry)
        if why:
            shown = entry.strip()
            shown = shown if len(shown) <= 80 else shown[:77] + '...'
            found.append('%s line %d: %r is not an exact pin: %s; %s' % (where, number, shown, why, _PIN_FIX))
    return found


def lower_bound(spec):
    for part in (spec or '').split(','):
        for op in ('>=', '~=', '=='):
            if part.startswith(op):
                return part[len(op):]
    return None
