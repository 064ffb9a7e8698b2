# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files of one apt repository a role adds: keyring, deb822 sources, version pin.

``plan`` is the decision of the module gpuops.dlserver.__private.package_repository (called by
``roles/common/tasks/package_repo.yml`` for every role that adds a repository): from the
checked spec and the key record of ``repo_trust.fetch_key`` it returns the files to write,
or, when another sources file of the host already names the same URL (apt refuses one URL
with two different ``Signed-By`` keyrings), none, with the reason. ``run`` is the module's one
call (the edge is ``repo_trust.Host``); ``check`` is ``run`` with each file marked ``current``
(whether the host has it so already), which is what a module returns. ``OPTIONS`` is the
argument spec of a repository: package_repository's options, and the ``repository`` option of a
role's read module that checks its repository in the same round trip (nvidia_container_toolkit_host,
dcgm_exporter_host), which ``check_option`` validates and checks.

Standard library and ansible.module_utils only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import tempfile

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import mark_current, put_files
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_trust

SOURCES_DIR = '/etc/apt/sources.list.d'

# the options of one repository, for AnsibleModule (package_repository, and the ``repository``
# suboptions of a role's read module)
OPTIONS = dict(
    url=dict(type='str', required=True),
    url_var=dict(type='str', default='the repository URL'),
    suites=dict(type='list', elements='str', default=['/']),
    components=dict(type='list', elements='str', default=[]),
    key=dict(type='dict', required=True, no_log=False, options=dict(
        url=dict(type='str', required=True),
        sha256=dict(type='str', default=''),
        fingerprint=dict(type='str', default=''),
        url_var=dict(type='str', default='the key URL'),
        checksum_var=dict(type='str', default='the key checksum'),
        fingerprint_var=dict(type='str', default='the key fingerprint'),
    )),
    keyring_file=dict(type='path', required=True),
    sources_file=dict(type='path', required=True),
    preferences_file=dict(type='path'),
    pin=dict(type='dict'),
    header=dict(type='str', default=''),
    description=dict(type='str', default=''),
    skip_if_configured=dict(type='bool', default=False),
)


def spec_problems(spec):
    """What the argument specification cannot check, each naming the variable."""
    problems = []
    checks = [('uri', spec['url'], spec.get('url_var') or 'the repository URL'),
              ('path', spec['sources_file'], 'sources_file'), ('path', spec['keyring_file'], 'keyring_file')]
    checks += [('suite', s, 'suites') for s in spec.get('suites') or []]
    checks += [('component', c, 'components') for c in spec.get('components') or []]
    if spec.get('preferences_file'):
        checks.append(('path', spec['preferences_file'], 'preferences_file'))
    for kind, value, variable in checks:
        try:
            apt_sources.check_field(kind, value, variable)
        except ValueError as exc:
            problems.append(str(exc))
    pin = spec.get('pin') or {}
    if pin.get('packages') and not spec.get('preferences_file'):
        problems.append('pin needs preferences_file')
    problems.extend(repo_trust.key_problems(spec['key']))
    return problems


def configured_elsewhere(entries, url, own_file):
    """The host's sources files (other than ``own_file``) that already name ``url``."""
    want = url.rstrip('/') + '/'
    return sorted(set(e['file'] for e in entries if e['enabled'] and e['file'] != own_file
                      and any(u.rstrip('/') + '/' == want for u in e['uris'])))


def plan(spec, keyring, elsewhere):
    """The files to write ({dest, content}, '' = remove) and the record of the repository."""
    header = spec.get('header') or ''
    description = spec.get('description') or spec['url']
    if elsewhere:
        return {'files': [], 'configured_by': elsewhere,
                'reason': '%s already names %s, so no second source is added (apt refuses one URL with two '
                          'keyrings)' % (', '.join(elsewhere), spec['url'])}
    fprs = ', '.join(keyring['fingerprints'])
    sources = '%s\n# %s, key %s.\n%s' % (header, description, fprs, apt_sources.render_deb822([{
        'uri': spec['url'], 'suites': spec.get('suites') or ['/'], 'components': spec.get('components') or [],
        'signed_by': spec['keyring_file']}]))
    files = [{'dest': spec['keyring_file'], 'content': keyring['content']},
             {'dest': spec['sources_file'], 'content': sources}]
    pin = spec.get('pin') or {}
    if spec.get('preferences_file'):
        content = ''
        if pin.get('packages'):
            content = header + '\n' + apt_sources.render_pin(pin['packages'], pin['version'], pin.get('why') or '',
                                                             pin.get('variable') or 'the pinned version')
        files.append({'dest': spec['preferences_file'], 'content': content})
    return {'files': files, 'configured_by': [],
            'reason': 'the repository %s, Signed-By %s holding only %s' % (spec['url'], spec['keyring_file'], fprs)}


def run(host, spec, read_sources=None):
    """Check the spec, fetch and check the key, and plan the files (reads only)."""
    problems = spec_problems(spec)
    if problems:
        return {'problems': problems}
    elsewhere = []
    if spec.get('skip_if_configured'):
        files = (read_sources or _read_sources)(host)
        elsewhere = configured_elsewhere(apt_sources.parse_sources(files, own_prefix='\0'), spec['url'],
                                         spec['sources_file'])
    if elsewhere:
        return dict(plan(spec, None, elsewhere), problems=[], keyring=None, url=spec['url'])
    work = tempfile.mkdtemp(prefix='gpuops-repo-key.')
    try:
        dummy, keyring = repo_trust.fetch_key(host, spec['key'], work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dict(plan(spec, keyring, []), problems=[], keyring=keyring, url=spec['url'])


def check(host, spec, read_sources=None):
    """``run``, with each file marked ``current`` (the host has it so already: the role writes
    only the others) and ``current`` true when every file is. Problems stay in ``problems``;
    a failure to fetch or trust the key raises repo_trust.Failure."""
    result = run(host, spec, read_sources)
    if result['problems']:
        return result
    result['files'] = mark_current(result['files'])
    result['current'] = all(f['current'] for f in result['files'])
    return result


# package_repository's own options: a repository's, and whether to write its files
MODULE_OPTIONS = dict(OPTIONS, write=dict(type='bool', default=False))


def module_run(module):
    """The whole call of package_repository: ``check``, and with ``write`` the files it found
    not current written or removed here (core/files.put_files: atomic, root 0644, --diff,
    check mode) - rendered and written on the host, never sent through the controller."""
    try:
        result = check(repo_trust.Host(module), module.params)
    except repo_trust.Failure as exc:
        exc.fail_json(module)
    if result['problems']:
        repo_trust.fail_problems(module, result)
    diffs = []
    if module.params['write']:
        result['files'], diffs = put_files(result['files'], module)
    module.exit_json(changed=bool(diffs), diff=diffs, **result)


def check_option(host, options, pin=None):
    """The ``repository`` option of a role's read module, checked in that module's round trip:
    what package_repository answers for the same options (``check``), with ``pin`` (its
    ``packages`` and ``version``, which the read module decided) merged into the option's pin;
    None without options. A bad option is a problem naming it; a key that cannot be fetched or
    trusted raises repo_trust.Failure."""
    if not options:
        return None
    validated = ArgumentSpecValidator(OPTIONS).validate(options)
    if validated.error_messages:
        return {'problems': ['repository: %s' % message for message in validated.error_messages]}
    spec = validated.validated_parameters
    if pin is not None:
        spec['pin'] = dict(spec.get('pin') or {}, **pin)
    return check(host, spec)


def _read_sources(host):
    files = {}
    if os.path.isdir(SOURCES_DIR):
        for name in sorted(os.listdir(SOURCES_DIR)):
            path = os.path.join(SOURCES_DIR, name)
            if name.endswith(('.list', '.sources')) and os.path.isfile(path):
                files[path] = host.read(path)
    return files
