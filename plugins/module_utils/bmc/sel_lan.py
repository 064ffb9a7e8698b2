# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu_validate's SEL read over the LAN (RMCP+, FreeIPMI's driver LAN_2_0) where the node has no
in-band BMC device but its BMC is known: ``bmc_address`` with common's ``gpuops_bmc_user`` and
``gpuops_bmc_password``.

The password never reaches a command line (where ``ps`` and the process table show it): ``read``
writes a FreeIPMI configuration file (freeipmi.conf(5): ``driver-type``, ``username``, ``password``,
``privilege-level``, ``workaround-flags``) of mode 0600 in a directory of mode 0700 that it creates,
runs ``ipmi-sel --config-file <file> --sdr-cache-directory <directory> --hostname <bmc>`` (the
configuration file has no host name key; the address is no secret) and removes the directory whatever
happened: the SDR cache FreeIPMI builds (else in ``~/.freeipmi``) goes with it, so the read leaves
nothing behind on the node. Every
value is checked first with a full match (bmc/credentials.py: no blank, quote, backslash, ``#`` or
newline, so FreeIPMI's parser reads each value as one word), and any text a tool printed is scrubbed
of the password before it is reported.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import shutil
import tempfile

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import credentials

# FreeIPMI's workaround flags are lower-case words (freeipmi.conf(5), e.g. opensesspriv, authcap).
FLAG_RE = re.compile(r'[a-z0-9]{1,32}')
PRIVILEGE = 'USER'  # reading the SEL needs no more


def problems(bmc):
    """The problems of the LAN inputs ``{address, user, password, port, workaround_flags}`` (option names of
    gpu_validate: bmc_address, bmc_user, bmc_password, bmc_port, bmc_workaround_flags); the password never shown."""
    found = [credentials.address_problem('bmc_address', bmc.get('address')),
             credentials.user_problem('bmc_user', bmc.get('user')),
             credentials.password_problem('bmc_password', bmc.get('password'))]
    port = bmc.get('port', 623)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        found.append('bmc_port must be the BMC\'s RMCP+ UDP port, 1 to 65535, got %r' % (port,))
    flags = bmc.get('workaround_flags') or []
    if not isinstance(flags, list) or not all(isinstance(f, str) and FLAG_RE.fullmatch(f) for f in flags):
        found.append('bmc_workaround_flags must be a list of FreeIPMI workaround flags (lower-case letters and '
                     'digits, e.g. opensesspriv), got %r' % (flags,))
    return [p for p in found if p]


def wanted(bmc):
    """Whether the LAN read is asked for: an address, a user and a password are all given."""
    return bool(bmc.get('address') and bmc.get('user') and bmc.get('password'))


def can_read(bmc, ipmi_sel):
    """``(tool, reason)`` of the LAN read; tool None with the reason (never a pass) where it cannot run."""
    bad = problems(bmc)
    if bad:
        return None, 'unknown: the BMC inputs are refused: %s' % '; '.join(bad)
    if not ipmi_sel:
        return None, ('unknown: no BMC access (no in-band BMC device; the BMC %s is known, but reading its SEL over '
                      'the LAN needs ipmi-sel: FreeIPMI, package freeipmi-tools)' % bmc['address'])
    return 'ipmi-sel', 'the BMC %s over the LAN (RMCP+) through ipmi-sel' % bmc['address']


def _hostname(bmc):
    port = bmc.get('port', 623)
    if port == 623:
        return bmc['address']
    return '[%s]:%d' % (bmc['address'], port) if ':' in bmc['address'] else '%s:%d' % (bmc['address'], port)


def config_text(bmc):
    """The FreeIPMI configuration file (the checked values, one word each)."""
    bad = problems(bmc)
    if bad:
        raise ValueError('; '.join(bad))
    lines = ['# gpuops.dlserver gpu_validate: one SEL read, removed after it',
             'driver-type LAN_2_0', 'username %s' % bmc['user'],
             'password %s' % bmc['password'], 'privilege-level %s' % PRIVILEGE]
    if bmc.get('workaround_flags'):
        lines.append('workaround-flags %s' % ' '.join(bmc['workaround_flags']))
    return ''.join(line + '\n' for line in lines)


def argv(ipmi_sel, config_file, bmc):
    """The command line: the configuration file and the SDR cache both in the read's own directory."""
    return [ipmi_sel, '--config-file', config_file, '--sdr-cache-directory', os.path.dirname(config_file),
            '--hostname', _hostname(bmc), '--output-event-state', '--comma-separated-output',
            '--non-abbreviated-units']


def read(run, ipmi_sel, bmc, timeout=120):
    """``(rc, out, err)`` of ``ipmi-sel`` over the LAN with the credentials in a 0600 file that exists only
    while it runs; ``run(argv, timeout)`` runs the command. The password is scrubbed from out and err."""
    folder = tempfile.mkdtemp(prefix='gpuops-sel-')  # mode 0700
    try:
        path = os.path.join(folder, 'freeipmi.conf')
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, 'w') as out:
            out.write(config_text(bmc))
        rc, out, err = run(argv(ipmi_sel, path, bmc), timeout)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rc, credentials.scrub(out, bmc['password']), credentials.scrub(err, bmc['password'])
