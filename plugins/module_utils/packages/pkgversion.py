# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Package version ordering: dpkg's and RPM's, which differ.

dpkg (``verrevcmp``, Debian Policy 5.6.12): epoch, upstream, revision; ``~`` sorts before
everything, letters before other characters, digit runs numerically. python3-apt's
``apt_pkg.version_compare`` is used where importable.

RPM (``rpmvercmp`` of rpm 4.x): epoch, version, release; characters that are neither letters nor
digits only separate segments (``1_0`` equals ``1.0``), a numeric segment is newer than an
alphabetic one (``1.1`` > ``1.a``, dpkg says the opposite), ``~`` sorts before and ``^`` after
the end of the string but before another segment (``1.0^git1`` < ``1.0.1``, dpkg says the
opposite). Sorting RPM versions with dpkg's rules picks the wrong "newest" package.

Case tables: tests/unit/plugins/module_utils/data/pkgversion_cases.yml. Standard library only,
Python 3.8+ (imported by modules on targets). Dotted numeric versions (driver, CUDA) are
``core/versions.py``'s.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import functools

try:
    import apt_pkg  # python3-apt, which ansible.builtin.apt needs as well
    apt_pkg.init_system()
    HAS_APT_PKG = True
except Exception:  # pylint: disable=broad-except  # absent on EL and in the unit tests' venv
    apt_pkg = None
    HAS_APT_PKG = False

BACKENDS = ('apt', 'dnf')


def split_version(version):
    """(epoch, upstream, revision) of a Debian version or an RPM [epoch:]version-release."""
    version = version.strip()
    epoch = 0
    if ':' in version:
        head, version = version.split(':', 1)
        epoch = int(head) if head.isdigit() else 0
    upstream, sep, revision = version.rpartition('-')
    if not sep:
        upstream, revision = version, ''
    return epoch, upstream, revision


# --------------------------------------------------------------------------- dpkg

def _dpkg_order(char):
    if char == '~':
        return -1
    if char.isdigit():
        return 0
    if char.isalpha():
        return ord(char)
    return ord(char) + 256


def _verrevcmp(left, right):
    """dpkg's verrevcmp of one part (upstream or revision)."""
    i = j = 0
    while i < len(left) or j < len(right):
        first_diff = 0
        while (i < len(left) and not left[i].isdigit()) or (j < len(right) and not right[j].isdigit()):
            lc = _dpkg_order(left[i]) if i < len(left) else 0
            rc = _dpkg_order(right[j]) if j < len(right) else 0
            if lc != rc:
                return lc - rc
            i += 1
            j += 1
        while i < len(left) and left[i] == '0':
            i += 1
        while j < len(right) and right[j] == '0':
            j += 1
        while i < len(left) and left[i].isdigit() and j < len(right) and right[j].isdigit():
            if not first_diff:
                first_diff = ord(left[i]) - ord(right[j])
            i += 1
            j += 1
        if i < len(left) and left[i].isdigit():
            return 1
        if j < len(right) and right[j].isdigit():
            return -1
        if first_diff:
            return first_diff
    return 0


def dpkg_compare(left, right):
    """Negative, zero or positive as ``left`` is older, equal or newer (dpkg ordering)."""
    if HAS_APT_PKG:
        return apt_pkg.version_compare(left, right)
    le, lu, lr = split_version(left)
    re_, ru, rr = split_version(right)
    if le != re_:
        return le - re_
    return _verrevcmp(lu, ru) or _verrevcmp(lr, rr)


# --------------------------------------------------------------------------- RPM

def _alnum(char):
    return char.isascii() and char.isalnum()


def rpmvercmp(left, right):
    """RPM's rpmvercmp of one part (version or release): -1, 0 or 1."""
    if left == right:
        return 0
    i = j = 0
    while i < len(left) or j < len(right):
        while i < len(left) and not _alnum(left[i]) and left[i] not in '~^':
            i += 1
        while j < len(right) and not _alnum(right[j]) and right[j] not in '~^':
            j += 1
        one = left[i] if i < len(left) else ''
        two = right[j] if j < len(right) else ''
        if one == '~' or two == '~':
            if one != '~':
                return 1
            if two != '~':
                return -1
            i += 1
            j += 1
            continue
        if one == '^' or two == '^':
            if not one:
                return -1
            if not two:
                return 1
            if one != '^':
                return 1
            if two != '^':
                return -1
            i += 1
            j += 1
            continue
        if not (one and two):
            break
        test = str.isdigit if one.isdigit() else (lambda c: c.isascii() and c.isalpha())
        end_i, end_j = i, j
        while end_i < len(left) and test(left[end_i]):
            end_i += 1
        while end_j < len(right) and test(right[end_j]):
            end_j += 1
        seg1, seg2 = left[i:end_i], right[j:end_j]
        if not seg2:
            # Segments of different kinds: the numeric one is newer.
            return 1 if one.isdigit() else -1
        if one.isdigit():
            seg1, seg2 = seg1.lstrip('0'), seg2.lstrip('0')
            if len(seg1) != len(seg2):
                return 1 if len(seg1) > len(seg2) else -1
        if seg1 != seg2:
            return 1 if seg1 > seg2 else -1
        i, j = end_i, end_j
    rest1, rest2 = i < len(left), j < len(right)
    if not rest1 and not rest2:
        return 0
    return -1 if not rest1 else 1


def rpm_compare(left, right):
    """Negative, zero or positive as ``left`` is older, equal or newer ([epoch:]version-release, RPM)."""
    le, lv, lr = split_version(left)
    re_, rv, rr = split_version(right)
    if le != re_:
        return 1 if le > re_ else -1
    return rpmvercmp(lv, rv) or (rpmvercmp(lr, rr) if lr and rr else 0)


# --------------------------------------------------------------------------- either

def compare(left, right, backend='apt'):
    """The package manager's ordering: ``apt`` (dpkg) or ``dnf`` (RPM)."""
    if backend not in BACKENDS:
        raise ValueError('unknown package backend %r (%s)' % (backend, ', '.join(BACKENDS)))
    return dpkg_compare(left, right) if backend == 'apt' else rpm_compare(left, right)


def sort_desc(versions, backend='apt'):
    """Unique versions, newest first, in the package manager's ordering."""
    unique = []
    for version in versions:
        if version not in unique:
            unique.append(version)
    return sorted(unique, key=functools.cmp_to_key(lambda a, b: compare(a, b, backend)), reverse=True)
