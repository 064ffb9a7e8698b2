# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver branch: the ONE function that decides it (the plan calls it; nvidia_driver installs it).

The rule (docs/hardware-gating.md):

1. ``nvidia_driver_branch`` when the user set it, else the branch of ``nvidia_driver_version``;
2. else the branch of the installed driver, kept: a fleet on R535 stays on R535 until
   ``nvidia_driver_branch`` or ``nvidia_driver_upgrade`` asks for a change;
3. else (nothing installed, or ``nvidia_driver_upgrade``) the newest branch that every GPU of
   the host supports AND the driver source carries: the branches per distribution and source are
   the collection's table (``packages/driver_branches.py``), picked by the host's facts, so the
   plan decides in one pass. Only where the platform is not given (the gpu_plan filter without
   ``distribution``) or the table has no row for it is the branch left open (``from: source``),
   with the range every GPU accepts and the reason.

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

FROM_REQUESTED = 'nvidia_driver_branch'
FROM_VERSION = 'nvidia_driver_version'
FROM_INSTALLED = 'installed'
FROM_NEWEST = 'newest_supported'
FROM_SOURCE = 'source'
FROM_NONE = 'none'


def _span(low, high):
    if low is not None and high is not None:
        return 'branches %d to %d' % (low, high)
    if low is not None:
        return 'branch %d or newer' % low
    if high is not None:
        return 'branch %d or older' % high
    return 'any branch'


def fits(branch, low, high):
    """Whether ``branch`` lies in the range every GPU accepts (None: unbounded)."""
    return (low is None or branch >= low) and (high is None or branch <= high)


def choose(requested=None, version=None, version_branch=None, upgrade=False, installed=None,
           installed_version=None, low=None, high=None, available=None, available_reason=None):
    """``{value, from, reason}``: the branch to install.

    ``requested``: nvidia_driver_branch (int or None); ``version``/``version_branch``:
    nvidia_driver_version and its branch; ``upgrade``: nvidia_driver_upgrade; ``installed``:
    the branch of the driver on the host (None: none known); ``low``/``high``: the range every
    GPU accepts; ``available``: the branches the driver source carries (None: not known);
    ``available_reason``: where they come from (packages/driver_branches.py's reason), added to
    the reason. ``value`` is None when the source's branches are not known (``from: source``) or
    it carries no branch in the range (``from: none``).
    """
    where = '; %s' % available_reason if available_reason else ''
    if requested is not None:
        return {'value': requested, 'from': FROM_REQUESTED, 'reason': 'branch %d from nvidia_driver_branch' % requested}
    if version_branch is not None:
        return {'value': version_branch, 'from': FROM_VERSION,
                'reason': 'branch %d of nvidia_driver_version %s' % (version_branch, version)}
    if installed is not None and not upgrade:
        return {'value': installed, 'from': FROM_INSTALLED,
                'reason': 'branch %d of the installed driver%s, kept (set nvidia_driver_branch, or '
                          'nvidia_driver_upgrade: true, to change it)'
                          % (installed, ' %s' % installed_version if installed_version else '')}
    why = 'nvidia_driver_upgrade is true' if installed is not None else 'no driver is installed'
    if available is None:
        return {'value': None, 'from': FROM_SOURCE,
                'reason': '%s: the newest branch the driver source carries within %s (every GPU here); not '
                          'decided: the branches of the source are not known%s' % (why, _span(low, high), where)}
    carried = sorted(set(int(b) for b in available))
    candidates = [b for b in carried if fits(b, low, high)]
    if not candidates:
        return {'value': None, 'from': FROM_NONE,
                'reason': '%s, and the driver source carries %s, none within %s (every GPU here)%s'
                          % (why, ', '.join(str(b) for b in carried) or 'no branch', _span(low, high), where)}
    return {'value': candidates[-1], 'from': FROM_NEWEST,
            'reason': '%s: branch %d, the newest the driver source carries (%s) within %s (every GPU here)%s'
                      % (why, candidates[-1], ', '.join(str(b) for b in carried), _span(low, high), where)}
