# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cuda_toolkit role's decisions: which toolkits, packages and default, and whether the
driver runs them.

Pure functions, standard library only, Python 3.8+ (the filter gpuops.dlserver.__private.cuda_toolkit_plan
reaches them; case table tests/unit/plugins/module_utils/data/cuda_toolkit_cases.yml). Every
decision is a value plus a reason; every refusal names the variable to change and what would
work. The tables below are data with their sources.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.cuda_match import MINOR_COMPAT_DRIVER

# The minimum driver of each CUDA toolkit release (its GA release, Linux x86_64): NVIDIA's CUDA
# Toolkit release notes, Table 3 "CUDA Toolkit and Corresponding Driver Versions", column "Toolkit
# Driver Version", row "CUDA X.Y GA". A driver at least this new runs everything the toolkit builds,
# PTX JIT included. This is the table's minimum, not the driver bundled in the release's runfile
# (cuda_12.8.0_570.86.10_linux.run ships 570.86.10; Table 3 says CUDA 12.8 GA needs >=570.26).
# Older drivers of the same CUDA major run its builds through minor-version compatibility
# (MINOR_COMPAT_DRIVER, shared with python_env/cuda_match.py: 11 -> 450.80.02, 12 -> 525.60.13,
# 13 -> 580). These are also the toolkit versions the role knows (there was no 12.7). Each row
# carries its source and the date it was read, as data (docs/vendor-facts.md lists them).
# 13.3's row is read as public files quote it (data/cuda_table3.yml). A row without 'driver' (13.4, GA
# versioned 13.4.1, Update 1 13.4.2; 13.5) is a release whose Table 3 row was not read: known, planned
# from the table's rule only (its 'reason'), no number invented; cuda_toolkit_driver_compat: full refuses it.
RELEASE_NOTES = 'https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html'
RELEASE_NOTES_132 = 'https://docs.nvidia.com/cuda/archive/13.2.0/cuda-toolkit-release-notes/index.html'
RELEASE_NOTES_133 = 'https://docs.nvidia.com/cuda/archive/13.3.0/cuda-toolkit-release-notes/index.html'
RELEASE_NOTES_134 = 'https://docs.nvidia.com/cuda/archive/13.4.1/cuda-toolkit-release-notes/index.html'
RELEASE_NOTES_134_U1 = 'https://docs.nvidia.com/cuda/archive/13.4.2/cuda-toolkit-release-notes/index.html'
TABLE3 = "Table 3 'CUDA Toolkit and Corresponding Driver Versions', row 'CUDA %s GA', Linux x86_64"
_READ = '2026-12-07'
_BY_THE_RULE = ('no Table 3 minimum is known for CUDA %s: it is planned from the table\'s rule, minor-version '
                'compatibility (a CUDA 13.x toolkit runs from driver 580, MINOR_COMPAT_ROWS); '
                'cuda_toolkit_driver_compat: full refuses it')
RELEASE_DRIVER_ROWS = tuple(
    {'toolkit': toolkit_version, 'driver': driver, 'source': '%s, %s' % (url, TABLE3 % toolkit_version),
     'read': _READ}
    for toolkit_version, driver, url in (
        ('11.8', '520.61.05', RELEASE_NOTES),
        ('12.0', '525.60.13', RELEASE_NOTES),
        ('12.1', '530.30.02', RELEASE_NOTES),
        ('12.2', '535.54.03', RELEASE_NOTES),
        ('12.3', '545.23.06', RELEASE_NOTES),
        ('12.4', '550.54.14', RELEASE_NOTES),
        ('12.5', '555.42.02', RELEASE_NOTES),
        ('12.6', '560.28.03', RELEASE_NOTES),
        ('12.8', '570.26', RELEASE_NOTES),
        ('12.9', '575.51.03', RELEASE_NOTES),
        ('13.0', '580.65.06', RELEASE_NOTES),
        ('13.1', '590.44.01', RELEASE_NOTES),
        ('13.2', '595.45.04', RELEASE_NOTES_132),
    )) + (
    {'toolkit': '13.3', 'driver': '610.43.02', 'read': _READ,
     'source': '%s, %s: ">=610.43.02" (Update 1 the same), read as public GitHub files quote it from the 13.3 '
               'notes (index ids 54526236190, 62160452368, 68612752721; they agree)'
               % (RELEASE_NOTES_133, TABLE3 % '13.3'),
     'unconfirmed': 'Table 3 of the 13.3 notes itself was not read (its stored copy ends before the table); the '
                    'number is the quotations\''},
    {'toolkit': '13.4', 'read': _READ,
     'source': '%s (CUDA 13.4 GA, versioned 13.4.1) and %s (CUDA 13.4 Update 1, 13.4.2), %s: row not found'
               % (RELEASE_NOTES_134, RELEASE_NOTES_134_U1, TABLE3 % '13.4'),
     'reason': _BY_THE_RULE % '13.4',
     'unconfirmed': 'Table 3 of the 13.4 notes was not read (only the notes\' opening is stored); public files say '
                    'the Linux driver is no longer bundled from 13.4 on and that 13.4\'s new features need an R615 '
                    'driver, with no exact minimum (public GitHub files, index ids 68941306157, 70121340189)'},
    {'toolkit': '13.5', 'read': _READ,
     'source': '%s (titled "CUDA Toolkit 13.5 - Release Notes" when read; no archive copy of the 13.5 notes was '
               'found), %s: row not found' % (RELEASE_NOTES, TABLE3 % '13.5'),
     'reason': _BY_THE_RULE % '13.5',
     'unconfirmed': 'Table 3 of the 13.5 notes was not read (only the notes\' opening is stored); no quotation of '
                    'a 13.5 row was found'},
)


def _numbers(text):
    parts = tuple(int(p) for p in text.split('.'))
    return parts + (0,) * (3 - len(parts))


RELEASE_DRIVER = dict((tuple(int(p) for p in row['toolkit'].split('.')), _numbers(row['driver']))
                      for row in RELEASE_DRIVER_ROWS if row.get('driver'))
RELEASE_DRIVER_TEXT = dict((tuple(int(p) for p in row['toolkit'].split('.')), row['driver'])
                           for row in RELEASE_DRIVER_ROWS if row.get('driver'))
DRIVER_TABLE_SOURCE = ("NVIDIA CUDA Toolkit release notes, 'CUDA Toolkit and Corresponding Driver Versions' and "
                       "the CUDA Compatibility guide, 'Minor Version Compatibility'")

# The toolkit each distribution ships as nvidia-cuda-toolkit, one row per distribution with its source
# and the date it was read (docs/vendor-facts.md lists them). Debian: apt-cache policy on the lab's
# Debian images with non-free and contrib enabled (2026-12-01); Debian 12 needs 315 packages with
# recommends, 72 without on a lab node. Ubuntu: published listings kept as fixtures
# (tests/fixtures/ubuntu-index/).
DISTRO_TOOLKIT_ROWS = (
    {'distribution': 'Debian', 'major': '12', 'toolkit': '11.8', 'read': '2026-12-01',
     'source': 'apt-cache policy nvidia-cuda-toolkit on the lab\'s Debian 12 image (bookworm/non-free): '
               '11.8.89~11.8.0-5~deb12u1 (https://packages.debian.org/bookworm/nvidia-cuda-toolkit)'},
    {'distribution': 'Debian', 'major': '13', 'toolkit': '12.4', 'read': '2026-12-01',
     'source': 'apt-cache policy nvidia-cuda-toolkit on the lab\'s Debian 13 image (trixie/non-free): '
               '12.4.131~12.4.1-2 (https://packages.debian.org/trixie/nvidia-cuda-toolkit)'},
    {'distribution': 'Ubuntu', 'major': '22', 'toolkit': '11.5', 'read': '2026-12-07',
     'source': 'tests/fixtures/ubuntu-index/jammy.txt (a published apt listing of a jammy host): '
               '"nvidia-cuda-toolkit/jammy,now 11.5.1-1ubuntu1 amd64"'},
    {'distribution': 'Ubuntu', 'major': '24', 'toolkit': '12.0', 'read': '2026-12-07',
     'source': 'Ubuntu noble multiverse nvidia-cuda-toolkit (https://packages.ubuntu.com/noble/nvidia-cuda-toolkit): '
               'an apt-cache policy of a host whose other candidates are noble\'s (python3-dev 3.12.3-0ubuntu2.1, '
               'cmake 3.28.3-1build7), from Ubuntu\'s archive only: "nvidia-cuda-toolkit | 12.0.140~12.0.1-4build4" '
               '(public GitHub file, index id 68856971715)',
     'unconfirmed': 'the quoted listing names no pocket: 24.04 is inferred from the other packages\' versions'},
)
DISTRO_TOOLKIT = dict(((row['distribution'], row['major']), tuple(int(p) for p in row['toolkit'].split('.')))
                      for row in DISTRO_TOOLKIT_ROWS)

# NVIDIA's CUDA repository, per toolkit X.Y: the toolkit cuda-toolkit-X-Y (installs
# /usr/local/cuda-X.Y), the Nsight command-line tools cuda-nsight-systems-X-Y and
# cuda-nsight-compute-X-Y. cuDNN 9's development package is built per CUDA major
# (libcudnn9-dev-cuda-<major>; SOURCE: cuDNN installation guide, Linux, "Package Manager
# Installation": cudnn9-cuda-12 / cudnn9-cuda-13 pull libcudnn9-cuda-<major> and
# libcudnn9-dev-cuda-<major>; cuDNN 9 support matrix: CUDA 11.8, 12.x and 13.x builds).
# NCCL is one package for every CUDA, its version names the CUDA it was built for
# (libnccl-dev 2.21.5-1+cuda12.4; SOURCE: NCCL installation guide, "Ubuntu": "libnccl2=2.x.y-1+cudaX.Y
# libnccl-dev=2.x.y-1+cudaX.Y"): one build per host, for the default toolkit, installed by its exact version
# (cuda/nccl.py).
# Each of these package-name tables is rows with their source and the date they were read (plain data:
# docs/vendor-facts.md lists them); the shapes the code uses are built from the rows.
_INSTALL_GUIDE = 'CUDA Installation Guide for Linux, "Meta Packages" (https://docs.nvidia.com/cuda/cuda-installation-guide-linux/)'
_CUDNN_GUIDE = ('cuDNN installation guide, Linux, "Package Manager Installation" '
                '(https://docs.nvidia.com/deeplearning/cudnn/installation/linux.html)')
_NCCL_GUIDE = 'NCCL installation guide, "Ubuntu" (https://docs.nvidia.com/deeplearning/nccl/install-guide/index.html)'
_PACKAGES_READ = '2026-12-07'
TOOLKIT_PACKAGE_ROWS = (
    {'what': 'toolkit', 'package': 'cuda-toolkit-%d-%d', 'read': _PACKAGES_READ,
     'source': '%s: cuda-toolkit-X-Y; an install log of NVIDIA\'s repository (public GitHub file, index id '
               '54626694940): "cuda-toolkit-12-9 ... pulls cuda-libraries-dev-12-9, cuda-nsight-systems-12-9, '
               'cuda-nsight-compute-12-9"; the newer minors by the same pattern: "cuda-toolkit-13-3_13.3.0-1_amd64.deb" '
               'in a listing of NVIDIA\'s ubuntu2404/x86_64 repository (public GitHub file, index id 61012703459), '
               '"cuda-toolkit-13-4-config-common", "cuda-nvcc-13-4 | 13.4.59-1" in an install log of NVIDIA\'s RPM '
               'repository (public GitHub file, index id 70147445120)' % _INSTALL_GUIDE,
     'unconfirmed': 'the installation guide\'s meta-package table was not re-read on %s; cuda-toolkit-13-5 was seen '
                    'only in other tools\' tests (public GitHub files, index ids 65928298232, 69421210535), in no '
                    'repository listing' % _PACKAGES_READ},
    {'what': 'nsight systems', 'package': 'cuda-nsight-systems-%d-%d', 'read': _PACKAGES_READ,
     'source': 'an install log of NVIDIA\'s repository (public GitHub file, index id 54626694940): "cuda-nsight-systems-'
               '12-9"; an RPM listing of NVIDIA\'s repository (public GitHub file, index id 70321742425): '
               '"cuda-nsight-systems-12-8-12.8.0-1"',
     'unconfirmed': 'no NVIDIA document naming the package was read'},
    {'what': 'nsight compute', 'package': 'cuda-nsight-compute-%d-%d', 'read': _PACKAGES_READ,
     'source': 'the environment of an nvidia/cuda 12.6.3 devel image (public GitHub file, index id 47253142942): '
               '"NV_CUDA_NSIGHT_COMPUTE_DEV_PACKAGE=cuda-nsight-compute-12-6=12.6.3-1"',
     'unconfirmed': 'the nvidia/cuda image Dockerfile itself was not read'},
)
TOOLKIT_PACKAGE = TOOLKIT_PACKAGE_ROWS[0]['package']
NSIGHT_PACKAGES = tuple(row['package'] for row in TOOLKIT_PACKAGE_ROWS[1:])
CUDNN_PACKAGE_ROWS = (
    {'cuda_major': 11, 'package': 'libcudnn9-dev-cuda-11', 'read': _PACKAGES_READ,
     'source': '%s; cuDNN 9.5.0 support matrix (https://docs.nvidia.com/deeplearning/cudnn/backend/v9.5.0/reference/'
               'support-matrix.html): "cuDNN 9.5.0 for CUDA 11.x | 11.8 | Yes | >= 450.80.02"' % _CUDNN_GUIDE,
     'unconfirmed': 'the package name for CUDA 11 was not seen in any listing; whether the newest cuDNN 9 still builds '
                    'for CUDA 11 was not checked'},
    {'cuda_major': 12, 'package': 'libcudnn9-dev-cuda-12', 'read': _PACKAGES_READ,
     'source': '%s; NVIDIA\'s nvidia/cuda cuDNN image Dockerfile (gitlab.com/nvidia/container-images/cuda dist/12.6.3/'
               'ubuntu2404/devel/cudnn/Dockerfile, as extended in a public GitHub file, index id 16325688848): '
               'NV_CUDNN_PACKAGE_DEV set to "libcudnn9-dev-cuda-12=${NV_CUDNN_VERSION}"' % _CUDNN_GUIDE},
    {'cuda_major': 13, 'package': 'libcudnn9-dev-cuda-13', 'read': _PACKAGES_READ,
     'source': '%s; an install script against NVIDIA\'s ubuntu2404 repository (public GitHub file, index id 410322285): '
               '"libcudnn9-dev-cuda-13=${CUDNN_VER}" with CUDNN_VER="9.12.0.46-1"; a dpkg listing of an Ubuntu 24.04 '
               'host (public GitHub file, index id 70693654052): "libcudnn9-cuda-13, libcudnn9-dev-cuda-13, '
               'libcudnn9-headers-cuda-13 | 9.20.0.46-1"' % _CUDNN_GUIDE},
)
CUDNN_PACKAGE = dict((row['cuda_major'], row['package']) for row in CUDNN_PACKAGE_ROWS)
NCCL_PACKAGE_ROWS = (
    {'package': 'libnccl2', 'read': _PACKAGES_READ,
     'source': '%s: "libnccl2=2.x.y-1+cudaX.Y"; an install script against NVIDIA\'s ubuntu2404 repository (public '
               'GitHub file, index id 410322285): "libnccl2=${NCCL_VER}" with NCCL_VER="2.27.7-1+cuda13.0"' % _NCCL_GUIDE,
     'unconfirmed': 'the installation guide was not re-read on %s' % _PACKAGES_READ},
    {'package': 'libnccl-dev', 'read': _PACKAGES_READ,
     'source': '%s: "libnccl-dev=2.x.y-1+cudaX.Y"; NVIDIA\'s nvidia/cuda devel image variables as copied in a public '
               'GitHub file (index id 25382832095): NV_LIBNCCL_DEV_PACKAGE_NAME set to "libnccl-dev", '
               'its version suffixed "+cuda12.3"' % _NCCL_GUIDE,
     'unconfirmed': 'the installation guide was not re-read on %s' % _PACKAGES_READ},
)
NCCL_PACKAGES = tuple(row['package'] for row in NCCL_PACKAGE_ROWS)
# The distribution's own NCCL matches its own toolkit: Debian 13 has libnccl-dev 2.22.3-1-1 in contrib
# (same apt-cache check); Debian 12 has none (DISTRO_NCCL). Debian's cuDNN
# (contrib nvidia-cudnn) downloads NVIDIA's archive while it installs, and its Nsight packages are
# not in every release: neither is offered with the distro source.
# Debian's nvcc compiles host code with the first gcc/g++ on PATH (its /etc/nvcc.profile only puts
# /usr/lib/nvidia-cuda-toolkit/bin first), and nvidia-cuda-toolkit accepts any of a list of g++/clang
# versions. On a host whose default gcc has no g++ (Debian 12 with dkms: gcc-12 alone) nvcc fails
# ("gcc: fatal error: cannot execute 'cc1plus'", the first run of molecule cuda_toolkit_distro).
# Debian's nvidia-cuda-toolkit-gcc is the compiler the toolkit supports, as /usr/bin/cuda-g++
# (-> g++-11 on Debian 12, Depends: g++-11; SOURCE: apt-cache show and the .deb of
# nvidia-cuda-toolkit-gcc 11.8.0-5~deb12u1, bookworm/non-free; 12.4.1-2 in trixie/non-free):
# installed with the toolkit, and verify compiles with -ccbin /usr/bin/cuda-g++.
DISTRO_PACKAGES = ('nvidia-cuda-toolkit', 'nvidia-cuda-toolkit-gcc')
DISTRO_HOST_COMPILER = '/usr/bin/cuda-g++'
DISTRO_NCCL = (('Debian', '13'),)

# Packages of one toolkit X.Y in NVIDIA's repository all end with -X-Y (cuda-nvcc-12-4,
# libcublas-dev-12-4), or with -config-common after it: what removing a toolkit removes.
_PER_VERSION = r'(?:cuda|libcu|libnpp|libnv)[a-z0-9.+-]*-%d-%d(?:-config-common)?'
_VERSION_RE = re.compile(r'(\d{1,2})\.(\d{1,2})')
_PATH_RE = re.compile(r'/[A-Za-z0-9._/-]+')

LOCAL = '/usr/local'
LINK = '/usr/local/cuda'
ALTERNATIVE = 'cuda'
PROFILE_FILE = '/etc/profile.d/gpuops-cuda.sh'
LDCONF_FILE = '/etc/ld.so.conf.d/gpuops-cuda.conf'
HEADER = '# Managed by Ansible (gpuops.dlserver.cuda_toolkit): local changes are overwritten.\n'


class ToolkitError(ValueError):
    """Inputs the role refuses (the message names the variable and what would work)."""


def dotted(pair):
    return '%d.%d' % pair


def parse_version(value, variable):
    """(12, 4) from '12.4'; ToolkitError naming ``variable`` for anything else (12.4.1, '12', a newline)."""
    text = value if isinstance(value, str) else ''
    match = _VERSION_RE.fullmatch(text)
    if not match:
        raise ToolkitError('%s: %r is not a CUDA toolkit version such as 12.4 (major.minor); known: %s'
                           % (variable, value, known_text()))
    return int(match.group(1)), int(match.group(2))


def known_pairs():
    """Every toolkit release the role knows (installs): the rows of RELEASE_DRIVER_ROWS, with or without a
    Table 3 minimum read."""
    return sorted(set(tuple(int(p) for p in row['toolkit'].split('.')) for row in RELEASE_DRIVER_ROWS))


def known_text():
    return ', '.join(dotted(v) for v in known_pairs())


def _table_text():
    """The toolkits with a Table 3 minimum (what cuda_toolkit_driver_compat: full can plan)."""
    return ', '.join(dotted(v) for v in sorted(RELEASE_DRIVER))


def _row_reason(pair):
    """The 'reason' of a known release without a Table 3 minimum, else None."""
    for row in RELEASE_DRIVER_ROWS:
        if row['toolkit'] == dotted(pair) and not row.get('driver'):
            return row.get('reason')
    return None


def _needs(pair, mode):
    """The driver a toolkit needs in ``mode`` (a tuple), or None when no table gives one."""
    release, minor = RELEASE_DRIVER.get(pair), MINOR_COMPAT_DRIVER.get(pair[0])
    return release if mode == 'full' else (minor or release)


def _platform_key(platform):
    """('Debian', '12') of a platform ({distribution, major}; Ubuntu's '22.04' counts as '22')."""
    platform = platform or {}
    return platform.get('distribution'), str(platform.get('major') or '').split('.', 1)[0]


def distro_toolkit(platform):
    """(major, minor) of the distribution's nvidia-cuda-toolkit, or None."""
    return DISTRO_TOOLKIT.get(_platform_key(platform))


def input_problems(inputs, platform=None):
    """Every problem of the typed inputs (``__cuda_toolkit``), each message naming its variable."""
    problems = []
    try:
        wanted(inputs, platform or {'distribution': 'Debian', 'major': '12'})
    except ToolkitError as exc:
        problems.append(str(exc))
    status_file = inputs.get('status_file')
    if not isinstance(status_file, str) or not _PATH_RE.fullmatch(status_file) or '..' in status_file.split('/'):
        problems.append('cuda_toolkit_status_file: %r is not an absolute path of letters, digits, ".", "_", "-" '
                        'and "/"' % (status_file,))
    if inputs.get('driver_compat') not in ('minor', 'full'):
        problems.append('cuda_toolkit_driver_compat: %r is not one of minor, full' % (inputs.get('driver_compat'),))
    return problems


def wanted(inputs, platform):
    """The toolkits to install, the default and the source, checked: ToolkitError on bad input."""
    source = inputs.get('source')
    if source not in ('cuda_repo', 'distro'):
        raise ToolkitError('cuda_toolkit_source: %r is not one of cuda_repo, distro' % (source,))
    listed = inputs.get('versions') or []
    if not isinstance(listed, list):
        raise ToolkitError('cuda_toolkit_versions must be a list of versions such as ["12.4", "12.6"], got %r'
                           % (listed,))
    pairs = []
    for item in listed:
        pair = parse_version(item, 'cuda_toolkit_versions')
        if pair not in pairs:
            pairs.append(pair)
    if source == 'cuda_repo':
        unknown = [dotted(p) for p in pairs if p not in known_pairs()]
        if unknown:
            raise ToolkitError('cuda_toolkit_versions: %s not a CUDA toolkit release the collection knows; known: %s'
                               % (', '.join(unknown) + (' is' if len(unknown) == 1 else ' are'), known_text()))
    else:
        own = distro_toolkit(platform)
        if own is None:
            raise ToolkitError('cuda_toolkit_source: distro is not available on %s %s (known: %s); use cuda_repo'
                               % (platform.get('distribution'), platform.get('major'),
                                  ', '.join('%s %s' % k for k in sorted(DISTRO_TOOLKIT))))
        if pairs and pairs != [own]:
            raise ToolkitError('cuda_toolkit_versions: %s %s ships CUDA %s as nvidia-cuda-toolkit (cuda_toolkit_source: '
                               'distro); list only ["%s"], or use cuda_toolkit_source: cuda_repo for %s'
                               % (platform.get('distribution'), platform.get('major'), dotted(own), dotted(own),
                                  ', '.join(dotted(p) for p in pairs)))
        if inputs.get('nccl') and _platform_key(platform) not in DISTRO_NCCL:
            raise ToolkitError('cuda_toolkit_nccl: %s %s ships no NCCL for its nvidia-cuda-toolkit (cuda_toolkit_source: '
                               'distro); use cuda_toolkit_source: cuda_repo, or leave cuda_toolkit_nccl false'
                               % (platform.get('distribution'), platform.get('major')))
        for flag, what in (('cudnn', "Debian's nvidia-cudnn downloads cuDNN from NVIDIA while it installs"),
                           ('nsight', 'the distributions do not ship the Nsight command-line tools for it')):
            if inputs.get(flag):
                raise ToolkitError('cuda_toolkit_%s: not offered with cuda_toolkit_source: distro (%s); use '
                                   'cuda_toolkit_source: cuda_repo' % (flag, what))
    pairs = sorted(pairs)
    default = inputs.get('default') or ''
    if default:
        chosen = parse_version(default, 'cuda_toolkit_default')
        if chosen not in pairs:
            raise ToolkitError('cuda_toolkit_default: %s is not in cuda_toolkit_versions (%s); choose one of them'
                               % (default, ', '.join(dotted(p) for p in pairs) or 'empty'))
        reason = 'cuda_toolkit_default %s' % default
    elif pairs:
        chosen, reason = pairs[-1], 'the newest of cuda_toolkit_versions (cuda_toolkit_default is empty)'
    else:
        chosen, reason = None, 'no toolkit listed (cuda_toolkit_versions is empty)'
    return {'source': source, 'versions': pairs, 'default': {'value': chosen, 'reason': reason}}


def _driver_text(numbers):
    """580 (a whole branch, CUDA 13.x), 570.26 (Table 3's CUDA 12.8 GA), 520.61.05."""
    numbers = tuple(numbers)
    while len(numbers) > 1 and not numbers[-1]:
        numbers = numbers[:-1]
    return '.'.join('%02d' % n if i else str(n) for i, n in enumerate(numbers))


def compatibility(pairs, driver, mode):
    """{'<X.Y>': {ok, needs, reason}} and the list of errors: can the driver run these toolkits?

    ``driver``: {'version': installed driver version or None, 'branch': the plan's branch or None,
    'loaded': bool}. ``mode``: ``minor`` (a driver of the toolkit's CUDA major at or above the
    minor-version compatibility minimum) or ``full`` (at or above the toolkit's own release driver).
    """
    driver = driver or {}
    have = versions.numeric_or_none(driver.get('version'), parts=3) if driver.get('version') else None
    branch = driver.get('branch') if isinstance(driver.get('branch'), int) else None
    if have is not None:
        said, cut = 'driver %s (%s)' % (driver.get('version'), 'loaded' if driver.get('loaded') else 'installed'), None
    elif branch is not None:
        said, cut = 'driver branch %d (the plan\'s)' % branch, 1
    else:
        said, cut = None, None
    results, errors = {}, []
    for pair in pairs:
        release = RELEASE_DRIVER.get(pair)
        minor = MINOR_COMPAT_DRIVER.get(pair[0])
        need = _needs(pair, mode)
        key = dotted(pair)
        # a release the role knows whose Table 3 row was not read: planned from its major's rule only
        unread = _row_reason(pair)
        if need is None:
            # Never "no requirement known": a pair the table does not know is refused, naming what
            # would be planned (the minor-version rule of its major) or that nothing is known.
            results[key] = {'ok': False, 'needs': None,
                            'reason': 'CUDA %s is not in the table (%s)%s'
                                      % (key, DRIVER_TABLE_SOURCE, ': %s' % unread if unread else '')}
            if mode == 'full' and minor:
                errors.append('cuda_toolkit_driver_compat: full needs the minimum driver of CUDA %s from the CUDA '
                              'release notes\' Table 3, which the collection does not have%s; use '
                              'cuda_toolkit_driver_compat: minor (CUDA %d.x runs from driver %s, minor-version '
                              'compatibility) or a toolkit of the table: %s'
                              % (key, ' (its row was not read)' if unread else '', pair[0], _driver_text(minor),
                                 _table_text()))
            else:
                errors.append('cuda_toolkit_versions: CUDA %s is in neither the CUDA release notes\' Table 3 nor the '
                              'minor-version compatibility table (CUDA %d.x), so no driver is known to run it; list '
                              'a toolkit of the table: %s' % (key, pair[0], known_text()))
            continue
        if said is None:
            results[key] = {'ok': True, 'needs': _driver_text(need),
                            'reason': 'not checked: no driver installed or planned (CUDA %s needs driver %s or newer '
                                      'to run its programs; it compiles without one)%s'
                                      % (key, _driver_text(need), '; %s' % unread if unread else '')}
            continue
        mine = have if cut is None else (branch,)
        ok = mine >= (need if cut is None else need[:1])
        if ok:
            how = (('the toolkit\'s own release driver %s' if cut is None else 'the branch of the toolkit\'s release '
                                                                               'driver %s') % _driver_text(release)
                   if release and (mine >= (release if cut is None else release[:1]))
                   else 'minor-version compatibility (CUDA %d.x from %s); programs built with PTX newer than the '
                        'driver cannot JIT%s' % (pair[0], _driver_text(minor), '; %s' % unread if unread else ''))
            results[key] = {'ok': True, 'needs': _driver_text(need), 'reason': '%s runs CUDA %s: %s' % (said, key, how)}
        else:
            results[key] = {'ok': False, 'needs': _driver_text(need),
                            'reason': '%s is older than %s, which CUDA %s needs (%s)%s'
                                      % (said, _driver_text(need), key,
                                         'its release driver' if mode == 'full' else 'minor-version compatibility',
                                         '; %s' % unread if unread else '')}
            runs = [dotted(p) for p in known_pairs()
                    if _needs(p, mode) is not None and mine >= _needs(p, mode)[:3 if cut is None else 1]]
            errors.append('cuda_toolkit_versions: CUDA %s needs driver branch %d or newer (driver %s, %s; %s), this '
                          'host has %s. Install driver branch %d or newer (nvidia_driver_branch), or list toolkits '
                          'this driver runs: %s (cuda_toolkit_driver_compat: %s)'
                          % (key, need[0], _driver_text(need), 'its release driver' if mode == 'full'
                             else 'minor-version compatibility', DRIVER_TABLE_SOURCE, said, need[0],
                             ', '.join(runs) or 'none the collection knows', mode))
    return results, errors


def home(source, pair):
    return '/usr/lib/nvidia-cuda-toolkit' if source == 'distro' else '%s/cuda-%s' % (LOCAL, dotted(pair))


def nvcc(source, pair):
    return '/usr/bin/nvcc' if source == 'distro' else '%s/bin/nvcc' % home(source, pair)


def packages(source, pair, inputs):
    """The packages of one toolkit (NCCL aside: one build per host, nccl())."""
    if source == 'distro':
        return list(DISTRO_PACKAGES)
    names = [TOOLKIT_PACKAGE % pair]
    if inputs.get('nsight'):
        names += [p % pair for p in NSIGHT_PACKAGES]
    if inputs.get('cudnn') and pair[0] in CUDNN_PACKAGE:
        names.append(CUDNN_PACKAGE[pair[0]])
    return names


def nccl(source, default, inputs):
    """{packages, cuda, reason}: NCCL for the default toolkit, or nothing. ``cuda`` is the build to
    match (NVIDIA's repository); the exact version is picked from the repository once it is
    configured (cuda/nccl.py, filter gpuops.dlserver.__private.cuda_toolkit_nccl)."""
    if not inputs.get('nccl'):
        return {'packages': [], 'cuda': None, 'reason': 'cuda_toolkit_nccl is false'}
    if default is None:
        return {'packages': [], 'cuda': None, 'reason': 'no toolkit to match NCCL to'}
    if source == 'distro':
        return {'packages': list(NCCL_PACKAGES), 'cuda': None,
                'reason': "the distribution's NCCL, built for its nvidia-cuda-toolkit"}
    return {'packages': list(NCCL_PACKAGES), 'cuda': dotted(default),
            'reason': 'the NCCL build for the default toolkit CUDA %s (package version <nccl>-<rev>+cuda%s); NCCL is '
                      'one package per host' % (dotted(default), dotted(default))}


def removals(source, pairs, installed, inputs):
    """(packages to remove, unlisted versions found, the record): toolkits of NVIDIA's repository
    installed here but no longer listed. The record holds only what stays true after the run
    (the versions kept, or that unlisted ones are removed), so a second run rewrites nothing."""
    if source != 'cuda_repo':
        return [], [], {'kept': [], 'reason': 'the distro source installs one toolkit'}
    found = set()
    names = sorted(installed or [])
    for name in names:
        match = re.fullmatch(r'cuda-toolkit-(\d{1,2})-(\d{1,2})', name)
        if match:
            found.add((int(match.group(1)), int(match.group(2))))
    extra = sorted(found - set(pairs))
    if inputs.get('remove_unlisted'):
        remove = [n for n in names for p in extra if re.fullmatch(_PER_VERSION % p, n)]
        return sorted(set(remove)), [dotted(p) for p in extra], {
            'kept': [], 'reason': 'cuda_toolkit_remove_unlisted is true: toolkits not in cuda_toolkit_versions are removed'}
    kept = [dotted(p) for p in extra]
    return [], [], {'kept': kept, 'reason': ('installed but not listed, kept (cuda_toolkit_remove_unlisted is false): %s'
                                             % ', '.join(kept)) if kept else 'no unlisted toolkit installed'}


def environment(source, default):
    """profile.d (PATH, CUDA_HOME) and ld.so.conf.d contents for the default toolkit."""
    if default is None:
        return None, None
    if source == 'distro':
        profile = HEADER + 'export CUDA_HOME=/usr/lib/nvidia-cuda-toolkit\n'
        return profile, None
    profile = (HEADER + 'export CUDA_HOME=%s\ncase ":${PATH}:" in\n  *":%s/bin:"*) ;;\n  *) export PATH="%s/bin:${PATH}" ;;\n'
               'esac\n' % (LINK, LINK, LINK))
    return profile, HEADER + '%s/lib64\n' % LINK


def verify_plan(source, pairs, gpu_count, driver_loaded, in_container):
    """Per toolkit: the nvcc to compile with, and whether the program runs here (value + reason)."""
    if gpu_count and driver_loaded:
        run, why = True, '%d GPU(s) and a loaded driver: the program runs' % gpu_count
    elif not gpu_count:
        run, why = False, 'no GPU on this host: compiled only'
    else:
        run, why = False, 'GPU(s) present but no loaded driver%s: compiled only' % (' (container)' if in_container else '')
    # nvcc options beyond the source, output and -c: the distribution's supported host compiler.
    flags = ['-ccbin', DISTRO_HOST_COMPILER] if source == 'distro' else []
    return [{'version': dotted(p), 'nvcc': nvcc(source, p), 'run': run, 'reason': why, 'flags': list(flags),
             'object': 'gpuops-cuda-check-%s' % dotted(p)} for p in pairs]


def plan(inputs, platform, driver, installed, gpu_count=0, in_container=False):
    """The whole decision of the role on one host; ToolkitError names the variable where the host's
    driver cannot run what the inputs ask for. ``inputs`` passed input_problems in the registry of
    input checks (core/input_checks.py, on the controller before any change): not checked again."""
    want = wanted(inputs, platform)
    source, pairs, default = want['source'], want['versions'], want['default']['value']
    compat, errors = compatibility(pairs, driver, inputs.get('driver_compat'))
    if errors:
        raise ToolkitError('; '.join(errors))
    install = []
    for pair in pairs:
        install += [p for p in packages(source, pair, inputs) if p not in install]
    remove, unlisted, kept = removals(source, pairs, installed, inputs)
    profile, ldconf = environment(source, default)
    # priority major*10+minor in the cuda alternative: in auto mode the newest toolkit wins.
    toolkits = [{'version': dotted(p), 'home': home(source, p), 'nvcc': nvcc(source, p),
                 'packages': packages(source, p, inputs), 'priority': p[0] * 10 + p[1]} for p in pairs]
    return {
        'source': source,
        'toolkits': toolkits,
        'default': {'value': dotted(default) if default else None, 'reason': want['default']['reason'],
                    'home': (LINK if source == 'cuda_repo' else '/usr/lib/nvidia-cuda-toolkit') if default else None,
                    'path': home(source, default) if default else None},
        'alternatives': source == 'cuda_repo',
        'install': install,
        'nccl': nccl(source, default, inputs),
        'remove': remove,
        'unlisted': dict(kept, versions=unlisted),
        'compatibility': compat,
        'profile': profile,
        'ldconf': ldconf,
        'files': {'profile': PROFILE_FILE, 'ldconf': LDCONF_FILE},
        'verify': verify_plan(source, pairs, gpu_count, (driver or {}).get('loaded'), in_container),
    }
