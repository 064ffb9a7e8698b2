# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one parser of ``apt-cache policy <package>...`` output (run with a C locale).

Two readers use it: the probe (plugins/module_utils/probe/packages.py: which repository the
INSTALLED version of a package comes from, strict - an unexpected line means the output is not
what it seems) and the cuda_toolkit role's NCCL pick (plugins/module_utils/cuda/nccl.py: the
versions a repository carries, lenient - a line it does not know is skipped, never passed on).

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# "libnccl-dev:" (or "libnccl-dev:amd64:") at the start of a line opens a package.
_PACKAGE = re.compile(r'(\S+):\Z')
# "  Installed: <version>|(none)", "  Candidate: ...".
_FIELD = re.compile(r'  (Installed|Candidate): (\S+)\Z')
_SKIP = ('Version table:', 'Package pin:', 'Installed:', 'Candidate:')
# Version table rows: " *** <version> <priority>" (the installed one) or "     <version> <priority>".
_VERSION = re.compile(r'( \*\*\*|    ) (\S+) (-?\d+)\Z')
# Where a version comes from: "        500 <url> <suite/component> Packages", "        500 <url>  Packages"
# (a flat repository such as NVIDIA's CUDA repository), or "        100 /var/lib/dpkg/status".
_SOURCE = re.compile(r'\s+(-?\d+) (\S+)(?: (\S*) (\S+) Packages|\s+Packages)?\Z')

DPKG_STATUS = '/var/lib/dpkg/status'


class AptPolicyError(ValueError):
    """The output has a line that fits nowhere (strict parsing only)."""


def parse(text, strict=True):
    """``{package: {installed, candidate, versions}}`` from ``apt-cache policy`` output.

    ``installed``/``candidate``: the version, or None for ``(none)``; ``versions``: the version
    table in its order, each ``{version, priority, installed, sources}`` with ``sources`` a list
    of ``{priority, url, dist}`` (``dist`` is ``suite/component`` for an archive, ``''`` for a flat
    repository and for ``/var/lib/dpkg/status``). An architecture qualifier (``pkg:amd64``) is
    dropped from the package name. ``strict``: raise AptPolicyError on a line that fits nowhere;
    otherwise skip it.
    """
    found, current, row = {}, None, None
    for line in (text or '').splitlines():
        line = line.rstrip('\r')
        if not line.strip():
            continue
        match = _PACKAGE.fullmatch(line)
        if match and not line.startswith(' '):
            name = match.group(1).split(':')[0]
            current = found.setdefault(name, {'installed': None, 'candidate': None, 'versions': []})
            row = None
            continue
        if current is None:
            if strict:
                raise AptPolicyError('apt-cache policy: a line before any package: %r' % line)
            continue
        match = _FIELD.fullmatch(line)
        if match:
            value = match.group(2)
            current[match.group(1).lower()] = None if value == '(none)' else value
            continue
        if line.strip().startswith(_SKIP):
            continue
        match = _VERSION.fullmatch(line)
        if match:
            row = {'version': match.group(2), 'priority': int(match.group(3)),
                   'installed': match.group(1) == ' ***', 'sources': []}
            current['versions'].append(row)
            continue
        match = _SOURCE.fullmatch(line)
        if match:
            if row is not None:
                row['sources'].append({'priority': int(match.group(1)), 'url': match.group(2),
                                       'dist': match.group(3) or ''})
            continue
        if strict:
            raise AptPolicyError('apt-cache policy: unexpected line %r' % line)
    return found
