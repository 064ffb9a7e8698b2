# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the python_stack role: environments declared as data, in one place.

- ``normalise(env, inputs)``: one declared environment with the role's defaults filled in,
  or the problems that name it (bad name, backend, Python version, package spec, URL).
- ``pytorch_index(cuda_version, torch_version)``: the PyTorch wheel index (``cu118`` ...
  ``cu130`` or ``cpu``) for the driver's CUDA version, from the table below (value + reason).
- ``resolve(env, context)``: the packages and indexes an environment installs on this host
  (PyTorch index, ``tensorflow[and-cuda]`` on GPU hosts, DALI's CUDA flavour), its import
  names and its spec hash, the one value that decides whether it is rebuilt.
- ``venv_commands`` / ``conda_commands`` / ``conda_environment_file`` / ``condarc``:
  what each backend runs and writes, from the same resolved spec.
- ``env_defaults(gpu, overrides)``: the framework environment variables written once per
  node (NCCL, CUDA, TensorFlow), each with the reason.
- ``evaluate_verification(result, expect_gpu)``: whether what the verification script saw
  inside an environment is what the host should give it.

Pure functions, standard library only, Python 3.6+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions

MARKER = '.gpuops-python-stack.json'
SPEC_VERSION = 1

# PyTorch's wheel indexes per release: which CUDA builds each torch minor release ships, stable
# and experimental alike (each has its own index). SOURCE: the "Release Compatibility Matrix" of
# pytorch/pytorch RELEASE.md (2.0 ... 2.14; the index's stored pytorch/pytorch RELEASE.md is older,
# the rows from 2.4 on were read from a verbatim copy of the current file): 2.12 and 2.13 ship
# CUDA 12.6 and 13.0 (stable) and 13.2 (experimental), 2.14 all three as stable; cu128 is gone
# from 2.12 on.
TORCH_CUDA_TAGS = {
    (2, 0): ['cu117', 'cu118'],
    (2, 1): ['cu118', 'cu121'],
    (2, 2): ['cu118', 'cu121'],
    (2, 3): ['cu118', 'cu121'],
    (2, 4): ['cu118', 'cu121', 'cu124'],
    (2, 5): ['cu118', 'cu121', 'cu124'],
    (2, 6): ['cu118', 'cu124', 'cu126'],
    (2, 7): ['cu118', 'cu126', 'cu128'],
    (2, 8): ['cu126', 'cu128', 'cu129'],
    (2, 9): ['cu126', 'cu128', 'cu130'],
    (2, 10): ['cu126', 'cu128', 'cu130'],
    (2, 11): ['cu126', 'cu128', 'cu130'],
    (2, 12): ['cu126', 'cu130', 'cu132'],
    (2, 13): ['cu126', 'cu130', 'cu132'],
    (2, 14): ['cu126', 'cu130', 'cu132'],
}
TORCH_TABLE_SOURCE = 'pytorch/pytorch RELEASE.md, Release Compatibility Matrix'
# Torch releases newer than the table: assume the newest row's tags and say so.
NEWEST_TORCH_ROW = max(TORCH_CUDA_TAGS)

# CUDA minor-version compatibility (NVIDIA's CUDA Compatibility guide, "Minor Version
# Compatibility", table "CUDA Toolkit and Minimum Required Driver Version"): every build of a
# CUDA major version runs on a driver of that major version from this driver on (a driver
# whose own CUDA version is older than the build's minor is enough). A wheel of an older major
# runs on any newer driver (backward compatibility); a newer major never does.
MINOR_COMPAT_DRIVER = {11: (450, 80, 2), 12: (525, 60, 13), 13: (580, 0, 0)}
# CUDA 13 builds target Turing and newer: Maxwell, Pascal and Volta are gone (pytorch/pytorch
# RELEASE.md, "PyTorch CUDA Support Matrix" for 2.12-2.14: 13.0.2 and 13.2.1 list Turing(7.5)
# and newer; 12.6.3 lists Maxwell(5.0) to Hopper(9.0)).
CUDA13_ARCHITECTURES = ('turing', 'ampere', 'ada', 'hopper', 'blackwell')

# TensorFlow's pip CUDA extra (https://www.tensorflow.org/install/pip): from 2.14 on Linux,
# tensorflow[and-cuda] pulls NVIDIA's CUDA/cuDNN wheels (CUDA 12); needs a CUDA 12 driver.
TF_AND_CUDA_MIN = (2, 14)
TF_AND_CUDA_CUDA = (12, 0)

# DALI's wheels per CUDA major (https://docs.nvidia.com/deeplearning/dali/user-guide/docs/installation.html).
DALI_FLAVOURS = [((13, 0), 'cuda130'), ((12, 0), 'cuda120'), ((11, 0), 'cuda110')]
DALI_DEFAULT = 'cuda120'

# Import names that differ from the distribution name (what "verify imports" imports).
IMPORT_NAMES = {
    'pillow': 'PIL', 'scikit-learn': 'sklearn', 'opencv-python': 'cv2', 'opencv-python-headless': 'cv2',
    'pyyaml': 'yaml', 'tensorflow-cpu': 'tensorflow', 'ipykernel': 'ipykernel', 'protobuf': 'google.protobuf',
    'nvidia-ml-py': 'pynvml', 'jupyterlab': 'jupyterlab', 'tensorboard': 'tensorboard',
}
TORCH_FAMILY = ('torch', 'torchvision', 'torchaudio')

_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$')
# A PEP 508 requirement as the role accepts it: name, optional extras, optional version
# specifiers, optional marker. Direct references and options are refused (use index URLs).
_REQ = re.compile(
    r'^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*'
    r'(?P<extras>\[\s*[A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*\s*\])?\s*'
    r'(?P<spec>(?:(?:===|==|!=|~=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)*)'
    r'(?P<marker>;.*)?$')
_CONDA_PKG = re.compile(r'^[A-Za-z0-9_][A-Za-z0-9_.-]*(?:::[A-Za-z0-9_.-]+)?(?:\s*[=<>!~]{1,3}\s*[A-Za-z0-9.*+_,|<>=!-]+)?$')
_PYTHON = re.compile(r'^3\.(\d{1,2})$')
_URL = re.compile(r'^(https?|file)://\S+$')
_VERSION = re.compile(r'^(\d+)\.(\d+)')
_EXACT = re.compile(r'^==\s*([0-9][A-Za-z0-9.+!_-]*)$')


def canonical(name):
    """PEP 503 normalised project name."""
    return re.sub(r'[-_.]+', '-', name).lower()


def parse_requirement(text):
    """(dict or None, reason): name, canonical, extras, spec, marker of one pip requirement."""
    if not isinstance(text, str) or not text.strip():
        return None, 'a package must be a non-empty string, not %r' % (text,)
    if text.strip().startswith('-') or '://' in text or ' @ ' in text:
        return None, ('package %r: options and direct URLs are not accepted in the package list; '
                      'set index_url / extra_index_urls instead' % text)
    match = _REQ.match(text)
    if not match:
        return None, 'package %r is not a valid requirement (PEP 508: name[extras]<specifiers>)' % text
    spec = re.sub(r'\s+', '', match.group('spec') or '').rstrip(',')
    extras = []
    if match.group('extras'):
        extras = sorted(e.strip() for e in match.group('extras').strip('[] ').split(','))
    return ({'name': match.group('name'), 'canonical': canonical(match.group('name')), 'extras': extras,
             'spec': spec, 'marker': (match.group('marker') or '').strip()}, 'valid requirement')


def render_requirement(req):
    """The requirement line for a parsed requirement."""
    text = req['name']
    if req['extras']:
        text += '[%s]' % ','.join(req['extras'])
    text += req['spec']
    if req['marker']:
        text += ' ' + req['marker']
    return text


def version_tuple(text):
    """(major, minor) of a version string, or None."""
    match = _VERSION.match(str(text or ''))
    return (int(match.group(1)), int(match.group(2))) if match else None


def exact_version(spec):
    """The version pinned by ``==X`` (a single specifier), else None."""
    match = _EXACT.match(spec or '')
    return match.group(1) if match else None


# --------------------------------------------------------------------------- inputs

def normalise(env, inputs):
    """(env with defaults, problems). ``inputs`` is __python_stack (keys without prefix)."""
    problems = []
    if not isinstance(env, dict):
        return None, ['python_stack_environments: every entry must be a mapping, not %r' % (env,)]
    name = env.get('name')
    if not isinstance(name, str) or not _NAME.match(name):
        return None, ['python_stack_environments: entry %r needs a name of letters, digits, ".", "_" or "-" '
                      '(at most 64, not starting with "." or "-")' % (name,)]
    where = 'python_stack_environments[%s]' % name
    known = set(['name', 'backend', 'python', 'pip', 'conda', 'channels', 'index_url', 'extra_index_urls',
                 'imports', 'jupyter_kernel', 'state', 'verify', 'lock_file'])
    unknown = sorted(set(env) - known)
    if unknown:
        problems.append('%s: unknown key(s) %s; known: %s' % (where, ', '.join(unknown), ', '.join(sorted(known))))
    out = {
        'name': name,
        'backend': env.get('backend') or inputs.get('backend', 'venv'),
        'python': str(env.get('python') or inputs.get('python', '3.11')),
        'pip': env.get('pip', []),
        'conda': env.get('conda', []),
        'channels': env.get('channels') if env.get('channels') is not None else inputs.get('conda_channels', []),
        'index_url': env.get('index_url') or inputs.get('pip_index_url', ''),
        'extra_index_urls': env.get('extra_index_urls', []),
        'imports': env.get('imports'),
        'jupyter_kernel': env.get('jupyter_kernel', False),
        'state': env.get('state', 'present'),
        'verify': env.get('verify', True),
        'lock_file': env.get('lock_file') or '',
    }
    if out['backend'] not in ('venv', 'conda'):
        problems.append('%s: backend must be venv or conda, not %r' % (where, out['backend']))
    if not _PYTHON.match(out['python']):
        problems.append('%s: python must be a 3.X version such as "3.11", not %r' % (where, out['python']))
    if out['state'] not in ('present', 'absent'):
        problems.append('%s: state must be present or absent, not %r' % (where, out['state']))
    for key in ('jupyter_kernel', 'verify'):
        if not isinstance(out[key], bool):
            problems.append('%s: %s must be true or false, not %r' % (where, key, out[key]))
    for key in ('pip', 'conda', 'channels', 'extra_index_urls'):
        if not isinstance(out[key], list):
            problems.append('%s: %s must be a list, not %r' % (where, key, out[key]))
            out[key] = []
    if out['imports'] is not None and (not isinstance(out['imports'], list)
                                       or not all(isinstance(i, str) and i for i in out['imports'])):
        problems.append('%s: imports must be a list of module names, not %r' % (where, out['imports']))
    seen = {}
    for item in out['pip']:
        req, reason = parse_requirement(item)
        if req is None:
            problems.append('%s: %s' % (where, reason))
        elif req['canonical'] in seen:
            problems.append('%s: package %s is listed twice (%r and %r)' % (where, req['name'], seen[req['canonical']], item))
        else:
            seen[req['canonical']] = item
    for item in out['conda']:
        if not isinstance(item, str) or not _CONDA_PKG.match(item.strip()):
            problems.append('%s: conda package %r is not a valid match spec (name[=version])' % (where, item))
    if out['conda'] and out['backend'] != 'conda':
        problems.append('%s: conda packages need backend conda (this environment uses %s); move them to pip '
                        'or set backend: conda' % (where, out['backend']))
    for url in [out['index_url']] + list(out['extra_index_urls']):
        if url and (not isinstance(url, str) or not _URL.match(url)):
            problems.append('%s: index URL %r must be http(s):// or file://' % (where, url))
    if out['lock_file'] and not isinstance(out['lock_file'], str):
        problems.append('%s: lock_file must be a path, not %r' % (where, out['lock_file']))
    elif out['lock_file'] and out['pip']:
        problems.append('%s: set pip or lock_file, not both (a lock file is the whole resolved package set)' % where)
    if out['state'] == 'present' and not out['pip'] and not out['conda'] and not out['lock_file']:
        problems.append('%s: lists no packages (pip or conda); an empty environment is not worth managing' % where)
    return out, problems


def normalise_all(envs, inputs):
    """(normalised environments, problems) for the whole list; names must be unique."""
    if not isinstance(envs, list):
        return [], ['python_stack_environments must be a list of environments, not %s' % type(envs).__name__]
    result, problems, names = [], [], set()
    for env in envs:
        out, found = normalise(env, inputs)
        problems.extend(found)
        if out is None:
            continue
        if out['name'] in names:
            problems.append('python_stack_environments: the name %s is used twice' % out['name'])
        names.add(out['name'])
        result.append(out)
    return result, problems


# --------------------------------------------------------------------------- CUDA matching

def pytorch_index(cuda_version, torch_version=None, override='', driver_version=None, architectures=None):
    """{value, reason}: the PyTorch index tag (``cpu``, ``cu126`` ...) for this host.

    By CUDA major-version compatibility: of the tags the torch release ships, those of an older
    CUDA major than the driver's, or of the driver's own major (minor-version compatibility, given
    the major's minimum driver when ``driver_version`` is known), and the newest of them wins. CUDA
    13 tags are left out where a GPU (``architectures``, the probe's names) is older than Turing.
    """
    if override:
        return {'value': override, 'reason': 'set by python_stack_pytorch_cuda (%s)' % override}
    cuda = version_tuple(cuda_version)
    if cuda is None:
        return {'value': 'cpu', 'reason': 'no driver CUDA version in the probe facts (no GPU or no driver '
                                          'loaded): CPU wheels'}
    torch = version_tuple(torch_version)
    if torch is None:
        row, which = NEWEST_TORCH_ROW, 'no torch version pinned: the newest row (%d.%d) of the table' % NEWEST_TORCH_ROW
    elif torch in TORCH_CUDA_TAGS:
        row, which = torch, 'torch %d.%d' % torch
    elif torch > NEWEST_TORCH_ROW:
        row, which = NEWEST_TORCH_ROW, ('torch %d.%d is newer than the table; assumed to ship the tags of %d.%d'
                                        % (torch + NEWEST_TORCH_ROW))
    else:
        return {'value': 'cpu', 'reason': 'torch %d.%d is older than the table (%s); set python_stack_pytorch_cuda'
                                          % (torch + (TORCH_TABLE_SOURCE,))}
    driver = _driver_tuple(driver_version)
    old = sorted(set(a for a in (architectures or []) if a not in CUDA13_ARCHITECTURES))
    fitting, left_out = [], []
    for tag in TORCH_CUDA_TAGS[row]:
        major, minor = _tag_cuda(tag)
        if major > cuda[0]:
            left_out.append('%s needs a CUDA %d driver' % (tag, major))
        elif major == cuda[0] and minor > cuda[1] and driver is not None and driver < MINOR_COMPAT_DRIVER.get(major, ()):
            left_out.append('%s needs driver %s or newer for CUDA %d minor-version compatibility'
                            % (tag, '.'.join('%02d' % n if i else str(n) for i, n in enumerate(MINOR_COMPAT_DRIVER[major])),
                               major))
        elif major >= 13 and old:
            left_out.append('%s has no kernels for %s GPUs (CUDA 13 builds start at Turing)' % (tag, '/'.join(old)))
        else:
            fitting.append(tag)
    shipped = '/'.join(TORCH_CUDA_TAGS[row])
    if not fitting:
        return {'value': 'cpu', 'reason': '%s ships %s; none runs on this host (%s): CPU wheels; upgrade the driver '
                                          'or pin an older torch' % (which, shipped, '; '.join(left_out))}
    best = fitting[-1]
    how = ('the driver\'s CUDA %s runs every CUDA %d.x build (minor-version compatibility)' % (cuda_version, cuda[0])
           if _tag_cuda(best)[0] == cuda[0] else 'an older CUDA major runs on the driver\'s CUDA %s' % cuda_version)
    return {'value': best, 'reason': '%s ships %s: %s is the newest that runs here (%s%s; %s)'
                                     % (which, shipped, best, how, ('; ' + '; '.join(left_out)) if left_out else '',
                                        TORCH_TABLE_SOURCE)}


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
    cuda = version_tuple(cuda_version)
    if cuda is None:
        return {'value': DALI_DEFAULT, 'reason': 'no driver CUDA version: %s (its CPU operators run without a GPU)'
                                                 % DALI_DEFAULT}
    for minimum, flavour in DALI_FLAVOURS:
        if cuda >= minimum:
            return {'value': flavour, 'reason': 'driver CUDA %s: %s' % (cuda_version, flavour)}
    return {'value': 'cuda110', 'reason': 'driver CUDA %s is older than 11.0; cuda110 is the oldest flavour'
                                          % cuda_version}


# --------------------------------------------------------------------------- resolution

def resolve(env, context):
    """The environment as this host installs it.

    ``context``: ``cuda_version`` (driver's, or None), ``driver_version`` and ``architectures``
    (the GPUs' architectures, from the probe), ``pytorch_index_url`` (base, without the
    tag), ``pytorch_cuda`` (override tag or ''), ``nvidia_index_url``, ``prefix``, ``conda_prefix``,
    ``lock`` (text of a lock file or '').
    """
    decisions = []
    packages = []
    extra = list(env['extra_index_urls'])
    imports = []
    torch_tag = None
    lock = context.get('lock') or ''
    pip_items = env['pip']
    if lock:
        pip_items = lock_requirements(lock)
        decisions.append({'what': 'lock_file', 'value': env.get('lock_file', ''),
                          'reason': 'the lock file is installed as written (%d packages); only the PyTorch index is '
                                    'matched to the driver' % len(pip_items)})
    for item in pip_items:
        req, _reason = parse_requirement(item)
        canon = req['canonical']
        if lock:
            if canon == 'torch' and torch_tag is None:
                torch_tag = pytorch_index(context.get('cuda_version'), exact_version(req['spec']),
                                          context.get('pytorch_cuda', ''),
                                          context.get('driver_version'), context.get('architectures'))
                decisions.append({'what': 'pytorch_index', 'value': torch_tag['value'], 'reason': torch_tag['reason']})
                base = context.get('pytorch_index_url') or ''
                if base:
                    extra.insert(0, base.rstrip('/') + '/' + torch_tag['value'])
            if canon in ('torch', 'tensorflow', 'tensorflow-cpu') or canon.startswith('nvidia-dali'):
                imports.append(import_name(canon))
            continue
        if canon in TORCH_FAMILY:
            if torch_tag is None:
                torch_req = [parse_requirement(p)[0] for p in pip_items
                             if parse_requirement(p)[0]['canonical'] == 'torch']
                version = exact_version(torch_req[0]['spec']) if torch_req else None
                if version is None and torch_req:
                    version = _lower_bound(torch_req[0]['spec'])
                torch_tag = pytorch_index(context.get('cuda_version'), version, context.get('pytorch_cuda', ''),
                                          context.get('driver_version'), context.get('architectures'))
                decisions.append({'what': 'pytorch_index', 'value': torch_tag['value'], 'reason': torch_tag['reason']})
                base = context.get('pytorch_index_url') or ''
                if base:
                    url = base.rstrip('/') + '/' + torch_tag['value']
                    if url not in extra:
                        extra.insert(0, url)
        elif canon in ('tensorflow', 'tensorflow-cpu'):
            tf_version = version_tuple(exact_version(req['spec']) or _lower_bound(req['spec']))
            cuda = version_tuple(context.get('cuda_version'))
            if canon == 'tensorflow' and cuda is not None and cuda >= TF_AND_CUDA_CUDA and \
                    (tf_version is None or tf_version >= TF_AND_CUDA_MIN):
                if 'and-cuda' not in req['extras']:
                    req = dict(req, extras=sorted(req['extras'] + ['and-cuda']))
                decisions.append({'what': 'tensorflow', 'value': 'tensorflow[and-cuda]',
                                  'reason': 'driver CUDA %s >= 12.0: NVIDIA\'s CUDA 12 wheels through the and-cuda '
                                            'extra (tensorflow.org/install/pip)' % context.get('cuda_version')})
            else:
                reason = ('no driver CUDA version: CPU build' if cuda is None else
                          'driver CUDA %s is older than 12.0, which tensorflow[and-cuda] needs: CPU only'
                          % context.get('cuda_version') if cuda < TF_AND_CUDA_CUDA else
                          'TensorFlow %s predates the and-cuda extra (2.14): as listed' % (tf_version,)
                          if canon == 'tensorflow' else 'tensorflow-cpu asked for: CPU build')
                req = dict(req, extras=[e for e in req['extras'] if e != 'and-cuda'])
                decisions.append({'what': 'tensorflow', 'value': render_requirement(req), 'reason': reason})
        elif canon == 'nvidia-dali-cuda' or canon.startswith('nvidia-dali-cuda') or canon.startswith('nvidia-dali-tf-plugin-cuda'):
            flavour = dali_flavour(context.get('cuda_version'))
            stem = 'nvidia-dali-tf-plugin-' if 'tf-plugin' in canon else 'nvidia-dali-'
            if canon in ('nvidia-dali-cuda', 'nvidia-dali-tf-plugin-cuda'):
                req = dict(req, name=stem + flavour['value'], canonical=stem + flavour['value'])
                decisions.append({'what': 'dali', 'value': req['name'], 'reason': flavour['reason']})
            nvidia = context.get('nvidia_index_url') or ''
            if nvidia and nvidia not in extra:
                extra.append(nvidia)
        packages.append(render_requirement(req))
        imports.append(import_name(req['canonical']))
    if env['jupyter_kernel'] and not lock and \
            not any(parse_requirement(p)[0]['canonical'] == 'ipykernel' for p in env['pip']):
        packages.append('ipykernel')
        imports.append('ipykernel')
    if env['imports'] is not None:
        imports = list(env['imports'])
    prefix = context['conda_prefix'] + '/envs' if env['backend'] == 'conda' else context['prefix']
    spec = {
        'spec_version': SPEC_VERSION,
        'name': env['name'],
        'backend': env['backend'],
        'python': env['python'],
        'pip': packages,
        'conda': [c.strip() for c in env['conda']],
        'channels': list(env['channels']) if env['backend'] == 'conda' else [],
        'index_url': env['index_url'],
        'extra_index_urls': extra,
        'lock': lock,
    }
    digest = spec_hash(spec)
    return {
        'name': env['name'],
        'backend': env['backend'],
        'state': env['state'],
        'python': env['python'],
        'spec': spec,
        'hash': digest,
        'imports': _unique(imports),
        'verify': env['verify'],
        'jupyter_kernel': env['jupyter_kernel'],
        'prefix': prefix,
        'link': prefix + '/' + env['name'],
        'target': '%s/.%s-%s' % (prefix, env['name'], digest),
        'decisions': decisions,
    }


def lock_requirements(text):
    """The requirements of a lock file (pip-compile / uv pip compile output: one pin per line,
    ``--hash`` continuation lines, comments, options), as requirement strings."""
    out = []
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip().rstrip('\\').strip()
        if not line or line.startswith('-'):
            continue
        line = line.split(' --hash', 1)[0].split('\t', 1)[0].strip()
        req, _reason = parse_requirement(line)
        if req is not None:
            out.append(render_requirement(req))
    return out


def _unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _lower_bound(spec):
    for part in (spec or '').split(','):
        for op in ('>=', '~=', '=='):
            if part.startswith(op):
                return part[len(op):]
    return None


def import_name(canon):
    """The module a distribution is imported as (what verification imports)."""
    if canon in IMPORT_NAMES:
        return IMPORT_NAMES[canon]
    if canon.startswith('nvidia-dali-tf-plugin'):
        return 'nvidia.dali.plugin.tf'
    if canon.startswith('nvidia-dali'):
        return 'nvidia.dali'
    return canon.replace('-', '_')


def spec_hash(spec):
    """12 hex digits of sha256 over the canonical JSON of a resolved spec: the rebuild key."""
    text = json.dumps(spec, sort_keys=True, separators=(',', ':'))
    return hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]


def trusted_hosts(urls):
    """The hosts of plain-HTTP index URLs: pip ignores such an index unless the host is
    trusted (air-gapped mirrors are often plain HTTP); HTTPS ones need nothing."""
    hosts = []
    for url in urls:
        match = re.match(r'^http://([^/@]+@)?([^/]+)', url or '')
        if match and match.group(2) not in hosts:
            hosts.append(match.group(2))
    return hosts


def index_args(index_url):
    """pip arguments for one index URL (with --trusted-host for plain HTTP); [] for none."""
    if not index_url:
        return []
    args = ['--index-url', index_url]
    for host in trusted_hosts([index_url]):
        args += ['--trusted-host', host]
    return args


def requirements_text(spec):
    """The requirements file a venv (or conda's pip section) installs from."""
    lines = ['# gpuops.dlserver.python_stack: environment %s (spec %s); do not edit' % (spec['name'], spec_hash(spec))]
    if spec['index_url']:
        lines.append('--index-url %s' % spec['index_url'])
    for url in spec['extra_index_urls']:
        lines.append('--extra-index-url %s' % url)
    for host in trusted_hosts([spec['index_url']] + list(spec['extra_index_urls'])):
        lines.append('--trusted-host %s' % host)
    lines.extend(spec['pip'])
    if spec['lock']:
        lines.append('# lock file follows')
        lines.append(spec['lock'].rstrip('\n'))
    return '\n'.join(lines) + '\n'


# --------------------------------------------------------------------------- backends

def venv_commands(resolved, tools):
    """The argv lists that build a venv at resolved['target'].

    ``tools``: ``python`` (interpreter path), ``uv`` (path or ''), ``requirements`` (path).
    """
    target = resolved['target']
    req = tools['requirements']
    if tools.get('uv'):
        return {'installer': 'uv', 'commands': [
            # No --seed: uv would fetch pip from its default index, bypassing the site's. pip is
            # installed with the packages, from the environment's own indexes.
            [tools['uv'], 'venv', '--quiet', '--no-project', '--python', tools['python'], target],
            [tools['uv'], 'pip', 'install', '--quiet', '--no-progress', '--python', target + '/bin/python',
             '--link-mode', 'hardlink', '-r', req] + ([] if resolved['spec']['lock'] else ['pip']),
        ]}
    return {'installer': 'pip', 'commands': [
        [tools['python'], '-m', 'venv', target],
        [target + '/bin/python', '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input',
         '-r', req],
    ]}


def conda_environment_file(resolved, requirements_path):
    """environment.yml (JSON is YAML) for ``conda env create``: channels, python, conda
    packages and a pip section that installs the rendered requirements file."""
    spec = resolved['spec']
    deps = ['python=%s' % spec['python']] + spec['conda']
    if spec['pip']:
        deps.append('pip')
        deps.append({'pip': ['-r %s' % requirements_path]})
    doc = {'name': spec['name'], 'channels': spec['channels'] + ['nodefaults'], 'dependencies': deps}
    return json.dumps(doc, indent=2, sort_keys=True) + '\n'


def conda_commands(resolved, conda, env_file):
    """argv lists that build a conda environment at resolved['target'] from env_file."""
    return {'installer': 'conda', 'commands': [
        [conda, 'env', 'create', '--quiet', '--yes', '--prefix', resolved['target'], '--file', env_file],
    ]}


def condarc(channels, mirrors, pkgs_dir, envs_dir):
    """The system-wide .condarc (YAML as JSON): channels, mirrored channel URLs, shared dirs.

    ``mirrors``: ``{channel_alias: url}`` or ``{custom_channels: {name: url}}`` style dict;
    passed through, so an air-gapped site points every channel at its mirror."""
    doc = {
        'channels': list(channels),
        'channel_priority': 'strict',
        'auto_activate_base': False,
        'auto_update_conda': False,
        'pkgs_dirs': [pkgs_dir],
        'envs_dirs': [envs_dir],
        'show_channel_urls': True,
    }
    for key in sorted(mirrors or {}):
        doc[key] = mirrors[key]
    return json.dumps(doc, indent=2, sort_keys=True) + '\n'


def kernel_spec(resolved):
    """kernel.json of a Jupyter kernel that runs the environment through its stable link."""
    return json.dumps({
        'argv': [resolved['link'] + '/bin/python', '-m', 'ipykernel_launcher', '-f', '{connection_file}'],
        'display_name': 'Python (%s)' % resolved['name'],
        'language': 'python',
        'metadata': {'gpuops': {'environment': resolved['name'], 'hash': resolved['hash']}},
    }, indent=1, sort_keys=True) + '\n'


def marker(resolved, installer):
    """The marker file that says an environment is the role's (and what it was built from)."""
    return json.dumps({'managed_by': 'gpuops.dlserver.python_stack', 'name': resolved['name'],
                       'hash': resolved['hash'], 'backend': resolved['backend'], 'installer': installer,
                       'spec': resolved['spec']}, indent=2, sort_keys=True) + '\n'


# --------------------------------------------------------------------------- host state

def decide_action(resolved, observed):
    """{action, reason}: what to do with one environment, from what is on the host.

    ``observed``: ``link`` (``absent``, ``symlink``, ``directory``, ``other``), ``link_target``
    (basename or None), ``target_marker`` (marker dict of link_target, or None),
    ``wanted_exists`` (resolved['target'] exists), ``wanted_marker`` (its marker or None).
    Actions: ``none``, ``build`` (then swap), ``swap`` (wanted dir is built and verified, only the
    link moves), ``remove``, ``refuse`` (not the role's)."""
    name = resolved['name']
    link = observed.get('link', 'absent')
    owned = link == 'symlink' and observed.get('target_marker') is not None
    if link in ('directory', 'other') or (link == 'symlink' and not owned):
        what = {'directory': 'a directory', 'other': 'a file'}.get(link, 'a link to something')
        return {'action': 'refuse', 'reason': (
            'environment %s: %s is %s the role did not create (no %s marker); it is left alone - move it or '
            'give the environment another name' % (name, resolved['link'], what, MARKER))}
    if resolved['state'] == 'absent':
        if link == 'absent':
            return {'action': 'none', 'reason': 'environment %s is absent, as declared' % name}
        return {'action': 'remove', 'reason': 'environment %s is declared absent' % name}
    current = observed.get('link_target')
    wanted = resolved['target'].rsplit('/', 1)[1]
    if owned and current == wanted and (observed.get('target_marker') or {}).get('hash') == resolved['hash']:
        return {'action': 'none', 'reason': 'environment %s is built from this spec (%s)' % (name, resolved['hash'])}
    if observed.get('wanted_exists') and (observed.get('wanted_marker') or {}).get('hash') == resolved['hash']:
        return {'action': 'swap', 'reason': 'environment %s: a verified build of spec %s is already there; '
                                            'the link moves to it' % (name, resolved['hash'])}
    if link == 'absent':
        return {'action': 'build', 'reason': 'environment %s does not exist yet' % name}
    old = (observed.get('target_marker') or {}).get('hash')
    return {'action': 'build', 'reason': 'environment %s: the spec changed (%s -> %s); built beside the old one '
                                         'and swapped in' % (name, old, resolved['hash'])}


def keep_builds(entries, name, current, wanted, keep):
    """Which ``.<name>-<hash>`` directories to delete: all but ``current``/``wanted`` and the
    ``keep`` newest others (entries: list of (basename, mtime, owned))."""
    prefix = '.%s-' % name
    mine = [e for e in entries if e[0].startswith(prefix) and re.match(r'^[0-9a-f]{12}$', e[0][len(prefix):]) and e[2]]
    others = sorted((e for e in mine if e[0] not in (current, wanted)), key=lambda e: e[1], reverse=True)
    return [e[0] for e in others[keep:]]


# --------------------------------------------------------------------------- env defaults

def env_defaults(gpu, overrides):
    """[{name, value, reason}] the framework environment variables for this node.

    ``gpu``: the gpuops_gpu facts; ``overrides``: python_stack_env_defaults (a value of null
    drops a default, any other value replaces or adds one)."""
    gpu = gpu or {}
    out = []
    if gpu.get('gpu_count', 0) > 0:
        out.append({'name': 'CUDA_DEVICE_ORDER', 'value': 'PCI_BUS_ID',
                    'reason': 'CUDA numbers GPUs in PCI order, as nvidia-smi and NVML do (default: fastest first)'})
        out.append({'name': 'NCCL_DEBUG', 'value': 'WARN',
                    'reason': 'NCCL prints why a collective fell back or failed without flooding the logs'})
        hcas = []
        for nic in gpu.get('nics') or []:
            if nic.get('nvlink_switch_mgmt') is True:
                continue
            for dev in nic.get('ib_devices') or []:
                if dev not in hcas:
                    hcas.append(dev)
        if hcas:
            out.append({'name': 'NCCL_IB_HCA', 'value': ','.join(sorted(hcas)),
                        'reason': 'the RDMA devices the probe found (NVSwitch management ports left out), so NCCL '
                                  'does not pick a management port'})
        else:
            out.append({'name': 'NCCL_IB_DISABLE', 'value': '1',
                        'reason': 'the probe found no RDMA device: NCCL uses sockets without probing InfiniBand'})
        out.append({'name': 'TF_FORCE_GPU_ALLOW_GROWTH', 'value': 'true',
                    'reason': 'TensorFlow allocates GPU memory as needed instead of all of it at start'})
    overrides = overrides or {}
    result = [d for d in out if d['name'] not in overrides]
    for name in sorted(overrides):
        if overrides[name] is None:
            continue
        result.append({'name': name, 'value': str(overrides[name]), 'reason': 'set in python_stack_env_defaults'})
    return sorted(result, key=lambda d: d['name'])


_TAG = re.compile(r'^(cpu|cu\d{3}|rocm\d+(\.\d+)*)$')


def option_problems(inputs):
    """Problems of the role-wide variables the argument spec cannot check."""
    problems = []
    tag = inputs.get('pytorch_cuda') or ''
    if tag and not _TAG.match(tag):
        problems.append('python_stack_pytorch_cuda must be cpu, cuXYZ (cu118, cu126, cu128, cu130 ...) or rocmX.Y, '
                        'not %r' % tag)
    if inputs.get('installer') == 'uv' and not re.match(r'^[0-9a-fA-F]{64}$', inputs.get('uv_sha256') or ''):
        problems.append('python_stack_uv_sha256 must be the sha256 (64 hex digits) of the uv %s wheel'
                        % inputs.get('uv_version'))
    if int(inputs.get('keep_builds', 1)) < 0:
        problems.append('python_stack_keep_builds must be 0 or more, not %s' % inputs.get('keep_builds'))
    for key in ('prefix', 'conda_prefix'):
        if not str(inputs.get(key, '/')).startswith('/'):
            problems.append('python_stack_%s must be an absolute path, not %r' % (key, inputs.get(key)))
    for key in ('pip_index_url', 'pytorch_index_url', 'nvidia_index_url'):
        url = inputs.get(key) or ''
        if url and not _URL.match(url):
            problems.append('python_stack_%s must be an http(s):// or file:// URL, not %r' % (key, url))
    return problems


_ENV_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def env_default_problems(overrides):
    """Problems of python_stack_env_defaults (names must be shell variable names)."""
    problems = []
    for name, value in sorted((overrides or {}).items()):
        if not _ENV_NAME.match(str(name)):
            problems.append('python_stack_env_defaults: %r is not an environment variable name' % (name,))
        elif value is not None and (isinstance(value, (dict, list)) or '\n' in str(value)):
            problems.append('python_stack_env_defaults: %s must be a single-line value, not %r' % (name, value))
    return problems


def render_profile(defaults, links, conda_prefix=None):
    """/etc/profile.d script: the env defaults exported, conda's shell hook when installed."""
    lines = ['# gpuops.dlserver.python_stack: framework defaults and environments for every login shell.',
             '# Managed by Ansible; change python_stack_env_defaults instead of editing.']
    for item in defaults:
        lines.append('# %s' % item['reason'])
        lines.append('export %s=%s' % (item['name'], _shell_quote(item['value'])))
    if links:
        lines.append('# Environments: source <path>/bin/activate (venv) or conda activate <path> (conda):')
        for link in links:
            lines.append('#   %s' % link)
    if conda_prefix:
        lines.append('if [ -f %s/etc/profile.d/conda.sh ]; then . %s/etc/profile.d/conda.sh; fi'
                     % (conda_prefix, conda_prefix))
    return '\n'.join(lines) + '\n'


def render_env_file(defaults):
    """KEY=VALUE file for systemd EnvironmentFile= and job launchers."""
    return ''.join('%s=%s\n' % (d['name'], d['value']) for d in defaults)


def _shell_quote(value):
    if re.match(r'^[A-Za-z0-9_.,:/=+-]*$', value):
        return value
    return "'" + value.replace("'", "'\"'\"'") + "'"


# --------------------------------------------------------------------------- verification

def evaluate_verification(result, resolved, expect_gpu):
    """(ok, problems): what the verification script reported against what the host should give.

    ``result``: the script's JSON; ``expect_gpu``: the host has a loaded driver and GPUs."""
    name = resolved['name']
    problems = []
    if not isinstance(result, dict):
        return False, ['environment %s: the verification printed no result' % name]
    for module, info in sorted((result.get('imports') or {}).items()):
        if not info.get('ok'):
            problems.append('environment %s: import %s failed: %s' % (name, module, info.get('error')))
    torch = result.get('torch')
    if torch is not None:
        if not torch.get('ok'):
            problems.append('environment %s: the PyTorch mixed-precision step failed: %s' % (name, torch.get('error')))
        elif expect_gpu and not torch.get('cuda_available'):
            problems.append('environment %s: torch.cuda.is_available() is false on a host with a loaded driver '
                            '(torch %s, built for CUDA %s)' % (name, torch.get('version'), torch.get('cuda_build')))
    tf = result.get('tensorflow')
    if tf is not None:
        if not tf.get('ok'):
            problems.append('environment %s: the TensorFlow XLA step failed: %s' % (name, tf.get('error')))
        elif expect_gpu and not tf.get('gpus'):
            problems.append('environment %s: TensorFlow lists no GPU on a host with a loaded driver' % name)
    return not problems, problems


def summary_line(verification):
    """One line for the fleet summary from a verification record."""
    parts = []
    torch = verification.get('torch')
    if torch:
        if torch.get('ok'):
            dev = torch.get('device') or 'cpu'
            parts.append('torch %s %s (%s step %s)' % (
                torch.get('version'), 'CUDA on %s' % ', '.join(torch.get('device_names') or []) if dev == 'cuda'
                else 'CPU', torch.get('dtype'), 'ok'))
        else:
            parts.append('torch FAILED')
    tf = verification.get('tensorflow')
    if tf:
        parts.append('tensorflow %s %s XLA step %s' % (tf.get('version'), ('%d GPU' % len(tf.get('gpus') or []))
                                                       if tf.get('gpus') else 'CPU', 'ok' if tf.get('ok') else 'FAILED'))
    if not parts:
        parts.append('imports ok' if all(i.get('ok') for i in (verification.get('imports') or {}).values())
                     else 'imports FAILED')
    return '; '.join(parts)


# --------------------------------------------------------------------------- status

_UNSTABLE = ('seconds', 'step_seconds', 'loss', 'executable')


def stable_verification(record):
    """A verification record without what changes from run to run (timings, loss)."""
    if not isinstance(record, dict):
        return record
    out = {}
    for key, value in record.items():
        if key in _UNSTABLE:
            continue
        out[key] = stable_verification(value) if isinstance(value, dict) else value
    return out


def status(plan, verified, verify_enabled):
    """The role's status record: per environment what was declared, resolved and verified.

    ``plan``: the plan action's result; ``verified``: the registered loop of verify results."""
    by_name = {}
    for item in (verified or {}).get('results', []) or []:
        env = item.get('item') or {}
        if item.get('skipped'):
            continue
        by_name[env.get('name')] = item.get('verification') or {}
    envs = []
    for env in plan.get('environments', []):
        record = {
            'name': env['name'], 'backend': env['backend'], 'state': env['state'], 'python': env['python'],
            'hash': env['hash'], 'link': env['link'], 'target': env['target'], 'packages': env['spec']['pip'],
            'conda_packages': env['spec']['conda'], 'index_urls': ([env['spec']['index_url']] if env['spec']['index_url']
                                                                   else []) + env['spec']['extra_index_urls'],
            'decisions': env['decisions'],
        }
        if env['state'] == 'present':
            ver = by_name.get(env['name'])
            if ver:
                record['verification'] = stable_verification(ver)
            else:
                record['verification'] = {'ok': None, 'summary': 'not verified: %s' % (
                    'python_stack_verify is false' if not verify_enabled else
                    'verify: false for this environment' if not env.get('verify') else 'check mode')}
        envs.append(record)
    return {'environments': envs, 'env_defaults': plan.get('env_defaults', []),
            'cuda_version': plan.get('cuda_version'), 'backends': plan.get('backends', [])}


# --------------------------------------------------------------------------- wheel mirror (PEP 503)

def wheel_project(filename):
    """The canonical project name of a wheel or sdist file name, or None."""
    if filename.endswith('.whl'):
        return canonical(filename.split('-', 1)[0])
    for ext in ('.tar.gz', '.zip'):
        if filename.endswith(ext):
            return canonical(filename[:-len(ext)].rsplit('-', 1)[0])
    return None


def simple_project_page(project, files, href_prefix):
    """The PEP 503 page of one project: ``files`` is [(filename, sha256)], links are
    ``<href_prefix><filename>#sha256=<hex>``."""
    lines = ['<!DOCTYPE html>', '<html><head><meta name="pypi:repository-version" content="1.0">'
             '<title>Links for %s</title></head><body>' % project, '<h1>Links for %s</h1>' % project]
    for name, digest in sorted(files):
        lines.append('<a href="%s%s#sha256=%s">%s</a><br/>' % (href_prefix, name.replace('+', '%2B'), digest, name))
    lines.append('</body></html>')
    return '\n'.join(lines) + '\n'


def simple_root_page(projects):
    """The PEP 503 root page listing ``projects`` (canonical names)."""
    lines = ['<!DOCTYPE html>', '<html><head><meta name="pypi:repository-version" content="1.0">'
             '<title>Simple index</title></head><body>']
    for project in sorted(projects):
        lines.append('<a href="%s/">%s</a><br/>' % (project, project))
    lines.append('</body></html>')
    return '\n'.join(lines) + '\n'
