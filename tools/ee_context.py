# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The execution environment's build context, with this checkout's tarball instead of Galaxy's.

execution-environment/execution-environment.yml installs gpuops.dlserver from Galaxy (or the
Automation Hub of ansible.cfg), where the collection is not published yet. `make ee-context`
builds the tarball and runs this: it writes a copy of the definition whose galaxy requirements
install the tarball (copied into the context by additional_build_files; community.general and
kubernetes.core still come from the collection server when the image is built), runs
`ansible-builder create` into <out>/context, and checks that the context holds the tarball, the
requirements that install it and, inside the tarball, the Python requirements (bcrypt) that
ansible-builder's introspection reads at build time. Then, where a registry and the package
indexes are reachable:

    podman build -t gpuops-dlserver-ee:<version> .cache/ee/context

    python3 tools/ee_context.py [--tarball PATH] [--out .cache/ee] [--builder PATH/ansible-builder]
"""

from __future__ import print_function

import argparse
import copy
import os
import shutil
import subprocess
import sys
import tarfile

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
EE_DEFINITION = os.path.join(REPO, 'execution-environment', 'execution-environment.yml')
LOCAL_REQUIREMENTS = 'requirements-local.yml'
TARBALL_DEST = 'collections'


def galaxy_version(repo=REPO):
    with open(os.path.join(repo, 'galaxy.yml')) as handle:
        return str(yaml.safe_load(handle)['version'])


def declared(text):
    """The requirement lines of a requirements.txt / bindep.txt text, comments dropped."""
    return [line.split('#')[0].strip() for line in text.splitlines() if line.split('#')[0].strip()]


def local_definition(definition, tarball_name):
    """(definition, galaxy requirements) that install ``tarball_name`` instead of asking a server for it."""
    out = copy.deepcopy(definition)
    out.setdefault('dependencies', {})['galaxy'] = LOCAL_REQUIREMENTS
    files = [f for f in out.get('additional_build_files') or [] if f.get('src') != tarball_name]
    files.append({'src': tarball_name, 'dest': TARBALL_DEST})
    out['additional_build_files'] = files
    requirements = {'collections': [{'name': '%s/%s' % (TARBALL_DEST, tarball_name), 'type': 'file'}]}
    return out, requirements


def context_problems(context, tarball_name, python=('bcrypt>=4.0.0',)):
    """What the build context lacks: Containerfile, the tarball, the requirements installing it,
    and (inside the tarball) the collection's Python requirements for introspection."""
    problems = []
    build = os.path.join(context, '_build')
    if not os.path.isfile(os.path.join(context, 'Containerfile')):
        problems.append('no Containerfile in %s' % context)
    tarball = os.path.join(build, TARBALL_DEST, tarball_name)
    if not os.path.isfile(tarball):
        problems.append('the tarball %s is not in the context (%s)' % (tarball_name, tarball))
    try:
        with open(os.path.join(build, 'requirements.yml')) as handle:
            reqs = yaml.safe_load(handle) or {}
    except (IOError, OSError) as exc:
        reqs = {}
        problems.append('no galaxy requirements in the context: %s' % exc)
    wanted = {'name': '%s/%s' % (TARBALL_DEST, tarball_name), 'type': 'file'}
    if reqs and wanted not in (reqs.get('collections') or []):
        problems.append('the context\'s requirements.yml does not install the tarball: %r' % reqs)
    if os.path.isfile(tarball):
        with tarfile.open(tarball) as tar:
            names = tar.getnames()
            if 'requirements.txt' not in names or 'meta/execution-environment.yml' not in names:
                problems.append('the tarball lacks requirements.txt or meta/execution-environment.yml')
            else:
                got = declared(tar.extractfile('requirements.txt').read().decode('utf-8'))
                problems.extend('the tarball\'s requirements.txt does not declare %s' % want
                                for want in python if want not in got)
    return problems


def prepare(tarball, out, builder, definition_path=EE_DEFINITION):
    """Write the local definition under ``out``/definition, run ansible-builder create into
    ``out``/context; returns (builder's exit status and output, problems)."""
    name = os.path.basename(tarball)
    shutil.rmtree(out, ignore_errors=True)
    defdir, context = os.path.join(out, 'definition'), os.path.join(out, 'context')
    os.makedirs(defdir)
    with open(definition_path) as handle:
        definition = yaml.safe_load(handle)
    local, requirements = local_definition(definition, name)
    shutil.copy(tarball, os.path.join(defdir, name))
    local_path = os.path.join(defdir, 'execution-environment.yml')
    with open(local_path, 'w') as handle:
        yaml.safe_dump(local, handle, sort_keys=False)
    with open(os.path.join(defdir, LOCAL_REQUIREMENTS), 'w') as handle:
        yaml.safe_dump(requirements, handle, sort_keys=False)
    proc = subprocess.run([builder, 'create', '-f', local_path, '-c', context, '--output-filename', 'Containerfile',
                           '-v', '2'], capture_output=True, text=True, timeout=600, check=False)
    output = proc.stdout + proc.stderr
    problems = ['ansible-builder create exited with %s' % proc.returncode] if proc.returncode else []
    with open(os.path.join(REPO, 'requirements.txt')) as handle:
        python = declared(handle.read())
    return (proc.returncode, output), problems + context_problems(context, name, python)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--tarball', default=os.path.join(REPO, '.cache', 'dist',
                                                          'gpuops-dlserver-%s.tar.gz' % galaxy_version()))
    parser.add_argument('--out', default=os.path.join(REPO, '.cache', 'ee'))
    parser.add_argument('--builder', default=os.path.join(REPO, '.cache', 'publish-venv', 'bin', 'ansible-builder'))
    args = parser.parse_args(argv)
    if not os.path.isfile(args.tarball):
        print('ee-context: no tarball at %s (make build)' % args.tarball, file=sys.stderr)
        return 2
    (_rc, output), problems = prepare(args.tarball, args.out, args.builder)
    print(output.rstrip())
    for problem in problems:
        print('FAILED: %s' % problem, file=sys.stderr)
    if problems:
        return 1
    print('ee-context: %s holds the build context (the tarball, its requirements, the Containerfile); build it '
          'where a registry and the package indexes are reachable:\n  podman build -t gpuops-dlserver-ee:%s %s'
          % (os.path.join(args.out, 'context'), galaxy_version(), os.path.join(args.out, 'context')))
    return 0


if __name__ == '__main__':
    sys.exit(main())
