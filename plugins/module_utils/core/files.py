# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Writing a file so that a reader sees the old content or the new, never half of it.

One helper for every module (and the tools that build the lab's mirror outside Ansible): the
text goes to a temporary file with an unpredictable name in the file's own directory, gets
its mode, and is moved over the file with ``AnsibleModule.atomic_move`` when a module is
given (it keeps the file's owner and SELinux context, and reports failures through the
module), else with ``os.replace``. The file ends with ``mode`` either way.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os
import stat
import tempfile


def _temporary_copy(path, text, mode, suffix):
    """A new file with an unpredictable name beside ``path`` holding ``text`` with ``mode``: its path."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, tmp = tempfile.mkstemp(prefix='.%s.' % os.path.basename(path), suffix=suffix, dir=directory)
    try:
        with os.fdopen(handle, 'w') as out:
            out.write(text)
        os.chmod(tmp, mode)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_atomic(path, text, mode, module=None):
    """Replace ``path`` by ``text`` (str) with permissions ``mode`` (int, e.g. 0o644)."""
    tmp = _temporary_copy(path, text, mode, '.tmp')
    try:
        if module is not None:
            module.atomic_move(tmp, path)
            # atomic_move gives the new file the old file's mode (or the umask's for a new file)
            os.chmod(path, mode)
        else:
            os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def file_current(path, content, mode=0o644, uid=0, gid=0):
    """Whether ``path`` already is what a write of ``content`` (str; '' = the file removed) with
    ``mode``, owner ``uid`` and group ``gid`` would leave: a regular file (not a link) with exactly
    those bytes and attributes, or for '' no file at all. The converged fast path: a role writes
    only the files this says are not current (a no-op run asks the host nothing more)."""
    if content == '':
        return not os.path.lexists(path)
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode):    # lstat: a link is not a regular file
        return False
    if (info.st_mode & 0o7777) != mode or info.st_uid != uid or info.st_gid != gid:
        return False
    data = content.encode('utf-8')
    if info.st_size != len(data):
        return False
    try:
        with open(path, 'rb') as handle:
            return handle.read() == data
    except (IOError, OSError):
        return False


def mark_current(files, mode=0o644, uid=0, gid=0):
    """``files`` ({dest, content}, content '' = remove) each with ``current``: whether the host
    already has it so (file_current)."""
    return [dict(f, current=bool(f.get('dest')) and file_current(f['dest'], f['content'], mode, uid, gid))
            for f in files]


def directory_current(path, mode=0o755, uid=0, gid=0):
    """Whether ``path`` already is the directory a file task with ``state: directory``, ``mode``,
    owner ``uid`` and group ``gid`` would leave (a directory, not a link to one)."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and (info.st_mode & 0o7777) == mode and info.st_uid == uid and info.st_gid == gid


def text_digest(text):
    """The sha256 (hex) of ``text`` (str) as a file written with it holds (UTF-8)."""
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def file_states(directories, suffix='.json', limit=1 << 20, mode=0o644, uid=0, gid=0):
    """{path: {sha256, attrs}} of every regular file (not a link) named ``*<suffix>`` of at most
    ``limit`` bytes in ``directories``: its content's sha256 and whether its mode, owner and group
    are ``mode``, ``uid`` and ``gid`` (what file_current checks besides the bytes). A missing or
    unreadable directory or file is left out."""
    found = {}
    for directory in directories:
        try:
            names = sorted(os.listdir(directory))
        except OSError:
            continue
        for name in names:
            path = os.path.join(directory, name)
            if not name.endswith(suffix) or name.startswith('.'):
                continue
            try:
                info = os.lstat(path)
                if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                    continue
                with open(path, 'rb') as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest()
            except (IOError, OSError):
                continue
            found[path] = {'sha256': digest,
                           'attrs': (info.st_mode & 0o7777) == mode and info.st_uid == uid and info.st_gid == gid}
    return found


DIFF_LIMIT = 1 << 16


def read_text(path):
    """The text of ``path``, or None where it cannot be read (missing, a directory, no permission)."""
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


def _text_of(path):
    """The text of ``path`` for a diff: '' when it is missing, a note when it is no regular
    text file or too large to show."""
    try:
        info = os.lstat(path)
    except OSError:
        return ''
    if not stat.S_ISREG(info.st_mode):
        return '(%s is not a regular file)\n' % path
    if info.st_size > DIFF_LIMIT:
        return '(%s: %d bytes, not shown)\n' % (path, info.st_size)
    try:
        with open(path, 'rb') as handle:
            return handle.read().decode('utf-8')
    except (IOError, OSError, UnicodeDecodeError):
        return '(%s is not readable UTF-8 text)\n' % path


def empty_file_current(path, mode=0o644, uid=0, gid=0):
    """Whether ``path`` is an empty regular file with ``mode``, owner ``uid`` and group ``gid``."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISREG(info.st_mode) and info.st_size == 0 and (info.st_mode & 0o7777) == mode
            and info.st_uid == uid and info.st_gid == gid)


def kept_attributes(path, mode, uid, gid):
    """``(mode, uid, gid)`` of ``path`` where it is a regular file (not a link), else the given ones:
    the attributes a write of a user's own file keeps (a daemon.json of mode 0600 stays 0600)."""
    try:
        info = os.lstat(path)
    except OSError:
        return mode, uid, gid
    if not stat.S_ISREG(info.st_mode):
        return mode, uid, gid
    return info.st_mode & 0o7777, info.st_uid, info.st_gid


def put_file(path, content, module, mode=0o644, uid=0, gid=0, backup=False, validate=None, keep_empty=False,
             keep_mode=False):
    """The one way a module of the collection writes a file it rendered on the host: ``path``
    made to hold ``content`` (str; '' = the file removed) with ``mode``, owner ``uid`` and group
    ``gid``. Nothing is touched when the file already is so (file_current) or in check mode
    (the answer then says what a run would change). The text goes to a temporary file in the
    same directory, is checked by ``validate`` (argv with '%s' for the temporary file; a failure
    fails the module before the file changes) and moved over the file (write_atomic).
    ``backup``: the old file is kept beside it first (AnsibleModule.backup_local). ``keep_empty``:
    '' is an empty file, not a removed one. ``keep_mode``: the file is the user's (docker's
    daemon.json, containerd's config.toml): where it exists its mode, owner and group are kept and
    only its text is written (``mode``, ``uid`` and ``gid`` are for a file that is not there yet).
    Returns {dest, changed, diff: {before, after, before_header, after_header}, backup_file}."""
    result = {'dest': path, 'changed': False, 'backup_file': ''}
    if keep_mode:
        mode, uid, gid = kept_attributes(path, mode, uid, gid)
    if empty_file_current(path, mode, uid, gid) if keep_empty and content == '' else file_current(path, content, mode, uid, gid):
        return result
    result['changed'] = True
    result['diff'] = {'before_header': path, 'after_header': path,
                      'before': _text_of(path), 'after': content}
    if module.check_mode:
        return result
    try:
        if backup and os.path.isfile(path):
            result['backup_file'] = module.backup_local(path)
        if content == '' and not keep_empty:
            if os.path.lexists(path):
                os.unlink(path)
            return result
        if validate:
            _validate(path, content, mode, module, validate)
        write_atomic(path, content, mode, module)
        os.chown(path, uid, gid)
    except (IOError, OSError) as exc:
        # one line naming the file and its directory, not a traceback (a read-only or missing directory)
        module.fail_json(msg='%s: Destination %s not writable (%s)' % (
            path, os.path.dirname(path) or '.', exc.strerror or exc), dest=path)
    return result


def _validate(path, content, mode, module, argv):
    """Run ``argv`` ('%s' = a temporary copy of the new text beside ``path``); fail the module
    with its output when it does not accept the text."""
    tmp = _temporary_copy(path, content, mode, '.check')
    try:
        rc, out, err = module.run_command([arg.replace('%s', tmp) for arg in argv])
    finally:
        os.unlink(tmp)
    if rc != 0:
        module.fail_json(msg='%s: the new text was not accepted by %s, the file was left as it was: %s'
                         % (path, argv[0], (err or out).strip()), rc=rc)


def put_files(files, module, uid=0, gid=0):
    """put_file for each of ``files`` ({dest, content, mode (octal str or int, default 0644),
    backup, validate, keep_empty, keep_mode}; other keys are kept): the list with ``changed`` set on each, and the
    diffs of those that changed (for the module's ``diff``)."""
    done, diffs = [], []
    for entry in files:
        mode = entry.get('mode', 0o644)
        mode = int(mode, 8) if isinstance(mode, str) else mode
        put = put_file(entry['dest'], entry['content'], module, mode, uid, gid,
                       backup=bool(entry.get('backup')), validate=entry.get('validate'),
                       keep_empty=bool(entry.get('keep_empty')), keep_mode=bool(entry.get('keep_mode')))
        if put.get('diff'):
            diffs.append(put.pop('diff'))
        done.append(dict(entry, changed=put['changed'], backup_file=put['backup_file']))
    return done, diffs
