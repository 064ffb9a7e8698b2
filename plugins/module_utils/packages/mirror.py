# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The artifact mirror: its checksum index, in one place.

A mirror is a directory of vendor files and repositories served over HTTP (docs/mirror.md),
with ``SHA256SUMS`` at its root in ``sha256sum -c`` format (``<64 hex>  <relative path>``).
Several tools fill one mirror: ``playbooks/mirror.yml`` (through the ``mirror_index``
module), the lab's repository doubles (``tests/doubles/``) and a site's own scripts. Each
updates the lines of the files it wrote and keeps every other line.

Pure functions, standard library only, Python 3.8+; imported by the ``mirror_index`` module
and by the doubles' builders. Each check returns a value and the reason.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import re

try:
    from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import write_atomic
except ImportError:  # this file loaded by path (tests/doubles, outside Ansible): core/files.py beside it
    import importlib.util

    _SPEC = importlib.util.spec_from_file_location(
        'gpuops_core_files', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'core', 'files.py'))
    _FILES = importlib.util.module_from_spec(_SPEC)
    _SPEC.loader.exec_module(_FILES)
    write_atomic = _FILES.write_atomic

SUMS_NAME = 'SHA256SUMS'
_HEX64 = re.compile(r'^[0-9a-f]{64}\Z')
_CHECKSUM = re.compile(r'^sha256:([0-9a-fA-F]{64})\Z')


def sha256_file(path, chunk=1 << 20):
    """The sha256 of a file, as 64 lower-case hex digits."""
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(chunk), b''):
            digest.update(block)
    return digest.hexdigest()


def check_relative_path(path):
    """(ok, reason) for a path inside the mirror: relative, no ``..``, no empty part."""
    if not isinstance(path, str) or not path:
        return False, 'path must be a non-empty string'
    if path.startswith('/'):
        return False, 'path %r must be relative to the mirror directory' % path
    parts = path.split('/')
    if '..' in parts or '.' in parts or '' in parts:
        return False, "path %r must not contain '.', '..' or empty parts" % path
    if path == SUMS_NAME:
        return False, 'path %r is the index itself' % path
    if any(ch in path for ch in '\n\r\\'):
        return False, 'path %r must not contain newlines or backslashes' % path
    return True, 'path %r is inside the mirror' % path


def parse_checksum(value):
    """(hex digest or None, reason) from ``sha256:<64 hex>``."""
    match = _CHECKSUM.match(value) if isinstance(value, str) else None
    if not match:
        return None, 'checksum must be sha256:<64 hex digits>, not %r' % (value,)
    return match.group(1).lower(), 'sha256 given'


def check_artifacts(artifacts, need_url=True):
    """Every problem of a list of ``{path, url, checksum}`` entries, each naming its entry;
    an empty list when all are good. Nothing is fetched or written."""
    if not isinstance(artifacts, list):
        return ['gpuops_mirror_artifacts must be a list of {path, url, checksum}, not %s'
                % type(artifacts).__name__]
    problems = []
    seen = {}
    for index, entry in enumerate(artifacts):
        where = 'entry %d' % index
        if not isinstance(entry, dict):
            problems.append('%s: must be a mapping with path, url and checksum, not %r' % (where, entry))
            continue
        ok, reason = check_relative_path(entry.get('path'))
        if not ok:
            problems.append('%s: %s' % (where, reason))
        else:
            where = 'entry %d (%s)' % (index, entry['path'])
            if entry['path'] in seen:
                problems.append('%s: path listed twice (also entry %d)' % (where, seen[entry['path']]))
            seen[entry['path']] = index
        if need_url and not (isinstance(entry.get('url'), str) and entry.get('url')):
            problems.append('%s: url must be a non-empty string' % where)
        digest, reason = parse_checksum(entry.get('checksum'))
        if digest is None:
            problems.append('%s: %s' % (where, reason))
    return problems


def parse_sums(text):
    """({path: digest}, [malformed lines]) from SHA256SUMS text. ``*path`` (binary mode
    marker) counts as ``path``; a later line for a path wins."""
    entries, bad = {}, []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(None, 1)
        if len(parts) != 2 or not _HEX64.match(parts[0].lower()):
            bad.append(line)
            continue
        path = parts[1]
        if path.startswith('*'):
            path = path[1:]
        entries[path] = parts[0].lower()
    return entries, bad


def render_sums(entries):
    """SHA256SUMS text: one ``<digest>  <path>`` line per path, sorted by path."""
    return ''.join('%s  %s\n' % (entries[path], path) for path in sorted(entries))


def under(path, prefix):
    """Whether a mirror path lies in the directory ``prefix`` (or is it)."""
    prefix = prefix.strip('/')
    return path == prefix or path.startswith(prefix + '/')


def merge_sums(old_text, updates, replace_under=()):
    """New SHA256SUMS text and what changed.

    ``updates`` ({path: digest}) are added or replace their lines; every line under a
    directory of ``replace_under`` that ``updates`` does not name is dropped (that tool
    rewrote the directory); every other line is kept as another tool wrote it. Malformed
    lines are kept verbatim at the end, so nothing another tool wrote is lost.

    Returns ``(text, {'added': [...], 'updated': [...], 'removed': [...], 'kept': n})``.
    """
    old, bad = parse_sums(old_text)
    new = {}
    removed = []
    for path, digest in old.items():
        if path in updates:
            continue
        if any(under(path, prefix) for prefix in replace_under):
            removed.append(path)
            continue
        new[path] = digest
    kept = len(new)
    new.update(updates)
    changes = {
        'added': sorted(p for p in updates if p not in old),
        'updated': sorted(p for p in updates if p in old and old[p] != updates[p]),
        'removed': sorted(removed),
        'kept': kept,
    }
    text = render_sums(new) + ''.join(line + '\n' for line in bad)
    return text, changes


def scan_tree(mirror_dir, base):
    """{relative path: digest} of every regular file under ``mirror_dir/base`` (the index
    itself and hidden files excepted)."""
    entries = {}
    root = os.path.join(mirror_dir, base)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith('.'))
        for name in sorted(filenames):
            if name.startswith('.'):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, mirror_dir).replace(os.sep, '/')
            if rel == SUMS_NAME or not os.path.isfile(full) or os.path.islink(full):
                continue
            entries[rel] = sha256_file(full)
    return entries


def verify_files(mirror_dir, expected):
    """[(path, reason)] of the files that are missing or whose sha256 is not the expected one."""
    problems = []
    for path in sorted(expected):
        full = os.path.join(mirror_dir, path)
        if not os.path.isfile(full):
            problems.append((path, 'missing from the mirror'))
            continue
        actual = sha256_file(full)
        if actual != expected[path]:
            problems.append((path, 'sha256 is %s, the index expects %s' % (actual, expected[path])))
    return problems


def index_mirror(mirror_dir, artifacts=(), scan=()):
    """The new SHA256SUMS of a mirror directory, without writing it.

    ``artifacts``: ``{path, checksum}`` entries already fetched into the mirror; each file
    must exist with that sha256. ``scan``: directories (relative) whose every file is hashed
    and whose old lines are replaced. Returns ``(old_text, new_text, changes, problems)``;
    ``problems`` (a list of messages) is empty when the index may be written.
    """
    problems = check_artifacts(list(artifacts), need_url=False)
    for base in scan:
        ok, reason = check_relative_path(base)
        if not ok:
            problems.append('scan: %s' % reason)
    path = os.path.join(mirror_dir, SUMS_NAME)
    old_text = ''
    if os.path.exists(path):
        with open(path) as handle:
            old_text = handle.read()
    if problems:
        return old_text, old_text, {}, problems
    updates = {}
    for entry in artifacts:
        updates[entry['path']] = parse_checksum(entry['checksum'])[0]
    problems.extend('%s: %s' % item for item in verify_files(mirror_dir, updates))
    for base in scan:
        if not os.path.isdir(os.path.join(mirror_dir, base)):
            problems.append('scan: %s is not a directory of the mirror' % base)
            continue
        updates.update(scan_tree(mirror_dir, base))
    new_text, changes = merge_sums(old_text, updates, replace_under=scan)
    return old_text, new_text, changes, problems


def write_index(mirror_dir, text, module=None):
    """Write SHA256SUMS atomically, mode 0644 (a reader never sees half an index); through
    ``module.atomic_move`` when a module writes it (core/files.write_atomic)."""
    write_atomic(os.path.join(mirror_dir, SUMS_NAME), text, 0o644, module=module)
