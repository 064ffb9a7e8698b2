"""gpuops.dlserver.__private.status_file: the status and plan files, written only when they differ."""
import json
import os

import pytest
from ansible.module_utils.testing import patch_module_args
from ansible.plugins.filter.core import to_nice_json

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.status import StatusError, plan_to_record, record_text, status_files
from ansible_collections.gpuops.dlserver.plugins.modules.__private import status_file
from module_harness import ExitJson, FailJson  # noqa: E402 pylint: disable=wrong-import-order

PLAN = {"driver": {"branch": {"value": "570", "from": "newest"}}, "roles": {"node_exporter": {"run": True}}}
STATUS = {"run": True, "reason": "every host runs node_exporter", "listen": "0.0.0.0:9100", "name": "caf\u00e9"}


def _run(**args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as info:
            status_file.main()
    return info.value.args[0]


@pytest.mark.parametrize("value", [STATUS, PLAN, {"b": [1, 2.5, None, False], "a": {"z": "x\ny", "\u00e9": ""}}, {}])
def test_text_is_what_to_nice_json_wrote(value):
    """The roles wrote these files with copy + to_nice_json(sort_keys=true): the same bytes."""
    assert record_text(value) == to_nice_json(value, sort_keys=True) + "\n"


@pytest.mark.parametrize("plan,recorded", [
    (None, False), ({}, False),
    ({"driver": {"branch": {"from": "source", "value": None}}}, False),
    ({"driver": {"branch": {"from": "user", "value": "550"}}}, True),
    ({"roles": {}}, True),
])
def test_plan_to_record(plan, recorded):
    assert (plan_to_record(plan) is not None) is recorded


def test_plan_to_record_refuses_a_non_dict():
    with pytest.raises(StatusError):
        plan_to_record(["not", "a", "plan"])


PLAN = {"roles": {}}


@pytest.mark.parametrize("path,status,plan,expected", [
    ("/etc/gpuops/r.json", {"a": 1}, PLAN, [("/etc/gpuops/r.json", record_text({"a": 1})), ("/p.json", record_text(PLAN))]),
    ("/etc/gpuops/r.json", {"a": 1}, None, [("/etc/gpuops/r.json", record_text({"a": 1}))]),
    (None, None, PLAN, [("/p.json", record_text(PLAN))]),
    (None, None, {"driver": {"branch": {"from": "source"}}}, []),
])
def test_status_files_is_what_one_status_step_writes(path, status, plan, expected):
    """The one list the module writes and the action plugin compares with what this run saw."""
    assert status_files(path, status, plan, "/p.json") == expected


def test_writes_both_creates_the_directory_then_changes_nothing(tmp_path):
    status_path, plan_path = tmp_path / "gpuops" / "node_exporter.json", tmp_path / "gpuops" / "plan.json"
    args = dict(path=str(status_path), status=STATUS, plan=PLAN, plan_path=str(plan_path))
    res = _run(**args)
    assert res["changed"] is True and res["written"] == [str(status_path), str(plan_path)] and res["plan_recorded"]
    assert json.loads(status_path.read_text()) == STATUS and json.loads(plan_path.read_text()) == PLAN
    assert oct(os.stat(str(tmp_path / "gpuops")).st_mode & 0o777) == "0o755"
    assert oct(os.stat(str(status_path)).st_mode & 0o777) == "0o644"
    assert sorted(p.name for p in (tmp_path / "gpuops").iterdir()) == ["node_exporter.json", "plan.json"], "no temporary file left"
    again = _run(**args)
    assert again["changed"] is False and again["written"] == [] and again["diff"] == []


@pytest.mark.parametrize("drift", ["content", "mode", "missing"])
def test_drift_is_repaired(tmp_path, drift):
    path = tmp_path / "os_tuning.json"
    args = dict(path=str(path), status=STATUS, plan_path=str(tmp_path / "plan.json"))
    _run(**args)
    if drift == "content":
        path.write_text(path.read_text().replace("every", "some"))
    elif drift == "mode":
        os.chmod(str(path), 0o600)
    else:
        path.unlink()
    res = _run(**args)
    assert res["changed"] is True and res["written"] == [str(path)]
    assert path.read_text() == record_text(STATUS) and oct(os.stat(str(path)).st_mode & 0o777) == "0o644"
    assert not (tmp_path / "plan.json").exists(), "no plan given: none recorded"


def test_check_mode_writes_nothing_and_shows_each_diff(tmp_path):
    path = tmp_path / "d" / "x.json"
    res = _run(_ansible_check_mode=True, _ansible_diff=True, path=str(path), status=STATUS,
               plan=PLAN, plan_path=str(tmp_path / "d" / "plan.json"))
    assert res["changed"] is True and len(res["diff"]) == 2
    assert res["diff"][0]["before"] == "" and json.loads(res["diff"][0]["after"]) == STATUS
    assert not (tmp_path / "d").exists()


def test_a_plan_left_to_the_source_is_not_recorded(tmp_path):
    res = _run(plan={"driver": {"branch": {"from": "source"}}}, plan_path=str(tmp_path / "plan.json"))
    assert res["changed"] is False and res["plan_recorded"] is False and not (tmp_path / "plan.json").exists()


@pytest.mark.parametrize("args,msg", [
    (dict(path="relative/x.json", status={}), "path: 'relative/x.json' must be an absolute path"),
    (dict(plan=PLAN, plan_path="plan.json"), "plan_path: 'plan.json' must be an absolute path"),
    (dict(path="/tmp/x.json"), "status"),
])
def test_bad_input_fails_naming_it(args, msg):
    res = _run(**args)
    assert res["failed"] and msg in res["msg"]


# ---------------------------------------------------------------- issue 34: only an accepted plan is recorded
import yaml  # noqa: E402

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.status import plan_record_decision  # noqa: E402

_DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "module_utils", "data", "status_plan_record_cases.yml")
with open(_DATA) as _handle:
    RECORD_CASES = yaml.safe_load(_handle)["cases"]


@pytest.mark.parametrize("case", RECORD_CASES, ids=[c["name"] for c in RECORD_CASES])
def test_plan_record_decision(case):
    got = plan_record_decision(case["plan"], case["driver_target"])
    assert got["record"] is case["expect"]["record"]
    for text in case["expect"]["reason_has"]:
        assert text in got["reason"]
    assert (plan_to_record(case["plan"], case["driver_target"]) is not None) is case["expect"]["record"]


def test_a_refused_driver_plan_is_not_written(tmp_path):
    """Issue 34: a run that failed before it acted wrote its refused driver_branch 5800 into plan.json."""
    old = tmp_path / "plan.json"
    old.write_text('{"driver": {"branch": {"value": 580}}}\n')
    refused = {"driver": {"branch": {"value": 5800, "from": "nvidia_driver_branch"}},
               "roles": {"nvidia_driver": {"run": True}}}
    res = _run(plan=refused, plan_path=str(old))
    assert res["changed"] is False and res["plan_recorded"] is False
    assert old.read_text() == '{"driver": {"branch": {"value": 580}}}\n'
    res = _run(plan=refused, plan_path=str(old), driver_target="5800.1.2")
    assert res["changed"] is True and res["plan_recorded"] is True and json.loads(old.read_text()) == refused
