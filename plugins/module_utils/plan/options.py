# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan's options: what the roles' typed inputs tell the planner, validated and normalised.

Each option names the public role variable a user changes to set it, so that every error
message of the plan names that variable. Booleans are converted by the collection's one
converter (``core/role_inputs.to_bool``), the same words every role input accepts.

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import InputError, to_bool

ROLES = (
    'os_tuning', 'nvidia_driver', 'cuda_toolkit', 'nvidia_container_toolkit', 'python_stack',
    'node_exporter', 'dcgm_exporter', 'prometheus', 'volcano', 'gpu_validate',
)

_CHOICES_AUTO = ('auto', 'enabled', 'disabled')
# ansible_facts.distribution (Debian, Ubuntu, RedHat, Rocky, ...) and distribution_major_version
_NAME = re.compile(r'[A-Za-z][A-Za-z0-9_.-]{0,63}')
_MAJOR = re.compile(r'[0-9]{1,4}')

# Options of build_plan(): type, default, choices, and the public role variable a user
# changes to set it (named in every error message).
OPTIONS = {
    'driver_force': {'type': 'bool', 'default': False, 'variable': 'nvidia_driver_force'},
    'kernel_modules': {'type': 'choice', 'default': 'auto', 'choices': ('auto', 'open', 'proprietary'),
                       'variable': 'nvidia_driver_kernel_modules'},
    'driver_branch': {'type': 'branch', 'default': None, 'variable': 'nvidia_driver_branch'},
    'mig': {'type': 'choice', 'default': 'auto', 'choices': _CHOICES_AUTO, 'variable': 'nvidia_driver_mig_mode'},
    'dcgm_profiling': {'type': 'choice', 'default': 'auto', 'choices': _CHOICES_AUTO,
                       'variable': 'dcgm_exporter_profiling'},
    'in_container': {'type': 'bool', 'default': False,
                     'variable': 'in_container (roles derive it from ansible_virtualization_type)'},
    'persistence': {'type': 'bool', 'default': True, 'variable': 'nvidia_driver_persistence'},
    'driver_version': {'type': 'version', 'default': None, 'variable': 'nvidia_driver_version'},
    'driver_upgrade': {'type': 'bool', 'default': False, 'variable': 'nvidia_driver_upgrade'},
    'driver_source': {'type': 'choice', 'default': 'distro', 'choices': ('cuda_repo', 'distro'),
                      'variable': 'nvidia_driver_source'},
    'driver_adopt': {'type': 'bool', 'default': False, 'variable': 'nvidia_driver_adopt'},
    'toolkit_adopt': {'type': 'bool', 'default': False, 'variable': 'nvidia_container_toolkit_adopt'},
    'dcgm_adopt': {'type': 'bool', 'default': False, 'variable': 'dcgm_exporter_adopt'},
    # The host's platform (ansible_facts): with driver_source it picks the branches the source
    # carries from the collection's table (packages/driver_branches.py) - the branch in one pass.
    'distribution': {'type': 'name', 'default': None, 'variable': 'ansible_facts.distribution'},
    'distribution_major': {'type': 'major', 'default': None, 'variable': 'ansible_facts.distribution_major_version'},
    # Overrides the table (the gpu_plan filter's users; the roles never pass it).
    'source_branches': {'type': 'branches', 'default': None,
                        'variable': 'the branches the driver source carries (default: the table of '
                                    'packages/driver_branches.py for distribution and nvidia_driver_source)'},
    'strict': {'type': 'bool', 'default': True, 'variable': 'the strict option of the gpu_plan filter'},
    'cuda_without_gpu': {'type': 'bool', 'default': False, 'variable': 'cuda_toolkit_without_gpu'},
    'cuda_versions': {'type': 'strings', 'default': None, 'variable': 'cuda_toolkit_versions'},
}


def variable(option):
    return OPTIONS[option]['variable']


def _to_bool(name, value):
    try:
        return to_bool(name, value)
    except InputError:
        raise ValueError("plan option '%s' (variable %s) must be a boolean (true or false), got %r"
                         % (name, variable(name), value))


def error(code, option, message):
    """A conflict between an option and the hardware, naming the variable to change."""
    return {'code': code, 'option': option, 'variable': variable(option), 'message': message}


def parse_branch(value, name='driver_branch'):
    """Return a driver branch as an int (580 from 580, '580' or 'R580'); None stays None
    (``core/versions.driver_branch``, the collection's one branch parser)."""
    if value is None:
        return None
    return versions.driver_branch(value, "plan option '%s' (variable %s)" % (name, variable(name)))


def branch_of_version(version):
    """Driver branch (int) of a driver or package version ('580.95.05', '1:580.95.05-1' -> 580); None when
    it is none (``core/versions.branch``)."""
    return versions.branch(version)


def validate_plan_options(options):
    """Validate and normalise build_plan() options; return a new dict with every option set.

    Raises ValueError naming the option, its role variable and the allowed values for an
    unknown option, a value of the wrong type or a choice outside the allowed ones.
    ``None`` for an option means its default.
    """
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise ValueError('plan options must be a dictionary, got %s' % type(options).__name__)
    unknown = sorted(str(k) for k in options if k not in OPTIONS)
    if unknown:
        raise ValueError('unknown plan option(s) %s; allowed options: %s'
                         % (', '.join(unknown), ', '.join(sorted(OPTIONS))))
    result = {}
    for name in sorted(OPTIONS):
        spec = OPTIONS[name]
        value = options.get(name)
        if value is None:
            result[name] = spec['default']
        elif spec['type'] == 'bool':
            result[name] = _to_bool(name, value)
        elif spec['type'] == 'branch':
            result[name] = parse_branch(value, name)
        elif spec['type'] == 'branches':
            if not isinstance(value, (list, tuple)):
                raise ValueError("plan option '%s' (%s) must be a list of driver branches, got %r"
                                 % (name, spec['variable'], value))
            result[name] = sorted(set(parse_branch(item, name) for item in value))
        elif spec['type'] in ('name', 'major'):
            text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
            pattern = _NAME if spec['type'] == 'name' else _MAJOR
            if not isinstance(text, str) or not pattern.fullmatch(text):
                raise ValueError("plan option '%s' (%s) must be %s, got %r"
                                 % (name, spec['variable'], 'a distribution name such as Debian'
                                    if spec['type'] == 'name' else 'a major version such as 12', value))
            result[name] = text
        elif spec['type'] == 'strings':
            if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
                raise ValueError("plan option '%s' (variable %s) must be a list of strings, got %r"
                                 % (name, spec['variable'], value))
            result[name] = list(value)
        elif spec['type'] == 'version':
            if value == '':
                result[name] = None
            else:
                versions.driver_version(value, "plan option '%s' (variable %s)" % (name, spec['variable']))
                result[name] = value
        else:
            if not isinstance(value, str) or value.strip().lower() not in spec['choices']:
                raise ValueError("plan option '%s' (variable %s) must be one of %s, got %r"
                                 % (name, spec['variable'], ', '.join(spec['choices']), value))
            result[name] = value.strip().lower()
    return result
