# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What python_stack reports: whether what the verification saw inside an environment is what
the host should give it, the one-line summary, and the status record (filter
gpuops.dlserver.__private.python_stack_status).

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


# --------------------------------------------------------------------------- verification

def evaluate_verification(result, resolved, expect_gpu):
    """(ok, problems): what the verification script reported against what the host should give.

    ``result``: the script's JSON; ``expect_gpu``: the host has a loaded driver and GPUs."""
    name = resolved['name']
    problems = []
    if not isinstance(result, dict):
        return False, ['environment %s: the verification printed no result' % name]
    for module, info in sorted((result.get('imports') or {}).items()):
        if not info.get('ok'):
            problems.append('environment %s: import %s failed: %s' % (name, module, info.get('error')))
    torch = result.get('torch')
    if torch is not None:
        if not torch.get('ok'):
            problems.append('environment %s: the PyTorch mixed-precision step failed: %s' % (name, torch.get('error')))
        elif expect_gpu and not torch.get('cuda_available'):
            problems.append('environment %s: torch.cuda.is_available() is false on a host with a loaded driver '
                            '(torch %s, built for CUDA %s)' % (name, torch.get('version'), torch.get('cuda_build')))
    tf = result.get('tensorflow')
    if tf is not None:
        if not tf.get('ok'):
            problems.append('environment %s: the TensorFlow XLA step failed: %s' % (name, tf.get('error')))
        elif expect_gpu and not tf.get('gpus'):
            problems.append('environment %s: TensorFlow lists no GPU on a host with a loaded driver' % name)
    return not problems, problems


def summary_line(verification):
    """One line for the fleet summary from a verification record."""
    parts = []
    torch = verification.get('torch')
    if torch:
        if torch.get('ok'):
            dev = torch.get('device') or 'cpu'
            parts.append('torch %s %s (%s step %s)' % (
                torch.get('version'), 'CUDA on %s' % ', '.join(torch.get('device_names') or []) if dev == 'cuda'
                else 'CPU', torch.get('dtype'), 'ok'))
        else:
            parts.append('torch FAILED')
    tf = verification.get('tensorflow')
    if tf:
        parts.append('tensorflow %s %s XLA step %s' % (tf.get('version'), ('%d GPU' % len(tf.get('gpus') or []))
                                                       if tf.get('gpus') else 'CPU', 'ok' if tf.get('ok') else 'FAILED'))
    if not parts:
        parts.append('imports ok' if all(i.get('ok') for i in (verification.get('imports') or {}).values())
                     else 'imports FAILED')
    return '; '.join(parts)


# --------------------------------------------------------------------------- status

_UNSTABLE = ('seconds', 'step_seconds', 'loss', 'executable')


def stable_verification(record):
    """A verification record without what changes from run to run (timings, loss)."""
    if not isinstance(record, dict):
        return record
    out = {}
    for key, value in record.items():
        if key in _UNSTABLE:
            continue
        out[key] = stable_verification(value) if isinstance(value, dict) else value
    return out


def status(plan, verified, verify_enabled):
    """The role's status record: per environment what was declared, resolved and verified.

    ``plan``: the plan action's result; ``verified``: the registered loop of verify results."""
    by_name = {}
    for item in (verified or {}).get('results', []) or []:
        env = item.get('item') or {}
        if item.get('skipped'):
            continue
        by_name[env.get('name')] = item.get('verification') or {}
    envs = []
    for env in plan.get('environments', []):
        record = {
            'name': env['name'], 'backend': env['backend'], 'state': env['state'], 'python': env['python'],
            'hash': env['hash'], 'link': env['link'], 'target': env['target'], 'packages': env['spec']['pip'],
            'conda_packages': env['spec']['conda'], 'index_urls': ([env['spec']['index_url']] if env['spec']['index_url']
                                                                   else []) + env['spec']['extra_index_urls'],
            'decisions': env['decisions'],
        }
        if env.get('action') == 'leave':
            # what the role did not create: reported with its path and why, never touched (plan/adopt.py)
            record['left_alone'] = {'path': env['link'], 'reason': env.get('reason')}
            record['verification'] = {'ok': None, 'summary': 'not verified: left alone (%s)' % env['link']}
        elif env['state'] == 'present':
            # Not verified again in this run: the record of the last verification of this very build
            # (stack_fast_path.previous_verification), so that a no-op run records the same.
            ver = by_name.get(env['name']) or env.get('previous_verification')
            if ver:
                record['verification'] = stable_verification(ver)
            else:
                record['verification'] = {'ok': None, 'summary': 'not verified: %s' % (
                    'python_stack_verify is false' if not verify_enabled else
                    'verify: false for this environment' if not env.get('verify') else 'check mode')}
        envs.append(record)
    return {'environments': envs, 'env_defaults': plan.get('env_defaults', []),
            'cuda_version': plan.get('cuda_version'), 'backends': plan.get('backends', [])}
