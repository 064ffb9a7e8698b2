# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Dotted numeric versions, parsed in one place.

Driver versions (``580.95.05``), CUDA versions (``12.4``), Kubernetes and Volcano versions
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


def branch(version):
    """The driver branch of a driver version: 580 of '580.95.05' (None when not a version)."""
    numbers = numeric_or_none(version)
    return numbers[0] if numbers else None


def dotted(numbers):
    """(12, 4) -> '12.4'."""
    return '.'.join(str(n) for n in numbers)
