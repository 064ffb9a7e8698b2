"""core/files.write_atomic: the one atomic writer of the modules (and of the mirror tools)."""
import os
import stat

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import file_current, mark_current, write_atomic


class _Module:
    """Records atomic_move and does what AnsibleModule.atomic_move does to the mode: the new
    file gets the old file's mode."""

    def __init__(self):
        self.moves = []

    def atomic_move(self, src, dest):
        self.moves.append((src, dest))
        if os.path.exists(dest):
            os.chmod(src, stat.S_IMODE(os.stat(dest).st_mode))
        os.rename(src, dest)


@pytest.mark.parametrize("with_module", [True, False])
def test_replaces_the_file_with_the_mode_asked_for(tmp_path, with_module):
    target = tmp_path / "f.txt"
    target.write_text("old\n")
    os.chmod(str(target), 0o600)
    module = _Module() if with_module else None
    write_atomic(str(target), "new\n", 0o644, module=module)
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(os.stat(str(target)).st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]
    if module:
        (src, dest), = module.moves
        assert dest == str(target) and os.path.dirname(src) == str(tmp_path)
        assert os.path.basename(src).startswith(".f.txt.") and src.endswith(".tmp")


def test_the_temporary_name_is_not_predictable(tmp_path):
    """A link planted at a guessable temporary name is not followed."""
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    for pid_name in ("f.txt.tmp.%d" % os.getpid(), ".f.txt.tmp"):
        (tmp_path / pid_name).symlink_to(victim)
    write_atomic(str(tmp_path / "f.txt"), "new\n", 0o644)
    assert victim.read_text() == "keep\n"


def test_a_failed_move_leaves_no_temporary_file(tmp_path):
    class Failing(_Module):
        def atomic_move(self, src, dest):
            raise OSError("no room")
    with pytest.raises(OSError):
        write_atomic(str(tmp_path / "f.txt"), "x", 0o644, module=Failing())
    assert list(tmp_path.iterdir()) == []


ME = (os.getuid(), os.getgid())


def _write(path, data, mode=0o644):
    path.write_bytes(data)
    os.chmod(str(path), mode)
    return str(path)


# (what is on disk, the content wanted, current?)
CURRENT_CASES = [
    ("same bytes, mode 0644", b"deb x\n", 0o644, "deb x\n", True),
    ("other bytes, same size", b"deb y\n", 0o644, "deb x\n", False),
    ("a trailing newline more", b"deb x\n\n", 0o644, "deb x\n", False),
    ("a trailing newline less", b"deb x", 0o644, "deb x\n", False),
    ("same bytes, mode 0600", b"deb x\n", 0o600, "deb x\n", False),
    ("same bytes, setuid bit", b"deb x\n", 0o4644, "deb x\n", False),
    ("non-ASCII content", "# Grüße\n".encode("utf-8"), 0o644, "# Grüße\n", True),
    ("wanted removed, but there", b"deb x\n", 0o644, "", False),
]


@pytest.mark.parametrize("what,on_disk,mode,wanted,current", CURRENT_CASES, ids=[c[0] for c in CURRENT_CASES])
def test_file_current(tmp_path, what, on_disk, mode, wanted, current):
    path = _write(tmp_path / "f.sources", on_disk, mode)
    assert file_current(path, wanted, 0o644, *ME) is current, what


def test_missing_file_is_current_only_when_it_should_be_removed(tmp_path):
    assert file_current(str(tmp_path / "none"), "x\n", 0o644, *ME) is False
    assert file_current(str(tmp_path / "none"), "", 0o644, *ME) is True


def test_owner_and_group_are_compared(tmp_path):
    path = _write(tmp_path / "f", b"x\n")
    assert file_current(path, "x\n", 0o644, ME[0] + 1, ME[1]) is False
    assert file_current(path, "x\n", 0o644, ME[0], ME[1] + 1) is False


def test_a_link_or_a_directory_is_never_current(tmp_path):
    real = _write(tmp_path / "real", b"x\n")
    os.symlink(real, str(tmp_path / "link"))
    (tmp_path / "dir").mkdir()
    assert file_current(str(tmp_path / "link"), "x\n", 0o644, *ME) is False
    assert file_current(str(tmp_path / "dir"), "x\n", 0o644, *ME) is False
    # a dangling link where the file should be gone is still there
    os.symlink(str(tmp_path / "nowhere"), str(tmp_path / "dangling"))
    assert file_current(str(tmp_path / "dangling"), "", 0o644, *ME) is False


def test_mark_current_keeps_every_key(tmp_path):
    path = _write(tmp_path / "a", b"a\n")
    marked = mark_current([{"dest": path, "content": "a\n", "key": "k"},
                           {"dest": str(tmp_path / "b"), "content": "b\n"}], 0o644, *ME)
    assert marked == [{"dest": path, "content": "a\n", "key": "k", "current": True},
                      {"dest": str(tmp_path / "b"), "content": "b\n", "current": False}]
