# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of gpuops.dlserver.python_stack's environment build: uv against plain pip.

    .venv/bin/python bench/python_stack_bench.py [--python /usr/bin/python3.11] [--keep DIR]

Runs the module the role runs (plugins/modules/__private/python_stack_host.py, as Ansible would run it:
``python module.py args.json``) on this machine, in a temporary prefix, for the seeds' PyTorch
environment (torch 2.13.0 CPU build, numpy, lmdb) from a local mirror of REAL wheels
(tests/doubles/build_wheel_mirror.py, served as file:// PEP 503 indexes, so the network is
not measured). For each installer, in order:

  cold        first build, empty package cache
  no-op       the same spec again (plan + converge: nothing to do)
  warm        a spec change (tqdm added) rebuilt beside the old build with a warm cache
  verify      the verification (imports, one bfloat16 autocast training step on the CPU)

Prints a table of seconds (wall time of the module call, which includes Python start-up).
What it does not measure: SSH and Ansible's task overhead (the same for both installers; see
bench/README.md "fleet"), downloads (a mirror on the LAN adds the wheel transfer once, into
the cache).
"""

from __future__ import print_function

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MODULE = os.path.join(REPO, 'plugins', 'modules', '__private', 'python_stack_host.py')
COLLECTIONS = os.path.join(REPO, '.cache', 'collections')
SPEC = ['torch==2.13.0', 'numpy', 'lmdb']


def module(args, work):
    path = os.path.join(work, 'args.json')
    with open(path, 'w') as handle:
        json.dump({'ANSIBLE_MODULE_ARGS': args}, handle)
    env = dict(os.environ, PYTHONPATH=COLLECTIONS)
    start = time.time()
    proc = subprocess.run([sys.executable, MODULE, path], capture_output=True, text=True, env=env, check=False)
    wall = time.time() - start
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        raise SystemExit('module printed no JSON: %s %s' % (proc.stdout[-2000:], proc.stderr[-2000:]))
    if result.get('failed'):
        raise SystemExit('module failed: %s' % result.get('msg'))
    return result, wall


def run(installer, mirror, uv, python, work):
    prefix = os.path.join(work, installer, 'envs')
    cache = os.path.join(work, installer, 'cache')
    inputs = {'environments': [], 'prefix': prefix, 'pip_index_url': 'file://%s/pypi/simple' % mirror,
              'pytorch_index_url': 'file://%s/pytorch/whl' % mirror, 'pytorch_cuda': '', 'nvidia_index_url': '',
              'cache_dir': cache, 'backend': 'venv', 'python': '%d.%d' % tuple(
                  int(x) for x in subprocess.check_output([python, '-c', 'import sys; print("%d %d" % sys.version_info[:2])'],
                                                          text=True).split()),
              'conda_prefix': '/opt/conda', 'conda_channels': [], 'env_defaults': {}}
    tools = {'uv': uv if installer == 'uv' else ''}
    rows = []

    def step(label, pip):
        inputs['environments'] = [{'name': 'pytorch', 'pip': pip}]
        plan, plan_wall = module({'action': 'plan', 'inputs': inputs}, work)
        env = plan['environments'][0]
        env['interpreter'] = python
        res, wall = module({'action': 'converge', 'environment': env, 'tools': tools,
                            'cache_dir': cache}, work)
        rows.append((installer, label, env['action'], round(plan_wall + wall, 1), res.get('seconds', 0.0)))
        return env

    step('cold', SPEC)
    step('no-op', SPEC)
    env = step('warm', SPEC + ['tqdm'])
    res, wall = module({'action': 'verify', 'environment': env}, work)
    rows.append((installer, 'verify', res['verification']['summary'], round(wall, 1), res['verification']['seconds']))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('--python', default='/usr/bin/python3.11')
    parser.add_argument('--keep', help='work directory to use and keep (default: a temporary one, removed)')
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix='gpuops-pystack-bench-')
    try:
        mirror = os.path.join(work, 'mirror')
        subprocess.run([sys.executable, os.path.join(REPO, 'tests', 'doubles', 'build_wheel_mirror.py'),
                        '--mirror-dir', mirror], check=True, stdout=subprocess.DEVNULL)
        uv_dir = os.path.join(work, 'uv')
        subprocess.run([sys.executable, '-m', 'pip', 'install', '--quiet', '--no-deps', '--target', uv_dir,
                        '--index-url', 'file://%s/pypi/simple' % mirror, 'uv==0.13.9'], check=True)
        rows = []
        for installer in ('uv', 'pip'):
            rows.extend(run(installer, mirror, os.path.join(uv_dir, 'bin', 'uv'), args.python, work))
        print('| installer | step | action | wall s | build s |')
        print('| --- | --- | --- | --- | --- |')
        for row in rows:
            print('| %s | %s | %s | %s | %s |' % row)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
