# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the node_exporter role reads on the host before it decides (target side, Python 3.8).

``state(lay, ...)``: the converged fast path's read - whether the files, directories, unit,
release and textfile the role manages already are what it would write (``core/files.py``),
the unit's enabled/active state, and one scrape of /metrics as verify makes it (the pure
comparison is ``node_exporter.fast_path``).

``read(user, web_config, status, tls)``: the passwd entry of the service account (or None), the
bcrypt hashes of the web configuration (kept while they verify their password), the role's last
status record, and for each TLS file whether it exists and which PEM block it holds. Reads only,
and returns no file's content: only hashes, a JSON status record and what the TLS files hold.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import grp
import json
import os
import pwd
import re
import stat

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import directory_current, file_current
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import gpu_textfile
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_storage

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


# systemctl show's properties the fast path reads.
SERVICE_PROPERTIES = ('UnitFileState', 'ActiveState', 'NeedDaemonReload')
_GPUS_LINE = re.compile(r'^gpuops_gpus_on_pci (\d+)(?=\n|\Z)', re.M)


def gid_of(group, getgrnam=grp.getgrnam):
    """The gid of ``group``, or None."""
    try:
        return getgrnam(group).gr_gid
    except KeyError:
        return None


def parse_show(text):
    """``{property: value}`` of ``systemctl show -p A -p B`` output (KEY=VALUE lines)."""
    out = {}
    for line in (text or '').splitlines():
        key, sep, value = line.partition('=')
        if sep and key in SERVICE_PROPERTIES:
            out[key] = value
    return out


def parse_scrape(body):
    """``(build_info, gpus_on_pci)`` of a /metrics page."""
    match = _GPUS_LINE.search(body or '')
    return ('node_exporter_build_info' in (body or '')), (int(match.group(1)) if match else None)


def _web_config_state(path, gid, uid):
    """``{exists, attributes, content}``: whether the file is a regular file root:<group> 0640, and
    its text (bcrypt hashes and TLS paths only; compared on the controller, never shown)."""
    try:
        info = os.lstat(path)
    except OSError:
        return {'exists': False, 'attributes': False, 'content': None}
    attributes = (stat.S_ISREG(info.st_mode) and (info.st_mode & 0o7777) == 0o640 and info.st_uid == uid
                  and gid is not None and info.st_gid == gid)
    return {'exists': True, 'attributes': attributes, 'content': _read(path) if attributes else None}


def state(lay, gpu, plan, textfile_wanted, reboot_marker, os_tuning_status_file, show=None, scrape=None,
          getgrnam=grp.getgrnam, root=(0, 0)):
    """What the fast path compares, read on the host (see the module docstring).

    ``lay``: node_exporter.layout(); ``gpu``, ``plan``: the facts the textfile carries;
    ``show(service)``: systemctl show's text; ``scrape(url, authenticated)``: ``(status, body)``;
    ``root``: (uid, gid) of the owner of the role's files (root; another user in the unit tests).
    """
    uid, root_gid = root
    gid = gid_of(lay['account_group'], getgrnam)
    directories = dict((d, gid is not None and directory_current(d, 0o755, uid, gid)) for d in lay['directories'])
    out = {'gid': gid, 'directories': directories,
           'web_config': _web_config_state(lay['web_config_file'], gid, uid),
           'dropin_dir': directory_current(os.path.dirname(lay['unit_file']), 0o755, uid, root_gid)
           if lay['source'] == 'package' else None,
           'unit_file': file_current(lay['unit_file'], lay['unit_content'], 0o644, uid, root_gid),
           'release': None}
    if lay['source'] == 'release':
        link = lay['link']
        out['release'] = {'binary': os.path.isfile(lay['binary']) and os.access(lay['binary'], os.X_OK),
                          'link': os.path.islink(link) and os.readlink(link) == lay['binary'],
                          'checksum': (_read(lay['release']['checksum_file']) or '').strip() or None}
    if textfile_wanted:
        status = None
        status_text = _read(os_tuning_status_file)
        if status_text:
            try:
                status = json.loads(status_text)
            except ValueError:
                status = None
        content = gpu_textfile.render(gpu, plan, _read(reboot_marker), status)
        count = gpu_textfile.samples(gpu, plan, None, None)[0][2]
        out['textfile'] = {'current': file_current(lay['textfile'], content, 0o644, uid, root_gid), 'gpus_on_pci': count}
    else:
        out['textfile'] = {'current': not os.path.lexists(lay['textfile']), 'gpus_on_pci': None}
    out['service'] = parse_show(show(lay['service'])) if show else {}
    out['storage'] = node_exporter_storage.state(
        lay['storage'], show=(lambda unit: parse_show(show(unit))) if show else None,
        source=node_exporter_storage.program_source(), root=root)
    out['scrape'] = {'status': None, 'build_info': False, 'gpus_on_pci': None, 'anonymous_status': None}
    if scrape and out['service'].get('ActiveState') == 'active':
        code, body = scrape(lay['verify']['url'], True)
        build_info, gpus = parse_scrape(body)
        out['scrape'].update(status=code, build_info=build_info, gpus_on_pci=gpus)
        if lay['verify']['basic_auth']:
            out['scrape']['anonymous_status'] = scrape(lay['verify']['url'], False)[0]
    return out
