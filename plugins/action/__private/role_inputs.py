# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action gpuops.dlserver.__private.role_inputs: a role's variables, converted once by its argument_specs."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import os

import yaml

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase
from ansible.vars.clean import namespace_facts

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks, value_posture
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.platforms import in_container, missing_facts, platform_error
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import InputError, convert_inputs, to_bool
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.run_state import plan_current, probe_of, run_id, secret_names
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.mirror_urls import apply_mirror
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import url_trust


def value_problems(role, inputs, insecure_hosts=(), entry_point='main', context=None):
    """The problems the registry of input checks (module_utils/core/input_checks.py ``REGISTRY``)
    finds in ``role``'s converted ``inputs`` at ``entry_point``, each naming its variable.
    ``insecure_hosts``: gpuops_insecure_http_hosts; ``context``: posture_context's (``groups``,
    ``allow``) and, where known, ``facts`` (the probe's gpuops_gpu) and ``platform``."""
    context = dict(value_posture.context_of(None, insecure_hosts), **(context or {}))
    context['insecure_hosts'] = list(insecure_hosts or [])
    return input_checks.problems(role, inputs, entry_point, context)


def value_notices(role, inputs, context=None):
    """What the registered checks accepted but could not check, or that configures nothing, said in
    the run (the action's warnings), each naming the variable (input_checks.notices)."""
    return input_checks.notices(role, inputs, context)


def posture_context(task_vars, templar, insecure_hosts=()):
    """(context, problems): what value_posture.problems needs from the play - the inventory's groups
    (task_vars['groups']) and the documented opt-ins (gpuops_allow_*, common's argument spec)."""
    allow, found = {}, []
    for short, name in sorted(value_posture.OPT_INS.items()):
        try:
            allow[short] = to_bool(name, templar.template(task_vars.get(name, False)))
        except InputError as exc:
            found.extend(exc.problems)
        except AnsibleError as exc:
            found.append('%s cannot be evaluated: %s' % (name, exc))
    groups = task_vars.get('groups')
    return value_posture.context_of(dict(groups) if isinstance(groups, dict) else None, insecure_hosts, allow), found


def platform_of(facts):
    """The host's platform as the registered checks read it (``distribution``, ``major``)."""
    return {'distribution': facts.get('distribution'), 'major': facts.get('distribution_major_version')}


def insecure_http_hosts(task_vars, templar):
    """(hosts, problem or None): gpuops_insecure_http_hosts as the play gives it (the one opt-in for
    downloads over plain HTTP that nothing pins; module_utils/packages/url_trust.py)."""
    try:
        value = templar.template(task_vars.get('gpuops_insecure_http_hosts', []))
    except AnsibleError as exc:
        return [], 'gpuops_insecure_http_hosts cannot be evaluated: %s' % exc
    return url_trust.insecure_hosts_problem(value)


ROLES_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'roles'))
_SPECS = {}
# libyaml's parser where PyYAML has it: the argument specs are read in every forked worker, once
# per role and host (0.14 s for all of them with the pure-Python parser, 0.01 s with libyaml)
SAFE_LOADER = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)


def read_yaml(handle):
    """The plain data of a YAML document (safe_load's, faster where libyaml is installed)."""
    return yaml.load(handle, Loader=SAFE_LOADER)  # nosec B506: a safe loader, C or Python


def load_spec(role, entry_point='main', roles_dir=ROLES_DIR):
    """The ``options`` of ``entry_point`` in the collection role's meta/argument_specs.yml (cached)."""
    key = (roles_dir, role, entry_point)
    if key not in _SPECS:
        path = os.path.join(roles_dir, role, 'meta', 'argument_specs.yml')
        try:
            with open(path) as handle:
                data = read_yaml(handle) or {}
        except (IOError, OSError) as exc:
            raise AnsibleError('gpuops.dlserver.__private.role_inputs: cannot read the argument spec of role %s (%s): %s'
                               % (role, path, exc))
        entry = (data.get('argument_specs') or {}).get(entry_point)
        if entry is None:
            raise AnsibleError('gpuops.dlserver.__private.role_inputs: role %s has no entry point %s in %s'
                               % (role, entry_point, path))
        _SPECS[key] = entry.get('options') or {}
    return _SPECS[key]


def spec_defaults(from_spec, scaled=None):
    """{module option: default} for a module whose options stand for role variables:
    ``from_spec`` maps an option to (role, entry point, variable), ``scaled`` an option to (role,
    entry point, variable, factor) for a default in another unit. The actions that fill a module's
    options from the argument specs use it (the specs state each default once)."""
    found = {}
    for option, (role, entry, variable) in from_spec.items():
        found[option] = copy.deepcopy(load_spec(role, entry)[variable]['default'])
    for option, (role, entry, variable, factor) in (scaled or {}).items():
        found[option] = load_spec(role, entry)[variable]['default'] * factor
    return found


def platform_var_files(vars_dir, facts):
    """The platform files of a role's vars directory that apply to a host with ``facts``, in
    the order they are read: <os_family>.yml, then the first present of <distribution>_<major>.yml
    and <distribution>.yml; each once (on Debian the family file is the distribution file)."""
    found = []
    family = os.path.join(vars_dir, '%s.yml' % facts.get('os_family'))
    if os.path.isfile(family):
        found.append(family)
    for name in ('%s_%s.yml' % (facts.get('distribution'), facts.get('distribution_major_version')),
                 '%s.yml' % facts.get('distribution')):
        path = os.path.join(vars_dir, name)
        if os.path.isfile(path):
            if path not in found:
                found.append(path)
            break
    return found


class ActionModule(ActionBase):
    """Return ``inputs``: every public variable of the role, converted by its argument spec (the
    caller registers the result; common's preflight.yml sets ``__<role>`` from it)."""

    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(('role', 'entry_point', 'platforms', 'gather', 'container_types', 'platform_vars'))
    _requires_connection = False

    def _gather(self, task_vars, container_types):
        """The facts the roles decide on, where this run has not gathered them yet (the setup
        module's `virtual` subset: one round trip, only then), and gpuops_in_container (the
        inventory's value where it sets one). Returns (new facts to publish, all facts,
        in_container, error message or None)."""
        facts = dict(task_vars.get('ansible_facts') or {})
        new = {}
        if missing_facts(facts):
            gathered = self._execute_module(module_name='ansible.builtin.setup',
                                            module_args={'gather_subset': ['!all', 'virtual']},
                                            task_vars=task_vars)
            if gathered.get('failed') or 'ansible_facts' not in gathered:
                return new, facts, None, 'role_inputs: gathering the facts failed: %s' % gathered.get('msg', gathered)
            new.update(gathered['ansible_facts'])
            # the module's names carry the ansible_ prefix; ansible_facts holds them without it
            facts.update(namespace_facts(new)['ansible_facts'])
        if 'gpuops_in_container' in task_vars:
            inside = self._templar.copy_with_new_env(available_variables=task_vars).template(
                task_vars['gpuops_in_container'])
        else:
            inside = in_container(facts, container_types)
        return new, facts, inside, None

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        task_vars = task_vars or {}
        role = self._task.args.get('role')
        if not role or not isinstance(role, str) or '/' in role or role.startswith('.'):
            result.update(failed=True, msg='role_inputs: role must be the name of a role of gpuops.dlserver')
            return result
        entry_point = self._task.args.get('entry_point') or 'main'
        platforms = self._task.args.get('platforms')
        gathered, facts, inside = {}, task_vars.get('ansible_facts') or {}, None
        if self._task.args.get('gather'):
            gathered, facts, inside, error = self._gather(task_vars, self._task.args.get('container_types') or [])
            if error:
                result.update(failed=True, msg=error)
                return result
        if platforms is not None:
            # the platform check first: on a platform no role supports, nothing else is said
            try:
                error = platform_error(role, facts, platforms)
            except ValueError as exc:
                error = 'role_inputs: platforms: %s' % exc
            if error:
                result.update(failed=True, msg=error)
                return result
        options = load_spec(role, entry_point)
        templar = self._templar.copy_with_new_env(available_variables=task_vars)
        values = {}
        for name in options:
            if name in task_vars:
                values[name] = templar.template(task_vars[name])
        # URL variables at their vendor default come from gpuops_mirror_url when it is set
        values, problems = apply_mirror(options, values, templar.template(task_vars.get('gpuops_mirror_url', '')))
        try:
            if problems:
                raise InputError(problems)
            converted = convert_inputs(options, values, '%s_' % role.lstrip('_'))
            hosts, problem = insecure_http_hosts(task_vars, templar)
            context, problems = posture_context(task_vars, templar, hosts)
            context['facts'] = (task_vars.get('ansible_facts') or {}).get('gpuops_gpu')
            context['platform'] = platform_of(facts or task_vars.get('ansible_facts') or {})
            problems = [problem] if problem else problems or \
                value_problems(role.lstrip('_'), converted, hosts, entry_point, context)
            if problems:
                raise InputError(problems)
        except InputError as exc:
            result.update(failed=True, problems=exc.problems,
                          msg='gpuops.dlserver.%s: bad input, nothing was changed: %s.'
                              % (role, '; '.join(exc.problems)))
            return result
        result.update(changed=False, inputs=converted)
        notices = value_notices(role.lstrip('_'), converted, context)
        if notices:
            # accepted, but said in the run rather than configuring nothing silently
            result.update(notices=notices, warnings=list(notices))
        if inside is not None:
            result['in_container'] = inside
        if gathered:
            # the setup module's own facts, where this run had not gathered them: real facts
            result['ansible_facts'] = gathered
        if self._task.args.get('platform_vars'):
            # the role's platform files, for include_vars (common's preflight.yml)
            result['platform_files'] = platform_var_files(os.path.join(ROLES_DIR, role.lstrip('_'), 'vars'), facts)
        if entry_point == 'main':
            # whether gpuops_plan stands for this role: made in this run, from this run's latest
            # probe and from the inputs this role sees now (module_utils/core/run_state.py)
            current, why = plan_current(task_vars.get('__common_plan_made_from'), run_id(),
                                        probe_of(task_vars.get('__common_probe')), role.lstrip('_'), converted,
                                        secret_names(options, '%s_' % role.lstrip('_')))
            result.update(plan_current=current, plan_reason=why)
        # A secret (no_log: true in the argument spec) is among the values: keep the result out of
        # the output, and say so, for the task that sets the values (common's preflight.yml)
        result['secret'] = any(isinstance(spec, dict) and spec.get('no_log') for spec in options.values())
        if result['secret']:
            result['_ansible_no_log'] = True
        return result
