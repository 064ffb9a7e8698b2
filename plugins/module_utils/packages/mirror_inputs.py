# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mirror playbook's variables by what they mean (issue 37), checked before anything is fetched.

playbooks/mirror.yml runs without host_plan: its first task, the ``mirror_index`` module's validate
step (``validate_only: true``), runs ``problems('gpuops', inputs)`` on these variables, each problem
naming the variable (and the item of a list) with the value's problem and what would be accepted.
The checks are the collection's own classes, not a second copy:

- ``gpuops_mirror_dir`` (kind ``mirror_dir``): a directory of its own, value_kinds.path_problem's
  ``prefix`` (absolute, no ``..``, neither ``/`` nor a system directory such as ``/srv`` or ``/var``
  itself; ``/srv/gpuops-mirror`` is fine);
- ``gpuops_mirror_artifacts`` (kind ``mirror_artifacts``): each entry's ``path`` relative without
  ``.``/``..``/empty segments so it stays under the mirror (mirror.check_relative_path), one line;
  its ``url`` by what fetches it (url_trust.scheme_problem as a binary download: https://, http://
  or file://, no scheme refused); its ``checksum`` a sha256 (url_trust.sha256_problem: ``md5:``,
  ``sha1:``, ``sha512:`` and digests of their length are named as such). A plain-HTTP URL is pinned
  by the entry's sha256, which get_url verifies before the file lands in the mirror; no path twice;
- ``gpuops_mirror_url`` (kind ``mirror_url``): url_trust's row of the same name (the base URL of the
  mirror: https://, http:// or file://; empty means unset);
- ``gpuops_mirror_host`` (kind ``inventory_name``): one plain inventory host name (the play's host
  pattern): no pattern (``*``, ``,``, ``:``, ``&``, ``!``, ``~``), not ``all`` or ``ungrouped``.

``PLAYBOOK_VARIABLES``: those no argument spec declares (gpuops_mirror_url is common's, entry
point gpu, and host_plan checks it on every host too). ``CARELESS`` lists the careless values the
bad-input suite gives each kind (tests/unit/roles/bad_input_cases.py SEMANTIC).

Pure, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.value_kinds import path_problem
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.value_numbers import shown as _shown
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import url_trust
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.mirror import check_relative_path

KINDS = {
    'mirror_dir': 'the directory the mirror is filled in',
    'mirror_artifacts': 'the files fetched into the mirror, [{path, url, checksum}]',
    'mirror_url': 'the base URL the mirror is served at',
    'inventory_name': 'one host of the inventory',
}

VARIABLES = {
    'gpuops_mirror_dir': ('mirror_dir', {}),
    'gpuops_mirror_artifacts': ('mirror_artifacts', {}),
    'gpuops_mirror_url': ('mirror_url', {}),
    'gpuops_mirror_host': ('inventory_name', {}),
}

# The playbook's variables no argument spec declares (the careless-value suite replays them as gpuops's)
PLAYBOOK_VARIABLES = ('gpuops_mirror_dir', 'gpuops_mirror_artifacts', 'gpuops_mirror_host')

# What fetches an artifact: ansible.builtin.get_url, as a binary download with a pinned sha256
ARTIFACT_URL = {'kind': 'binary'}
_CONTROL = re.compile(r'[\x00-\x1f\x7f\x85\u2028\u2029]')
_HOST_NAME = re.compile(r'[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252}[A-Za-z0-9_])?')
_EVERY_HOST = ('all', 'ungrouped')


def dir_problem(name, value):
    """The mirror directory: a directory of its own (value_kinds' ``prefix``)."""
    if value in (None, ''):
        return None  # the playbook's default (a checkout's .cache/mirror) applies
    return path_problem(name, value, 'prefix')


def host_problem(name, value):
    """The host that fills the mirror: one plain inventory name, not a pattern."""
    if value in (None, ''):
        return None  # localhost
    if not isinstance(value, str) or _CONTROL.search(value):
        return '%s must be one inventory host name on one line, got %s' % (name, _shown(value))
    if value in _EVERY_HOST:
        return ('%s: %s names every host of the inventory, and every one of them would fill the mirror; give the '
                'one host that fills it, e.g. localhost' % (name, _shown(value)))
    if not _HOST_NAME.fullmatch(value):
        return ('%s: %s is a host pattern, not one inventory name (letters, digits, _ . -; no * , : & ! ~ or '
                'blanks); give the one host that fills the mirror, e.g. localhost' % (name, _shown(value)))
    return None


def _entry_problems(where, entry):
    found = []
    path = entry.get('path')
    ok, reason = check_relative_path(path)
    if ok and _CONTROL.search(path):
        ok, reason = False, 'path %s must be one line without control characters' % _shown(path)
    if not ok:
        found.append('%s.path: %s; give a path relative to the mirror directory, e.g. files/vendor/x.run' % (
            where, reason))
    url = entry.get('url')
    if url in (None, ''):
        found.append('%s.url is empty: give where the file is fetched from (https://, http:// or file://)' % where)
    else:
        found.extend(p for p in [url_trust.scheme_problem(where + '.url', url, ARTIFACT_URL)] if p)
    checksum = entry.get('checksum')
    if checksum in (None, ''):
        found.append('%s.checksum is empty: give sha256:<64 hex digits>, which get_url verifies before the file '
                     'lands in the mirror' % where)
    else:
        found.extend(p for p in [url_trust.sha256_problem(where + '.checksum', checksum, 'prefixed')] if p)
    return found


def artifacts_problems(name, value):
    """Each entry of the artifact list by what it means, naming the entry (its index and path)."""
    if value in (None, ''):
        return []
    if not isinstance(value, list):
        return ['%s must be a list of {path, url, checksum}, got %s' % (name, type(value).__name__)]
    found, seen = [], {}
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            found.append('%s[%d] must be a mapping with path, url and checksum, got %s' % (name, index, _shown(entry)))
            continue
        path = entry.get('path')
        label = '%s[%d]' % (name, index)
        if isinstance(path, str) and check_relative_path(path)[0] and not _CONTROL.search(path):
            label = '%s[%d] (%s)' % (name, index, path)
            if path in seen:
                found.append('%s: path listed twice (also entry %d): one would overwrite the other' % (
                    label, seen[path]))
            seen.setdefault(path, index)
        found.extend(_entry_problems(label, entry))
    return found


def variable_problems(name, value, context=None):
    """The problems of variable ``name`` (a row of VARIABLES) with ``value``."""
    kind = VARIABLES[name][0]
    if kind == 'mirror_dir':
        return [p for p in [dir_problem(name, value)] if p]
    if kind == 'mirror_artifacts':
        return artifacts_problems(name, value)
    if kind == 'mirror_url':
        return url_trust.variable_problems(name, value, {}, lambda n: None,
                                           (context or {}).get('insecure_hosts') or ())
    if kind == 'inventory_name':
        return [p for p in [host_problem(name, value)] if p]
    raise ValueError('mirror_inputs: no check for kind %s' % kind)


def problems(role, inputs, context=None):
    """Every problem of the mirror variables among ``inputs`` (full names; ``role`` is unused: they
    are the playbook's, gpuops_*). ``context``: ``insecure_hosts`` where known."""
    del role
    inputs = inputs or {}
    found = []
    for name in sorted(inputs):
        if name in VARIABLES:
            found.extend(variable_problems(name, inputs[name], context))
    return found


_SUM = 'sha256:' + '0' * 64
CLASS_OF_KIND = {
    'mirror_dir': 'paths by what they may be',
    'mirror_artifacts': 'urls by what they fetch',
    'mirror_url': 'urls by what they fetch',
    'inventory_name': 'lists by their meaning',
}
# kind -> [(value, 'refused' | 'accepted', reason)]: what the careless-value suite gives each variable
CARELESS = {
    'mirror_dir': [
        ('/', 'refused', 'the root directory as the mirror'),
        ('/srv', 'refused', 'a system directory as the mirror'),
        ('srv/gpuops-mirror', 'refused', 'a relative path used as an absolute one'),
        ('/srv/gpuops-mirror/../../etc', 'refused', 'a .. segment leaves the directory'),
        ('/srv/gpuops-mirror\n', 'refused', 'a newline'),
        ('/srv/gpuops-mirror', 'accepted', 'a directory of its own'),
    ],
    'mirror_artifacts': [
        ([{'path': '../etc/cron.d/x', 'url': 'https://vendor.example/x', 'checksum': _SUM}], 'refused',
         'a path that leaves the mirror'),
        ([{'path': '/etc/cron.d/x', 'url': 'https://vendor.example/x', 'checksum': _SUM}], 'refused',
         'an absolute path where a path inside the mirror is needed'),
        ([{'path': 'files/x\nSHA256SUMS', 'url': 'https://vendor.example/x', 'checksum': _SUM}], 'refused',
         'a newline in the path'),
        ([{'path': 'files/x', 'url': 'ftp://vendor.example/x', 'checksum': _SUM}], 'refused',
         'a scheme the fetching tool is not given (ftp://)'),
        ([{'path': 'files/x', 'url': 'vendor.example/x', 'checksum': _SUM}], 'refused', 'a URL with no scheme'),
        ([{'path': 'files/x', 'url': 'https://vendor.example/x', 'checksum': 'md5:' + '0' * 32}], 'refused',
         'a checksum of the wrong algorithm'),
        ([{'path': 'files/x', 'url': 'https://vendor.example/x', 'checksum': '0' * 64}], 'refused',
         'a sha256 without its sha256: prefix (get_url needs the algorithm)'),
        ([{'path': 'files/x', 'url': 'https://vendor.example/x', 'checksum': _SUM},
          {'path': 'files/x', 'url': 'https://vendor.example/y', 'checksum': _SUM}], 'refused', 'one path twice'),
        ([{'path': 'files/x', 'url': 'http://vendor.example/x', 'checksum': _SUM}], 'accepted',
         'plain HTTP pinned by the entry\'s sha256, verified before the file lands'),
    ],
    'mirror_url': [
        ('ftp://mirror.example/gpuops', 'refused', 'a scheme the roles\' fetching tools are not given'),
        ('mirror.example/gpuops', 'refused', 'a URL with no scheme'),
        ('http://mirror.example/gpuops', 'accepted', 'every download from it is pinned by its own checksum or key'),
    ],
    'inventory_name': [
        ('all', 'refused', 'every host would fill the mirror'),
        ('mirror*', 'refused', 'a host pattern, not one host'),
        ('mirror-01,mirror-02', 'refused', 'two hosts'),
        ('mirror-01\n', 'refused', 'a newline'),
        ('mirror-01.example.org', 'accepted', 'one inventory host'),
    ],
}
