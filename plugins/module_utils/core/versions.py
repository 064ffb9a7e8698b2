# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dotted numeric versions and driver branches, parsed in one place.

Driver branches and driver versions (``580``, ``R580``, ``580.95.05``, ``1:580.95.05-1``,
``535.261.03-1~deb12u1``, ``580.95.05-0ubuntu1``, ``580.95.05-1.el9``) go through
:func:`driver_branch` and :func:`driver_version` - the plan, the nvidia_driver role's decisions,
the adopt rules, the DCGM and GPU tables all call them; nothing else parses a branch. CUDA versions (``12.4``), Kubernetes and Volcano versions
(``v1.30.4-eks-1``), toolkit versions (``1.17.8``): every module_utils that compares such a
version uses :func:`numeric` and :func:`branch`. Package-manager ordering (dpkg, RPM epochs and
revisions) lives in ``packages/``; PEP 440 is the ``packaging`` library's, on the controller.

Pure functions, standard library only, Python 3.8+ (imported by modules on targets).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NUMERIC = re.compile(r'v?(\d+(?:\.\d+)*)(?:[-+~_].*)?', re.DOTALL)


def numeric(text, what='version', parts=None):
    """'580.95.05' -> (580, 95, 5); 'v1.30.4-eks-1' -> (1, 30, 4).

    ``parts`` pads (with 0) or cuts the tuple to that many numbers. Surrounding blanks are
    ignored; anything else that is not a version raises ValueError naming ``what``.
    """
    if isinstance(text, bool) or text is None:
        raise ValueError('%s %r is not a version such as 1.30 or 580.95.05' % (what, text))
    if isinstance(text, int):
        text = str(text)
    value = str(text).strip()
    match = _NUMERIC.fullmatch(value)
    if not match or '\n' in value:
        raise ValueError('%s %r is not a version such as 1.30 or 580.95.05' % (what, text))
    numbers = tuple(int(p) for p in match.group(1).split('.'))
    if parts is not None:
        numbers = (numbers + (0,) * parts)[:parts]
    return numbers


def numeric_or_none(text, what='version', parts=None):
    """Like :func:`numeric`, but None (not an error) for None or text that is no version."""
    try:
        return numeric(text, what, parts)
    except ValueError:
        return None


# A driver branch: 3-4 digits, optionally prefixed with R (580, "580", "R580").
_DRIVER_BRANCH = re.compile(r'[Rr]?([0-9]{3,4})')
# A driver version, or a package version of one: [epoch:]branch.minor[.patch][-revision] - the
# revision as dpkg (1~deb12u1, 0ubuntu1) or RPM (1.el9) writes it.
_DRIVER_VERSION = re.compile(r'(?:([0-9]+):)?(([0-9]{3,4})\.[0-9]+(?:\.[0-9]+)?)(?:-([A-Za-z0-9.+~_]+))?')


def driver_branch(value, what='nvidia_driver_branch'):
    """A driver branch as an int: 580 of 580, '580' or 'R580'.

    The whole text must be the branch (no blanks, no newline); an int must lie in 100..9999 (a
    bool is never a branch). Anything else raises ValueError naming ``what``.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        if 100 <= value <= 9999:
            return value
    elif isinstance(value, str):
        match = _DRIVER_BRANCH.fullmatch(value)
        if match:
            return int(match.group(1))
    raise ValueError('%s must be a driver branch number such as 580 (an integer or a string of 3-4 digits, '
                     'optionally prefixed with R), got %r' % (what, value))


def driver_branch_or_none(value):
    """Like :func:`driver_branch`, but None (not an error) for None, '' or what is no branch."""
    try:
        return driver_branch(value)
    except ValueError:
        return None


def driver_version(value, what='nvidia_driver_version'):
    """A driver version or a package version of one, split: ``{epoch, upstream, branch, revision, numbers}``.

    '1:535.261.03-1~deb12u1' -> epoch 1, upstream '535.261.03', branch 535, revision '1~deb12u1',
    numbers (535, 261, 3); epoch and revision are None where absent. The whole text must match
    (no blanks, no newline); anything else raises ValueError naming ``what``.
    """
    match = _DRIVER_VERSION.fullmatch(value) if isinstance(value, str) else None
    if not match:
        raise ValueError('%s must be a driver version such as 580.95.05 or a package version such as '
                         '580.95.05-1, got %r' % (what, value))
    epoch, upstream, major, revision = match.groups()
    return {'epoch': int(epoch) if epoch is not None else None, 'upstream': upstream, 'branch': int(major),
            'revision': revision, 'numbers': tuple(int(p) for p in upstream.split('.'))}


def driver_version_or_none(value):
    """Like :func:`driver_version`, but None (not an error) for None, '' or what is no driver version."""
    try:
        return driver_version(value)
    except ValueError:
        return None


def branch(version):
    """The driver branch of a driver or package version: 580 of '580.95.05' or '1:580.95.05-1'
    (None when it is no driver version)."""
    parsed = driver_version_or_none(version)
    return parsed['branch'] if parsed else None


def dotted(numbers):
    """(12, 4) -> '12.4'."""
    return '.'.join(str(n) for n in numbers)
