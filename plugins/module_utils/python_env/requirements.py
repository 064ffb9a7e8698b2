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


def lower_bound(spec):
    for part in (spec or '').split(','):
        for op in ('>=', '~=', '=='):
            if part.startswith(op):
                return part[len(op):]
    return None
