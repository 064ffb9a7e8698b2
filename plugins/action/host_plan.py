# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action gpuops.dlserver.host_plan: every role's inputs converted and checked, then the host's plan.

Documented by its module stub (plugins/modules/host_plan.py); the decisions are in
plugins/module_utils/plan/ (host_plan.py, gpu_plan.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible.utils.vars import load_extra_vars

from ansible_collections.gpuops.dlserver.plugins.action.__private.role_inputs import (
    ROLES_DIR, insecure_http_hosts, load_spec, platform_of, posture_context, read_yaml, value_problems)
from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks, value_kinds, value_posture
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import InputError, convert_inputs, to_bool
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.run_state import (computed_extra_vars, made_from,
                                                                                     plan_current, probe_of, run_id,
                                                                                     secret_names)
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.unknown_vars import unknown_variables, verdict
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.mirror_urls import apply_mirror
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.gpu_plan import format_plan_errors
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.host_plan import build_host_plan, same_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.settings_checks import settings_report


def public_roles(roles_dir=ROLES_DIR):
    """The collection's public roles: every role with an argument spec, except the private common."""
    return sorted(r for r in os.listdir(roles_dir) if r != 'common'
                  and os.path.isfile(os.path.join(roles_dir, r, 'meta', 'argument_specs.yml')))


_DECLARED = {}
# common's entry points whose variables every host is given (the CUDA repository of
# nvidia_driver, dcgm_exporter and cuda_toolkit; the probe's NVML index and the mirror): checked on
# every host like a role's, whether or not a role there uses them (issue 37); the BMC inputs of the
# power-cycle recovery after a failed reboot (issue 39), before the reboot that may need them
COMMON_CHECKED = [('common', 'cuda_repo'), ('common', 'gpu'), ('common', 'bmc')]


def declared_names(role, roles_dir=ROLES_DIR):
    """Every option name of every entry point of the role's meta/argument_specs.yml (cached)."""
    key = (roles_dir, role)
    if key not in _DECLARED:
        with open(os.path.join(roles_dir, role, 'meta', 'argument_specs.yml')) as handle:
            specs = (read_yaml(handle) or {}).get('argument_specs') or {}
        _DECLARED[key] = sorted(set(name for entry in specs.values() for name in (entry or {}).get('options') or {}))
    return _DECLARED[key]


def unknown_variable_report(task_vars, templar):
    """{'warnings', 'problems'}: the variables with a public role's prefix its spec does not declare,
    as gpuops_unknown_variables (warn, error, ignore) says (module_utils/core/unknown_vars.py)."""
    try:
        # at common's spec default (entry point gpu) where the play does not set it
        mode = templar.template(task_vars['gpuops_unknown_variables'] if 'gpuops_unknown_variables' in task_vars
                                else load_spec('common', 'gpu')['gpuops_unknown_variables']['default'])
        found = unknown_variables(task_vars, dict((role, declared_names(role)) for role in public_roles()))
        return verdict(mode, found)
    except (AnsibleError, ValueError) as exc:
        return {'warnings': [], 'problems': [str(exc)]}


def playbook_values(task_vars, templar, problems):
    """The playbooks' variables (value_posture's and value_kinds' PLAYBOOK_VARIABLES) that the play
    gives (templated); one that cannot be evaluated is added to ``problems``."""
    values = {}
    for name in value_posture.PLAYBOOK_VARIABLES + value_kinds.PLAYBOOK_VARIABLES:
        if name in task_vars:
            try:
                values[name] = templar.template(task_vars[name])
            except AnsibleError as exc:
                problems.append('%s cannot be evaluated: %s' % (name, exc))
    return values


def extra_var_names(loader):
    """The names this run's extra variables (``-e``) define (none where they cannot be read here)."""
    try:
        return set(load_extra_vars(loader))
    except (AnsibleError, TypeError, ValueError, KeyError):
        return set()


class ActionModule(ActionBase):
    """Convert every role's inputs (failing on any bad one, naming it) and compute the plan."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('probe', 'in_container', 'strict', 'plan', 'made_from', 'settings_checks'))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        args = self._task.args
        templar = self._templar.copy_with_new_env(available_variables=task_vars)
        # a name the collection computes, given with -e, would outrank what this run computes
        forced = computed_extra_vars(extra_var_names(self._loader), public_roles() + ['common'])
        if forced:
            result.update(failed=True, msg='gpuops.dlserver.host_plan: %s given as extra variables (-e): the collection '
                          'computes %s in every run from the host itself, and an extra variable would override what it '
                          'computes. Remove %s from the command line (nothing was changed).'
                          % (', '.join(forced), 'it' if len(forced) == 1 else 'them', ', '.join(forced)))
            return result
        # a variable with a role's prefix that the role does not declare (a typo): named first
        unknown = unknown_variable_report(task_vars, templar)
        inputs, problems, bmc, registry, secrets = {}, list(unknown['problems']), {}, {}, {}
        if unknown['warnings']:
            result['warnings'] = unknown['warnings']
        try:
            mirror_url = templar.template(task_vars.get('gpuops_mirror_url', ''))
        except AnsibleError as exc:
            mirror_url = ''
            problems.append('gpuops_mirror_url cannot be evaluated: %s' % exc)
        # the one opt-in for downloads over plain HTTP that nothing pins (url_trust.py)
        insecure_hosts, problem = insecure_http_hosts(task_vars, templar)
        problems.extend([problem] if problem else [])
        # what the value checks read besides the inputs: the inventory's groups and the gpuops_allow_*
        # opt-ins (value_posture.py), this run's probe (value_kinds.py)
        context, context_problems = posture_context(task_vars, templar, insecure_hosts)
        problems.extend(context_problems)
        context['facts'] = probe_of(plain(args.get('probe')))
        context['platform'] = platform_of(task_vars.get('ansible_facts') or {})
        notices = []
        for role, entry_point in [(r, 'main') for r in public_roles()] + COMMON_CHECKED:
            options = load_spec(role, entry_point)
            values = {}
            for name in options:
                if name in task_vars:
                    try:
                        values[name] = templar.template(task_vars[name])
                    except AnsibleError as exc:
                        problems.append('%s cannot be evaluated: %s' % (name, exc))
            # URL variables at their vendor default come from gpuops_mirror_url when it is set
            values, mirror_problems = apply_mirror(options, values, mirror_url)
            problems.extend(p for p in mirror_problems if p not in problems)
            try:
                converted = convert_inputs(options, values, '%s_' % role)
            except InputError as exc:
                problems.extend(exc.problems)
            else:
                if (role, entry_point) == ('common', 'bmc'):
                    bmc = converted  # what the plan publishes of the host's BMC (bmc.address)
                if entry_point == 'main':
                    inputs[role] = converted
                    secrets[role] = secret_names(options, '%s_' % role)
                    # what this run's probe could not check (a GPU clock without a known maximum)
                    notices.extend(input_checks.notices(role, converted, context))
                # the registry of input checks, the same as the role's preflight runs (core/input_checks.py)
                found = value_problems(role, converted, insecure_hosts, entry_point, context)
                problems.extend(found)
                if entry_point == 'main':
                    registry[role] = found  # the probe's settings report reads it (plan/settings_checks.py)
        # the playbooks' own variables where the play gives them (value_posture.py's and value_kinds.py's
        # PLAYBOOK_VARIABLES): the registry's entry ``playbooks``
        playbook = playbook_values(task_vars, templar, problems)
        problems.extend(input_checks.problems('playbooks', playbook, context=context))
        notices.extend(input_checks.notices('playbooks', playbook, context))
        # across the roles of one host (two services on one port): the registry's host checks. The
        # address this host publishes for Prometheus's targets and the exporters' listen addresses
        # are checked with every role's inputs above, before the plan is published
        problems.extend(input_checks.host_problems(inputs))
        if problems:
            result.update(failed=True, problems=problems,
                          msg='gpuops.dlserver: bad input, nothing was changed: %s.' % '; '.join(problems))
            return result
        if notices:
            # accepted, but not silently: what the checks could not check, in the run's warnings
            result.update(notices=notices, warnings=result.get('warnings', []) + notices)
        try:
            in_container = to_bool('in_container', args.get('in_container', False))
            strict = to_bool('strict', args.get('strict', True))
            settings = None
            # the host's platform: the driver branches its source carries (packages/driver_branches.py)
            facts = task_vars.get('ansible_facts') or {}
            platform = {'distribution': facts.get('distribution'), 'major': facts.get('distribution_major_version')}
            if to_bool('settings_checks', args.get('settings_checks', False)):
                # the read-only probe: what the registry of input checks found above for each role
                # (one mechanism; every role here passed it, or the run failed above)
                settings = settings_report(registry)
            # the GPU facts of this run's probe (the registered result of gpu_facts, __common_probe):
            # never a fact from a cache or an earlier run
            probe = probe_of(plain(args.get('probe')))
            if probe is None:
                raise ValueError('probe must be the registered result of gpuops.dlserver.gpu_facts in this run '
                                 '(common\'s probe.yml registers it as __common_probe)')
            this_run = run_id()
            current = plain(args.get('plan'))
            record = plain(args.get('made_from'))
            if current and plan_current(record, this_run, probe)[0] and same_inputs(current, inputs, in_container, platform):
                # computed once per run: the plan of this probe and these inputs exists already
                result.update(changed=False, plan=current, made_from=record, computed=False, settings=settings)
                return result
            address = (inputs.get('prometheus') or {}).get('target_address') or \
                task_vars.get('ansible_host') or task_vars.get('inventory_hostname')
            plan = build_host_plan(probe, inputs, in_container, platform, str(address) if address else None, bmc)
        except (InputError, ValueError) as exc:
            result.update(failed=True, msg='gpuops.dlserver.host_plan: %s' % exc)
            return result
        if plan['errors'] and strict:
            result.update(failed=True, plan=plan,
                          msg='gpuops.dlserver.host_plan: the requested settings conflict with the hardware of '
                              'this host: %s' % format_plan_errors(plan))
            return result
        # common's plan.yml sets gpuops_plan and __common_plan_made_from from this result (run-only
        # host variables: never in a fact cache)
        result.update(changed=False, plan=plan, made_from=made_from(this_run, probe, inputs, secrets), computed=True,
                      settings=settings)
        return result
