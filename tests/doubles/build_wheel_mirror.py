# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fill the artifact mirror with REAL Python wheels, as PEP 503 simple indexes.

    python3 tests/doubles/build_wheel_mirror.py [--mirror-dir DIR] [--wheel-dir DIR] [REQUIREMENT ...]

Not a double: the wheels are the real ones, fetched with ``pip download`` on the controller
(the CPU build of torch that lies on these machines, numpy, lmdb, pillow, uv, ... from the package
index the controller uses), so that lab nodes install them without reaching the internet -
the same thing an air-gapped site does on a connected host. Layout in the mirror:

    pypi/simple/<project>/index.html     -> ../../packages/<file>#sha256=...
    pypi/packages/<file>
    pytorch/whl/cpu/<project>/index.html -> ../<file>#sha256=...   (torch's own index, as
    pytorch/whl/cpu/<file>                  download.pytorch.org lays it out)

Set python_stack_pip_index_url to <mirror>/pypi/simple and python_stack_pytorch_index_url to
<mirror>/pytorch/whl. SHA256SUMS gets a line per file (plugins/module_utils/packages/mirror.py).
Idempotent: pip keeps its downloads in --wheel-dir; files are hard-linked when possible.
Prints one JSON line.
"""

from __future__ import print_function

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# The module_utils loaded below import each other as the collection (make setup links it here).
sys.path.insert(0, os.path.join(REPO, '.cache', 'collections'))
# What the python_stack scenarios and the bench install (cp311: Debian 12 nodes).
DEFAULT_REQUIREMENTS = ['torch==2.13.0', 'numpy', 'lmdb', 'pillow', 'tqdm', 'pip', 'uv==0.13.9']
PYTORCH_PROJECTS = ('torch',)


def _load(path):
    spec = importlib.util.spec_from_file_location(
        'gpuops_' + path.replace('/', '_'), os.path.join(REPO, 'plugins', 'module_utils', path + '.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _place(src, dest):
    if os.path.exists(dest) and os.path.getsize(dest) == os.path.getsize(src):
        return False
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = dest + '.tmp'
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.chmod(tmp, 0o644)
    os.rename(tmp, dest)
    return True


def _write(path, text):
    try:
        with open(path) as handle:
            if handle.read() == text:
                return False
    except OSError:
        pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + '.tmp', 'w') as handle:
        handle.write(text)
    os.rename(path + '.tmp', path)
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--mirror-dir', default=os.environ.get('GPUOPS_MIRROR_DIR')
                        or os.path.join(REPO, '.cache', 'mirror'))
    parser.add_argument('--wheel-dir', default=os.path.join(REPO, '.cache', 'wheels'))
    parser.add_argument('--python-version', default='3.11')
    parser.add_argument('requirements', nargs='*', default=DEFAULT_REQUIREMENTS)
    args = parser.parse_args(argv)
    indexes = _load('python_env/indexes')
    mirror = _load('packages/mirror')
    os.makedirs(args.wheel_dir, exist_ok=True)
    cmd = [sys.executable, '-m', 'pip', 'download', '--quiet', '--disable-pip-version-check', '--only-binary', ':all:',
           '--python-version', args.python_version, '--platform', 'manylinux_2_28_x86_64', '--platform',
           'manylinux_2_17_x86_64', '--platform', 'manylinux2014_x86_64', '--dest', args.wheel_dir] + args.requirements
    subprocess.run(cmd, check=True)
    changed = False
    projects = {'pypi': {}, 'pytorch': {}}
    for name in sorted(os.listdir(args.wheel_dir)):
        project = indexes.wheel_project(name)
        if project is None:
            continue
        src = os.path.join(args.wheel_dir, name)
        where = 'pytorch' if project in PYTORCH_PROJECTS else 'pypi'
        rel = ('pytorch/whl/cpu/%s' if where == 'pytorch' else 'pypi/packages/%s') % name
        changed |= _place(src, os.path.join(args.mirror_dir, rel))
        projects[where].setdefault(project, []).append((name, mirror.sha256_file(src)))
    for project, files in projects['pypi'].items():
        changed |= _write(os.path.join(args.mirror_dir, 'pypi', 'simple', project, 'index.html'),
                          indexes.simple_project_page(project, files, '../../packages/'))
    changed |= _write(os.path.join(args.mirror_dir, 'pypi', 'simple', 'index.html'), indexes.simple_root_page(projects['pypi']))
    for project, files in projects['pytorch'].items():
        changed |= _write(os.path.join(args.mirror_dir, 'pytorch', 'whl', 'cpu', project, 'index.html'),
                          indexes.simple_project_page(project, files, '../'))
    changed |= _write(os.path.join(args.mirror_dir, 'pytorch', 'whl', 'cpu', 'index.html'),
                      indexes.simple_root_page(projects['pytorch']))
    old, new, _changes, problems = mirror.index_mirror(args.mirror_dir, scan=['pypi', 'pytorch'])
    if problems:
        print(json.dumps({'changed': changed, 'problems': problems}))
        return 1
    if new != old:
        mirror.write_index(args.mirror_dir, new)
        changed = True
    print(json.dumps({'changed': changed, 'pypi': sorted(projects['pypi']), 'pytorch': sorted(projects['pytorch'])}))
    return 0


if __name__ == '__main__':
    sys.exit(main())
