# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the cuda_toolkit role's verify step found: each toolkit's nvcc release, the compile of the
check program, and its run where a GPU and a loaded driver are present.

Pure functions, standard library only (filter gpuops.dlserver.__private.cuda_toolkit_verify; tests:
tests/unit/plugins/module_utils/cuda/test_verify.py, nvcc outputs with their sources).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# nvcc --version prints "Cuda compilation tools, release 12.4, V12.4.131" (every release since CUDA 7).
_RELEASE_RE = re.compile(r'^Cuda compilation tools, release (\d+\.\d+), V(\d+(?:\.\d+)+)[ \t\r]*(?:\n|\Z)', re.MULTILINE)
RAN_OK = 'gpuops-cuda-ok 42'


def nvcc_release(text):
    """(release '12.4', full version '12.4.131') from nvcc --version, or (None, None)."""
    match = _RELEASE_RE.search(text or '')
    return (match.group(1), match.group(2)) if match else (None, None)


def _by_version(results):
    found = {}
    for result in results or []:
        item = (result or {}).get('item') or {}
        if isinstance(item, dict) and item.get('version'):
            found[item['version']] = result
    return found


def record(registered, resolved):
    """{ok, problems, toolkits: [{version, nvcc, release, compiled, ran, reason}]}."""
    nvcc = _by_version(registered.get('nvcc'))
    compiled = _by_version(registered.get('compiled'))
    ran = _by_version(registered.get('ran'))
    toolkits, problems = [], []
    for plan in resolved.get('verify') or []:
        version = plan['version']
        out = nvcc.get(version) or {}
        release, full = nvcc_release(out.get('stdout'))
        if release != version:
            problems.append('%s --version reports release %s, expected %s: %s'
                            % (plan['nvcc'], release, version, (out.get('stdout') or out.get('msg') or '').strip()))
        built = compiled.get(version) or {}
        compiled_ok = built.get('rc') == 0
        if not compiled_ok:
            problems.append('%s could not compile the check program (rc %s): %s'
                            % (plan['nvcc'], built.get('rc'), (built.get('stderr') or built.get('msg') or '').strip()))
        if plan['run']:
            result = ran.get(version) or {}
            ran_ok = result.get('rc') == 0 and RAN_OK in (result.get('stdout') or '')
            if not ran_ok:
                problems.append('the check program of CUDA %s did not run on the GPU (rc %s): %s'
                                % (version, result.get('rc'), (result.get('stdout') or result.get('stderr') or '').strip()))
            reason = plan['reason'] + (': it printed %s' % RAN_OK if ran_ok else '')
        else:
            ran_ok, reason = None, plan['reason']
        toolkits.append({'version': version, 'nvcc': plan['nvcc'], 'release': full, 'compiled': compiled_ok,
                         'linked_and_ran': ran_ok, 'reason': reason})
    return {'ok': not problems, 'problems': problems, 'toolkits': toolkits}
