"""gpuops.dlserver.mirror_index: the module around module_utils/packages/mirror.py (the logic has its
own case tables in tests/unit/plugins/module_utils/)."""
import hashlib
import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.modules import mirror_index
from module_harness import ExitJson, FailJson  # noqa: E402 pylint: disable=wrong-import-order


def _run(**args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as info:
            mirror_index.main()
    return info.value.args[0]


@pytest.fixture
def mirror(tmp_path):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "x.deb").write_bytes(b"x")
    (tmp_path / "SHA256SUMS").write_text("%s  apt/cuda/Packages\n" % ("a" * 64))
    return tmp_path, "sha256:" + hashlib.sha256(b"x").hexdigest()


def test_records_and_keeps_other_lines(mirror):
    path, checksum = mirror
    res = _run(path=str(path), artifacts=[{"path": "files/x.deb", "checksum": checksum}])
    assert res["changed"] is True and res["added"] == ["files/x.deb"] and res["kept"] == 1
    assert (path / "SHA256SUMS").read_text() == "%s  apt/cuda/Packages\n%s  files/x.deb\n" % ("a" * 64, checksum[7:])
    again = _run(path=str(path), artifacts=[{"path": "files/x.deb", "checksum": checksum}])
    assert again["changed"] is False


def test_check_mode_and_diff_write_nothing(mirror):
    path, checksum = mirror
    before = (path / "SHA256SUMS").read_text()
    res = _run(path=str(path), artifacts=[{"path": "files/x.deb", "checksum": checksum}],
               _ansible_check_mode=True, _ansible_diff=True)
    assert res["changed"] is True
    assert res["diff"]["before"] == before and "files/x.deb" in res["diff"]["after"]
    assert (path / "SHA256SUMS").read_text() == before


def test_a_file_that_differs_fails_naming_it(mirror):
    path, dummy = mirror
    res = _run(path=str(path), artifacts=[{"path": "files/x.deb", "checksum": "sha256:" + "0" * 64}])
    assert res["failed"] and "files/x.deb: sha256 is" in res["msg"]


def test_validate_only_touches_nothing(tmp_path):
    res = _run(path=str(tmp_path / "nowhere"), validate_only=True,
               artifacts=[{"path": "../x", "url": "u", "checksum": "md5:1"}, {"path": "ok", "checksum": "sha256:" + "0" * 64}])
    assert res["failed"] and res["msg"].startswith("gpuops.dlserver.mirror: bad input, nothing was fetched")
    assert "gpuops_mirror_artifacts entries need" in res["msg"]
    # entry 0: its path leaves the mirror, its url has no scheme, its checksum is no sha256; entry 1: no url
    assert [p.split(":")[0].split(" ")[0] for p in res["problems"]] == [
        "gpuops_mirror_artifacts[0].path", "gpuops_mirror_artifacts[0].url", "gpuops_mirror_artifacts[0].checksum",
        "gpuops_mirror_artifacts[1]"]
    assert "md5" in res["problems"][2] and "(ok).url is empty" in res["problems"][3]
    assert not (tmp_path / "nowhere").exists()
    ok = _run(path=str(tmp_path / "nowhere"), validate_only=True,
              artifacts=[{"path": "files/x", "url": "https://v.example/x", "checksum": "sha256:" + "0" * 64}])
    assert ok["changed"] is False and ok["problems"] == []


@pytest.mark.parametrize("args,named", [
    ({"path": "/"}, "gpuops_mirror_dir: '/' is the root directory"),
    ({"path": "/srv"}, "gpuops_mirror_dir: '/srv' is a system directory"),
    ({"path": "srv/mirror"}, "gpuops_mirror_dir: 'srv/mirror' is a relative path"),
    ({"path": "/srv/m\nx"}, "gpuops_mirror_dir must be"),
    ({"mirror_url": "ftp://mirror.example/gpuops"}, "gpuops_mirror_url: ftp:// cannot be used"),
    ({"host": "all"}, "gpuops_mirror_host: 'all' names every host"),
    ({"host": "mirror*"}, "gpuops_mirror_host: 'mirror*' is a host pattern"),
    ({"host": "mirror-01\n"}, "gpuops_mirror_host must be one inventory host name on one line"),
])
def test_validate_only_names_each_mirror_variable(tmp_path, args, named):
    base = {"path": str(tmp_path / "mirror"), "validate_only": True,
            "artifacts": [{"path": "files/x", "url": "http://v.example/x", "checksum": "sha256:" + "0" * 64}]}
    res = _run(**dict(base, **args))
    assert res["failed"] and len(res["problems"]) == 1 and res["problems"][0].startswith(named), res["problems"]
    assert not (tmp_path / "mirror").exists()


def test_missing_mirror_directory(tmp_path):
    res = _run(path=str(tmp_path / "nowhere"), scan=["apt"])
    assert res["failed"] and "does not exist" in res["msg"]


def test_the_index_is_written_through_atomic_move(mirror, monkeypatch):
    from ansible.module_utils import basic
    moves = []
    real = basic.AnsibleModule.atomic_move

    def atomic_move(self, src, dest, *args, **kwargs):
        moves.append(dest)
        return real(self, src, dest, *args, **kwargs)
    monkeypatch.setattr(basic.AnsibleModule, "atomic_move", atomic_move)
    path, checksum = mirror
    os.chmod(str(path / "SHA256SUMS"), 0o600)
    res = _run(path=str(path), artifacts=[{"path": "files/x.deb", "checksum": checksum}])
    assert res["changed"] is True
    assert moves == [str(path / "SHA256SUMS")]
    assert oct(os.stat(str(path / "SHA256SUMS")).st_mode & 0o777) == "0o644", "the web server reads it"
    assert sorted(p.name for p in path.iterdir()) == ["SHA256SUMS", "files"]
