# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The BMC inputs of the power-cycle recovery (common's entry point ``bmc``): ``bmc_address`` (a
host variable), ``gpuops_bmc_user``, ``gpuops_bmc_password``, ``gpuops_bmc_port``.

Every value is checked with a full match before anything uses it, and a problem names the
variable and what is accepted: an address is an IPv4 or IPv6 address or a DNS host name; a user
name and a password are what IPMI 2.0 stores (at most 16 and 20 bytes) in a character set without
blanks, quotes, backslashes or shell characters, so that no tool, file or log on the way can read
them as anything else. A password is never shown, not even in a message about itself.

Checked on every host before any change (host_plan runs the registry's ``common.bmc`` entry, core/input_checks.py,
which calls ``problems``) and again where the recovery converts them. Pure, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import re

USER_RE = re.compile(r'[A-Za-z0-9._-]{1,16}')
# printable ASCII without blanks, quotes, backslash and the shell's metacharacters
PASSWORD_RE = re.compile(r'[A-Za-z0-9._@%+=:,/^-]{1,20}')
PASSWORD_CHARS = 'letters, digits and . _ @ % + = : , / ^ -'
_LABEL_RE = re.compile(r'[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?')


def _shown(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + '...'


def address_problem(name, value):
    """None, or why ``value`` is not a BMC address (IPv4, IPv6 or a DNS name, full match)."""
    if not isinstance(value, str) or not value:
        return '%s must be the BMC\'s IPv4 or IPv6 address or DNS name, got %s' % (
            name, 'nothing' if value in (None, '') else 'a %s' % type(value).__name__)
    if len(value) > 253:
        return '%s is %d characters long: a BMC address (IP or DNS name) has at most 253' % (name, len(value))
    try:
        ipaddress.ip_address(value)
        return None
    except ValueError:
        pass
    labels = value[:-1].split('.') if value.endswith('.') else value.split('.')
    if all(_LABEL_RE.fullmatch(label) for label in labels) and not labels[-1].isdigit():
        return None
    return ('%s must be the BMC\'s IPv4 or IPv6 address or DNS name (letters, digits, hyphens and dots), got %s'
            % (name, _shown(value)))


def user_problem(name, value):
    if not isinstance(value, str) or not USER_RE.fullmatch(value):
        shown = _shown(value) if isinstance(value, str) and len(value) <= 64 else (
            'a value of %d characters' % len(value) if isinstance(value, str) else 'a %s' % type(value).__name__)
        return ('%s must be a BMC user name of 1 to 16 letters, digits, dots, underscores or hyphens (IPMI 2.0 '
                'stores at most 16 bytes), got %s' % (name, shown))
    return None


def password_problem(name, value):
    """Never shows the value: only its length and which rule it breaks."""
    if not isinstance(value, str) or not value:
        return '%s must be the BMC password (1 to 20 characters), got %s' % (
            name, 'nothing' if value in (None, '') else 'a %s' % type(value).__name__)
    if len(value) > 20:
        return ('%s is %d characters long: IPMI 2.0 stores at most 20 (the value is not shown)' % (name, len(value)))
    if not PASSWORD_RE.fullmatch(value):
        return ('%s holds a character outside %s - a blank, quote, backslash, newline or shell character that a '
                'tool or log on the way could read as something else (the value is not shown)' % (name, PASSWORD_CHARS))
    return None


def problems(inputs):
    """The problems of the BMC inputs among ``inputs`` (full names). The address, user and password
    are required where ``gpuops_bmc_recovery`` is true; set ones are checked either way."""
    inputs = inputs or {}
    if not any(k in inputs for k in ('gpuops_bmc_user', 'gpuops_bmc_password', 'bmc_address', 'gpuops_bmc_port')):
        return []  # common's other entry points (gpu has gpuops_bmc_recovery alone)
    enabled = inputs.get('gpuops_bmc_recovery') is True
    found = []
    checks = (('bmc_address', address_problem), ('gpuops_bmc_user', user_problem),
              ('gpuops_bmc_password', password_problem))
    for name, check in checks:
        value = inputs.get(name)
        if value in (None, '') and not enabled:
            continue
        problem = check(name, value)
        if problem and value in (None, '') and enabled:
            problem = '%s is required where gpuops_bmc_recovery is true: %s' % (name, problem)
        if problem:
            found.append(problem)
    port = inputs.get('gpuops_bmc_port')
    if 'gpuops_bmc_port' in inputs and (isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535):
        found.append('gpuops_bmc_port must be the BMC\'s RMCP+ UDP port, 1 to 65535 (623 is IPMI\'s), got %s'
                     % _shown(port))
    return found


def scrub(text, secret):
    """``text`` with every occurrence of ``secret`` replaced (an error a library echoed)."""
    text = str(text if text is not None else '')
    return text.replace(secret, '********') if isinstance(secret, str) and secret else text
