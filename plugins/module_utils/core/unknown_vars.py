# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Variables with a role's prefix that the role does not declare: a mistyped name is named, with
the closest declared one, instead of being ignored.

- :func:`role_of`: the role whose prefix (``<role>_``) a variable carries; the longest prefix wins,
  so one role's prefix never swallows another's (``nvidia_driver_`` vs ``nvidia_container_toolkit_``).
- :func:`unknown_variables`: the names a role's argument spec does not declare and the collection
  does not publish itself (``<role>_status``, :data:`OUTPUTS`), each with the closest declared name.
- :func:`verdict`: what the mode (``gpuops_unknown_variables``: ``warn``, ``error``, ``ignore``) makes
  of them.

Names outside every role's prefix (``gpuops_*``, other collections' variables) are never reported;
names with a role's prefix may belong to another collection too (prometheus.prometheus uses
``prometheus_`` and ``node_exporter_``): that is why the default is a warning.

Pure functions, standard library only, Python 3.8+. Tested from
``tests/unit/plugins/module_utils/data/unknown_vars_cases.yml``; run by the action
``gpuops.dlserver.host_plan`` on every host before any change.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib

MODES = ('warn', 'error', 'ignore')
# Facts the roles publish under their prefix (besides <role>_status): not inputs, not unknown.
OUTPUTS = {'gpu_validate': ('gpu_validate_report',)}


def check_mode(value):
    """``gpuops_unknown_variables`` as one of MODES; ValueError naming it for anything else."""
    if isinstance(value, str) and value in MODES:
        return value
    raise ValueError('gpuops_unknown_variables must be one of %s, got %r' % (', '.join(MODES), value))


def role_of(name, roles):
    """The role of ``roles`` whose prefix ``name`` carries (the longest), or None."""
    found = [r for r in roles if name.startswith(r + '_') and len(name) > len(r) + 1]
    return max(found, key=len) if found else None


def unknown_variables(names, declared):
    """The variables of ``names`` that carry a role's prefix and that role does not declare.

    ``declared``: {role: [the names its argument spec declares]}. Returns a list, sorted by name, of
    {'name', 'role', 'closest' (the declared name of the role closest to it, by difflib, or None),
    'message'}.
    """
    if not isinstance(declared, dict):
        raise ValueError('declared must map each role to its declared names, not %r' % (declared,))
    found = []
    for name in sorted(set(str(n) for n in names)):
        role = role_of(name, declared)
        if role is None or name in declared[role]:
            continue
        if name == '%s_status' % role or name in OUTPUTS.get(role, ()):
            continue
        # compared without the prefix, which every candidate shares
        cut = len(role) + 1
        close = difflib.get_close_matches(name[cut:], sorted(n[cut:] for n in declared[role]), n=1, cutoff=0.6)
        closest = (name[:cut] + close[0]) if close else None
        found.append({'name': name, 'role': role, 'closest': closest,
                      'message': '%s is not a variable of the role %s (its argument spec does not declare it)%s'
                                 % (name, role, ('; did you mean %s?' % closest) if closest else
                                    '; no declared name is close (the role\'s README lists them)')})
    return found


def verdict(mode, found):
    """{'warnings': [str], 'problems': [str]} for the unknown variables ``found`` under ``mode``."""
    mode = check_mode(mode)
    lines = [f['message'] for f in found]
    if mode == 'ignore' or not lines:
        return {'warnings': [], 'problems': []}
    if mode == 'error':
        return {'warnings': [], 'problems': lines + ['gpuops_unknown_variables is error: fix or remove them']}
    return {'warnings': ['gpuops.dlserver: %s (gpuops_unknown_variables: error fails the run on it, ignore hides '
                         'it)' % line for line in lines],
            'problems': []}
