# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of python_stack's role-wide variables that reach files, shell lines, URLs and pip's or
conda's command lines (issue 19), each returning None or a message naming the variable.

Every pattern is a full match (``re.fullmatch``), so a trailing newline is refused; paths are
absolute and normal (``core/systemd.owned_path_error``) and at most ``MAX_PATH`` characters.
``option_input_problems(inputs)`` runs them all; ``python_stack.option_problems`` calls it, so the
preflight (``python_stack_host`` action=plan, ``stack_host.do_plan``) refuses before any change.

Pure functions, standard library only, Python 3.8+ (imported by the module python_stack_host).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import control_error, owned_path_error
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.versions import dotted, numeric_or_none

MAX_PATH = 1024
MAX_URL = 2048
_PYTHON = re.compile(r'3\.[0-9]{1,2}')
# A URL with a scheme, no blank, no control character, no quote or backslash.
_URL = re.compile(r'(https?|file)://[^\s\x00-\x1f\x7f\u0085\u2028\u2029"\'\\]+')
_SHA256 = re.compile(r'[0-9a-fA-F]{64}')
# A conda channel name (conda-forge, nvidia, pytorch/label/nightly) - or a URL, checked as one.
_CHANNEL = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.+-]*(/[A-Za-z0-9_][A-Za-z0-9_.+-]*)*')
# A key of .condarc (channel_alias, custom_channels, default_channels ...).
_CONDARC_KEY = re.compile(r'[a-z][a-z0-9_]{0,63}')
MAX_KEEP_BUILDS = 100

PATHS = ('cache_dir', 'env_file', 'profile_file', 'kernel_dir', 'status_file')
# Paths whose empty value is documented: no cache.
EMPTY_MEANS_NONE = ('cache_dir',)


def path_error(value, variable):
    """None, or why ``value`` is not an absolute, normal path the role may write (naming ``variable``)."""
    if isinstance(value, str) and len(value) > MAX_PATH:
        return '%s: a path of %d characters is longer than %d' % (variable, len(value), MAX_PATH)
    return owned_path_error(value, variable)


def url_error(value, variable):
    """None, or why ``value`` is not an http(s):// or file:// URL on one line (naming ``variable``)."""
    if not isinstance(value, str) or len(value) > MAX_URL or not _URL.fullmatch(value):
        return ('%s must be an http(s):// or file:// URL without blanks, quotes or control characters (at most %d '
                'characters), not %r' % (variable, MAX_URL, value if not isinstance(value, str) else value[:80]))
    return None


def sha256_error(value, variable):
    """None, or why ``value`` is not a sha256 of exactly 64 hex digits."""
    if not isinstance(value, str) or not _SHA256.fullmatch(value):
        return '%s must be a sha256 of exactly 64 hex digits, not %r' % (variable, value)
    return None


def python_error(value, variable):
    """None, or why ``value`` is not a Python version such as 3.11."""
    if not isinstance(value, str) or not _PYTHON.fullmatch(value):
        return '%s must be a 3.X Python version such as "3.11", not %r' % (variable, value)
    return None


def release_error(value, variable):
    """None, or why ``value`` is not a plain release number such as 0.13.9 (core/versions, nothing around it)."""
    numbers = numeric_or_none(value) if isinstance(value, str) else None
    if not numbers or dotted(numbers) != value or len(numbers) > 4:
        return '%s must be a release number such as 0.13.9 (digits and dots only), not %r' % (variable, value)
    return None


def channel_error(value, variable):
    """None, or why ``value`` is neither a conda channel name nor a channel URL."""
    if isinstance(value, str) and '://' in value:
        return url_error(value, variable)
    if not isinstance(value, str) or len(value) > 255 or not _CHANNEL.fullmatch(value):
        return ('%s: %r is not a conda channel name (letters, digits, _ . + -, "/" between parts) or an '
                'http(s):// or file:// URL' % (variable, value))
    return None


def mirrors_error(value, variable):
    """None, or why ``value`` (extra keys of .condarc) is not condarc keys with one-line values."""
    if not isinstance(value, dict):
        return '%s must be a mapping of .condarc keys, not %r' % (variable, value)
    for key in sorted(value, key=str):
        if not isinstance(key, str) or not _CONDARC_KEY.fullmatch(key):
            return '%s: %r is not a .condarc key (lower-case letters, digits and _)' % (variable, key)
    return control_error(value, variable)


def keep_builds_error(value, variable):
    """None, or why ``value`` is not a number of builds from 0 to MAX_KEEP_BUILDS."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_KEEP_BUILDS:
        return '%s must be 0 or more (at most %d), not %r' % (variable, MAX_KEEP_BUILDS, value)
    return None


def option_input_problems(inputs):
    """Problems (each naming its variable) of the role-wide values that reach files, shell and URLs."""
    errors = []
    for key in PATHS:
        value = inputs.get(key)
        if key in EMPTY_MEANS_NONE and value == '':
            continue
        errors.append(path_error(value, 'python_stack_' + key))
    errors.append(python_error(inputs.get('python'), 'python_stack_python'))
    if inputs.get('installer') == 'uv':
        errors.append(release_error(inputs.get('uv_version'), 'python_stack_uv_version'))
    errors.append(url_error(inputs.get('conda_installer_url'), 'python_stack_conda_installer_url'))
    channels = inputs.get('conda_channels') or []
    errors.extend(channel_error(c, 'python_stack_conda_channels') for c in channels)
    errors.append(mirrors_error(inputs.get('conda_mirrors') or {}, 'python_stack_conda_mirrors'))
    errors.append(keep_builds_error(inputs.get('keep_builds'), 'python_stack_keep_builds'))
    return [e for e in errors if e]
