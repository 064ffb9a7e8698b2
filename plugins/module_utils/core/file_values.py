# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Values that reach a file the kernel or a tool reads (issue 37): sysctl values by what the key
takes, PAM and systemd limits by their domains, environment defaults by what the reader of a KEY=VALUE
file accepts. Each check returns the problems naming the variable.

Pure, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.value_numbers import is_int as _is_int, shown as _shown


# ---------------------------------------------------------------------------------------------
# Values that reach a file the kernel or a tool reads
# ---------------------------------------------------------------------------------------------
# sysctl keys whose values are words (documented in the kernel's admin-guide/sysctl), with their grammar.
SYSCTL_WORDS = {
    'net.ipv4.tcp_congestion_control': (re.compile(r'[a-z0-9_]{1,15}'), 'a congestion control name such as bbr'),
    'net.core.default_qdisc': (re.compile(r'[a-z_]{1,15}'), 'a queueing discipline such as fq or fq_codel'),
    'kernel.core_pattern': (re.compile(r'/?[A-Za-z0-9_%./-]{1,127}'),
                            'a file name pattern such as core.%e.%p (a |program is not accepted here)'),
    'net.ipv4.ip_local_reserved_ports': (re.compile(r'[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*'),
                                         'ports and ranges such as 8000-8100,9100'),
}
# key -> (lowest, highest) the kernel accepts or that makes sense for it.
SYSCTL_DOMAINS = {
    'vm.swappiness': (0, 200),
    'kernel.numa_balancing': (0, 3),
    'vm.overcommit_memory': (0, 2),
    'vm.overcommit_ratio': (0, 100),
    'vm.dirty_ratio': (0, 100),
    'vm.dirty_background_ratio': (0, 100),
    'vm.zone_reclaim_mode': (0, 7),
    'vm.max_map_count': (65530, 2147483647),
    'fs.nr_open': (1024, 1073741816),
    'fs.file-max': (8192, 9223372036854775807),
    'kernel.pid_max': (301, 4194304),
    'kernel.perf_event_paranoid': (-1, 4),
    'net.core.somaxconn': (128, 2147483647),
    'net.ipv4.ip_forward': (0, 1),
    'kernel.panic': (-1, 2147483647),
    'kernel.sched_rt_runtime_us': (-1, 2147483647),
}
_NUMBERS = re.compile(r'-?[0-9]+([ \t]+-?[0-9]+)*')


def sysctl_value_problem(name, key, value):
    """The problem of one sysctl ``key = value`` of variable ``name`` (a layer), or None."""
    if value is None:
        return None
    where = '%s[%s]' % (name, key)
    if isinstance(value, bool):
        return ('%s: %r is a YAML boolean (written True/False, which the kernel refuses); quote a number, e.g. "1"'
                % (where, value))
    if isinstance(value, float):
        return '%s: %r is not a whole number; sysctl values are integers or the words of the key' % (where, value)
    text = str(value).strip() if isinstance(value, str) else str(value)
    words = SYSCTL_WORDS.get(key)
    if words and not _NUMBERS.fullmatch(text):
        if not words[0].fullmatch(text):
            return '%s: %s is not what the kernel reads for %s: %s' % (where, _shown(value), key, words[1])
        return None
    if not _NUMBERS.fullmatch(text):
        return ('%s: %s is not numbers and spaces, which is what the kernel reads for %s (words are accepted only '
                'for keys documented with words: %s)' % (where, _shown(value), key, ', '.join(sorted(SYSCTL_WORDS))))
    numbers = [int(n) for n in text.split()]
    low, high = SYSCTL_DOMAINS.get(key, (None, 9223372036854775807))
    for number in numbers:
        if low is None and number < 0:
            return ('%s: %d is negative; the kernel takes no negative value for %s (a value such as -1 means '
                    '"unlimited" only for the keys documented so)' % (where, number, key))
        if (low is not None and number < low) or number > high:
            return '%s: %d is outside what %s takes (%s to %d)' % (where, number, key, low if low is not None else 0,
                                                                   high)
    return None


def sysctl_problems(name, layer):
    if not isinstance(layer, dict):
        return []
    return [p for p in (sysctl_value_problem(name, k, v) for k, v in sorted(layer.items(), key=lambda kv: str(kv[0])))
            if p]


# pam_limits(8) items -> (lowest, highest) of a number, and whether unlimited/infinity/-1 is accepted.
_KB = 2 ** 53
PAM_DOMAINS = {
    'core': (0, _KB, True), 'data': (1024, _KB, True), 'fsize': (0, _KB, True), 'memlock': (0, _KB, True),
    'rss': (0, _KB, True), 'stack': (256, _KB, True), 'as': (65536, _KB, True), 'cpu': (1, _KB, True),
    'locks': (0, _KB, True), 'sigpending': (1, _KB, True), 'msgqueue': (0, _KB, True),
    # the kernel refuses RLIM_INFINITY for nofile (logins fail); fs.nr_open's ceiling
    'nofile': (64, 1073741816, False),
    'nproc': (1, 4194304, True), 'maxlogins': (1, 100000, True), 'maxsyslogins': (1, 100000, True),
    'priority': (-20, 19, False), 'nice': (-20, 19, False), 'rtprio': (0, 99, True), 'nonewprivs': (0, 1, False),
}


def pam_limits_problems(name, entries):
    found = []
    seen = {}
    for index, entry in enumerate(entries or []):
        if not isinstance(entry, dict):
            continue
        item, value, where = entry.get('item'), entry.get('value'), '%s[%d]' % (name, index)
        low, high, unlimited = PAM_DOMAINS.get(item, (0, _KB, True))
        if isinstance(value, str) and re.fullmatch(r'-?[0-9]+', value):
            value = int(value)
        if value in ('unlimited', 'infinity') or value == -1:
            if not unlimited:
                found.append('%s: %s %s is not accepted by the kernel for %s (logins would fail); give a number from '
                             '%d to %d' % (where, item, _shown(entry.get('value')), item, low, high))
                continue
            number = float('inf')
        elif _is_int(value):
            if not low <= value <= high:
                found.append('%s: %s %d is outside %s\'s domain (%d to %d%s)' % (
                    where, item, value, item, low, high, ', unlimited or -1' if unlimited else ''))
                continue
            number = value
        else:
            continue  # its form: os_tuning_inputs.limits_problems
        for kind in (('soft', 'hard') if entry.get('type') == '-' else (entry.get('type'),)):
            seen.setdefault((entry.get('domain'), item), {})[kind] = (number, where)
    for (domain, item), kinds in sorted(seen.items(), key=str):
        if 'soft' in kinds and 'hard' in kinds and kinds['soft'][0] > kinds['hard'][0]:
            found.append('%s: the soft %s of %s (%s) is above its hard limit (%s, %s); pam_limits refuses a soft '
                         'limit above the hard one' % (kinds['soft'][1], item, domain, kinds['soft'][0],
                                                       kinds['hard'][0], kinds['hard'][1]))
    return found


_SIZE = re.compile(r'([0-9]+)([KMGTPE]?)')
_SIZE_FACTOR = dict(zip('KMGTPE', (2 ** 10, 2 ** 20, 2 ** 30, 2 ** 40, 2 ** 50, 2 ** 60)))
SYSTEMD_NOFILE_MAX = 1073741816


def _systemd_limit_number(text):
    if text == 'infinity':
        return float('inf')
    match = _SIZE.fullmatch(text)
    if not match:
        return None
    return int(match.group(1)) * _SIZE_FACTOR.get(match.group(2), 1)


def systemd_limits_problems(name, limits):
    found = []
    for key, value in sorted((limits or {}).items(), key=lambda kv: str(kv[0])):
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            continue
        parts = str(value).split(':')
        numbers = [_systemd_limit_number(p) for p in parts]
        if None in numbers or len(parts) > 2:
            continue  # its form: os_tuning_inputs.systemd_limits_problems
        where = '%s.%s' % (name, key)
        if len(numbers) == 2 and numbers[0] > numbers[1]:
            found.append('%s: the soft limit %s is above the hard limit %s (soft:hard); systemd refuses it'
                         % (where, parts[0], parts[1]))
        elif key == 'DefaultLimitNOFILE' and any(n == 0 or n > SYSTEMD_NOFILE_MAX for n in numbers
                                                 if n != float('inf')):
            found.append('%s: %s is outside 1 to %d (the kernel\'s fs.nr_open ceiling); services would not start'
                         % (where, _shown(value), SYSTEMD_NOFILE_MAX))
        elif key in ('DefaultLimitNPROC', 'DefaultLimitSTACK', 'DefaultLimitAS', 'DefaultLimitDATA') and 0 in numbers:
            found.append('%s: 0 leaves services unable to start (no process, stack or memory); give a number above 0 '
                         'or infinity' % where)
    return found


# A value that systemd's EnvironmentFile= and gpu_validate's reader take as written (profile.d quotes it).
_ENV_VALUE = re.compile(r'[^\s"\'\\$`]+( [^\s"\'\\$`]+)*')


def env_problems(name, values):
    found = []
    for key, value in sorted((values or {}).items(), key=lambda kv: str(kv[0])):
        if value is None or isinstance(value, (dict, list)):
            continue  # null drops a default; a structure: node_env.env_default_problems
        where = '%s[%s]' % (name, key)
        if isinstance(value, bool):
            found.append('%s: %r is a YAML boolean, which would be written as %s; quote the word the program reads, '
                         'e.g. "1" or "true"' % (where, value, value))
        elif isinstance(value, str) and (value == '' or not _ENV_VALUE.fullmatch(value)):
            found.append('%s: %s is not read back as written: the KEY=VALUE file (systemd EnvironmentFile=, '
                         'gpu_validate) strips quotes, backslashes and blanks around the value and may expand $; give '
                         'a value without quotes, backslash, $ or backtick and without blanks around it'
                         % (where, _shown(value)))
    return found
