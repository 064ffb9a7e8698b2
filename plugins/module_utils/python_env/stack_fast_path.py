# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The converged fast path of python_stack: whether a host already is what the role's install,
environments, configure and verify steps would leave, so that the role skips them in one
skipped include (``python_stack_host`` action ``plan`` reads the host, stack_host.read_current;
the comparisons are here).

- ``uv_requirement(version, sha256)``: the text of the role's pinned, hash-checked uv requirement.
- ``previous_verification(env, previous, expect_gpu, verify_enabled)``: the verification the last
  status file recorded for this environment, kept only while it verified this very build (same
  spec hash, same GPU expectation, ok): an environment the run does not change is not verified
  again, and its record stays what it was.
- ``fast_path(current, environments, verify_enabled)``: ``{converged, drift}``.

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# The host-side checks, in step order, with the words drift names them by.
CHECKS = (
    ('os_packages', 'distribution packages of the venv backend'),
    ('directories', "the role's directories"),
    ('uv', 'uv (requirement file and install)'),
    ('conda', 'conda (installer, prefix, .condarc)'),
    ('profile', 'the profile script'),
    ('env_file_dir', 'the directory of the environment file'),
    ('env_file', 'the environment file'),
)


def uv_requirement(version, sha256):
    """The pinned, hash-checked requirement pip installs uv from."""
    return 'uv==%s --hash=sha256:%s\n' % (version, sha256)


def previous_verification(env, previous, expect_gpu, verify_enabled):
    """The last recorded verification of ``env`` (a resolved environment) when it still holds,
    else None (the environment is verified in this run).

    ``previous``: the role's last status record (dict) or None."""
    if not verify_enabled or not env.get('verify') or env.get('state') != 'present' or env.get('action') != 'none':
        return None
    for record in (previous or {}).get('environments') or []:
        if not isinstance(record, dict) or record.get('name') != env.get('name'):
            continue
        ver = record.get('verification')
        if (isinstance(ver, dict) and ver.get('ok') is True and ver.get('hash') == env.get('hash')
                and record.get('hash') == env.get('hash') and ver.get('expect_gpu') is bool(expect_gpu)):
            return ver
    return None


def fast_path(current, environments, verify_enabled):
    """``{converged, drift}``.

    ``current``: check name (CHECKS) -> True (current), False, or None (not needed on this host);
    ``environments``: the resolved environments with ``action``, ``kernel_current``,
    ``previous_verification``. Not converged when a check is False or missing, an environment
    is to be built, swapped, removed or adopted, its Jupyter kernel is not current, or it is
    to be verified (no recorded verification of this build)."""
    drift = []
    for key, words in CHECKS:
        if key not in current or current[key] is False:
            drift.append(words)
    for env in environments:
        name = env.get('name')
        action = env.get('action')
        if action not in ('none', 'leave'):
            drift.append('environment %s: %s' % (name, action))
            continue
        if action == 'none' and env.get('kernel_current') is False:
            drift.append('environment %s: Jupyter kernel' % name)
        if (action == 'none' and verify_enabled and env.get('verify') and env.get('state') == 'present'
                and env.get('previous_verification') is None):
            drift.append('environment %s: not verified yet' % name)
    return {'converged': not drift, 'drift': drift}
