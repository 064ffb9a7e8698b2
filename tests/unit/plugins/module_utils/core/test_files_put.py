"""core/files.put_file / put_files: the one writer of the files a module renders on the host
(atomic, mode and owner, check mode, diff, backup, validate, changed only when something differs)."""
import os
import stat

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import kept_attributes, put_file, put_files

ME = (os.getuid(), os.getgid())


class _Failed(Exception):
    pass


class _Module:
    """What put_file uses of AnsibleModule."""

    def __init__(self, check_mode=False, rc=0):
        self.check_mode = check_mode
        self.rc = rc
        self.commands = []

    def atomic_move(self, src, dest):
        os.rename(src, dest)

    def backup_local(self, path):
        backup = path + '.bak'
        with open(path, 'rb') as src, open(backup, 'wb') as dst:
            dst.write(src.read())
        return backup

    def run_command(self, argv):
        self.commands.append(argv)
        with open(argv[-1]) as handle:
            self.seen = handle.read()
        return self.rc, '', 'bad key' if self.rc else ''

    def fail_json(self, **kwargs):
        raise _Failed(kwargs['msg'])


def _mode(path):
    return stat.S_IMODE(os.stat(str(path)).st_mode)


# (what is there, (content, mode) or None = missing, the text wanted, changed?)
CASES = [
    ("missing, written", None, "a\n", True),
    ("same bytes and mode", ("a\n", 0o644), "a\n", False),
    ("other bytes", ("b\n", 0o644), "a\n", True),
    ("same bytes, other mode", ("a\n", 0o600), "a\n", True),
    ("there, wanted removed", ("a\n", 0o644), "", True),
    ("missing, wanted removed", None, "", False),
]


@pytest.mark.parametrize("what,there,wanted,changed", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("check_mode", [False, True])
def test_put_file(tmp_path, what, there, wanted, changed, check_mode):
    path = tmp_path / "f.conf"
    if there:
        path.write_text(there[0])
        os.chmod(str(path), there[1])
    before = (path.read_text(), _mode(path)) if there else None
    result = put_file(str(path), wanted, _Module(check_mode), 0o644, *ME)
    assert result['changed'] is changed, what
    if changed:
        assert result['diff']['after'] == wanted
        assert result['diff']['before'] == (there[0] if there else '')
        assert result['diff']['before_header'] == str(path)
    else:
        assert 'diff' not in result
    if check_mode or not changed:
        assert ((path.read_text(), _mode(path)) if path.exists() else None) == before, 'check mode wrote'
    elif wanted:
        assert path.read_text() == wanted and _mode(path) == 0o644
    else:
        assert not path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == (['f.conf'] if path.exists() else [])


def test_a_second_run_changes_nothing(tmp_path):
    path = str(tmp_path / "f")
    assert put_file(path, "x\n", _Module(), 0o640, *ME)['changed'] is True
    assert put_file(path, "x\n", _Module(), 0o640, *ME)['changed'] is False
    assert _mode(path) == 0o640


def test_a_link_is_replaced_by_a_file_and_its_target_kept(tmp_path):
    target = tmp_path / "target"
    target.write_text("keep\n")
    os.symlink(str(target), str(tmp_path / "f"))
    assert put_file(str(tmp_path / "f"), "new\n", _Module(), 0o644, *ME)['changed'] is True
    assert not os.path.islink(str(tmp_path / "f")) and target.read_text() == "keep\n"


def test_backup_keeps_the_old_file(tmp_path):
    path = tmp_path / "daemon.json"
    path.write_text("{}\n")
    result = put_file(str(path), '{"a": 1}\n', _Module(), 0o644, *ME, backup=True)
    assert open(result['backup_file']).read() == "{}\n"
    assert path.read_text() == '{"a": 1}\n'


def test_validate_sees_the_new_text_and_a_refusal_leaves_the_file(tmp_path):
    path = tmp_path / "daemon.json"
    path.write_text("{}\n")
    module = _Module()
    put_file(str(path), '{"a": 1}\n', module, 0o644, *ME, validate=['dockerd', '--validate', '--config-file', '%s'])
    assert module.seen == '{"a": 1}\n' and module.commands[0][:3] == ['dockerd', '--validate', '--config-file']
    refusing = _Module(rc=1)
    with pytest.raises(_Failed, match='not accepted by dockerd.*bad key'):
        put_file(str(path), '{"b": 2}\n', refusing, 0o644, *ME, validate=['dockerd', '%s'])
    assert path.read_text() == '{"a": 1}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['daemon.json']


def test_validate_is_not_run_in_check_mode(tmp_path):
    module = _Module(check_mode=True)
    assert put_file(str(tmp_path / "f"), "x\n", module, 0o644, *ME, validate=['false', '%s'])['changed']
    assert module.commands == []


def test_put_files_keeps_the_keys_and_collects_the_diffs(tmp_path):
    same = tmp_path / "same"
    same.write_text("s\n")
    os.chmod(str(same), 0o644)
    done, diffs = put_files([{'dest': str(same), 'content': 's\n', 'key': 'one'},
                             {'dest': str(tmp_path / "new"), 'content': 'n\n', 'mode': '0600', 'key': 'two'}],
                            _Module(), *ME)
    assert [(d['key'], d['changed']) for d in done] == [('one', False), ('two', True)]
    assert [d['after'] for d in diffs] == ['n\n']
    assert _mode(tmp_path / "new") == 0o600


@pytest.mark.parametrize("check_mode", [False, True])
def test_keep_empty_writes_an_empty_file(tmp_path, check_mode):
    path = tmp_path / "env"
    path.write_text("A=1\n")
    os.chmod(str(path), 0o644)
    assert put_file(str(path), '', _Module(check_mode), 0o644, *ME, keep_empty=True)['changed']
    assert path.read_text() == ("A=1\n" if check_mode else "")
    if not check_mode:
        assert not put_file(str(path), '', _Module(), 0o644, *ME, keep_empty=True)['changed']


def test_a_directory_that_cannot_be_written_fails_the_module_with_one_line(tmp_path):
    # a read-only directory (what the rolling upgrade's injected failure mounts): no traceback, the
    # file and its directory named, nothing left behind
    target = tmp_path / "ro" / "gpuops.pref"
    with pytest.raises(Exception) as info:
        put_file(str(target), "Package: *\n", _Module(), 0o644, *ME)
    assert "%s: Destination %s not writable (" % (target, tmp_path / "ro") in str(info.value)
    assert not (tmp_path / "ro").exists()


@pytest.mark.parametrize("there", [0o600, 0o640, 0o644])
def test_keep_mode_keeps_the_users_mode_and_owner_and_writes_the_text(tmp_path, there):
    # a user's file (docker's daemon.json, containerd's config.toml) merged: a stricter mode is never opened up
    path = tmp_path / "daemon.json"
    path.write_text("{}\n")
    os.chmod(str(path), there)
    done, diffs = put_files([{'dest': str(path), 'content': '{"a": 1}\n', 'keep_mode': True}], _Module(), *ME)
    assert done[0]['changed'] and diffs and path.read_text() == '{"a": 1}\n'
    assert _mode(path) == there and kept_attributes(str(path), 0o644, -1, -1) == (there,) + ME
    # the same text again: nothing to do (the mode is the user's, not a drift)
    assert not put_file(str(path), '{"a": 1}\n', _Module(), 0o644, *ME, keep_mode=True)['changed']


def test_keep_mode_of_a_missing_file_or_a_link_uses_the_given_mode(tmp_path):
    assert put_file(str(tmp_path / "new"), "n\n", _Module(), 0o644, *ME, keep_mode=True)['changed']
    assert _mode(tmp_path / "new") == 0o644
    target = tmp_path / "target"
    target.write_text("t\n")
    os.chmod(str(target), 0o600)
    os.symlink(str(target), str(tmp_path / "link"))
    assert kept_attributes(str(tmp_path / "link"), 0o644, 7, 8) == (0o644, 7, 8)
