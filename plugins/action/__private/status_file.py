# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action gpuops.dlserver.__private.status_file: ask the host once per run, answer the rest here.

Every role of the collection ends with this step (common/tasks/status.yml), and site.yml's first
play records the plan with it. The module writes a file only when its bytes or attributes
differ, and returns the digest, mode and owner of every ``*.json`` file in the directories it
wrote to. This action keeps those in the host fact ``__gpuops_status_files`` together with the
run they were read in (the ``ansible-playbook`` process: its pid and start time), and answers a
later call of the same run on the controller when every file it would write already holds
those bytes with root's 0644. Any doubt (another run's digests, a value that is not plain
JSON, a path with ``$`` or ``~``, a file not seen yet) asks the host. With ``fact``, the
status is also published as that fact (the role's ``<role>_status``), so the role needs no
set_fact of its own for it. ``known_files`` hands over the same digests read by another module
earlier in this run (gpuops.dlserver.gpu_facts' ``status_files``, the probe of site.yml's first
play), so that even the first call of a run is answered here when it would write the same bytes;
they are used only while this run has no digests of its own, and a value that is not such a
mapping is ignored (the host is asked).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import text_digest
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.run_state import run_id
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.status import StatusError, status_files

FACT = '__gpuops_status_files'
FACT_NAME_RE = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
SHA256_RE = re.compile(r'[0-9a-f]{64}')
PLAN_PATH = '/etc/gpuops/plan.json'


def wanted(args):
    """[(path, text)] the module would write for ``args``, or None when this cannot be told here
    (bad or unusual arguments: the module reports those)."""
    try:
        # the module receives its arguments as JSON: compare what it would see
        status, plan = (json.loads(json.dumps(args.get(key))) for key in ('status', 'plan'))
        path, plan_path = args.get('path'), args.get('plan_path') or PLAN_PATH
        for name in (path, plan_path):
            if name is not None and (not isinstance(name, str) or not os.path.isabs(name) or '$' in name or '~' in name):
                return None
        if path is not None and not isinstance(status, dict):
            return None
        return status_files(path, status, plan, plan_path, args.get('driver_target'))
    except (TypeError, ValueError, StatusError):
        return None


def current(known, files):
    """Whether every (path, text) of ``files`` is, by ``known`` ({path: {sha256, attrs}}), already
    on the host with those bytes and root's 0644."""
    for path, text in files:
        state = known.get(path) or {}
        if state.get('sha256') != text_digest(text) or state.get('attrs') is not True:
            return False
    return True


def known_states(value):
    """``known_files`` when it is {absolute path: {sha256: hex digest, attrs: bool}} (what
    file_states returns), else None: anything else is not trusted."""
    if not isinstance(value, dict):
        return None
    for path, state in value.items():
        if not (isinstance(path, str) and os.path.isabs(path) and isinstance(state, dict)
                and isinstance(state.get('sha256'), str) and SHA256_RE.fullmatch(state['sha256'])
                and isinstance(state.get('attrs'), bool)):
            return None
    return dict((path, {'sha256': state['sha256'], 'attrs': state['attrs']}) for path, state in value.items())


class ActionModule(ActionBase):
    """status_file, asking the host only when this run has not seen the files as they would be."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('path', 'status', 'plan', 'plan_path', 'fact', 'known_files', 'driver_target'))

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = dict(self._task.args)
        fact = args.pop('fact', None)
        handed = args.pop('known_files', None)
        if fact is not None and not (isinstance(fact, str) and FACT_NAME_RE.fullmatch(fact)):
            result.update(failed=True, msg='status_file: fact must be a variable name, got %r' % (fact,))
            return result
        published = {fact: args.get('status')} if fact else {}
        this_run = run_id()
        seen = task_vars.get(FACT) or (task_vars.get('ansible_facts') or {}).get(FACT)
        known = seen.get('files') if isinstance(seen, dict) and seen.get('run') == this_run else None
        if not isinstance(known, dict):
            # this run's first call: the digests another module read this run, when handed over
            known = known_states(handed)
            if known is not None:
                published[FACT] = {'run': this_run, 'files': known}
        files = wanted(args)
        if isinstance(known, dict) and files is not None and current(known, files):
            result.update(changed=False, written=[], diff=[], asked_host=False,
                          plan_recorded=any(path == (args.get('plan_path') or PLAN_PATH) for path, _text in files))
            if published:
                result.update(ansible_facts=published, _ansible_facts_cacheable=False)
            return result
        module = self._execute_module(module_name='gpuops.dlserver.__private.status_file', module_args=args, task_vars=task_vars)
        states = module.pop('files', None)
        result.update(module)
        if not module.get('failed') and isinstance(states, dict):
            merged = dict(known) if isinstance(known, dict) else {}
            merged.update(states)
            result['ansible_facts'] = dict(published, **{FACT: {'run': this_run, 'files': merged}})
            result['_ansible_facts_cacheable'] = False
        return result
