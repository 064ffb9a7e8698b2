# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The execution environment's build context, from the collection's release tarball alone.

execution-environment/execution-environment.yml installs gpuops.dlserver from its release tarball
(``additional_build_files`` copies ``gpuops-dlserver-<version>.tar.gz`` from beside the definition
into the context; ``requirements.yml`` installs it as a file; community.general and kubernetes.core
still come from the collection server when the image is built). `make ee-context` builds the
tarball and runs this, which reads nothing of the checkout: it unpacks the tarball into
<out>/unpacked, takes the definition from the tarball's own ``execution-environment/``, puts the
tarball beside it in <out>/definition, runs `ansible-builder create` into <out>/context, and checks
that the definition installs this tarball, and that the context holds the tarball, the requirements
that install it and, inside the tarball, the Python requirements (bcrypt) that ansible-builder's
introspection reads at build time. Then, where a registry and the package indexes are reachable:

    podman build -t gpuops-dlserver-ee:<version> .cache/ee/context

    python3 tools/ee_context.py [--tarball PATH] [--out .cache/ee] [--builder PATH/ansible-builder]
"""

from __future__ import print_function

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
EE_DIR = 'execution-environment'
TARBALL_DEST = 'collections'


def galaxy_version(repo=REPO):
    with open(os.path.join(repo, 'galaxy.yml')) as handle:
        return str(yaml.safe_load(handle)['version'])


def declared(text):
    """The requirement lines of a requirements.txt / bindep.txt text, comments dropped."""
    return [line.split('#')[0].strip() for line in text.splitlines() if line.split('#')[0].strip()]


def unpack(tarball, dest):
    """Unpack the collection tarball into ``dest``; refuses members outside it (absolute, ``..``,
    links). Returns the version of its MANIFEST.json."""
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            parts = member.name.split('/')
            if member.name.startswith('/') or '..' in parts or member.issym() or member.islnk() \
                    or not (member.isfile() or member.isdir()):
                raise ValueError('%s: member %r is not a plain file or directory inside the tarball'
                                 % (tarball, member.name))
        tar.extractall(dest)  # nosec: every member checked above
    with open(os.path.join(dest, 'MANIFEST.json')) as handle:
        return str(json.load(handle)['collection_info']['version'])


def definition_problems(unpacked, tarball_name):
    """What keeps the tarball's own definition (``execution-environment/``) from installing
    ``tarball_name``: the requirements must install it as a file, the definition must copy it."""
    problems = []
    wanted = {'name': '%s/%s' % (TARBALL_DEST, tarball_name), 'type': 'file'}
    try:
        with open(os.path.join(unpacked, EE_DIR, 'execution-environment.yml')) as handle:
            definition = yaml.safe_load(handle) or {}
        with open(os.path.join(unpacked, EE_DIR, definition['dependencies']['galaxy'])) as handle:
            reqs = yaml.safe_load(handle) or {}
    except (IOError, OSError, KeyError, TypeError) as exc:
        return ['the tarball has no usable %s/execution-environment.yml and requirements: %s' % (EE_DIR, exc)]
    if wanted not in (reqs.get('collections') or []):
        problems.append('the tarball\'s %s requirements do not install %s: %r' % (EE_DIR, tarball_name, reqs))
    if {'src': tarball_name, 'dest': TARBALL_DEST} not in (definition.get('additional_build_files') or []):
        problems.append('the tarball\'s %s/execution-environment.yml does not copy %s into the context'
                        % (EE_DIR, tarball_name))
    return problems


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


def prepare(tarball, out, builder):
    """Unpack ``tarball`` under ``out``/unpacked, lay its definition and the tarball out in
    ``out``/definition, run ansible-builder create into ``out``/context; returns (builder's exit
    status and output, problems). Reads nothing outside the tarball."""
    name = os.path.basename(tarball)
    shutil.rmtree(out, ignore_errors=True)
    unpacked, defdir, context = (os.path.join(out, 'unpacked'), os.path.join(out, 'definition'),
                                 os.path.join(out, 'context'))
    os.makedirs(unpacked)
    try:
        unpack(tarball, unpacked)
    except (ValueError, KeyError, IOError, OSError, tarfile.TarError) as exc:
        return (None, ''), ['cannot unpack %s: %s' % (tarball, exc)]
    problems = definition_problems(unpacked, name)
    if problems:
        return (None, ''), problems
    shutil.copytree(os.path.join(unpacked, EE_DIR), defdir)
    shutil.copy(tarball, os.path.join(defdir, name))
    proc = subprocess.run([builder, 'create', '-f', os.path.join(defdir, 'execution-environment.yml'), '-c', context,
                           '--output-filename', 'Containerfile', '-v', '2'],
                          capture_output=True, text=True, timeout=600, check=False)
    output = proc.stdout + proc.stderr
    problems = ['ansible-builder create exited with %s' % proc.returncode] if proc.returncode else []
    with open(os.path.join(unpacked, 'requirements.txt')) as handle:
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
