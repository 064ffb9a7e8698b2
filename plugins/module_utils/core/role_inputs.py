# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Typed role inputs: a role's public variables converted once, by its argument_specs.

ansible-core validates a role's variables against ``meta/argument_specs.yml`` but hands the
role the raw values: ``-e os_tuning_reboot=false`` stays the string ``"false"`` (truthy in
Jinja), and a string where a list is expected is iterated character by character. Every role
of the collection therefore reads its inputs through ``convert_inputs()`` (reached through
the ``gpuops.dlserver.__private.role_inputs`` action), which

- converts ``bool`` from the words Ansible accepts (true/false, yes/no, on/off, 1/0),
  ``int`` and ``float`` from their decimal text;
- rejects a string, a number or a mapping where a ``list`` is expected, and anything but a
  mapping where a ``dict`` is expected, naming the variable (never splitting a string);
- converts list elements and dict sub-options by their own ``elements``/``options`` spec;
- checks ``choices`` after conversion;
- allows ``null`` only where the default is ``null`` or the type is ``raw``.

Pure functions, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

TRUE_WORDS = ('true', 'yes', 'on', '1', 'y', 't')
FALSE_WORDS = ('false', 'no', 'off', '0', 'n', 'f')
_INT_RE = re.compile(r'^[+-]?[0-9]+\Z')
_FLOAT_RE = re.compile(r'^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\Z')
SCALAR_TYPES = ('str', 'path', 'bool', 'int', 'float', 'raw')
KNOWN_TYPES = SCALAR_TYPES + ('list', 'dict')


class InputError(ValueError):
    """One or more inputs do not have the declared type; ``problems`` lists each."""

    def __init__(self, problems):
        self.problems = list(problems)
        super(InputError, self).__init__('; '.join(self.problems))


def _shape(value):
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'a boolean (%s)' % str(value).lower()
    if isinstance(value, (int, float)):
        return 'a number (%r)' % (value,)
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + '...'
        return 'a string (%r)' % shown
    if isinstance(value, dict):
        return 'a mapping'
    if isinstance(value, (list, tuple)):
        return 'a list'
    return 'a %s' % type(value).__name__


def to_bool(name, value):
    """True/False from a boolean, 0/1 or one of Ansible's boolean words."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE_WORDS:
        return True
    if isinstance(value, str) and value.strip().lower() in FALSE_WORDS:
        return False
    raise InputError(['%s must be a boolean (true or false), got %s' % (name, _shape(value))])


def to_int(name, value):
    """An int from an int or its decimal text; floats with a fraction and booleans are refused."""
    if isinstance(value, bool):
        raise InputError(['%s must be an integer, got %s' % (name, _shape(value))])
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_RE.match(value.strip()):
        return int(value.strip())
    raise InputError(['%s must be an integer, got %s' % (name, _shape(value))])


def to_float(name, value):
    if isinstance(value, bool):
        raise InputError(['%s must be a number, got %s' % (name, _shape(value))])
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _FLOAT_RE.match(value.strip()):
        return float(value.strip())
    raise InputError(['%s must be a number, got %s' % (name, _shape(value))])


def to_str(name, value):
    """Text from text or a number (a YAML 580 for a branch); a boolean is refused (quote it)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        raise InputError(['%s must be a string, got %s: quote the value in YAML (e.g. "yes")'
                          % (name, _shape(value))])
    if isinstance(value, (int, float)):
        return str(value)
    raise InputError(['%s must be a string, got %s' % (name, _shape(value))])


def _nullable(spec):
    return spec.get('type', 'str') == 'raw' or ('default' in spec and spec['default'] is None) \
        or (not spec.get('required') and 'default' not in spec)


def convert_value(name, spec, value):
    """Convert ``value`` of the variable ``name`` by its argument spec; InputError on a wrong shape."""
    kind = spec.get('type', 'str')
    if kind not in KNOWN_TYPES:
        raise InputError(['%s: the argument spec declares unknown type %r' % (name, kind)])
    if value is None:
        if _nullable(spec):
            return None
        expected = 'a list' if kind == 'list' else 'a mapping' if kind == 'dict' else 'a ' + kind
        raise InputError(['%s must not be null (expected %s)' % (name, expected)])
    if kind == 'raw':
        result = value
    elif kind == 'bool':
        result = to_bool(name, value)
    elif kind == 'int':
        result = to_int(name, value)
    elif kind == 'float':
        result = to_float(name, value)
    elif kind in ('str', 'path'):
        result = to_str(name, value)
    elif kind == 'list':
        result = _convert_list(name, spec, value)
    else:
        result = _convert_dict(name, spec, value)
    choices = spec.get('choices')
    if choices is not None and kind != 'list' and result not in choices:
        raise InputError(['%s must be one of %s, got %s' % (name, ', '.join(str(c) for c in choices),
                                                            _shape(value))])
    if choices is not None and kind == 'list':
        bad = [item for item in result if item not in choices]
        if bad:
            raise InputError(['%s: %s not allowed; allowed values: %s'
                              % (name, ', '.join(str(b) for b in bad), ', '.join(str(c) for c in choices))])
    return result


def _convert_list(name, spec, value):
    if not isinstance(value, (list, tuple)):
        hint = ''
        if isinstance(value, str):
            hint = ': give a YAML list, e.g. [%s], or -e \'{"%s": [...]}\' as JSON' % (
                value if len(value) <= 40 else value[:37] + '...', name)
        raise InputError(['%s must be a list, got %s%s' % (name, _shape(value), hint)])
    elements = spec.get('elements')
    if not elements:
        return list(value)
    element_spec = {'type': elements}
    if elements == 'dict' and spec.get('options'):
        element_spec['options'] = spec['options']
    problems, result = [], []
    for index, item in enumerate(value):
        try:
            result.append(convert_value('%s[%d]' % (name, index), dict(element_spec, default=''), item))
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return result


def _convert_dict(name, spec, value):
    if not isinstance(value, dict):
        raise InputError(['%s must be a mapping, got %s' % (name, _shape(value))])
    options = spec.get('options')
    if not options:
        return dict(value)
    unknown = sorted(str(k) for k in value if k not in options)
    problems = []
    if unknown:
        problems.append('%s: unknown key(s) %s; allowed keys: %s'
                        % (name, ', '.join(unknown), ', '.join(sorted(options))))
    result = {}
    for key in sorted(options):
        sub = options[key]
        if key not in value:
            if sub.get('required'):
                problems.append('%s.%s is required' % (name, key))
                continue
            if 'default' in sub:
                result[key] = sub['default']
            elif not value:
                continue  # {} stays {}
            else:
                result[key] = None
            continue
        try:
            result[key] = convert_value('%s.%s' % (name, key), sub, value[key])
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return result


def convert_inputs(options, values, prefix):
    """Convert every variable the spec ``options`` declares.

    ``values`` maps variable names to what the play gives (missing names take the spec's
    default). Returns ``{short_name: converted}`` where ``short_name`` is the variable name
    without ``prefix`` (``os_tuning_reboot`` -> ``reboot``). Raises InputError listing every
    variable with a wrong shape.
    """
    problems, result = [], {}
    for name in sorted(options):
        spec = options[name] or {}
        short = name[len(prefix):] if prefix and name.startswith(prefix) else name
        if name in values:
            value = values[name]
        elif spec.get('required'):
            problems.append('%s is required' % name)
            continue
        else:
            value = spec.get('default')
        try:
            result[short] = convert_value(name, spec, value)
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return result
