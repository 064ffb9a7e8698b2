# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which CUDA build of PyTorch, TensorFlow and DALI a python_stack environment gets on this host.

Pure functions of the driver's CUDA version (and version, and the GPUs' architectures) from the
probe, each a value plus a reason, from the tables below with their sources (case table:
tests/unit/plugins/module_utils/data/python_stack_cases.yml, ``pytorch_index``).
Standard library only, Python 3.8+ (imported by the module python_stack_host on the nodes).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import torch_builds
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.requirements import version_tuple

# PyTorch's wheel indexes per release: which CUDA builds each torch minor release ships, stable
# and experimental alike (each has its own index). SOURCE: the "Release Compatibility Matrix" of
# pytorch/pytorch RELEASE.md (2.0 ... 2.14); the index's stored pytorch/pytorch RELEASE.md is older,
# so every row was read (2026-12-07) in a verbatim copy of the current file (public GitHub file,
# index id 66643764700): 2.12 and 2.13 ship CUDA 12.6 and 13.0 (stable) and 13.2 (experimental),
# 2.14 all three as stable; cu128 is gone from 2.12 on.
TORCH_TABLE_URL = 'https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix'
TORCH_TABLE_READ = '2026-12-07'


def _torch_row(torch, tags, note):
    return {'torch': torch, 'tags': list(tags), 'read': TORCH_TABLE_READ,
            'source': 'pytorch/pytorch RELEASE.md, "Release Compatibility Matrix", row %s (%s): %s (read in a '
                      'verbatim copy of the current file, public GitHub file, index id 66643764700)' % (
                          torch, TORCH_TABLE_URL, note)}


# One row per torch minor release, each with its source and the date it was read (plain data:
# docs/vendor-facts.md lists it). The CUDA columns are quoted as the matrix prints them.
TORCH_CUDA_TAG_ROWS = (
    _torch_row('2.0', ('cu117', 'cu118'), 'stable CUDA 11.7; experimental CUDA 11.8'),
    _torch_row('2.1', ('cu118', 'cu121'), 'stable CUDA 11.8; experimental CUDA 12.1'),
    _torch_row('2.2', ('cu118', 'cu121'), 'stable CUDA 11.8; experimental CUDA 12.1'),
    _torch_row('2.3', ('cu118', 'cu121'), 'stable CUDA 11.8; experimental CUDA 12.1'),
    _torch_row('2.4', ('cu118', 'cu121', 'cu124'), 'stable CUDA 11.8, 12.1; experimental CUDA 12.4'),
    _torch_row('2.5', ('cu118', 'cu121', 'cu124'), 'stable CUDA 11.8, 12.1, 12.4'),
    _torch_row('2.6', ('cu118', 'cu124', 'cu126'), 'stable CUDA 11.8, 12.4; experimental CUDA 12.6'),
    _torch_row('2.7', ('cu118', 'cu126', 'cu128'), 'stable CUDA 11.8, 12.6; experimental CUDA 12.8'),
    _torch_row('2.8', ('cu126', 'cu128', 'cu129'), 'stable CUDA 12.6, 12.8; experimental CUDA 12.9'),
    _torch_row('2.9', ('cu126', 'cu128', 'cu130'), 'stable CUDA 12.6, 12.8; experimental CUDA 13.0'),
    _torch_row('2.10', ('cu126', 'cu128', 'cu130'), 'stable CUDA 12.6, 12.8; experimental CUDA 13.0'),
    _torch_row('2.11', ('cu126', 'cu128', 'cu130'), 'stable CUDA 12.6, 12.8, 13.0'),
    _torch_row('2.12', ('cu126', 'cu130', 'cu132'), 'stable CUDA 12.6, 13.0; experimental CUDA 13.2'),
    _torch_row('2.13', ('cu126', 'cu130', 'cu132'), 'stable CUDA 12.6, 13.0; experimental CUDA 13.2'),
    _torch_row('2.14', ('cu126', 'cu130', 'cu132'), 'stable CUDA 12.6, 13.0, 13.2'),
)
TORCH_CUDA_TAGS = dict((tuple(int(p) for p in row['torch'].split('.')), list(row['tags']))
                       for row in TORCH_CUDA_TAG_ROWS)
TORCH_TABLE_SOURCE = 'pytorch/pytorch RELEASE.md, Release Compatibility Matrix'
# Torch releases newer than the table: assume the newest row's tags and say so.
NEWEST_TORCH_ROW = max(TORCH_CUDA_TAGS)

# CUDA minor-version compatibility (NVIDIA's CUDA Compatibility guide, "Minor Version
# Compatibility", Table 1 "CUDA Toolkit 11.x, 12.x, and 13.x Driver Version Ranges"): every build of a
# CUDA major version runs on a driver of that major version from this driver on (a driver
# whose own CUDA version is older than the build's minor is enough). A wheel of an older major
# runs on any newer driver (backward compatibility); a newer major never does.
MINOR_COMPAT_URL = 'https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html'
MINOR_COMPAT_ROWS = (
    {'cuda_major': 11, 'driver': '450.80.02', 'read': '2026-12-07',
     'source': 'CUDA Compatibility guide, "Minor Version Compatibility" (%s), Table 1: "CUDA 11.x >= 450"; its note: '
               '"by upgrading to Tesla Recommended Drivers 450.80.02 (Linux) ... minor version compatibility is '
               'possible across the CUDA 11.x family"' % MINOR_COMPAT_URL},
    {'cuda_major': 12, 'driver': '525.60.13', 'read': '2026-12-07',
     'source': 'CUDA Compatibility guide, "Minor Version Compatibility" (%s), Table 1: "CUDA 12.x >= 525"; the '
               'exact version is CUDA Toolkit release notes Table 3, row "CUDA 12.0 GA" (>= 525.60.13), as in '
               'cuda/toolkit.py RELEASE_DRIVER_ROWS' % MINOR_COMPAT_URL},
    {'cuda_major': 13, 'driver': '580', 'read': '2026-12-07',
     'source': 'CUDA Compatibility guide, "Minor Version Compatibility" (%s), Table 1: "CUDA 13.x >= 580" (the '
               'branch; no exact version is given)' % MINOR_COMPAT_URL},
)
MINOR_COMPAT_DRIVER = dict((row['cuda_major'], tuple(int(p) for p in (row['driver'] + '.0.0').split('.')[:3]))
                           for row in MINOR_COMPAT_ROWS)
# Which GPUs each (torch release, tag) build has kernels for: python_env/torch_builds.py (BUILDS,
# from each release's TORCH_CUDA_ARCH_LIST and RELEASE.md's "PyTorch CUDA Support Matrix").

# TensorFlow's pip CUDA extra: tensorflow[and-cuda] pulls NVIDIA's CUDA/cuDNN wheels (Linux), from 2.14 on.
# The wheels' CUDA major follows the release: 2.14 pulls CUDA 11.8 (cu11) wheels, 2.15 and later CUDA 12
# (cu12) ones, so the driver each release's extra needs differs. One row per rule, with its source and read
# date (plain data: docs/vendor-facts.md lists them); tf_and_cuda_row() picks the row of a release.
TF_PIP_URL = 'https://www.tensorflow.org/install/pip'
TF_TESTED_URL = 'https://www.tensorflow.org/install/source#gpu'
_TF_METADATA = ('the published tensorflow %s wheel\'s metadata (Requires-Dist, read from PyPI with pip install '
                '--dry-run --report on %s): %s')
TF_AND_CUDA_ROWS = (
    {'tensorflow': '2.14', 'extra': 'and-cuda', 'wheels': 'cu11 (CUDA 11.8)', 'driver_cuda': '11.8',
     'read': '2026-12-07',
     'source': (_TF_METADATA % ('2.14.0', '2026-12-07', '"nvidia-cuda-runtime-cu11 (==11.8.89) ; extra == '
                                '\'and-cuda\'", "nvidia-cudnn-cu11 (==8.7.0.84) ; extra == \'and-cuda\'"; 2.13.0 '
                                'has no and-cuda extra')
                + '; TensorFlow "Build from source", Tested build configurations, GPU (%s): "tensorflow-2.14.0 | '
                '3.9-3.11 | Clang 16.0.0 | Bazel 6.1.0 | 8.7 | 11.8". A driver of CUDA 11.8 or newer runs the 11.8 '
                'wheels without relying on minor-version compatibility (which does not cover PTX JIT)' % TF_TESTED_URL)},
    {'tensorflow': '2.15', 'extra': 'and-cuda', 'wheels': 'cu12 (CUDA 12.2 in 2.15)', 'driver_cuda': '12.0',
     'read': '2026-12-07',
     'source': 'TensorFlow "Install TensorFlow with pip" (%s): "pip install tensorflow[and-cuda]" (Linux); ' % TF_PIP_URL
               + _TF_METADATA % ('2.15.0', '2026-12-07', '"nvidia-cublas-cu12 (==12.2.5.6) ; extra == \'and-cuda\'"') +
               '; Tested build configurations, GPU (%s): "tensorflow-2.15.0 | 3.9-3.11 | Clang 16.0.0 | Bazel 6.1.0 | 8.9 '
               '| 12.2"' % TF_TESTED_URL},
)
TF_AND_CUDA_MIN = tuple(int(p) for p in TF_AND_CUDA_ROWS[0]['tensorflow'].split('.'))
TF_AND_CUDA_CUDA = tuple(int(p) for p in TF_AND_CUDA_ROWS[-1]['driver_cuda'].split('.'))


def tf_and_cuda_row(tf_version, exact):
    """The TF_AND_CUDA_ROWS row that decides tensorflow[and-cuda] for ``tf_version`` ((major, minor) or None):
    an exact pin takes its release's row; a lower bound or no version takes the newest row (pip installs the
    newest release); None where the pinned release predates the extra."""
    if tf_version is not None and exact:
        rows = [r for r in TF_AND_CUDA_ROWS if tuple(int(p) for p in r['tensorflow'].split('.')) <= tuple(tf_version)]
        return rows[-1] if rows else None
    if tf_version is not None and tuple(tf_version) < TF_AND_CUDA_MIN:
        return None
    return TF_AND_CUDA_ROWS[-1]


# DALI's wheels per CUDA major: the flavour of the newest row the driver's CUDA reaches. One row per
# flavour with its source and read date (plain data: docs/vendor-facts.md lists it).
DALI_GUIDE = 'https://docs.nvidia.com/deeplearning/dali/user-guide/docs/installation.html'
DALI_GUIDE_137 = 'https://docs.nvidia.com/deeplearning/dali/archives/dali_1_37_1/user-guide/installation.html'
DALI_FLAVOUR_ROWS = (
    {'flavour': 'cuda130', 'driver_cuda': '13.0', 'read': '2026-12-07',
     'source': 'NVIDIA DALI installation guide (%s), pip - Official Releases: "for CUDA 13.0: ... nvidia-dali-cuda130"; '
               '"CUDA 12.0 and CUDA 13.0 build uses CUDA toolkit enhanced compatibility ... (525.60 or later and 580.x or '
               'later respectively)"' % DALI_GUIDE},
    {'flavour': 'cuda120', 'driver_cuda': '12.0', 'read': '2026-12-07',
     'source': 'NVIDIA DALI installation guide (%s), pip - Official Releases: "for CUDA 12.0: ... nvidia-dali-cuda120"; '
               'it runs "on the latest, stable CUDA ... 12.0 capable drivers (525.60 or later ...)"' % DALI_GUIDE},
    {'flavour': 'cuda110', 'driver_cuda': '11.0', 'last_release': '1.50.0', 'read': '2026-12-07',
     'source': 'NVIDIA DALI 1.37.1 installation guide (%s): "for CUDA 11.0: pip install --extra-index-url '
               'https://pypi.nvidia.com --upgrade nvidia-dali-cuda110 or just pip install nvidia-dali-cuda110"; '
               '"450.80 or later"; PyPI\'s index of nvidia-dali-cuda110 (pip index versions, 2026-12-07): '
               '"Available versions: 1.50.0, 1.49.0, ..." - the last DALI release with a cuda110 wheel is 1.50.0 (the '
               'current guide, %s, lists only cuda120 and cuda130; nvidia-dali-cuda120 goes on to 2.4.0)'
               % (DALI_GUIDE_137, DALI_GUIDE)},
)
DALI_FLAVOURS = [(tuple(int(p) for p in row['driver_cuda'].split('.')), row['flavour']) for row in DALI_FLAVOUR_ROWS]
DALI_DEFAULT = 'cuda120'


def pytorch_index(cuda_version, torch_version=None, override='', driver_version=None, architectures=None):
    """{value, reason[, error]}: the PyTorch index tag (``cpu``, ``cu126`` ...) for this host.

    By CUDA major-version compatibility: of the tags the torch release ships, those of an older
    CUDA major than the driver's, or of the driver's own major (minor-version compatibility, given
    the major's minimum driver when ``driver_version`` is known), whose build has kernels for EVERY
    GPU of the host (``architectures``: the probe's GPUs - dicts with ``architecture``,
    ``compute_capability``, ``name``, ``pci_bus_id`` - or bare architecture names; torch_builds.py),
    and the newest of them wins. Where the driver runs some tag but none has kernels for every GPU,
    ``error`` refuses the host, naming the GPU, the tag and what would work.
    """
    if override:
        return {'value': override, 'reason': 'set by python_stack_pytorch_cuda (%s)' % override}
    cuda = cuda_tuple(cuda_version)
    if cuda is None:
        return {'value': 'cpu', 'reason': 'no driver CUDA version in the probe facts (no GPU or no driver '
                                          'loaded): CPU wheels'}
    torch = version_tuple(torch_version)
    if torch is None:
        row, which = NEWEST_TORCH_ROW, 'no torch version pinned: the newest row (%d.%d) of the table' % NEWEST_TORCH_ROW
    elif torch in TORCH_CUDA_TAGS:
        row, which = torch, 'torch %d.%d' % torch
    elif torch > NEWEST_TORCH_ROW:
        row, which = NEWEST_TORCH_ROW, ('torch %d.%d is newer than the table; assumed to ship the tags (and '
                                        'builds) of %d.%d' % (torch + NEWEST_TORCH_ROW))
    else:
        return {'value': 'cpu', 'reason': 'torch %d.%d is older than the table (%s); set python_stack_pytorch_cuda'
                                          % (torch + (TORCH_TABLE_SOURCE,))}
    driver = _driver_tuple(driver_version)
    gpus = [torch_builds.gpu_view(g) for g in (architectures or [])]
    fitting, left_out, no_kernels = [], [], []
    for tag in TORCH_CUDA_TAGS[row]:
        blocked = _driver_blocks(tag, cuda, driver)
        missing = _missing(gpus, row, tag)
        if blocked:
            left_out.append(blocked)
        elif missing:
            left_out.append(missing)
            no_kernels.append(tag)
        else:
            fitting.append(tag)
    shipped = '/'.join(TORCH_CUDA_TAGS[row])
    unchecked = [g['label'] for g in gpus if not g['known']]
    note = ('; kernels not checked for %s (architecture and compute capability unknown)' % ', '.join(unchecked)
            if unchecked else '')
    if not fitting:
        if no_kernels:
            message = ('%s ships %s; none that this driver runs has kernels for every GPU of this host (%s); what '
                       'would work: %s; or set python_stack_pytorch_cuda to a tag you have checked (%s)'
                       % (which, shipped, '; '.join(left_out), _what_works(gpus, row, cuda, driver),
                          torch_builds.BUILDS_SOURCE))
            return {'value': 'cpu', 'reason': message, 'error': message}
        return {'value': 'cpu', 'reason': '%s ships %s; none runs on this host (%s): CPU wheels; upgrade the driver '
                                          'or pin an older torch%s' % (which, shipped, '; '.join(left_out), note)}
    best = fitting[-1]
    how = ('the driver\'s CUDA %s runs every CUDA %d.x build (minor-version compatibility)' % (cuda_version, cuda[0])
           if _tag_cuda(best)[0] == cuda[0] else 'an older CUDA major runs on the driver\'s CUDA %s' % cuda_version)
    return {'value': best, 'reason': '%s ships %s: %s is the newest that runs here (%s%s; %s%s%s)'
                                     % (which, shipped, best, how, ('; ' + '; '.join(left_out)) if left_out else '',
                                        TORCH_TABLE_SOURCE, '; kernels for every GPU: ' + torch_builds.BUILDS_SOURCE
                                        if gpus else '', note)}


def _driver_blocks(tag, cuda, driver):
    """Why the driver cannot run the tag's CUDA (a sentence), or None."""
    major, minor = _tag_cuda(tag)
    if major > cuda[0]:
        return '%s needs a CUDA %d driver' % (tag, major)
    if major == cuda[0] and minor > cuda[1] and driver is not None and driver < MINOR_COMPAT_DRIVER.get(major, ()):
        return ('%s needs driver %s or newer for CUDA %d minor-version compatibility'
                % (tag, '.'.join('%02d' % n if i else str(n) for i, n in enumerate(MINOR_COMPAT_DRIVER[major])), major))
    return None


def _missing(gpus, row, tag):
    """'cuXYZ has no kernels for <GPU> (built for ...)' where the build lacks a GPU, else None."""
    build = torch_builds.build(row, tag)
    lacking = torch_builds.uncovered(gpus, build) if build else []
    if not lacking:
        return None
    return '%s has no kernels for %s (torch %s %s is built for %s)' % (
        tag, ', '.join(lacking), build['torch'], tag, torch_builds.arch_list(build))


def _what_works(gpus, row, cuda, driver):
    """Tags of this release that have the kernels but need a newer driver, and the table's other torch
    releases with a tag that has the kernels and runs on this driver."""
    out = []
    for tag in TORCH_CUDA_TAGS[row]:
        blocked = _driver_blocks(tag, cuda, driver)
        if blocked and not _missing(gpus, row, tag):
            out.append('%s of torch %d.%d has the kernels but %s' % ((tag,) + row + (blocked.split(' ', 1)[1],)))
    others = []
    for other in sorted(TORCH_CUDA_TAGS):
        if other == row:
            continue
        good = [t for t in TORCH_CUDA_TAGS[other] if not _driver_blocks(t, cuda, driver) and not _missing(gpus, other, t)]
        if good:
            others.append('%d.%d (%s)' % (other + (good[-1],)))
    if others:
        out.append('torch %s on this driver' % ', '.join(others))
    return '; '.join(out) or 'no torch release of the table has kernels for every GPU of this host on this driver'


def cuda_tuple(cuda_version):
    """(major, minor) of the driver's CUDA version (``12.8``, ``13.0``), or None when unknown or not a
    version (core/versions.py, the collection's one parser for dotted versions)."""
    try:
        return versions.numeric(cuda_version, 'CUDA version', 2) if cuda_version else None
    except ValueError:
        return None


def _driver_tuple(driver_version):
    try:
        return versions.numeric(driver_version, 'driver version', 3) if driver_version else None
    except ValueError:
        return None


def _tag_cuda(tag):
    digits = tag[2:]
    return (int(digits[:-1]), int(digits[-1]))


def dali_flavour(cuda_version):
    """{value, reason}: DALI's wheel flavour (cuda110/cuda120/cuda130) for the driver's CUDA."""
    cuda = cuda_tuple(cuda_version)
    if cuda is None:
        return {'value': DALI_DEFAULT, 'reason': 'no driver CUDA version: %s (its CPU operators run without a GPU)'
                                                 % DALI_DEFAULT}
    last = dict((row['flavour'], row.get('last_release')) for row in DALI_FLAVOUR_ROWS)
    for minimum, flavour in DALI_FLAVOURS:
        if cuda >= minimum:
            return {'value': flavour, 'reason': 'driver CUDA %s: %s%s' % (
                cuda_version, flavour, '; its wheels end at DALI %s' % last[flavour] if last.get(flavour) else '')}
    return {'value': 'cuda110', 'reason': 'driver CUDA %s is older than 11.0; cuda110 is the oldest flavour (its wheels '
                                          'end at DALI %s)' % (cuda_version, last['cuda110'])}
