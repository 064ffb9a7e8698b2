# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the python_stack role: environments declared as data, in one place.

- ``normalise(env, inputs)``: one declared environment with the role's defaults filled in,
  or the problems that name it (bad name, backend, Python version, package spec, URL).
- ``option_problems(inputs, envs)``: the role-wide variables the argument spec cannot check.
- ``resolve(env, context)``: the packages and indexes an environment installs on this host
  (PyTorch index, ``tensorflow[and-cuda]`` on GPU hosts, DALI's CUDA flavour), its import
  names and its spec hash, the one value that decides whether it is rebuilt.
- ``venv_commands`` / ``conda_commands`` / ``conda_environment_file`` / ``condarc``:
  what each backend runs and writes, from the same resolved spec.
- ``evaluate_verification(result, expect_gpu)``: whether what the verification script saw
  inside an environment is what the host should give it; ``status``: the status record.

The rest lives beside it, by concern: ``requirements`` (pip requirements, lock files),
``cuda_match`` (which CUDA build of PyTorch, TensorFlow, DALI), ``indexes`` (which indexes pip
may use, requirement files, PEP 503 pages), ``node_env`` (the per-node framework variables and
their files), ``python_stack_verify`` (the measurements inside an environment).

Pure functions, standard library only, Python 3.8+ (imported by the module python_stack_host).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan import adopt as _adopt
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.cuda_match import (
    cuda_tuple, dali_flavour, pytorch_index, tf_and_cuda_row)
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.indexes import (
    insecure_index_problems, trusted_hosts, valid_host)
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.node_env import env_default_problems, valid_abs_path
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.requirements import (
    exact_version, lock_problems, lock_requirements, lower_bound, parse_requirement, render_requirement,
    valid_conda_package, valid_name, version_tuple)
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.stack_inputs import (
    option_input_problems, sha256_error, url_error)

MARKER = '.gpuops-python-stack.json'
SPEC_VERSION = 1

# Import names that differ from the distribution name (what "verify imports" imports).
IMPORT_NAMES = {
    'pillow': 'PIL', 'scikit-learn': 'sklearn', 'opencv-python': 'cv2', 'opencv-python-headless': 'cv2',
    'pyyaml': 'yaml', 'tensorflow-cpu': 'tensorflow', 'ipykernel': 'ipykernel', 'protobuf': 'google.protobuf',
    'nvidia-ml-py': 'pynvml', 'jupyterlab': 'jupyterlab', 'tensorboard': 'tensorboard',
}
TORCH_FAMILY = ('torch', 'torchvision', 'torchaudio')

_PYTHON = re.compile(r'3\.(\d{1,2})')
_TAG = re.compile(r'cpu|cu\d{3}|rocm\d+(\.\d+)*')
_SHA256 = re.compile(r'[0-9a-fA-F]{64}')
_BUILD_SUFFIX = re.compile(r'[0-9a-f]{12}')


# --------------------------------------------------------------------------- inputs

def with_defaults(env, inputs):
    """One declared environment (a mapping with a valid name) with the role's defaults filled in
    from ``inputs`` (__python_stack, keys without prefix); no check."""
    return {
        'name': env.get('name'),
        'backend': env.get('backend') or inputs.get('backend'),
        'python': str(env.get('python') or inputs.get('python')),
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


def environments(envs, inputs):
    """The declared environments with the role's defaults filled in, for inputs the registry of
    input checks accepted (core/input_checks.py runs ``input_problems``, whose ``normalise_all``
    checks each entry): no check here."""
    return [with_defaults(env, inputs) for env in envs or []]


def normalise(env, inputs):
    """(env with defaults, problems). ``inputs`` is __python_stack (keys without prefix)."""
    problems = []
    if not isinstance(env, dict):
        return None, ['python_stack_environments: every entry must be a mapping, not %r' % (env,)]
    name = env.get('name')
    if not valid_name(name):
        return None, ['python_stack_environments: entry %r needs a name of letters, digits, ".", "_" or "-" '
                      '(at most 64, not starting with "." or "-")' % (name,)]
    where = 'python_stack_environments[%s]' % name
    known = set(['name', 'backend', 'python', 'pip', 'conda', 'channels', 'index_url', 'extra_index_urls',
                 'imports', 'jupyter_kernel', 'state', 'verify', 'lock_file', 'pinned'])
    unknown = sorted(set(env) - known)
    if unknown:
        problems.append('%s: unknown key(s) %s; known: %s' % (where, ', '.join(unknown), ', '.join(sorted(known))))
    out = with_defaults(env, inputs)
    if out['backend'] not in ('venv', 'conda'):
        problems.append('%s: backend must be venv or conda, not %r' % (where, out['backend']))
    if not _PYTHON.fullmatch(out['python']):
        problems.append('%s: python must be a 3.X version such as "3.11", not %r' % (where, out['python']))
    if out['state'] not in ('present', 'absent'):
        problems.append('%s: state must be present or absent, not %r' % (where, out['state']))
    if not isinstance(env.get('pinned', False), bool):
        problems.append('%s: pinned must be true or false, not %r' % (where, env.get('pinned')))
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
        if not valid_conda_package(item):
            problems.append('%s: conda package %r is not a valid match spec (name[=version])' % (where, item))
    if out['conda'] and out['backend'] != 'conda':
        problems.append('%s: conda packages need backend conda (this environment uses %s); move them to pip '
                        'or set backend: conda' % (where, out['backend']))
    for url in [out['index_url']] + list(out['extra_index_urls']):
        if url and (not isinstance(url, str) or url_error(url, 'index URL')):
            problems.append('%s: index URL %r must be http(s):// or file://' % (where, url))
        elif url:
            problems.extend(insecure_index_problems([url], inputs.get('insecure_index_hosts'), where))
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


# --------------------------------------------------------------------------- resolution

def _index_decision(torch_tag):
    """The pytorch_index decision; with ``error`` where cuda_match refused the host (no build has
    kernels for every GPU): python_stack_host fails the plan with it."""
    decision = {'what': 'pytorch_index', 'value': torch_tag['value'], 'reason': torch_tag['reason']}
    if torch_tag.get('error'):
        decision['error'] = torch_tag['error']
    return decision


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
        # every entry an exact pin or a hash, before anything is installed (issue 37): the plan fails
        # naming the file and the line (stack_host collects the decisions' errors)
        where = 'python_stack_environments[%s].lock_file %s' % (env.get('name'), env.get('lock_file', ''))
        decisions.extend({'what': 'lock_file', 'value': env.get('lock_file', ''), 'error': problem, 'reason': problem}
                         for problem in lock_problems(lock, where))
    for item in pip_items:
        req, _reason = parse_requirement(item)
        canon = req['canonical']
        if lock:
            if canon == 'torch' and torch_tag is None:
                torch_tag = pytorch_index(context.get('cuda_version'), exact_version(req['spec']),
                                          context.get('pytorch_cuda', ''),
                                          context.get('driver_version'), context.get('architectures'))
                decisions.append(_index_decision(torch_tag))
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
                    version = lower_bound(torch_req[0]['spec'])
                torch_tag = pytorch_index(context.get('cuda_version'), version, context.get('pytorch_cuda', ''),
                                          context.get('driver_version'), context.get('architectures'))
                decisions.append(_index_decision(torch_tag))
                base = context.get('pytorch_index_url') or ''
                if base:
                    url = base.rstrip('/') + '/' + torch_tag['value']
                    if url not in extra:
                        extra.insert(0, url)
        elif canon in ('tensorflow', 'tensorflow-cpu'):
            pinned = exact_version(req['spec'])
            tf_version = version_tuple(pinned or lower_bound(req['spec']))
            cuda = cuda_tuple(context.get('cuda_version'))
            rule = tf_and_cuda_row(tf_version, bool(pinned))
            needs = tuple(int(p) for p in rule['driver_cuda'].split('.')) if rule else None
            if canon == 'tensorflow' and cuda is not None and rule and cuda >= needs:
                if 'and-cuda' not in req['extras']:
                    req = dict(req, extras=sorted(req['extras'] + ['and-cuda']))
                decisions.append({'what': 'tensorflow', 'value': 'tensorflow[and-cuda]',
                                  'reason': 'driver CUDA %s >= %s: TensorFlow %s+\'s and-cuda extra pulls NVIDIA\'s %s '
                                            'wheels (tensorflow.org/install/pip; the release\'s wheel metadata)'
                                            % (context.get('cuda_version'), rule['driver_cuda'], rule['tensorflow'],
                                               rule['wheels'])})
            else:
                reason = ('no driver CUDA version: CPU build' if cuda is None else
                          'TensorFlow %s predates the and-cuda extra (2.14): as listed' % (tf_version,)
                          if canon == 'tensorflow' and not rule else
                          'driver CUDA %s is older than %s, which tensorflow[and-cuda] of TensorFlow %s+ needs (its %s '
                          'wheels): CPU only' % (context.get('cuda_version'), rule['driver_cuda'], rule['tensorflow'],
                                                 rule['wheels'])
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


def _unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


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


# --------------------------------------------------------------------------- backends

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
    link moves), ``remove``, and for what the role did not create (plan/adopt.py): ``leave``
    (reported, not touched) or, with ``resolved['adopt']`` (python_stack_adopt), ``adopt`` (built
    beside it, the old one moved aside, the link swapped)."""
    name = resolved['name']
    link = observed.get('link', 'absent')
    owned = link == 'symlink' and observed.get('target_marker') is not None
    if link in ('directory', 'other') or (link == 'symlink' and not owned):
        found = '%s is %s the role did not create (no %s marker)' % (
            resolved['link'], {'directory': 'a directory', 'other': 'a file'}.get(link, 'a link to something'), MARKER)
        if resolved['state'] == 'absent':
            return {'action': 'leave', 'reason': 'environment %s is declared absent, but %s: left alone (the role '
                                                 'removes only environments it built)' % (name, found)}
        decision = _adopt.decide('python_stack', 'environment %s:' % name, _adopt.UNKNOWN, found,
                                 resolved.get('adopt', False))
        return {'action': decision['action'], 'reason': decision['reason']}
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


def aside_name(name, existing):
    """Where an adopted environment the role did not create is kept, beside the role's old builds:
    ``.<name>-adopted``, numbered when that is taken (``existing``: the names in the prefix)."""
    candidate, number = '.%s-adopted' % name, 1
    while candidate in existing:
        number += 1
        candidate = '.%s-adopted-%d' % (name, number)
    return candidate


def keep_builds(entries, name, current, wanted, keep):
    """Which ``.<name>-<hash>`` directories to delete: all but ``current``/``wanted`` and the
    ``keep`` newest others (entries: list of (basename, mtime, owned))."""
    prefix = '.%s-' % name
    mine = [e for e in entries if e[0].startswith(prefix) and _BUILD_SUFFIX.fullmatch(e[0][len(prefix):]) and e[2]]
    others = sorted((e for e in mine if e[0] not in (current, wanted)), key=lambda e: e[1], reverse=True)
    return [e[0] for e in others[keep:]]


# --------------------------------------------------------------------------- role-wide inputs

def input_problems(inputs):
    """Every problem of the role's typed inputs that its argument spec cannot check: the
    environment entries (``normalise_all``), the environment defaults and the role-wide options
    (``option_problems``); the registry of input checks runs it (core/input_checks.py)."""
    envs, problems = normalise_all(inputs.get('environments', []), inputs)
    problems.extend(env_default_problems(inputs.get('env_defaults')))
    return problems + option_problems(inputs, envs)


def option_problems(inputs, envs=None):
    """Problems of the role-wide variables the argument spec cannot check.

    ``envs``: the normalised environments (the conda installer's checksum is checked where an
    environment present on the host uses conda).
    """
    problems = []
    tag = inputs.get('pytorch_cuda') or ''
    if tag and not _TAG.fullmatch(tag):
        problems.append('python_stack_pytorch_cuda must be cpu, cuXYZ (cu118, cu126, cu130 ...) or rocmX.Y, '
                        'not %r' % tag)
    if inputs.get('installer') == 'uv' and not _SHA256.fullmatch(inputs.get('uv_sha256') or ''):
        problems.append('python_stack_uv_sha256 must be the sha256 (64 hex digits) of the uv %s wheel'
                        % inputs.get('uv_version'))
    conda = [e['name'] for e in envs or [] if e and e.get('backend') == 'conda' and e.get('state') == 'present']
    if conda and not _SHA256.fullmatch(str(inputs.get('conda_installer_sha256') or '')):
        problems.append('python_stack_conda_installer_sha256 must be the sha256 (64 hex digits) of '
                        'python_stack_conda_installer_url (%s); environments %s use the conda backend'
                        % (inputs.get('conda_installer_url'), ', '.join(conda)))
    elif inputs.get('conda_installer_sha256'):
        problems.extend(e for e in [sha256_error(inputs['conda_installer_sha256'],
                                                 'python_stack_conda_installer_sha256')] if e)
    problems.extend(option_input_problems(inputs))
    for key in ('prefix', 'conda_prefix'):
        if not valid_abs_path(inputs.get(key, '/')):
            problems.append('python_stack_%s must be an absolute path on one line, not %r' % (key, inputs.get(key)))
    hosts = inputs.get('insecure_index_hosts') or []
    bad = [h for h in hosts if not valid_host(h)]
    if bad:
        problems.append('python_stack_insecure_index_hosts: %s is not a host[:port]' % ', '.join(repr(h) for h in bad))
    for key in ('pip_index_url', 'pytorch_index_url', 'nvidia_index_url'):
        url = inputs.get(key) or ''
        error = url and url_error(url, 'python_stack_%s' % key)
        if error:
            problems.append(error)
        elif url:
            problems.extend(insecure_index_problems([url], hosts, 'python_stack_%s' % key))
    return problems
