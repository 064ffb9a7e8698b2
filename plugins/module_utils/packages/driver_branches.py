# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver branches each driver source carries, per distribution: ONE table, beside the CUDA
repository table (``cuda_repos.py``).

The plan (``plan/driver_branch.py``, through ``plan/driver.py``) installs, where nothing else
decides the branch (no ``nvidia_driver_branch`` or ``_version``, no driver installed, or
``nvidia_driver_upgrade``), the newest branch of this table's row that every GPU of the host
supports. The row is picked by the host's facts (``distribution``,
``distribution_major_version``) and ``nvidia_driver_source``, so the plan decides the branch in
one pass.

SOURCES: Debian 12 packages nvidia-graphics-drivers 535, Debian 13 550 (the packages the role
installs for the ``distro`` source, roles/nvidia_driver/vars/Debian_<major>.yml); Ubuntu's archive
ships the ``-server`` driver packages of R580; NVIDIA's CUDA repository (``cuda_repo``) the R580
driver packages the role installs there. EL has no driver of its own (``cuda_repo`` only).

Pure data and functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.cuda_repos import EL_LIKE

SOURCES = ('distro', 'cuda_repo')

# (distribution family key, major) -> source -> (branches, where they come from). Family keys as
# cuda_repos.REPOSITORIES (EL-like distributions are 'rhel'); the major as ansible_facts says it.
BRANCHES = {
    ('debian', '12'): {
        'distro': ((535,), "Debian 12's archive packages nvidia-graphics-drivers 535"),
        'cuda_repo': ((580,), "NVIDIA's CUDA repository debian12: the R580 driver packages"),
    },
    ('debian', '13'): {
        'distro': ((550,), "Debian 13's archive packages nvidia-graphics-drivers 550"),
        'cuda_repo': ((580,), "NVIDIA's CUDA repository debian13: the R580 driver packages"),
    },
    ('ubuntu', '22'): {
        'distro': ((580,), "Ubuntu 22.04's archive: the R580 -server driver packages"),
        'cuda_repo': ((580,), "NVIDIA's CUDA repository ubuntu2204: the R580 driver packages"),
    },
    ('ubuntu', '24'): {
        'distro': ((580,), "Ubuntu 24.04's archive: the R580 -server driver packages"),
        'cuda_repo': ((580,), "NVIDIA's CUDA repository ubuntu2404: the R580 driver packages"),
    },
    ('rhel', '9'): {
        'cuda_repo': ((580,), "NVIDIA's CUDA repository rhel9: the R580 module streams"),
    },
}


def _key(distribution, major):
    family = str(distribution or '').lower()
    return ('rhel' if family in EL_LIKE else family, str(major if major is not None else ''))


def source_branches(distribution, major, source):
    """``{value, reason}``: the branches (sorted ints) ``source`` carries on this platform.

    ``value`` is None where the host's platform is not given (``distribution`` None: the plan
    leaves the branch open) or the table has no row for it or for the source (the reason says which,
    and that nvidia_driver_branch decides then).
    """
    if distribution in (None, ''):
        return {'value': None, 'reason': 'the host\'s distribution is not known to the plan (ansible_facts.distribution '
                                         'and distribution_major_version)'}
    row = BRANCHES.get(_key(distribution, major))
    if row is None:
        known = ', '.join('%s %s' % k for k in sorted(BRANCHES))
        return {'value': None, 'reason': 'the collection\'s table of driver branches has no row for %s %s (known: %s); '
                                         'set nvidia_driver_branch' % (distribution, major, known)}
    if source not in row:
        return {'value': None, 'reason': 'nvidia_driver_source %s carries no driver on %s %s (the table has: %s)'
                                         % (source, distribution, major, ', '.join(sorted(row)))}
    branches, where = row[source]
    return {'value': sorted(branches), 'reason': where}


def default_branch(distribution, major, source):
    """The newest branch ``source`` carries on this platform (int), or None (see source_branches)."""
    found = source_branches(distribution, major, source)['value']
    return found[-1] if found else None
