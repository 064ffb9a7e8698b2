# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The publishing checks of `make publish-check`, on the tarball `ansible-galaxy collection build` makes.

1. galaxy-importer (what Galaxy and Automation Hub run on every upload), configured by
   .config/galaxy-importer.cfg: no ansible-test (it needs containers), ansible-lint offline,
   ansible-doc, changelog check. Fails on a non-zero exit, on ANY WARNING/ERROR line of its
   output, and when its result lists a plugin without documentation or a role without README.
2. antsibull-docs lint-collection-docs --plugin-docs on the installed tarball: fails on any
   message.
3. ansible-builder introspect on the installed tarball (the collection's meta/execution-environment.yml,
   requirements.txt, bindep.txt must come through) and ansible-builder create of the tarball's
   own execution-environment/execution-environment.yml, which installs the tarball
   (tools/ee_context.py, as `make ee-context`): the context must hold the tarball and the
   requirements that install it; building the image needs a registry and is not done here.

The tools run from their own virtualenv (PUBLISH_VENV, made by the Makefile from
requirements/publish.txt); ansible-galaxy builds with the project's (VENV).

    python3 tools/publish_check.py [--only importer,docs,ee] [--tarball PATH] [--require-repository]
"""

from __future__ import print_function

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ee_context  # noqa: E402  pylint: disable=wrong-import-position

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
IMPORTER_CFG = os.path.join(REPO, '.config', 'galaxy-importer.cfg')
# Given to the importer only when galaxy.yml has no repository (the project has no public home
# yet); the .invalid top-level domain can never resolve. Galaxy refuses an upload without one.
STAND_IN_REPOSITORY = 'https://repository.invalid/gpuops/dlserver'
_PROBLEM = re.compile(r'^\s*(WARNING|ERROR|CRITICAL)\b|Traceback \(most recent call last\)')
# The collection's private plugins live in plugins/<type>/__private/ (docs/public-surface.md): ansible-doc
# does not list that directory, Galaxy's name rule reads file names only, and ansible-lint warns that
# the directory is deep. That warning, for exactly such a file, is expected; every other one fails.
PRIVATE_DIR = '__private'
_PRIVATE_DEEP = re.compile(r"WARNING: plugins/[a-z_]+/__private/[a-z_][0-9a-z_]*\.py:1: fqcn\[deep\]\[/\]: "
                           r"Deep plugins directory is discouraged\. Move 'plugins/[a-z_]+/__private/[a-z_][0-9a-z_]*\.py' "
                           r"directly under 'plugins/[a-z_]+' folder\. \(warning\)")
SUCCESS_LINE = 'Importer processing completed successfully'


def importer_problems(output, returncode):
    """Lines of galaxy-importer's output that make the check fail (empty when it passed clean)."""
    problems = [line.rstrip() for line in output.splitlines()
                if _PROBLEM.search(line) and not _PRIVATE_DEEP.fullmatch(line.strip())]
    if returncode != 0:
        problems.append('galaxy-importer exited with %s' % returncode)
    if SUCCESS_LINE not in output:
        problems.append('galaxy-importer did not say "%s"' % SUCCESS_LINE)
    return problems


def result_problems(result):
    """What the importer's result lists without docs: plugins without doc strings, roles without README."""
    problems = []
    documented = ('module', 'filter', 'test', 'lookup', 'callback', 'inventory', 'connection', 'become', 'cache')
    for content in result.get('docs_blob', {}).get('contents', []):
        kind, name = content.get('content_type'), content.get('content_name')
        private = (name or '').startswith(PRIVATE_DIR + '.')  # not listed by ansible-doc, so no docs here
        if kind in documented and not private and not (content.get('doc_strings') or {}).get('doc'):
            problems.append('%s %s has no documentation in the importer result' % (kind, name))
        if kind == 'role' and not content.get('readme_html'):
            problems.append('role %s has no README in the importer result' % name)
    names = [(c['content_type'], c['name']) for c in result.get('contents', [])]
    for dup in sorted(set(n for n in names if names.count(n) > 1)):
        problems.append('%s %s is listed more than once (a plugin file not named as its plugin?)' % dup)
    return problems


def docs_lint_problems(output, returncode):
    problems = [line.rstrip() for line in output.splitlines() if line.strip()]
    if returncode != 0 and not problems:
        problems.append('antsibull-docs exited with %s' % returncode)
    return problems


def introspect_problems(data, collection='gpuops.dlserver', python=(), system=()):
    """Every requirement the collection declares must reach ansible-builder's introspection.

    ``data`` is introspect's YAML: ``{python: [...], system: [...]}``, each entry
    ``'<requirement>  # from collection <name>'``.
    """
    problems = []
    for kind, declared in (('python', python), ('system', system)):
        got = [entry.split('#')[0].strip() for entry in (data.get(kind) or [])
               if entry.split('#', 1)[-1].strip() == 'from collection %s' % collection]
        for want in declared:
            if want not in got:
                problems.append('introspect: %s requirement %r of %s not found (got %r)' % (kind, want, collection, got))
        for extra in got:
            if extra not in declared:
                problems.append('introspect: %s requirement %r of %s is not in its file' % (kind, extra, collection))
    return problems


def _declared(path):
    with open(path) as handle:
        return [line.split('#')[0].strip() for line in handle if line.split('#')[0].strip()]


def _run(argv, env=None, cwd=None, timeout=600):
    merged = dict(os.environ)
    merged.update(env or {})
    proc = subprocess.run(argv, cwd=cwd, env=merged, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=timeout, check=False)
    return proc.returncode, proc.stdout


def _with_repository(tarball, dest_dir):
    """A copy of tarball whose MANIFEST.json carries the stand-in repository."""
    work = tempfile.mkdtemp(dir=dest_dir)
    with tarfile.open(tarball) as tar:
        tar.extractall(work)
    manifest_path = os.path.join(work, 'MANIFEST.json')
    with open(manifest_path) as handle:
        manifest = json.load(handle)
    manifest['collection_info']['repository'] = STAND_IN_REPOSITORY
    with open(manifest_path, 'w') as handle:
        json.dump(manifest, handle, indent=4)
    out = os.path.join(dest_dir, 'importer', os.path.basename(tarball))
    os.makedirs(os.path.dirname(out))
    with tarfile.open(out, 'w:gz') as tar:
        for name in sorted(os.listdir(work)):
            tar.add(os.path.join(work, name), arcname=name)
    shutil.rmtree(work)
    return out


def check_importer(tarball, tmp, pub_bin, require_repository):
    with tarfile.open(tarball) as tar:
        manifest = json.load(tar.extractfile('MANIFEST.json'))
    notes, problems = [], []
    if not manifest['collection_info'].get('repository'):
        if require_repository:
            return notes, ['galaxy.yml has no repository: Galaxy and Automation Hub refuse the upload '
                           '(set it to the project\'s public repository, see docs/release.md)']
        notes.append('galaxy.yml has no repository (no public home yet): the importer was given the '
                     'stand-in %s; Galaxy refuses an upload without a real one (docs/release.md)'
                     % STAND_IN_REPOSITORY)
        tarball = _with_repository(tarball, tmp)
    else:
        os.makedirs(os.path.join(tmp, 'importer'))
        tarball = shutil.copy(tarball, os.path.join(tmp, 'importer'))
    env = {'GALAXY_IMPORTER_CONFIG': IMPORTER_CFG, 'PATH': pub_bin + os.pathsep + os.environ.get('PATH', ''),
           'HOME': os.environ.get('HOME', tmp)}
    rc, out = _run([os.path.join(pub_bin, 'python'), '-m', 'galaxy_importer.main', os.path.basename(tarball)],
                   env=env, cwd=os.path.dirname(tarball))
    print(out.rstrip())
    problems += importer_problems(out, rc)
    result_path = os.path.join(os.path.dirname(tarball), 'importer_result.json')
    if os.path.exists(result_path):
        with open(result_path) as handle:
            problems += result_problems(json.load(handle))
    elif rc == 0:
        problems.append('galaxy-importer wrote no importer_result.json')
    return notes, problems


def check_docs(coll_root, pub_bin):
    path = os.path.join(coll_root, 'ansible_collections', 'gpuops', 'dlserver')
    env = {'ANSIBLE_COLLECTIONS_PATH': coll_root, 'PATH': pub_bin + os.pathsep + os.environ.get('PATH', '')}
    rc, out = _run([os.path.join(pub_bin, 'antsibull-docs'), 'lint-collection-docs', '--plugin-docs', path], env=env)
    print(out.rstrip() or 'antsibull-docs lint-collection-docs --plugin-docs: no messages')
    return [], docs_lint_problems(out, rc)


def check_ee(coll_root, tmp, pub_bin, tarball):
    problems = []
    rc, out = _run([os.path.join(pub_bin, 'ansible-builder'), 'introspect', coll_root])
    print(out.rstrip())
    if rc != 0:
        return [], ['ansible-builder introspect exited with %s' % rc]
    try:
        data = yaml.safe_load(out[out.index('python:'):] if 'python:' in out else out) or {}
    except yaml.YAMLError as exc:
        return [], ['ansible-builder introspect printed no YAML: %s' % exc]
    problems += introspect_problems(data, python=_declared(os.path.join(REPO, 'requirements.txt')),
                                    system=_declared(os.path.join(REPO, 'bindep.txt')))
    # the context `make ee-context` prepares: the definition installs the built tarball, not Galaxy's
    (_rc, out), ee_problems = ee_context.prepare(tarball, os.path.join(tmp, 'ee'),
                                                 os.path.join(pub_bin, 'ansible-builder'))
    print(out.rstrip())
    problems += ee_problems
    return [], problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--only', default='importer,docs,ee')
    parser.add_argument('--tarball', help='check this tarball instead of building one')
    parser.add_argument('--require-repository', action='store_true',
                        help='fail when galaxy.yml has no repository (before an upload)')
    parser.add_argument('--venv', default=os.environ.get('VENV', os.path.join(REPO, '.venv')))
    parser.add_argument('--publish-venv', default=os.environ.get('PUBLISH_VENV',
                                                                 os.path.join(REPO, '.cache', 'publish-venv')))
    args = parser.parse_args(argv)
    only = set(args.only.split(','))
    pub_bin = os.path.join(args.publish_venv, 'bin')
    tmp = tempfile.mkdtemp(prefix='gpuops-publish-')
    notes, problems, seconds = [], [], {}
    try:
        tarball = args.tarball
        if not tarball:
            rc, out = _run([os.path.join(args.venv, 'bin', 'ansible-galaxy'), 'collection', 'build',
                            '--output-path', os.path.join(tmp, 'dist'), REPO])
            print(out.rstrip())
            if rc != 0:
                print('publish-check: the collection does not build', file=sys.stderr)
                return 1
            tarball = [os.path.join(tmp, 'dist', f) for f in os.listdir(os.path.join(tmp, 'dist'))][0]
        coll_root = os.path.join(tmp, 'collections')
        rc, out = _run([os.path.join(args.venv, 'bin', 'ansible-galaxy'), 'collection', 'install', '--no-deps',
                        '-p', coll_root, tarball], env={'ANSIBLE_COLLECTIONS_PATH': coll_root})
        if rc != 0:
            print(out)
            print('publish-check: the tarball does not install', file=sys.stderr)
            return 1
        steps = [('importer', 'galaxy-importer', lambda: check_importer(tarball, tmp, pub_bin, args.require_repository)),
                 ('docs', 'antsibull-docs lint', lambda: check_docs(coll_root, pub_bin)),
                 ('ee', 'ansible-builder introspect + create', lambda: check_ee(coll_root, tmp, pub_bin, tarball))]
        for key, title, step in steps:
            if key not in only:
                continue
            print('=== %s' % title)
            start = time.time()
            step_notes, step_problems = step()
            seconds[title] = time.time() - start
            notes += step_notes
            problems += ['%s: %s' % (title, p) for p in step_problems]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('=== publish-check: %s' % ', '.join('%s %.0f s' % kv for kv in seconds.items()))
    for note in notes:
        print('NOTE: %s' % note)
    for problem in problems:
        print('FAILED: %s' % problem, file=sys.stderr)
    if not problems:
        print('publish-check: passed (no error, no warning)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
