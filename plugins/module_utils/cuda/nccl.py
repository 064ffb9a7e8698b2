# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL build the cuda_toolkit role installs: the exact package version, read from the host's
``apt-cache policy libnccl2 libnccl-dev`` after NVIDIA's CUDA repository is configured.

NCCL is one package per host, with one build per CUDA ``major.minor``, told apart only by the
version (``2.21.5-1+cuda12.4``). apt takes ``libnccl2=<version>`` as an exact version and nothing
else (a glob such as ``*+cuda12.4*`` is not a version pin for ``apt-get install``), so the version is
picked here: the newest that both packages carry for the default toolkit's CUDA.

Pure functions, standard library only, Python 3.8+ (filter gpuops.dlserver.__private.cuda_toolkit_nccl;
tests: tests/unit/plugins/module_utils/cuda/test_nccl.py, on published ``apt policy`` output).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_policy
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import pkgversion


# A Debian version as it may reach apt's command line (no blank, no shell or glob character).
_VERSION_RE = re.compile(r'[0-9][A-Za-z0-9.+~:-]*')
_CUDA_RE = re.compile(r'(\d{1,2})\.(\d{1,2})')


class NcclError(ValueError):
    """No NCCL build fits (the message names the variable and the builds there are)."""


def parse_policy(text):
    """{package: {'installed': version or None, 'versions': [versions in the table]}} from
    ``apt-cache policy <packages>`` run with a C locale (the collection's one parser,
    packages/apt_policy.py, lenient). A version that is not one a command line may carry is left
    out, never passed on."""
    found = {}
    for name, entry in apt_policy.parse(text, strict=False).items():
        versions = []
        for row in entry['versions']:
            if _VERSION_RE.fullmatch(row['version']) and row['version'] not in versions:
                versions.append(row['version'])
        installed = entry['installed']
        found[name] = {'installed': installed if installed and _VERSION_RE.fullmatch(installed) else None,
                       'versions': versions}
    return found


def cuda_of(version):
    """'12.4' of an NCCL package version ``2.21.5-1+cuda12.4`` (a local suffix after it allowed), or None.
    The whole number counts: ``+cuda12.10`` is CUDA 12.10, never 12.1."""
    match = re.search(r'\+cuda(\d{1,2}\.\d{1,2})(?!\d)', version or '')
    return match.group(1) if match else None


def pick(policy_text, wanted):
    """The NCCL packages for the plan's ``nccl`` decision (cuda_toolkit_plan's: ``packages``,
    ``cuda``, ``reason``): {packages, cuda, version, install, reason}.

    ``cuda`` None (the distribution's own NCCL, or NCCL not wanted) installs the names as they are.
    Otherwise the newest version both packages carry for that CUDA; NcclError names
    cuda_toolkit_nccl and the CUDA builds the repository has when there is none."""
    wanted = dict(wanted or {})
    names = list(wanted.get('packages') or [])
    cuda = wanted.get('cuda')
    if not names or cuda is None:
        return dict(wanted, version=None, install=names)
    if not isinstance(cuda, str) or not _CUDA_RE.fullmatch(cuda):
        raise NcclError('cuda_toolkit_nccl: %r is not a CUDA major.minor to match NCCL to' % (cuda,))
    table = parse_policy(policy_text)
    per_package, builds = [], set()
    for name in names:
        versions = (table.get(name) or {}).get('versions') or []
        builds.update(c for c in (cuda_of(v) for v in versions) if c)
        per_package.append(set(v for v in versions if cuda_of(v) == cuda))
    common = set.intersection(*per_package) if per_package else set()
    if not common:
        carried = sorted(builds, key=lambda c: tuple(int(p) for p in c.split('.')))
        raise NcclError('cuda_toolkit_nccl: the configured repositories carry no %s build for CUDA %s, the default '
                        'toolkit (cuda_toolkit_default); NCCL builds they carry: %s. Choose a default toolkit with an '
                        'NCCL build, or set cuda_toolkit_nccl: false'
                        % (' and '.join(names), cuda, ', '.join('CUDA ' + c for c in carried) or 'none'))
    version = pkgversion.sort_desc(sorted(common), backend='apt')[0]
    return {
        'packages': names,
        'cuda': cuda,
        'version': version,
        'install': ['%s=%s' % (name, version) for name in names],
        'reason': 'NCCL %s, the newest build for the default toolkit CUDA %s in the repository (%s)'
                  % (version, cuda, wanted.get('reason') or 'one NCCL per host'),
    }
