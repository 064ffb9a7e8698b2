# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one way a value becomes part of a systemd unit (used by node_exporter and dcgm_exporter).

- ``control_error()``: an error naming the variable when a value holds a control character (a
  newline ends the unit line and starts another directive; systemd reads the rest as its own).
- ``quote_arg()``: one argument of an ``Exec*=`` line, specifiers (``%``) and variables (``$``)
  escaped, double-quoted when it holds anything but safe characters. A control character is
  refused (ValueError) here too, so no caller can write one into a unit by forgetting a check.
- ``sandbox_lines()``: the sandboxing directives of an exporter's unit (node_exporter, ipmi_exporter):
  read-only system, no privileges, no capabilities, no devices but the ones named.
- ``parse_unit_states()``: the output of one ``systemctl show -p Id,... UNIT...`` read of several
  units (the converged fast path of os_tuning and nvidia_driver).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_CONTROL = re.compile(r'[\x00-\x1f\x7f\u0085\u2028\u2029]')
_SAFE_ARG = re.compile(r"[A-Za-z0-9_./:=,@+%$\[\]-]+")


def control_error(value, variable):
    """None, or a message naming ``variable`` when ``value`` (str, or a list/dict of them) holds a control character."""
    if isinstance(value, dict):
        for key, item in value.items():
            error = control_error(key, variable) or control_error(item, variable)
            if error:
                return error
        return None
    if isinstance(value, (list, tuple)):
        for item in value:
            error = control_error(item, variable)
            if error:
                return error
        return None
    if isinstance(value, str) and _CONTROL.search(value):
        return ('%s: %r holds a control character (newline, tab, ...), which would end or split the line of the '
                'unit, file or command line it is written into; remove it' % (variable, value))
    return None


def quote_arg(arg):
    """One argument of an Exec*= line, quoted and escaped the way systemd reads it."""
    text = str(arg)
    if _CONTROL.search(text):
        raise ValueError('%r holds a control character and cannot be written into a systemd unit' % (text,))
    text = text.replace('%', '%%').replace('$', '$$')
    if _SAFE_ARG.fullmatch(text):
        return text
    return '"%s"' % text.replace('\\', '\\\\').replace('"', '\\"')


def sandbox_lines(devices=(), writable=()):
    """The sandboxing directives of an exporter's ``[Service]`` section (one place, every exporter
    role): a read-only system, no new privileges, no capabilities, no devices (``PrivateDevices``)
    unless ``devices`` names the ones it reads and writes (then only those: ``DevicePolicy=closed``),
    and ``writable`` directories below /var/lib (``StateDirectory=``, created for the unit's user)."""
    lines = ['# Sandboxing: read-only system, no privileges, no capabilities, no new mounts or devices.',
             'NoNewPrivileges=yes', 'CapabilityBoundingSet=', 'AmbientCapabilities=', 'ProtectSystem=strict',
             'ProtectHome=read-only', 'PrivateTmp=yes']
    if devices:
        lines.append('DevicePolicy=closed')
        lines.extend('DeviceAllow=%s rw' % quote_arg(device) for device in devices)
    else:
        lines.append('PrivateDevices=yes')
    lines.extend(['ProtectKernelTunables=yes', 'ProtectKernelModules=yes', 'ProtectControlGroups=yes',
                  'ProtectClock=yes', 'ProtectHostname=yes', 'RestrictSUIDSGID=yes', 'RestrictRealtime=yes',
                  'RestrictNamespaces=yes', 'LockPersonality=yes', 'MemoryDenyWriteExecute=yes',
                  'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK', 'SystemCallArchitectures=native'])
    lines.extend('StateDirectory=%s' % quote_arg(directory) for directory in writable)
    lines.append('UMask=0077')
    return ''.join(line + '\n' for line in lines)


# Directories the system owns: a role that creates "its" directory with its own group and mode
# must never be pointed at one of these (node_exporter_config_dir: /etc gave /etc to node-exp).
SYSTEM_DIRS = frozenset((
    '/', '/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/libx32', '/media', '/mnt', '/opt',
    '/proc', '/root', '/run', '/sbin', '/srv', '/sys', '/tmp', '/usr', '/var',
    '/usr/bin', '/usr/sbin', '/usr/lib', '/usr/lib32', '/usr/lib64', '/usr/libexec', '/usr/include', '/usr/share',
    '/usr/src', '/usr/local', '/usr/local/bin', '/usr/local/sbin', '/usr/local/lib', '/usr/local/share',
    '/usr/local/etc', '/var/lib', '/var/log', '/var/tmp', '/var/cache', '/var/spool', '/var/run', '/var/mail',
    '/var/backups', '/var/opt', '/var/www', '/var/local', '/etc/default', '/etc/systemd', '/etc/systemd/system',
    '/etc/ssh', '/etc/ssl', '/etc/apt', '/etc/pam.d', '/etc/security', '/etc/sudoers.d', '/etc/cron.d',
    '/etc/profile.d', '/etc/sysctl.d', '/etc/modprobe.d', '/etc/gpuops', '/run/systemd', '/run/gpuops',
))
_VIRTUAL_TREES = ('/proc/', '/sys/', '/dev/', '/run/systemd/')
_OWNED_PATH = re.compile(r'(/[A-Za-z0-9_@+.-]+)+')


def owned_path_error(value, variable):
    """None, or a message naming ``variable`` unless ``value`` is a path a role may own.

    Absolute, normalised (no ``.``/``..`` component, no empty component, no trailing slash),
    letters, digits and ``_ @ + . -`` only (the path reaches units, files and command lines
    unquoted), and neither a system directory nor inside /proc, /sys or /dev.
    """
    why = None
    if isinstance(value, str) and value in SYSTEM_DIRS:
        why = 'is a system directory; the role would give it its own owner, group and mode. Use a directory of ' \
              'its own below it'
    elif not isinstance(value, str) or not _OWNED_PATH.fullmatch(value):
        why = ('must be an absolute path of letters, digits and _ @ + . - without a trailing slash, e.g. '
               '/opt/node_exporter')
    elif any(part in ('.', '..') for part in value.split('/')):
        why = 'must not contain . or .. components'
    elif value.startswith(_VIRTUAL_TREES):
        why = 'is inside a kernel or systemd file system'
    if why is None:
        return None
    if why.startswith('is '):
        return '%s: %s %s' % (variable, value, why)
    return '%s: %r %s' % (variable, value, why)


def parse_unit_states(text):
    """``systemctl show -p Id,... UNIT...`` output (one block per unit, blank-line separated):
    {Id: {property: value}}; blocks without an Id are dropped."""
    states = {}
    for block in (text or '').strip().split('\n\n'):
        props = dict(line.split('=', 1) for line in block.splitlines() if '=' in line)
        if props.get('Id'):
            states[props['Id']] = props
    return states
