"""module_utils/core/run_state.py: what belongs to this run (issue 35: a plan is never stale)."""
import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import run_state as rs

PROBE = {"gpu_count": 8, "gpus": [{"pci_bus_id": "0000:1b:00.0"}]}
INPUTS = {"node_exporter": {"listen_address": ":9100"}, "os_tuning": {"reboot": False}}
RECORD = rs.made_from("100-5", PROBE, INPUTS)


@pytest.mark.parametrize("record,run,probe,role,inputs,want,reason", [
    (RECORD, "100-5", PROBE, None, None, True, "made in this run"),
    (RECORD, "100-5", PROBE, "node_exporter", INPUTS["node_exporter"], True, "made in this run"),
    (None, "100-5", PROBE, None, None, False, "no plan was made in this run"),
    ("doctored", "100-5", PROBE, None, None, False, "no plan was made in this run"),
    (RECORD, "101-7", PROBE, None, None, False, "made in another run"),
    (RECORD, "100-5", dict(PROBE, gpu_count=7), None, None, False, "another probe"),
    (RECORD, "100-5", None, None, None, False, "another probe"),
    (RECORD, "100-5", PROBE, "node_exporter", {"listen_address": ":9101"}, False, "other inputs of node_exporter"),
    (RECORD, "100-5", PROBE, "gpu_validate", {}, False, "other inputs of gpu_validate"),
], ids=["same", "same-role", "none", "not-a-dict", "other-run", "other-probe", "no-probe", "other-inputs",
        "role-not-planned"])
def test_plan_current(record, run, probe, role, inputs, want, reason):
    got, why = rs.plan_current(record, run, probe, role, inputs)
    assert got is want
    assert reason in why


def test_digest_is_stable_over_key_order_and_types():
    assert rs.digest({"a": 1, "b": [1, 2]}) == rs.digest({"b": [1, 2], "a": 1})
    assert rs.digest({"a": 1}) != rs.digest({"a": "1"})
    assert rs.digest({"a": "x\ny"}) != rs.digest({"a": "x y"})


def test_probe_of_takes_only_a_registered_gpu_facts_result():
    assert rs.probe_of({"ansible_facts": {"gpuops_gpu": PROBE}, "changed": False}) == PROBE
    for bad in (None, "x", {}, {"ansible_facts": None}, {"ansible_facts": {"gpuops_gpu": "8"}}, {"gpuops_gpu": PROBE}):
        assert rs.probe_of(bad) is None


def test_computed_extra_vars_names_only_what_the_collection_computes():
    names = {"gpuops_plan", "__nvidia_driver", "nvidia_driver_branch", "__common", "__not_a_role", "gpuops_sysfs_root"}
    assert rs.computed_extra_vars(names, ["nvidia_driver", "common"]) == ["__common", "__nvidia_driver", "gpuops_plan"]
    assert rs.computed_extra_vars(set(), ["nvidia_driver"]) == []


def test_run_id_has_the_start_time_of_the_process(tmp_path):
    (tmp_path / "4242").mkdir()
    (tmp_path / "4242" / "stat").write_text("4242 (ansible-playbook) S " + " ".join(["0"] * 18) + " 987654 0\n")
    assert rs.run_id(4242, str(tmp_path)) == "4242-987654"
    assert rs.run_id(4343, str(tmp_path)) == "4343-"
