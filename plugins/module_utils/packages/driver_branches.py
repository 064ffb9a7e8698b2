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

# One row per (platform, driver source), each with its vendor source and the date it was read
# (docs/vendor-facts.md lists them). ``where`` is what the plan's reason says.
_CI = ('installed by molecule nvidia_driver on the lab\'s Debian %s nodes (README support matrix: %s)')
_UBUNTU = ('Ubuntu\'s archive, source package nvidia-graphics-drivers-580-server (tests/fixtures/ubuntu-index/%s.txt: %s)')
_CUDA_REPO = ('NVIDIA Driver Installation Guide (https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/): '
              'branch-named driver packages in the CUDA repository %s up to R580 (nvidia_repo.py; '
              'tests/fixtures/ubuntu-index/nvidia-repo.txt)')
BRANCH_ROWS = (
    {'platform': ('debian', '12'), 'driver_source': 'distro', 'branches': (535,),
     'where': "Debian 12's archive packages nvidia-graphics-drivers 535", 'read': '2026-12-07',
     'source': 'Debian package nvidia-driver in bookworm (https://packages.debian.org/bookworm/nvidia-driver): 535.261.03 '
               'as a published table of Debian\'s driver versions quotes it (https://neurite.github.io/debian-setup/'
               '0302-nvidia.html); ' + _CI % ('12', '535.309.01 and 535.261.03')},
    {'platform': ('debian', '12'), 'driver_source': 'cuda_repo', 'branches': (580,),
     'where': "NVIDIA's CUDA repository debian12: the R580 driver packages", 'read': '2026-12-07',
     'source': _CUDA_REPO % 'debian12',
     'unconfirmed': 'the repository\'s package index was not read here (a test double serves it in CI)'},
    {'platform': ('debian', '13'), 'driver_source': 'distro', 'branches': (550,),
     'where': "Debian 13's archive packages nvidia-graphics-drivers 550", 'read': '2026-12-07',
     'source': 'Debian package nvidia-driver in trixie (https://packages.debian.org/trixie/nvidia-driver): 550.163.01 '
               'as a published table of Debian\'s driver versions quotes it (https://neurite.github.io/debian-setup/'
               '0302-nvidia.html); ' + _CI % ('13', '550.163.01')},
    {'platform': ('debian', '13'), 'driver_source': 'cuda_repo', 'branches': (580,),
     'where': "NVIDIA's CUDA repository debian13: the R580 driver packages", 'read': '2026-12-07',
     'source': _CUDA_REPO % 'debian13',
     'unconfirmed': 'the repository\'s package index was not read here (a test double serves it in CI)'},
    {'platform': ('ubuntu', '22'), 'driver_source': 'distro', 'branches': (580,),
     'where': "Ubuntu 22.04's archive: the R580 -server driver packages", 'read': '2026-12-07',
     'source': _UBUNTU % ('jammy', '"nvidia-driver-580-server/jammy-updates,jammy-security 580.95.05-0ubuntu0.22.04.2"')},
    {'platform': ('ubuntu', '24'), 'driver_source': 'distro', 'branches': (580,),
     'where': "Ubuntu 24.04's archive: the R580 -server driver packages", 'read': '2026-12-07',
     'source': _UBUNTU % ('noble', 'no noble listing found; jammy and questing 25.10 carry it'),
     'unconfirmed': 'no published noble listing of the 580-server packages was found (fixture evidence: none)'},
    {'platform': ('ubuntu', '22'), 'driver_source': 'cuda_repo', 'branches': (580,),
     'where': "NVIDIA's CUDA repository ubuntu2204: the R580 driver packages", 'read': '2026-12-07',
     'source': _CUDA_REPO % 'ubuntu2204', 'unconfirmed': 'the repository\'s package index was not read here'},
    {'platform': ('ubuntu', '24'), 'driver_source': 'cuda_repo', 'branches': (580,),
     'where': "NVIDIA's CUDA repository ubuntu2404: the R580 driver packages", 'read': '2026-12-07',
     'source': _CUDA_REPO % 'ubuntu2404', 'unconfirmed': 'the repository\'s package index was not read here'},
    {'platform': ('rhel', '9'), 'driver_source': 'cuda_repo', 'branches': (580,),
     'where': "NVIDIA's CUDA repository rhel9: the R580 module streams", 'read': '2026-12-07',
     'source': _CUDA_REPO % 'rhel9 (dnf module streams)', 'unconfirmed': 'the repository\'s module metadata was not '
                                                                         'read here; EL is not run in CI'},
)

# (distribution family key, major) -> driver source -> (branches, where they come from). Family keys
# as cuda_repos.REPOSITORIES (EL-like distributions are 'rhel'); the major as ansible_facts says it.
BRANCHES = {}
for _row in BRANCH_ROWS:
    BRANCHES.setdefault(_row['platform'], {})[_row['driver_source']] = (_row['branches'], _row['where'])


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
