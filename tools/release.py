# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Cut a release: version bump and CHANGELOG.rst (step 1-2 of docs/release.md; `make release` runs it).

    python3 tools/release.py --version 0.1.0 [--changelog PATH-TO-antsibull-changelog]

1. Refuses a version that is not x.y.z, or lower than the last release in changelogs/changelog.yaml,
   and a release without a ``release_summary`` fragment in changelogs/fragments/.
2. Writes the version into galaxy.yml and execution-environment/ (requirements.yml, image tag).
3. ``antsibull-changelog lint`` then ``antsibull-changelog release --version X``: the fragments
   become changelogs/changelog.yaml's release entry and CHANGELOG.rst; roles, modules and plugins
   whose ``version_added`` is X are listed as new.
The Makefile then regenerates the role READMEs, builds the tarball and runs the import check.
"""

from __future__ import print_function

import argparse
import os
import re
import subprocess
import sys

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
_SEMVER = re.compile(r'^(\d+)\.(\d+)\.(\d+)$')


class ReleaseError(Exception):
    pass


def _key(version):
    match = _SEMVER.match(str(version))
    if not match:
        raise ReleaseError('version %r is not x.y.z (semantic versioning, as Galaxy requires)' % version)
    return tuple(int(p) for p in match.groups())


def check(version, repo=REPO):
    """Why ``version`` cannot be released from ``repo`` (raises), else None."""
    new = _key(version)
    with open(os.path.join(repo, 'changelogs', 'changelog.yaml')) as handle:
        released = list((yaml.safe_load(handle) or {}).get('releases') or {})
    if str(version) in released:
        raise ReleaseError('%s is already released (changelogs/changelog.yaml)' % version)
    older = [v for v in released if _key(v) > new]
    if older:
        raise ReleaseError('%s is lower than the released %s' % (version, ', '.join(sorted(older))))
    frag_dir = os.path.join(repo, 'changelogs', 'fragments')
    summaries = []
    for name in sorted(os.listdir(frag_dir)):
        if name.endswith(('.yml', '.yaml')):
            with open(os.path.join(frag_dir, name)) as handle:
                if 'release_summary' in (yaml.safe_load(handle) or {}):
                    summaries.append(name)
    if len(summaries) != 1:
        raise ReleaseError('a release needs exactly one release_summary fragment in changelogs/fragments/ '
                           '(found %s)' % (', '.join(summaries) or 'none'))


def bump(version, repo=REPO):
    """Write ``version`` where the collection states its own version."""
    edits = [
        ('galaxy.yml', r'(?m)^version: .*$', 'version: %s' % version),
        (os.path.join('execution-environment', 'requirements.yml'),
         r'gpuops-dlserver-[0-9]+\.[0-9]+\.[0-9]+\.tar\.gz', 'gpuops-dlserver-%s.tar.gz' % version),
        (os.path.join('execution-environment', 'execution-environment.yml'),
         r'dlserver-ee:[0-9]+\.[0-9]+\.[0-9]+', 'dlserver-ee:%s' % version),
        (os.path.join('execution-environment', 'execution-environment.yml'),
         r'gpuops-dlserver-[0-9]+\.[0-9]+\.[0-9]+\.tar\.gz', 'gpuops-dlserver-%s.tar.gz' % version),
    ]
    for rel, pattern, repl in edits:
        path = os.path.join(repo, rel)
        with open(path) as handle:
            text = handle.read()
        new, count = re.subn(pattern, repl, text)
        if not count:
            raise ReleaseError('%s: found no version to set (pattern %s)' % (rel, pattern))
        with open(path, 'w') as handle:
            handle.write(new)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n', maxsplit=1)[0])
    parser.add_argument('--version', required=True)
    parser.add_argument('--changelog', default='antsibull-changelog', help='the antsibull-changelog to run')
    parser.add_argument('--repo', default=REPO)
    args = parser.parse_args(argv)
    try:
        check(args.version, args.repo)
        bump(args.version, args.repo)
    except ReleaseError as exc:
        print('release: %s' % exc, file=sys.stderr)
        return 2
    # --reload-plugins: a plugin cache from an earlier run would miss roles and plugins added since.
    for cmd in ([args.changelog, 'lint'], [args.changelog, 'release', '--version', args.version, '--reload-plugins']):
        print('+ %s' % ' '.join(cmd))
        rc = subprocess.call(cmd, cwd=args.repo)
        if rc != 0:
            print('release: %s failed (exit %s)' % (' '.join(cmd), rc), file=sys.stderr)
            return 1
    print('release: %s: galaxy.yml, execution-environment/, changelogs/changelog.yaml and CHANGELOG.rst written'
          % args.version)
    return 0


if __name__ == '__main__':
    sys.exit(main())
