"""gpuops.dlserver.__private.node_exporter_textfile: reads the marker and os_tuning's status, writes atomically, idempotent."""
import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.modules.__private import node_exporter_textfile
from module_harness import ExitJson, FailJson  # noqa: E402 pylint: disable=wrong-import-order

GPU = {"source": "pci", "gpu_count": 1, "nvswitch_count": 0, "driver": {"loaded": False},
       "gpus": [{"pci_bus_id": "0000:1b:00.0", "architecture": "volta",
                 "pcie": {"current_gen": 3, "max_gen": 3, "current_width": 16, "max_width": 16}}]}


def _run(**args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as info:
            node_exporter_textfile.main()
    return info.value.args[0]


@pytest.fixture
def host(tmp_path):
    (tmp_path / "textfile").mkdir()
    (tmp_path / "reboot-required").write_text("os_tuning: iommu=pt is not active\n")
    (tmp_path / "os_tuning.json").write_text(json.dumps({"package_holds": {"kernel_updates_held_back": {
        "checked": True, "updates": [{"name": "linux-image-amd64"}], "security": []}}}))
    args = dict(path=str(tmp_path / "textfile" / "gpuops.prom"), gpu=GPU, plan={},
                reboot_marker=str(tmp_path / "reboot-required"),
                os_tuning_status_file=str(tmp_path / "os_tuning.json"))
    return tmp_path, args


def test_writes_then_changes_nothing(host):
    path, args = host
    res = _run(**args)
    assert res["changed"] is True
    text = (path / "textfile" / "gpuops.prom").read_text()
    assert "gpuops_gpus_on_pci 1\n" in text
    assert "gpuops_reboot_required 1\n" in text
    assert 'gpuops_kernel_updates_held_back{security="false"} 1\n' in text
    assert res["reboot_pending_roles"] == ["os_tuning"]
    assert oct(os.stat(str(path / "textfile" / "gpuops.prom")).st_mode & 0o777) == "0o644"
    assert [p.name for p in (path / "textfile").iterdir()] == ["gpuops.prom"], "no temporary file left"
    assert _run(**args)["changed"] is False
    (path / "reboot-required").unlink()
    res = _run(**args)
    assert res["changed"] is True and "gpuops_reboot_required 0\n" in (path / "textfile" / "gpuops.prom").read_text()


def test_check_mode_writes_nothing_and_shows_the_diff(host):
    path, args = host
    res = _run(_ansible_check_mode=True, _ansible_diff=True, **args)
    assert res["changed"] is True and "gpuops_gpus_on_pci 1" in res["diff"]["after"]
    assert not (path / "textfile" / "gpuops.prom").exists()


@pytest.mark.parametrize("change,msg", [
    ({"path": "/nonexistent-dir/gpuops.prom"}, "path: the directory /nonexistent-dir does not exist"),
    ({"path": "/tmp/gpuops.txt"}, "must end in .prom"),
])
def test_bad_path(host, change, msg):
    _path, args = host
    args.update(change)
    res = _run(**args)
    assert res["failed"] and msg in res["msg"]


def test_unreadable_status_json_fails_naming_it(host):
    path, args = host
    (path / "os_tuning.json").write_text("{not json")
    res = _run(**args)
    assert res["failed"] and res["msg"].startswith("os_tuning_status_file: ")


def test_writes_through_atomic_move_and_keeps_the_mode(host, monkeypatch):
    """The file is replaced with AnsibleModule.atomic_move (owner, SELinux context), and ends
    with the mode asked for, also where the old file had another one."""
    from ansible.module_utils import basic
    moves = []
    real = basic.AnsibleModule.atomic_move

    def atomic_move(self, src, dest, *args, **kwargs):
        moves.append((os.path.dirname(src), dest))
        return real(self, src, dest, *args, **kwargs)
    monkeypatch.setattr(basic.AnsibleModule, "atomic_move", atomic_move)
    path, args = host
    target = path / "textfile" / "gpuops.prom"
    target.write_text("old\n")
    os.chmod(str(target), 0o600)
    res = _run(mode="0640", **args)
    assert res["changed"] is True
    assert moves == [(str(path / "textfile"), str(target))], "a temporary file beside it, then atomic_move"
    assert oct(os.stat(str(target)).st_mode & 0o777) == "0o640"
    assert [p.name for p in (path / "textfile").iterdir()] == ["gpuops.prom"]


@pytest.mark.parametrize("mode", ["644\n", "0o644", "u=rw", "7777", ""])
def test_a_mode_that_is_not_octal_is_refused(host, mode):
    path, args = host
    res = _run(mode=mode, **args)
    assert res["failed"] and res["msg"].startswith("mode: ")
    assert not (path / "textfile" / "gpuops.prom").exists()
