# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side of the module gpuops.dlserver.__private.python_stack_host: the one place that reads and
changes the node (environment links and markers, interpreters, builds, kernels, verification
runs), each action given the AnsibleModule for run_command / exit_json / fail_json. The
decisions are the pure functions of python_stack.py and its siblings.

Standard library only, Python 3.8+ (runs on the nodes).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import stat
import time

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import directory_current, file_current, put_files
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import python_stack as ps
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_fast_path as sf
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import indexes as ix
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import node_env as ne
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_status as st
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.python_stack_verify import argv as verify_argv
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.python_stack_verify import parse as _parse_verify


# A distribution package name (dpkg or rpm), the whole value: it reaches dpkg-query's or rpm's command line.
_PACKAGE_RE = re.compile(r'[A-Za-z0-9][A-Za-z0-9.+_-]*')


def _read_marker(path):
    try:
        with open(os.path.join(path, ps.MARKER)) as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) and data.get('managed_by') == 'gpuops.dlserver.python_stack' else None
    except (IOError, OSError, ValueError):
        return None


def observe(resolved):
    link = resolved['link']
    obs = {'link': 'absent', 'link_target': None, 'target_marker': None}
    if os.path.islink(link):
        obs['link'] = 'symlink'
        dest = os.readlink(link)
        real = dest if dest.startswith('/') else os.path.join(os.path.dirname(link), dest)
        if os.path.dirname(os.path.normpath(real)) == os.path.normpath(resolved['prefix']):
            obs['link_target'] = os.path.basename(os.path.normpath(real))
            obs['target_marker'] = _read_marker(real)
    elif os.path.isdir(link):
        obs['link'] = 'directory'
    elif os.path.exists(link):
        obs['link'] = 'other'
    obs['wanted_exists'] = os.path.isdir(resolved['target'])
    obs['wanted_marker'] = _read_marker(resolved['target']) if obs['wanted_exists'] else None
    return obs


def _python_for(version):
    for base in ('/usr/bin', '/usr/local/bin'):
        path = os.path.join(base, 'python' + version)
        if os.access(path, os.X_OK):
            return path
    return None


def _available_pythons():
    found = []
    for base in ('/usr/bin', '/usr/local/bin'):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            if name.startswith('python3.') and name[len('python3.'):].isdigit() and ('3.' + name[8:]) not in found:
                found.append('3.' + name[8:])
    return sorted(found)


def build_plan(module):
    """The plan of action=plan (environments resolved, the framework defaults and the files'
    text), before the host's state is read; fails the module where the host cannot build them."""
    params = module.params
    inputs = params['inputs']
    if inputs is None:
        module.fail_json(msg='python_stack_host: inputs is required with action=plan')
    # The inputs were checked on the controller before any change by the registry of input checks
    # (core/input_checks.py runs python_stack.input_problems: the environment entries, the
    # environment defaults, the role-wide options), before the role calls this private module: the
    # entries only get their defaults here. What needs this host (its Pythons, the lock files read
    # from it) is checked below.
    envs, problems = ps.environments(inputs.get('environments', []), inputs), []
    gpu = params['gpu'] or {}
    cuda = (gpu.get('driver') or {}).get('cuda_version') if (gpu.get('driver') or {}).get('loaded') else None
    context = {
        'cuda_version': cuda,
        'driver_version': (gpu.get('driver') or {}).get('version') if cuda else None,
        # each GPU as the probe saw it: the wheel's build must have kernels for its compute capability
        'architectures': [{'architecture': g.get('architecture') or 'unknown',
                           'compute_capability': g.get('compute_capability'), 'name': g.get('name'),
                           'pci_bus_id': g.get('pci_bus_id')} for g in gpu.get('gpus') or []],
        'pytorch_index_url': inputs.get('pytorch_index_url', ''),
        'pytorch_cuda': inputs.get('pytorch_cuda', ''),
        'nvidia_index_url': inputs.get('nvidia_index_url', ''),
        'prefix': inputs.get('prefix'),
        'conda_prefix': inputs.get('conda_prefix'),
    }
    resolved = []
    for env in envs:
        if env['backend'] == 'venv' and env['state'] == 'present' and not _python_for(env['python']):
            problems.append('environment %s: Python %s is not on this host (the venv backend uses the system\'s '
                            'interpreters: %s); install python%s or use backend conda'
                            % (env['name'], env['python'], ', '.join(_available_pythons()) or 'none', env['python']))
        locks = params['locks'] or {}
        if env['lock_file'] and env['state'] == 'present' and env['name'] not in locks:
            problems.append('environment %s: lock_file %s was not read (pass its text in locks)' % (env['name'], env['lock_file']))
        res = ps.resolve(env, dict(context, lock=locks.get(env['name'], '') if env['lock_file'] else ''))
        if env['state'] == 'present':
            problems.extend('environment %s: %s' % (env['name'], d['error'])
                            for d in res.get('decisions') or [] if d.get('error'))
        res['adopt'] = bool(inputs.get('adopt', False))
        res['observed'] = observe(res)
        res.update(ps.decide_action(res, res['observed']))
        res['interpreter'] = _python_for(env['python']) if env['backend'] == 'venv' else None
        resolved.append(res)
    if problems:
        module.fail_json(msg='gpuops.dlserver.python_stack: nothing was changed: %s' % '; '.join(problems),
                         problems=problems)
    defaults = ne.env_defaults(gpu, inputs.get('env_defaults'))
    links = [r['link'] for r in resolved if r['state'] == 'present']
    conda = context['conda_prefix'] if any(r['backend'] == 'conda' for r in resolved) else None
    cache = inputs.get('cache_dir') or ''
    rc_text = ps.condarc(inputs.get('conda_channels', []), inputs.get('conda_mirrors') or {},
                         (cache + '/conda-pkgs') if cache else context['conda_prefix'] + '/pkgs',
                         context['conda_prefix'] + '/envs')
    plan = dict(environments=resolved, env_defaults=defaults, cuda_version=cuda, condarc=rc_text,
                uv_index_args=ix.index_args(inputs.get('pip_index_url', '')),
                uv_requirement=sf.uv_requirement(inputs.get('uv_version'), inputs.get('uv_sha256')),
                profile=ne.render_profile(defaults, links, conda), env_file=ne.render_env_file(defaults),
                backends=sorted(set(r['backend'] for r in resolved if r['state'] == 'present')),
                expect_gpu=bool(gpu.get('gpu_count')) and (gpu.get('driver') or {}).get('loaded') is True)
    return plan


def do_plan(module):
    inputs = module.params['inputs']
    plan = build_plan(module)
    resolved = plan['environments']
    plan['current'] = read_current(module, inputs, plan)
    verify = bool(inputs.get('verify'))
    previous = _read_json(inputs.get('status_file'))
    for res in resolved:
        res['kernel_current'] = _kernel_current(inputs, res) if res['action'] == 'none' else None
        res['previous_verification'] = sf.previous_verification(res, previous, plan['expect_gpu'], verify)
        res['verify_now'] = bool(verify and res['verify'] and res['state'] == 'present' and res['action'] != 'leave'
                                 and res['previous_verification'] is None)
    plan.update(sf.fast_path(plan['current'], resolved, verify))
    module.exit_json(changed=False, **plan)


def _read_json(path):
    try:
        with open(path) as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else None
    except (IOError, OSError, ValueError, TypeError):
        return None


def _kernel_current(inputs, res):
    """None without a Jupyter kernel, else whether its kernel.json is what converge writes."""
    if not res.get('jupyter_kernel'):
        return None
    path = os.path.join(inputs['kernel_dir'], 'gpuops-' + res['name'],
                        'kernel.json')
    return file_current(path, ps.kernel_spec(res))


def _packages_installed(module, names):
    """Whether every distribution package in ``names`` is installed (dpkg, else rpm)."""
    dpkg = module.get_bin_path('dpkg-query')
    if dpkg:
        out = module.run_command([dpkg, '-W', '-f', apt_sources.DPKG_QUERY_FORMAT] + list(names))[1]
        rows = apt_sources.parse_dpkg_query(out, list(names))
        return all((rows.get(n) or {}).get('version') for n in names)
    rpm = module.get_bin_path('rpm')
    return bool(rpm) and module.run_command([rpm, '-q'] + list(names))[0] == 0


def _text_current(path, content, mode=0o644):
    """file_current, where an empty ``content`` is an empty file (the environment file of a host
    without framework defaults), not a file to remove."""
    if content:
        return file_current(path, content, mode)
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size == 0 and (info.st_mode & 0o7777) == mode \
        and info.st_uid == 0 and info.st_gid == 0


def read_current(module, inputs, plan):
    """Whether each thing the role's install and configure steps manage already is what they
    would leave (True/False; None where the host does not need it): stack_fast_path.CHECKS."""
    home = module.params['home']
    backends = plan['backends']
    venv = 'venv' in backends
    conda_prefix = inputs.get('conda_prefix')
    dirs = [home, inputs.get('prefix')] + ([inputs['cache_dir']] if inputs.get('cache_dir') else [])
    names = list(module.params['os_packages'] or [])
    bad = [n for n in names if not _PACKAGE_RE.fullmatch(n)]
    if bad:
        module.fail_json(msg='os_packages: %s is not a package name' % ', '.join(bad))
    uv_version = inputs.get('uv_version')
    env_file = inputs.get('env_file') or ''
    return {
        'os_packages': (_packages_installed(module, names) if names else True) if venv else None,
        'directories': all(directory_current(d) for d in dirs) if backends else None,
        'uv': (file_current(os.path.join(home, 'uv-requirements.txt'), plan['uv_requirement'])
               and os.path.isdir(os.path.join(home, 'uv', 'uv-%s.dist-info' % uv_version)))
        if venv and inputs.get('installer') == 'uv' else None,
        'conda': (os.path.isfile(os.path.join(home, 'conda-installer.sh'))
                  and os.path.isfile(os.path.join(conda_prefix, 'bin', 'conda'))
                  and file_current(os.path.join(conda_prefix, '.condarc'), plan['condarc']))
        if 'conda' in backends else None,
        'profile': _text_current(inputs.get('profile_file') or '', plan['profile']),
        'env_file_dir': directory_current(os.path.dirname(env_file)),
        'env_file': _text_current(env_file, plan['env_file']),
    }


def file_paths(module, inputs):
    """Where each file of the plan is written (by action=write)."""
    conda_prefix = inputs['conda_prefix']
    return {'profile': inputs.get('profile_file') or '', 'env_file': inputs.get('env_file') or '',
            'uv_requirement': os.path.join(module.params['home'], 'uv-requirements.txt'),
            'condarc': os.path.join(conda_prefix, '.condarc')}


def do_write(module):
    """action=write: the files named in ``files`` (profile, env_file, uv_requirement, condarc)
    rendered as action=plan renders them and written here (core/files.put_files: atomic, 0644,
    root, --diff, check mode) - the text never travels through the controller. An empty
    environment file is an empty file, not a removed one."""
    inputs = module.params['inputs']
    if inputs is None:
        module.fail_json(msg='python_stack_host: inputs is required with action=write')
    plan = build_plan(module)
    paths = file_paths(module, inputs)
    wanted = [{'name': name, 'dest': paths[name], 'content': plan[name], 'keep_empty': True}
              for name in module.params['files']]
    done, diffs = put_files(wanted, module)
    module.exit_json(changed=bool(diffs), diff=diffs,
                     written=[{'name': d['name'], 'dest': d['dest'], 'changed': d['changed']} for d in done])


def _write(path, text, mode=0o644):
    tmp = path + '.tmp'
    with open(tmp, 'w') as handle:
        handle.write(text)
    os.chmod(tmp, mode)
    os.rename(tmp, path)


def _swap(link, target):
    tmp = '%s.swap-%d' % (link, os.getpid())
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(os.path.basename(target), tmp)
    os.rename(tmp, link)


def _check_imports(module, res, environ):
    argv = verify_argv(res['target'] + '/bin/python', res['imports'], imports_only=True)
    rc, out, err = module.run_command(argv, environ_update=environ)
    result = _parse_verify(out)
    if rc != 0:
        return 'the import check exited with %d: %s' % (rc, ' | '.join((err or out or '').strip().splitlines()[-10:]))
    bad = ['%s (%s)' % (k, v.get('error')) for k, v in sorted(((result or {}).get('imports') or {}).items())
           if not v.get('ok')]
    if result is None or bad:
        return 'imports failed in the new build: %s' % (', '.join(bad) or 'no result')
    return None


def _cleanup(res, keep):
    prefix = res['prefix']
    current = os.path.basename(os.path.normpath(os.path.join(prefix, os.readlink(res['link'])))) \
        if os.path.islink(res['link']) else None
    entries = []
    for name in os.listdir(prefix):
        path = os.path.join(prefix, name)
        if os.path.isdir(path) and not os.path.islink(path):
            entries.append((name, os.stat(path).st_mtime, _read_marker(path) is not None))
    removed = ps.keep_builds(entries, res['name'], current, os.path.basename(res['target']), keep)
    for name in removed:
        shutil.rmtree(os.path.join(prefix, name))
    return removed


def _kernel(module, res):
    if not res.get('jupyter_kernel'):
        return False
    kdir = os.path.join(module.params['kernel_dir'], 'gpuops-' + res['name'])
    text = ps.kernel_spec(res)
    path = os.path.join(kdir, 'kernel.json')
    try:
        with open(path) as handle:
            if handle.read() == text:
                return False
    except (IOError, OSError):
        pass
    if not module.check_mode:
        if not os.path.isdir(kdir):
            os.makedirs(kdir, 0o755)
        _write(path, text)
    return True


def do_converge(module):
    res = module.params['environment']
    if not res:
        module.fail_json(msg='python_stack_host: environment is required with action=converge')
    tools = module.params['tools'] or {}
    obs = observe(res)
    decision = ps.decide_action(res, obs)
    result = {'name': res['name'], 'action': decision['action'], 'reason': decision['reason'], 'hash': res['hash'],
              'link': res['link'], 'installer': None, 'seconds': 0.0, 'removed_builds': []}
    if decision['action'] == 'leave':
        module.exit_json(changed=False, **result)
    if decision['action'] == 'none':
        result['kernel_changed'] = _kernel(module, res)
        module.exit_json(changed=result['kernel_changed'], **result)
    if module.check_mode:
        module.exit_json(changed=True, **result)
    if decision['action'] == 'remove':
        target = os.path.join(res['prefix'], obs['link_target'])
        os.unlink(res['link'])
        shutil.rmtree(target)
        kdir = os.path.join(module.params['kernel_dir'], 'gpuops-' + res['name'])
        if os.path.isdir(kdir):
            shutil.rmtree(kdir)
        module.exit_json(changed=True, **result)
    environ = {'LC_ALL': 'C.UTF-8', 'PIP_DISABLE_PIP_VERSION_CHECK': '1', 'UV_PYTHON_DOWNLOADS': 'never',
               'UV_NO_CONFIG': '1'}
    cache = module.params['cache_dir']
    if cache:
        environ.update({'UV_CACHE_DIR': os.path.join(cache, 'uv'), 'PIP_CACHE_DIR': os.path.join(cache, 'pip')})
    else:
        environ.update({'UV_NO_CACHE': '1', 'PIP_NO_CACHE_DIR': '1'})
    if decision['action'] in ('build', 'adopt'):
        if not os.path.isdir(res['prefix']):
            os.makedirs(res['prefix'], 0o755)
        target = res['target']
        if os.path.lexists(target):
            shutil.rmtree(target)  # a half-built, unmarked leftover of an interrupted run
        staging = os.path.join(res['prefix'], '.%s.build-%s' % (res['name'], res['hash']))
        if not os.path.isdir(staging):
            os.makedirs(staging, 0o755)
        req_path = os.path.join(staging, 'requirements.txt')
        _write(req_path, ps.requirements_text(res['spec']))
        start = time.time()
        try:
            if res['backend'] == 'conda':
                env_file = os.path.join(staging, 'environment.yml')
                _write(env_file, ps.conda_environment_file(res, req_path))
                if not tools.get('conda'):
                    module.fail_json(msg='environment %s: the conda backend needs conda; it is not installed' % res['name'])
                plan = ps.conda_commands(res, tools['conda'], env_file)
            else:
                plan = ps.venv_commands(res, {'python': res['interpreter'], 'uv': tools.get('uv') or '',
                                              'requirements': req_path})
            result['installer'] = plan['installer']
            for index, argv in enumerate(plan['commands']):
                what = 'creating the environment' if index == 0 else 'installing the packages'
                _run_build(module, argv, res, target, '%s (%s)' % (what, plan['installer']), environ)
            problem = _check_imports(module, res, environ)
            if problem:
                shutil.rmtree(target)
                module.fail_json(msg='environment %s: %s; the build was removed and the previous environment '
                                     'is unchanged' % (res['name'], problem), **result)
            shutil.copy(req_path, os.path.join(target, 'gpuops-requirements.txt'))
            _write(os.path.join(target, ps.MARKER), ps.marker(res, plan['installer']))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        result['seconds'] = round(time.time() - start, 1)
    if decision['action'] == 'adopt':
        result['adopted'] = _set_aside(res, obs)
    _swap(res['link'], res['target'])
    result['kernel_changed'] = _kernel(module, res)
    result['removed_builds'] = _cleanup(res, module.params['keep_builds'])
    module.exit_json(changed=True, **result)


def _set_aside(res, obs):
    """Keep what the role takes over: a directory or file at the link's path moves beside the
    role's old builds (never removed by their cleanup: it has no marker); a link's target stays
    where it is. Returns where the old environment is now."""
    if obs['link'] == 'symlink':
        return os.path.realpath(res['link'])
    aside = os.path.join(res['prefix'], ps.aside_name(res['name'], os.listdir(res['prefix'])))
    os.rename(res['link'], aside)
    return aside


def _run_build(module, argv, res, target, what, environ):
    rc, out, err = module.run_command(argv, environ_update=environ)
    if rc != 0:
        if os.path.lexists(target):
            shutil.rmtree(target)
        tail = (err or out or '').strip().splitlines()[-15:]
        module.fail_json(msg='environment %s: %s failed (rc %d); the build was removed and the previous environment '
                             'is unchanged: %s' % (res['name'], what, rc, ' | '.join(tail)),
                         rc=rc, cmd=argv, stdout=out, stderr=err)


def do_verify(module):
    res = module.params['environment']
    if not res:
        module.fail_json(msg='python_stack_host: environment is required with action=verify')
    if not os.path.islink(res['link']) or _read_marker(res['link']) is None:
        if module.check_mode:
            module.exit_json(changed=False, verification={'ok': None, 'summary': 'not built yet (check mode)'})
        module.fail_json(msg='environment %s: %s is not a built environment of the role' % (res['name'], res['link']))
    argv = verify_argv(res['link'] + '/bin/python', res['imports'])
    start = time.time()
    rc, out, err = module.run_command(argv, environ_update={'LC_ALL': 'C.UTF-8', 'TF_CPP_MIN_LOG_LEVEL': '2'})
    result = _parse_verify(out)
    if rc != 0 or result is None:
        module.fail_json(msg='environment %s: the verification script failed (rc %d): %s'
                             % (res['name'], rc, ' | '.join((err or out or '').strip().splitlines()[-10:])),
                         rc=rc, stdout=out, stderr=err)
    ok, problems = st.evaluate_verification(result, res, module.params['expect_gpu'])
    result.update({'ok': ok, 'problems': problems, 'summary': st.summary_line(result), 'hash': res['hash'],
                   'seconds': round(time.time() - start, 1), 'expect_gpu': module.params['expect_gpu']})
    if not ok:
        module.fail_json(msg='; '.join(problems), verification=result)
    module.exit_json(changed=False, verification=result)


ACTIONS = {'plan': do_plan, 'converge': do_converge, 'verify': do_verify, 'write': do_write}
