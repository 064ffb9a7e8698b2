# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side of the module gpuops.dlserver.__private.nvidia_container_toolkit_host: what it reads and
checks on the node for its actions ``resolve``, ``runtime`` and ``verify``.

The decisions are in container_toolkit.py and container_engines.py (pure, case tables); this file
reads the host (dpkg, engines, units, the files the role writes) through ``Host`` and hands the
facts to them. Runs on the managed node: standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import json
import os
import shutil
import tempfile

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import files as core_files
from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_engines as ce
from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_toolkit as ctk
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import dpkg_state
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_files
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure


def read(path):
    if not os.path.isfile(path):
        return None
    with open(path) as handle:
        return handle.read()


def installed(host, verdict_accept):
    rc, out, dummy = host.run(['dpkg-query', '-W', '-f', apt_sources.DPKG_QUERY_FORMAT]
                              + ctk.PACKAGES, check=False)
    state = apt_sources.parse_dpkg_query(out, ctk.PACKAGES)
    found = dict((name, row['version']) for name, row in state.items())
    versions = sorted(set(found.values()))
    verdicts = dict((v, ctk.vulnerable(v, verdict_accept)) for v in versions)
    refused = [v for v in versions if verdicts[v]['refused']]
    return {'packages': found, 'state': state, 'versions': versions, 'verdicts': verdicts, 'refused': refused}


def engines_present(host, plat):
    binaries = {'docker': 'dockerd', 'containerd': 'containerd', 'crio': 'crio'}
    found = {}
    for engine, binary in binaries.items():
        found[engine] = host.module.get_bin_path(binary, opt_dirs=['/usr/sbin', '/usr/local/bin'])
    return found


def containerd_major(host, binary):
    if not binary:
        return None
    dummy, out, dummy2 = host.run([binary, '--version'], check=False)
    # containerd containerd.io 1.7.24 <commit> / containerd github.com/containerd/containerd 1.7.24~ds1 ...
    for word in out.split():
        word = word.lstrip('v')
        if word[:1].isdigit() and '.' in word:
            return int(word.split('.')[0])
    return None


def validate_docker(host, dockerd, content, work):
    path = os.path.join(work, 'daemon.json')
    with open(path, 'w') as handle:
        handle.write(content)
    rc, out, err = host.run([dockerd, '--validate', '--config-file', path], check=False)
    if rc != 0 and 'unknown flag: --validate' in err + out:
        # dockerd before 23.0 has no --validate (Debian 12's 20.10): written unvalidated, and said so.
        return False, 'not validated: this dockerd has no --validate (Docker 23.0 or newer has it)'
    if rc != 0:
        raise Failure('dockerd rejects the merged daemon.json (the file is not changed): %s'
                      % (err or out).strip()[-600:], rc=rc, stderr=err, stdout=out)
    return True, 'dockerd --validate --config-file accepted it'


def validate_containerd(host, binary, main_text, dropin_text, version, work, plat):
    dropin = os.path.join(work, 'nvidia.toml')
    with open(dropin, 'w') as handle:
        handle.write(dropin_text)
    main = os.path.join(work, 'config.toml')
    # The candidate main file, importing the candidate drop-in instead of the conf.d glob.
    text = main_text.replace(json.dumps(plat['containerd_import']), json.dumps(dropin))
    with open(main, 'w') as handle:
        handle.write(text)
    rc, out, err = host.run([binary, '--config', main, 'config', 'dump'], check=False)
    if rc != 0:
        raise Failure('containerd rejects the merged configuration (nothing is changed): %s'
                      % (err or out).strip()[-600:], rc=rc, stderr=err, stdout=out)
    if not ce.containerd_dump_has_nvidia(out, version):
        raise Failure('containerd reads the merged configuration but shows no nvidia runtime under %s; nothing is '
                      'changed' % ce.CONTAINERD_CRI[version])
    intended = ce.parse_toml(dropin_text, 'the drop-in')['plugins'][ce.CONTAINERD_CRI[version]]
    lost = ce.missing_settings(intended, ce.containerd_dump_section(out, version))
    if lost:
        raise Failure('containerd does not apply these settings of the merged CRI section (%s with the drop-in): '
                      '%s. Either this containerd does not know them (enable_cdi needs containerd 1.7: set '
                      'nvidia_container_toolkit_cdi: false) or the merge lost them; nothing is changed'
                      % (plat['containerd_config'], ', '.join(lost)))
    return 'containerd --config <candidate> config dump shows the nvidia runtime and every CRI setting of the drop-in'


def merged_engines(host, inp, plat):
    """The engines the host has, those chosen, and engine_files for them."""
    present = engines_present(host, plat)
    engines = ctk.choose_engines(inp.get('engines') or [], present)
    files, records = engine_files(host, inp, plat, present, engines['value'])
    return present, engines, files, records


def engine_files(host, inp, plat, present, engines):
    """The engines' files the merge changes ([{dest, content, engine, backup, validate}]) and the
    record of each engine; raises ce.ConfigError on a file that cannot be merged."""
    runtime_path = plat['runtime_path']
    files, records = [], {}
    work = tempfile.mkdtemp(prefix='gpuops-ctk.')
    try:
        for engine in engines:
            if engine == 'docker':
                path = plat['docker_daemon_json']
                result = ce.docker_daemon_json(read(path), path, runtime_path, inp['default_runtime'], inp['cdi'])
                # The merged file is validated on every run (a stable record; a user's later edit that
                # dockerd rejects shows up here too).
                content = result['content'] if result['content'] is not None else read(path)
                can, validated = validate_docker(host, present['docker'], content, work) \
                    if present['docker'] else (False, 'not validated: dockerd is not installed')
                # The user's file: written only where the merge changes its content (its owner and
                # mode are the user's; a rewrite would restart Docker).
                if result['content'] is not None:
                    files.append({'dest': path, 'content': result['content'], 'engine': 'docker', 'backup': True,
                                  'validate': can, 'keep_mode': True})
                records['docker'] = {'file': path, 'keys': ce.docker_keys(inp['default_runtime'], inp['cdi']),
                                     'validated': validated}
            elif engine == 'containerd':
                main = plat['containerd_config']
                text = read(main)
                data = ce.parse_toml(text, main) if text is not None else None
                version = ce.containerd_version(data, main, containerd_major(host, present['containerd']))
                dropin_path = plat['containerd_dropin']
                user_section = ce.containerd_cri_section(data, main, version['value'])
                dropin = ce.containerd_dropin(version['value'], runtime_path, inp['default_runtime'], inp['cdi'],
                                              user_section)
                edited = ce.containerd_main(text, main, plat['containerd_import'], version['value'])
                changed_dropin = not core_files.file_current(dropin_path, dropin)
                if present['containerd']:
                    validated = validate_containerd(host, present['containerd'],
                                                    edited['content'] if edited['content'] is not None else text,
                                                    dropin, version['value'], work, plat)
                else:
                    validated = 'not validated: containerd is not installed'
                if changed_dropin:
                    files.append({'dest': dropin_path, 'content': dropin, 'engine': 'containerd', 'backup': False,
                                  'validate': False})
                # the user's main file: only its imports line, where it lacks the drop-in's directory
                if edited['content'] is not None:
                    files.append({'dest': main, 'content': edited['content'], 'engine': 'containerd',
                                  'backup': text is not None, 'validate': False, 'keep_mode': True})
                records['containerd'] = {'file': main, 'dropin': dropin_path, 'version': version['value'],
                                         'imports': plat['containerd_import'], 'validated': validated}
            elif engine == 'crio':
                path = plat['crio_dropin']
                content = ce.crio_dropin(runtime_path, inp['default_runtime'])
                if not core_files.file_current(path, content):
                    files.append({'dest': path, 'content': content, 'engine': 'crio', 'backup': False,
                                  'validate': False})
                records['crio'] = {'dropin': path, 'validated': 'not validated: CRI-O reads its drop-ins at start'}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return files, records


def resolve(module, host):
    inp, plat = module.params['inputs'], module.params['platform']
    # The inputs (version, repository, key, engines, runtime settings) and the refusal of a
    # known-vulnerable version were checked on the controller before the role's first call, by the
    # registry of input checks (core/input_checks.py: container_toolkit.input_problems and
    # version_problems). What is refused here needs the host: its files, engines and containers.
    verdict = ctk.vulnerable(inp['version'], inp.get('accept_cves'))
    have = installed(host, inp.get('accept_cves'))
    try:
        present, engines, files, records = merged_engines(host, inp, plat)
    except ce.ConfigError as exc:
        return {'problems': [str(exc)]}
    restart = ctk.restart_decision([f['engine'] for f in files], docker_state(host, present.get('docker')),
                                   inp.get('restart_running_containers'))
    if not restart['ok']:
        return {'problems': [restart['reason']], 'restart': restart}
    cdi = ctk.cdi_decision(inp['cdi'], module.params['driver'].get('loaded'), module.params['driver'].get('reason'),
                           module.params['in_container'], inp['version'])
    smoke = ctk.smoke_decision(inp['smoke_test'], module.params['driver'].get('loaded'), engines['value'],
                               module.params['in_container'])
    want = ctk.upstream(inp['version'])
    pin = inp['version'] if '-' in inp['version'] else inp['version'] + '-*'
    change = any(have['packages'].get(name) is None or ctk.upstream(have['packages'][name]) != want
                 or ('-' in inp['version'] and have['packages'][name] != inp['version'])
                 for name in ctk.PACKAGES)
    try:
        runtime_result = runtime_write(plat['runtime_config'], inp)
    except ce.ConfigError as exc:
        return {'problems': [str(exc)]}
    state = {'change': change, 'runtime': runtime_result, 'files': files, 'cdi': cdi,
             'install_state': dpkg_state.install_state(dict((name, pin) for name in ctk.PACKAGES), [], have['state'],
                                                       change),
             'units': units_state(host, ctk.CDI_UNITS) if cdi['units'] else {}}
    verified = None
    if ctk.converged(state)['current']:
        # Everything the role writes is in place: the verification a run ends with is made now, in
        # the same round trip, so that a converged host runs no further task of the role.
        verified = verification(host, plat, inp, engines['value'], pin, have)
        state['problems'] = verified['problems']
    # the toolkit's apt repository, checked in this round trip (what package_repository answers, with
    # the version pin of the resolve)
    repository = repo_files.check_option(host, module.params.get('repository'),
                                         {'packages': list(ctk.PACKAGES), 'version': pin})
    return {'problems': list(repository.get('problems') or []) if repository else [],
            'vulnerabilities': verdict, 'installed': have, 'engines': engines,
            'present': dict((k, bool(v)) for k, v in present.items()), 'files': files, 'records': records,
            'packages': list(ctk.PACKAGES), 'cdi': cdi, 'smoke': smoke, 'restart': restart, 'version': want, 'pin': pin,
            'install': ['%s=%s' % (name, pin) for name in ctk.PACKAGES],
            'change': change,
            'install_state': state['install_state'],
            'runtime': {'current': runtime_result['current'], 'settings': runtime_result['settings']},
            'units': state['units'],
            'verify': verified['verify'] if verified else None,
            'converged': ctk.converged(state),
            'repository': repository}


def units_state(host, units):
    """{unit: {enabled, active}} as systemctl reads them (one call each; 'not read' without systemctl)."""
    systemctl = host.module.get_bin_path('systemctl')
    if not systemctl:
        return dict((u, {'enabled': 'not read', 'active': 'not read'}) for u in units)
    found = dict((u, {}) for u in units)
    for key, verb in (('enabled', 'is-enabled'), ('active', 'is-active')):
        dummy, out, dummy2 = host.run([systemctl, verb] + list(units), check=False)
        lines = out.splitlines()
        for index, unit in enumerate(units):
            found[unit][key] = lines[index].strip() if index < len(lines) and lines[index].strip() else 'not-found'
    return found


def runtime_write(path, inp):
    """The toolkit's config.toml with the user's settings merged in: ``content`` to write (None when
    the file already is so, root:root 0644), ``current`` and the merged ``settings``."""
    text = read(path)
    result = ce.runtime_config(text, path, inp.get('runtime_settings') or {}, inp.get('runtime_mode'))
    content = result['content']
    if content is None and text is not None and not core_files.file_current(path, text):
        content = text    # the same settings, another owner or mode
    return {'content': content, 'current': content is None, 'settings': result['data']}


def runtime(module, host):
    """action=runtime: the toolkit's config.toml merged and written here (core/files.put_file:
    atomic, root 0644, the old file kept beside it, --diff, check mode)."""
    del host
    inp, plat = module.params['inputs'], module.params['platform']
    try:
        result = runtime_write(plat['runtime_config'], inp)
    except ce.ConfigError as exc:
        return {'problems': [str(exc)]}
    put = {'changed': False}
    if result['content'] is not None:
        put = core_files.put_file(plat['runtime_config'], result['content'], module, backup=True)
    return {'problems': [], 'changed': put['changed'], 'diff': [put['diff']] if put.get('diff') else [],
            'settings': result['settings']}


def write(module, host):
    """action=write: the engines' files merged as the resolve merges them and written here
    (core/files.put_files: atomic, root 0644 for a new file, the user's file kept beside it where it had one
    and its mode and owner kept,
    Docker's checked by ``dockerd --validate`` before it replaces the old one, --diff, check
    mode). ``written``: [{dest, engine, changed}] (the handler restarts the engines that changed)."""
    inp, plat = module.params['inputs'], module.params['platform']
    try:
        present, dummy, files, dummy2 = merged_engines(host, inp, plat)
    except ce.ConfigError as exc:
        return {'problems': [str(exc)]}
    wanted = [dict(f, validate=[present['docker'], '--validate', '--config-file', '%s']
                   if f['validate'] and f['engine'] == 'docker' else None) for f in files]
    done, diffs = core_files.put_files(wanted, module)
    return {'problems': [], 'changed': bool(diffs), 'diff': diffs,
            'written': [{'dest': f['dest'], 'engine': f['engine'], 'changed': f['changed']} for f in done]}


def docker_state(host, dockerd):
    """The running Docker daemon's live-restore setting and its running containers (None: unknown)."""
    docker = host.module.get_bin_path('docker') if dockerd else None
    if not docker:
        return {'live_restore': None, 'running': None}
    rc, out, dummy = host.run([docker, 'info', '--format', '{{json .LiveRestoreEnabled}}'], check=False)
    live = out.strip() == 'true' if rc == 0 else None
    rc, out, dummy = host.run([docker, 'ps', '--quiet'], check=False)
    running = len(out.split()) if rc == 0 else None
    return {'live_restore': live, 'running': running}


def live_engines(host, plat, engines):
    """Each configured engine's own view of its configuration: is the nvidia runtime there?"""
    seen = {}
    for engine in engines:
        if engine == 'docker':
            docker = host.module.get_bin_path('docker')
            if not docker:
                seen[engine] = {'nvidia_runtime': None, 'reason': 'the docker CLI is not installed'}
                continue
            rc, out, err = host.run([docker, 'info', '--format', '{{json .Runtimes}}'], check=False)
            # A daemon that is not running is unknown (None), not a failure of the role.
            seen[engine] = {'nvidia_runtime': '"nvidia"' in out if rc == 0 else None,
                            'reason': 'docker info lists the runtimes' if rc == 0
                            else 'not asked: docker info failed (is the daemon running?): %s'
                            % (err or out).strip()[-300:]}
        elif engine == 'containerd':
            binary = host.module.get_bin_path('containerd', opt_dirs=['/usr/sbin', '/usr/local/bin'])
            text = read(plat['containerd_config'])
            if not binary:
                seen[engine] = {'nvidia_runtime': None, 'reason': 'containerd is not installed'}
                continue
            rc, out, err = host.run([binary, '--config', plat['containerd_config'], 'config', 'dump'], check=False)
            data = ce.parse_toml(text, plat['containerd_config']) if text else {}
            version = data.get('version', 2)
            known = isinstance(version, int) and not isinstance(version, bool) and version in ce.CONTAINERD_CRI
            seen[engine] = {'nvidia_runtime': (known and ce.containerd_dump_has_nvidia(out, version))
                            if rc == 0 else None,
                            'reason': 'containerd config dump of %s' % plat['containerd_config'] if rc == 0
                            else 'not asked: containerd config dump failed: %s' % (err or out).strip()[-300:]}
        else:
            seen[engine] = {'nvidia_runtime': os.path.exists(plat['crio_dropin']),
                            'reason': 'the drop-in exists (CRI-O is not installed here to ask)'
                            if not host.module.get_bin_path('crio') else 'the drop-in exists'}
    return seen


def verification(host, plat, inp, engines, pin, have=None):
    """What the host shows: the installed versions (refused ones named), the pin, each engine's
    live view of the nvidia runtime and the CDI specifications. ``problems`` lists what is wrong."""
    if have is None:
        have = installed(host, inp.get('accept_cves'))
    problems = []
    if have['refused']:
        problems.extend(ctk.refusal_text(v, have['verdicts'][v], 'installed') for v in have['refused'])
    off = dict((n, have['packages'].get(n)) for n in ctk.PACKAGES
               if not have['packages'].get(n) or not fnmatch.fnmatch(have['packages'][n], pin))
    if off:
        problems.append('the toolkit packages are not at the pinned version %s: %s'
                        % (pin, ', '.join('%s %s' % (n, v or 'not installed') for n, v in sorted(off.items()))))
    live = live_engines(host, plat, engines)
    problems.extend('%s does not show the nvidia runtime (%s)' % (e, r['reason'])
                    for e, r in sorted(live.items()) if r['nvidia_runtime'] is False)
    cdi_files = []
    for directory in ce.CDI_SPEC_DIRS:
        if os.path.isdir(directory):
            cdi_files.extend(os.path.join(directory, n) for n in sorted(os.listdir(directory)) if 'nvidia' in n)
    return {'problems': problems, 'installed': have,
            'verify': {'installed': have['packages'], 'cdi_specs': cdi_files, 'engines': live,
                       'runtime_binary': os.path.exists(plat['runtime_path'])}}


def verify(module, host):
    return verification(host, module.params['platform'], module.params['inputs'], module.params['engines'],
                        module.params['pin'])
