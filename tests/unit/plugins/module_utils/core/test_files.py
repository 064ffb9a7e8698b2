"""core/files.write_atomic: the one atomic writer of the modules (and of the mirror tools)."""
import os
import stat

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import write_atomic


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
