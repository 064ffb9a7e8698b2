# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lists by their meaning (issue 37): an item given twice - the same item, the same collector, flag,
kernel parameter, rules file name or DCGM field, or two mappings with the same key - is refused,
naming the variable, both places and what would be accepted. value_posture.py classifies the
variables and calls these checks.

Pure, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.value_numbers import shown as _shown

# Kernel parameters the kernel takes more than once (each occurrence counts)
REPEATABLE_CMDLINE = ('console', 'hugepagesz', 'hugepages', 'earlycon', 'netconsole', 'module_blacklist',
                      'modprobe.blacklist', 'isolcpus', 'systemd.setenv', 'rd.driver.blacklist')


def _identity(item, how):
    """What identifies ``item`` of a list (None: nothing to compare)."""
    if how == 'counter':
        if isinstance(item, dict):
            return item.get('name') if isinstance(item.get('name'), str) else None
        return item.strip(' ') if isinstance(item, str) else None
    if how == 'collector':
        if isinstance(item, dict) and len(item) == 1:
            return str(list(item)[0])
        return item if isinstance(item, str) else None
    if not isinstance(item, str):
        return None
    if how == 'flag':
        return item.split('=', 1)[0] if item.startswith('-') else item
    if how == 'cmdline':
        name = item.split('=', 1)[0]
        return item if name in REPEATABLE_CMDLINE else name
    if how == 'basename':
        return item.rstrip('/').rsplit('/', 1)[-1]
    return item


def _counter_form(item):
    return dict(item) if isinstance(item, dict) else {'name': item.strip(' ') if isinstance(item, str) else item}


def unique_problems(name, value, params, full):
    """Items of the list ``value`` (and of the lists named in params ``with``) listed twice."""
    how = params.get('identity', 'item')
    what = params.get('what', 'item')
    found = []
    seen = {}
    lists = [(name, value)] + [(other, full(other)) for other in params.get('with') or []]
    for variable, items in lists:
        if not isinstance(items, list):
            continue
        for item in items:
            key = _identity(item, how)
            if key is None:
                continue
            if key in seen:
                first_var, first = seen[key]
                if first_var == variable != name:
                    continue  # within another list: that list's own row says it
                if how == 'counter' and first_var != variable and _counter_form(first) == _counter_form(item):
                    continue  # the same field in two lists, given alike: merged once (documented)
                if how == 'counter' and first_var != variable:
                    found.append('%s: DCGM field %s is given differently in %s (%s) and %s (%s): one of them would be '
                                 'dropped; give it once'
                                 % (name, key, first_var, _shown(first), variable, _shown(item)))
                elif first == item:
                    found.append('%s: %s %s is listed twice%s: it would be configured twice; list each %s once'
                                 % (name, what, _shown(key), '' if first_var == variable else
                                    ' (in %s and %s)' % (first_var, variable), what))
                else:
                    where = '' if first_var == variable else ' in %s' % variable
                    found.append('%s: %s %s is given twice, differently (%s and %s%s): only one can take effect; '
                                 'give each %s once' % (name, what, _shown(key), _shown(first), _shown(item), where, what))
            else:
                seen[key] = (variable, item)
    return found


def unique_by_problems(name, value, params, full):
    """Mappings of ``value`` (and of params ``with``) with the same ``keys``."""
    keys = params['keys']
    found, seen = [], {}
    for variable, items in [(name, value)] + [(other, full(other)) for other in params.get('with') or []]:
        for index, item in enumerate(items if isinstance(items, list) else []):
            if not isinstance(item, dict) or any(item.get(k) in (None, '') for k in keys):
                continue
            key = tuple(str(item.get(k)) for k in keys)
            shown = ', '.join('%s=%s' % (k, v) for k, v in zip(keys, key))
            if key in seen:
                where = seen[key]
                if where.startswith(variable + '[') and variable != name:
                    continue  # within another list: that list's own row says it
                hint = '' if where.startswith(variable + '[') else \
                    ' (change the entry in %s rather than repeat it)' % where.split('[', 1)[0]
                found.append('%s: two entries for %s (%s and %s[%d]): one would be configured twice or hide the '
                             'other; keep one%s' % (name, shown, where, variable, index, hint))
            else:
                seen[key] = '%s[%d]' % (variable, index)
    return found
