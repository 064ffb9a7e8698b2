"""gpuops.dlserver.__private.storage_host: apply_queue writes only what differs (never in check mode),
verify skips in check mode, a refused plan fails naming the drive before any change."""
import pytest
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.modules.__private import storage_host
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import host as host_utils
from module_harness import ExitJson, FailJson  # noqa: E402 pylint: disable=wrong-import-order


def _run(**args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as info:
            storage_host.main()
    return info.value.args[0]


@pytest.fixture(name="queue")
def fixture_queue(tmp_path):
    ahead, sched = tmp_path / "read_ahead_kb", tmp_path / "scheduler"
    ahead.write_text("128\n")
    sched.write_text("none [mq-deadline] kyber\n")
    plan = {"queue": [
        {"drive": "loop3", "attribute": "read_ahead_kb", "path": str(ahead), "value": "4096"},
        {"drive": "loop3", "attribute": "scheduler", "path": str(sched), "value": "mq-deadline"}]}
    return ahead, sched, plan


def test_apply_queue_writes_what_differs_only(queue):
    ahead, sched, plan = queue
    res = _run(action="apply_queue", inputs={}, plan=plan)
    assert res["changed"] and res["written"] == [str(ahead)]
    assert ahead.read_text() == "4096" and sched.read_text() == "none [mq-deadline] kyber\n"


def test_apply_queue_in_check_mode_writes_nothing(queue):
    ahead, _sched, plan = queue
    res = _run(action="apply_queue", inputs={}, plan=plan, _ansible_check_mode=True)
    assert res["changed"] and res["written"] == [str(ahead)] and ahead.read_text() == "128\n"


def test_apply_queue_fails_on_a_file_that_is_not_there(tmp_path):
    plan = {"queue": [{"drive": "sdz", "attribute": "read_ahead_kb", "path": str(tmp_path / "nope"), "value": "1"}]}
    res = _run(action="apply_queue", inputs={}, plan=plan)
    assert res["failed"] and "is sdz a block device here" in res["msg"]


def test_verify_skips_in_check_mode():
    res = _run(action="verify", inputs={}, plan={"apply": [{"name": "x"}]}, _ansible_check_mode=True)
    assert res.get("skipped") and res["problems"] == []


def test_a_refused_plan_fails_before_any_change(monkeypatch):
    drive = {"name": "sdb", "path": "/dev/sdb", "type": "disk", "size": 10 ** 12, "present": True, "system": [],
             "contents": [["filesystem", "an ext4 filesystem labelled old"]], "fstype": "ext4", "uuid": "u",
             "mountpoints": []}
    monkeypatch.setattr(host_utils, "read_host", lambda *a, **kw: {
        "source": "lsblk", "drives": [drive], "mounts": [], "queues": {}, "resolved": {}, "machine_id": "m",
        "md_driver": False, "in_container": False, "tools": {}})
    res = _run(inputs={"volumes": [{"name": "d", "drives": {"paths": ["/dev/sdb"]}, "mount_point": "/data"}]})
    assert res["failed"] and "nothing was changed" in res["msg"]
    assert "/dev/sdb holds data (an ext4 filesystem labelled old)" in res["msg"]
