# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the node_exporter role reads on the host before it decides (target side, Python 3.8).

``read(user, web_config, status, tls)``: the passwd entry of the service account (or None), the
bcrypt hashes of the web configuration (kept while they verify their password), the role's last
status record, and for each TLS file whether it exists and which PEM block it holds. Reads only,
and returns no file's content: only hashes, a JSON status record and what the TLS files hold.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import json
import os
import pwd
import re

# Header and base64 body of one PEM block.
_PEM = re.compile(r'-----BEGIN ([A-Z0-9 ]+)-----\r?\n([A-Za-z0-9+/=\r\n]+?)-----END \1-----')
_MAX = 1024 * 1024
# A Debian package name (Debian Policy 5.6.1), the whole value.
PACKAGE_RE = re.compile(r'[a-z0-9][a-z0-9.+-]+')
# One user of basic_auth_users as the role writes it (to_nice_yaml): "  name: $2b$10$<53>".
_HASH_LINE = re.compile(r'^[ ]+([^\s:#]+):[ ]*["\']?(\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53})["\']?[ ]*$', re.M)


def account(user, getpwnam=pwd.getpwnam):
    """``{uid, gid, gecos, home, shell}`` of ``user``, or None when there is no such account."""
    try:
        entry = getpwnam(user)
    except KeyError:
        return None
    return {'uid': entry.pw_uid, 'gid': entry.pw_gid, 'gecos': entry.pw_gecos, 'home': entry.pw_dir,
            'shell': entry.pw_shell}


def _read(path):
    try:
        with open(path, 'rb') as handle:
            return handle.read(_MAX).decode('utf-8', 'replace')
    except (IOError, OSError):
        return None


def pem_kind(text):
    """``certificate``, ``private key`` or None: the first PEM block whose body decodes."""
    for match in _PEM.finditer(text or ''):
        try:
            base64.b64decode(re.sub(r'\s', '', match.group(2)), validate=True)
        except (binascii.Error, ValueError):
            continue
        label = match.group(1)
        if label == 'CERTIFICATE':
            return 'certificate'
        if label.endswith('PRIVATE KEY'):
            return 'private key'
    return None


def hashes(text):
    """``{user: bcrypt hash}`` of a web configuration's text (indented lines of basic_auth_users)."""
    return dict(_HASH_LINE.findall(text or ''))


def read(user, web_config, status, tls, getpwnam=pwd.getpwnam):
    """Everything the decision needs from the host, see the module docstring."""
    previous = None
    text = _read(status) if status else None
    if text:
        try:
            previous = json.loads(text)
        except ValueError:
            previous = None
    files = {}
    for path in tls or []:
        exists = os.path.isfile(path)
        text = _read(path) if exists else None
        # A file this user cannot read (an unprivileged check run) is not judged.
        files[path] = {'exists': exists, 'pem': pem_kind(text) if text is not None else
                       ('unreadable' if exists else None)}
    return {'account': account(user, getpwnam) if user else None,
            'hashes': hashes(_read(web_config)) if web_config else {},
            'status': previous if isinstance(previous, dict) else None,
            'files': files}
