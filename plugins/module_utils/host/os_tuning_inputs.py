# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The os_tuning role's input checks: what its argument spec cannot say.

``problems()`` returns every problem of the converted inputs (``__os_tuning``), each naming the
variable and what to change, in the order the variables are documented; the module
``gpuops.dlserver.__private.os_tuning_host`` fails with them before any change. Every value that
reaches a file, a unit or the kernel command line is matched whole (``\\Z``, never ``$``).

Pure functions, standard library only (the module imports this on the target).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

SYSCTL_LAYERS = ('sysctl_defaults', 'sysctl_group', 'sysctl_overwrite')
SYSCTL_KEY_RE = re.compile(r'^[a-z0-9_]+(\.[A-Za-z0-9_/-]+)+\Z')
LIMIT_DOMAIN_RE = re.compile(r'^(\*|%|[%@]?[A-Za-z0-9_.$-]+|@?[0-9]*:[0-9]*)\Z')
LIMIT_VALUE_RE = re.compile(r'^(-?[0-9]+|unlimited|infinity)\Z')
SYSTEMD_LIMIT_KEY_RE = re.compile(r'^DefaultLimit[A-Z]+\Z')
SYSTEMD_LIMIT_VALUE_RE = re.compile(r'^([0-9]+[KMGTPE]?|infinity)(:([0-9]+[KMGTPE]?|infinity))?\Z')
# name[=value]: the name is what the kernel matches (letters, digits, _ . -).
CMDLINE_PARAM_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]*(=[A-Za-z0-9_.,:/+=@%-]*)?\Z')
PACKAGE_GLOB_RE = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.+*?-]*\Z')
PATH_RULES = (
    ('sysctl_file', re.compile(r'^/(etc|run|usr/lib)/sysctl\.d/[^/\s]+\.conf\Z'),
     'a *.conf file in /etc/sysctl.d (or /run/sysctl.d, /usr/lib/sysctl.d)'),
    ('limits_file', re.compile(r'^/etc/security/limits\.d/[^/\s]+\.conf\Z'), 'a *.conf file in /etc/security/limits.d'),
    ('systemd_limits_file', re.compile(r'^/etc/systemd/system\.conf\.d/[^/\s]+\.conf\Z'),
     'a *.conf file in /etc/systemd/system.conf.d'),
    ('status_file', re.compile(r'^/[^\s]*[^/\s]\Z'), 'an absolute file path'),
)
REBOOT_TIMEOUT_RANGE = (60, 86400)


def _var(name):
    return 'os_tuning_' + name


# ---------------------------------------------------------------------------------------
# Input problems (after role_inputs converted the types): each names the variable.
# ---------------------------------------------------------------------------------------
def sysctl_problems(inputs):
    problems = []
    for layer in SYSCTL_LAYERS:
        bad_keys, bad_values = [], []
        for key, value in sorted((inputs.get(layer) or {}).items(), key=lambda kv: str(kv[0])):
            if not SYSCTL_KEY_RE.match(str(key)):
                bad_keys.append(str(key))
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                bad_values.append(str(key))
            elif isinstance(value, str) and (not value.strip() or '\n' in value or '\r' in value):
                bad_values.append(str(key))
        if bad_keys:
            problems.append('%s: keys must be dotted sysctl names such as vm.swappiness (bad: %s)'
                            % (_var(layer), ', '.join(bad_keys)))
        if bad_values:
            problems.append('%s: values must be a number or a non-empty one-line string, or null to remove the key '
                            'an earlier layer set; quote boolean-looking values, e.g. "1" instead of true (bad: %s)'
                            % (_var(layer), ', '.join(bad_values)))
    return problems


def limits_problems(inputs):
    problems = []
    for name in ('limits', 'limits_extra'):
        for index, entry in enumerate(inputs.get(name) or []):
            domain, value = str(entry.get('domain')), entry.get('value')
            if not LIMIT_DOMAIN_RE.match(domain):
                problems.append('%s[%d].domain must be a user, @group, %%group, uid/gid range or * without spaces, '
                                'got %r' % (_var(name), index, domain))
            if isinstance(value, bool) or not LIMIT_VALUE_RE.match(str(value)):
                problems.append('%s[%d].value must be an integer, -1, unlimited or infinity, got %r'
                                % (_var(name), index, value))
    return problems


def systemd_limits_problems(inputs):
    problems = []
    for key, value in sorted((inputs.get('systemd_limits') or {}).items(), key=lambda kv: str(kv[0])):
        if not SYSTEMD_LIMIT_KEY_RE.match(str(key)):
            problems.append('os_tuning_systemd_limits: %s is not a DefaultLimit* setting of the systemd manager' % key)
        if isinstance(value, bool) or not SYSTEMD_LIMIT_VALUE_RE.match(str(value)):
            problems.append('os_tuning_systemd_limits.%s must be a number, a size (64M), infinity or soft:hard, got %r'
                            % (key, value))
    return problems


def cmdline_problems(inputs):
    bad = [p for p in inputs.get('kernel_cmdline') or [] if not CMDLINE_PARAM_RE.match(str(p))]
    if not bad:
        return []
    return ['os_tuning_kernel_cmdline: one parameter per entry, without spaces, quotes, $ or backslashes '
            '(bad: %s)' % ', '.join(repr(p) for p in bad)]


def blacklist_problems(inputs):
    bad = [g for g in inputs.get('unattended_blacklist') or [] if not PACKAGE_GLOB_RE.match(str(g))]
    if not bad:
        return []
    return ['os_tuning_unattended_blacklist: entries are package name globs such as nvidia-* or linux-image-* '
            '(letters, digits, _ . + - and the wildcards * ?); bad: %s' % ', '.join(repr(g) for g in bad)]


def path_problems(inputs):
    problems = []
    for name, rule, what in PATH_RULES:
        if not rule.match(str(inputs.get(name))):
            problems.append('%s must be %s, got %r' % (_var(name), what, inputs.get(name)))
    low, high = REBOOT_TIMEOUT_RANGE
    timeout = inputs.get('reboot_timeout')
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not low <= timeout <= high:
        problems.append('os_tuning_reboot_timeout must be between %d and %d seconds, got %r' % (low, high, timeout))
    return problems


def problems(inputs):
    """Every problem of the converted inputs, in the order the variables are documented."""
    return (sysctl_problems(inputs) + limits_problems(inputs) + systemd_limits_problems(inputs)
            + cmdline_problems(inputs) + blacklist_problems(inputs) + path_problems(inputs))
