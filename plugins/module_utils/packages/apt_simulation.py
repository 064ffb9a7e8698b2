# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An ``apt-get --simulate`` answer kept on the host while apt's inputs stay the same.

A simulated ``dist-upgrade`` resolves the whole package universe (about 1 s of CPU on a Debian
node with the CUDA repository), and its answer depends only on what apt reads: its
configuration, sources and preferences (``/etc/apt``), the package lists of the last update
(``/var/lib/apt/lists``), dpkg's database (``/var/lib/dpkg/status``: installed versions and holds)
and apt's own state (``/var/lib/apt/extended_states``). ``state_key`` fingerprints those (each
file's path, size, modification time and inode, never its content), and ``cached_simulation``
returns the answer stored under the same key, or runs the simulation and stores it. An
``apt-get update`` that brings new lists, an install, a hold or an edited pin changes the key, so
the next read simulates again. The cache is a plain JSON file that anyone may delete.

Standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json
import os

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import write_atomic

STATE_PATHS = ('/etc/apt', '/var/lib/apt/lists', '/var/lib/apt/extended_states', '/var/lib/dpkg/status')
# what apt writes while it works, not what it reads to answer
_SKIPPED = frozenset(('lock', 'partial', 'auxfiles'))
CACHE_VERSION = 1


def _entries(root, path):
    """(path, size, mtime_ns, inode) of ``path`` under ``root`` and of every file below it."""
    full = os.path.join(root, path.lstrip('/'))
    if not os.path.exists(full):
        return [(path, None)]
    if not os.path.isdir(full):
        info = os.stat(full)
        return [(path, info.st_size, info.st_mtime_ns, info.st_ino)]
    found = []
    for top, dirs, names in os.walk(full):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
        for name in sorted(names):
            if name in _SKIPPED:
                continue
            try:
                info = os.stat(os.path.join(top, name))
            except OSError:
                continue
            rel = os.path.relpath(os.path.join(top, name), root)
            found.append(('/' + rel, info.st_size, info.st_mtime_ns, info.st_ino))
    return found


def state_key(argv, root='/', paths=STATE_PATHS):
    """A digest of the command line and of apt's inputs as they are now (see the module text)."""
    digest = hashlib.sha256(json.dumps([CACHE_VERSION, list(argv)]).encode('utf-8'))
    for path in paths:
        for entry in _entries(root, path):
            digest.update(json.dumps(entry).encode('utf-8'))
    return digest.hexdigest()


def read_cache(path):
    """The stored {key, result}, or None when the file is missing, unreadable or not ours."""
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (IOError, OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get('version') != CACHE_VERSION or 'key' not in data:
        return None
    return data


def cached_simulation(argv, simulate, cache_path, root='/', write=True):
    """(result, cached): the stored result of ``argv`` when apt's inputs have the same key as when
    it was stored, else ``simulate()``'s, stored under the new key when ``write`` (check mode
    passes False: it reads the cache, it writes nothing). ``cache_path`` None: no cache."""
    if not cache_path:
        return simulate(), False
    full = os.path.join(root, cache_path.lstrip('/'))
    key = state_key(argv, root)
    stored = read_cache(full)
    if stored is not None and stored['key'] == key:
        return stored.get('result'), True
    result = simulate()
    if write:
        directory = os.path.dirname(full)
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        write_atomic(full, json.dumps({'version': CACHE_VERSION, 'key': key, 'argv': list(argv),
                                       'result': result}, sort_keys=True), 0o644)
    return result, False
