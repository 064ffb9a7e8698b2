# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What belongs to this run: the run's identity, and whether the host's plan was made in it.

The roles keep their state in run-only host variables (set_fact and registered results, never a
fact cache; docs/architecture.md section 2): the probe's result ``__common_probe``, the plan
``gpuops_plan`` and what it was made from, ``__common_plan_made_from``. A plan is acted upon only
where it was made in this run, from this run's probe and from the inputs the role sees now;
anything else (a fact cache, AWX fact storage, a previous run) is planned afresh, and a name the
collection computes given with ``-e`` is refused (extra variables outrank every other source).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

# The names the collection computes in a run and reads back: given as extra variables they would
# outrank the computed values (Ansible's precedence), so a run with any of them refuses to plan.
COMPUTED_NAMES = ('gpuops_plan', '__common_plan_made_from', '__common_probe', '__common_preflight',
                  '__common_host_plan', 'gpuops_cuda_repo', 'gpuops_settings')


def run_id(pid=None, proc='/proc'):
    """This run's identity: the pid of the ansible-playbook process (a worker's parent) and, where
    /proc has it, that process's start time, so that a pid used again by a later run differs."""
    pid = os.getppid() if pid is None else pid
    try:
        with open(os.path.join(proc, str(pid), 'stat')) as handle:
            start = handle.read().rsplit(')', 1)[1].split()[19]
    except (IOError, OSError, IndexError):
        start = ''
    return '%d-%s' % (pid, start)


def digest(value):
    """A stable digest of plain data (JSON with sorted keys; other types by their text)."""
    text = json.dumps(value, sort_keys=True, separators=(',', ':'), default=str)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def probe_of(probe_result):
    """The GPU facts of a registered gpu_facts result (``__common_probe``), or None."""
    if not isinstance(probe_result, dict):
        return None
    facts = probe_result.get('ansible_facts')
    if not isinstance(facts, dict) or not isinstance(facts.get('gpuops_gpu'), dict):
        return None
    return facts['gpuops_gpu']


SECRET = '<no_log>'


def secret_names(options, prefix):
    """The names, as the converted inputs carry them (without ``prefix``), of the options an argument
    spec marks ``no_log`` (passwords)."""
    return sorted((name[len(prefix):] if prefix and name.startswith(prefix) else name)
                  for name, spec in (options or {}).items() if isinstance(spec, dict) and spec.get('no_log'))


def inputs_digest(values, secrets=()):
    """The digest of a role's typed inputs with every no_log value left out (its name kept): no password
    reaches a digest, a record or a status file, not even hashed. No plan decision reads a password
    (plan/host_plan.py publishes none), so a changed password needs no new plan."""
    values = values if isinstance(values, dict) else {}
    return digest(dict((name, SECRET if name in secrets else value) for name, value in values.items()))


def made_from(this_run, probe, inputs, secrets=None):
    """What a plan computed now is made from: the run, the probe's digest, each role's inputs' digest
    (``secrets``: role -> its no_log option names, whose values are left out)."""
    secrets = secrets or {}
    return {'run': this_run, 'probe': digest(probe),
            'inputs': dict((role, inputs_digest(values, secrets.get(role, ()))) for role, values in sorted(inputs.items()))}


def plan_current(record, this_run, probe, role=None, inputs=None, secrets=()):
    """(current, reason): whether the plan made from ``record`` (``__common_plan_made_from``)
    stands for this run: made in this run, from this ``probe`` (the GPU facts of this run's
    probe) and, where ``role`` is given, from the same typed ``inputs`` of that role (its no_log
    options ``secrets`` left out, as made_from leaves them out)."""
    if not isinstance(record, dict):
        return False, 'no plan was made in this run'
    if record.get('run') != this_run:
        return False, 'the plan was made in another run'
    if probe is None or record.get('probe') != digest(probe):
        return False, 'the plan was made from another probe than the latest of this run'
    if role is not None:
        have = (record.get('inputs') or {}).get(role)
        if have != inputs_digest(inputs, secrets):
            return False, 'the plan was made from other inputs of %s than this role sees' % role
    return True, 'made in this run from its latest probe and these inputs'


def computed_extra_vars(extra_names, roles=()):
    """The names in ``extra_names`` (the run's extra variables) that the collection computes:
    COMPUTED_NAMES and the typed inputs ``__<role>`` of ``roles``."""
    computed = set(COMPUTED_NAMES) | set('__%s' % role for role in roles)
    return sorted(name for name in extra_names if name in computed)
