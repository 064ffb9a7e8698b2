"""The driver change as one step (plugins/module_utils/packages/driver_transaction.py) from
driver_transaction_cases.yml, and the restore of a failed change (driver_resolve.restore) with
the commands mocked: restored and read back, a restore command that fails, check mode."""

import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_resolve
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_transaction as txn
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "driver_transaction_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


@pytest.mark.parametrize("case", CASES["stale_holds"], ids=[c["name"] for c in CASES["stale_holds"]])
def test_stale_holds(case):
    result = txn.stale_holds(case["family"], case["pinned"], case["previous"])
    assert result["release"] == case["release"]
    assert case["reason"] in result["reason"], result["reason"]


@pytest.mark.parametrize("case", CASES["restore"], ids=[c["name"] for c in CASES["restore"]])
def test_restore_plan_and_differences(case):
    plan = txn.restore_plan(case["before"], case["now"])
    assert [w["dest"] for w in plan["write"]] == case["write"]
    for entry in plan["write"]:
        assert entry["content"] == case["before"]["files"][entry["dest"]]
    for key in ("remove", "install", "hold", "unhold", "items"):
        assert plan[key] == case[key], key
    assert txn.differences(case["before"], case["now"]) == case["differences"]
    # after a complete restore nothing differs
    assert txn.differences(case["before"], case["before"]) == []


@pytest.mark.parametrize("case", CASES["refused"], ids=[c["name"] for c in CASES["refused"]])
def test_names_versions_and_paths_are_checked(case):
    with pytest.raises(ValueError) as info:
        txn.restore_plan(case["snapshot"], {})
    assert case["word"] in str(info.value)


def test_outcome_messages():
    before = CASES["restore"][0]["before"]
    now = CASES["restore"][0]["now"]
    pin = "/etc/apt/preferences.d/gpuops-nvidia-driver.pref"
    plan = txn.restore_plan(before, now)
    done = txn.outcome("Install the driver at its pinned version (apt)", "held broken packages", "535.309.01",
                       "535.261.03", plan, [], before, pin)
    assert done["restored"] is True and done["changed"] is True
    assert done["step"] == "Install the driver at its pinned version (apt)"
    assert 'failed at "Install the driver at its pinned version (apt)": held broken packages' in done["msg"]
    assert "Restored to driver 535.261.03 (rewrote %s as it was (Pin: version 535.261.03-*)" % pin in done["msg"]
    assert "held nvidia-smi again" in done["msg"]
    assert "The node now has libcuda1 535.261.03-1 held" in done["msg"]
    assert "%s (Pin: version 535.261.03-*)" % pin in done["now"]
    half = txn.outcome("x", "y", "535.309.01", "535.261.03", plan, ["libcuda1: a before, b now"], now, pin,
                       restore_error="apt-mark hold failed (rc 1)")
    assert half["restored"] is False
    assert "did NOT complete (apt-mark hold failed (rc 1)); still different from before: libcuda1" in half["msg"]
    assert "half-changed" in half["msg"] and "535.261.03-1 not held" in half["msg"]
    check = txn.outcome("x", "y", "535.309.01", "535.261.03", plan, [], now, pin, check_mode=True)
    assert check["changed"] is False and "Check mode: nothing on the host was changed" in check["msg"]
    assert "Restored" not in check["msg"]


def test_failure_message_names_the_failed_items_of_a_loop_task():
    """A failed loop task (the repository files and the pin) says only "One or more items failed"."""
    failure = {"task": "Write the repository files, the keyring and the version pin", "msg": "One or more items failed",
               "results": [{"changed": False, "item": {"dest": "/etc/apt/sources.list.d/x.sources"}},
                           {"failed": True, "msg": "Destination /etc/apt/preferences.d not writable",
                            "_ansible_item_label": "/etc/apt/preferences.d/gpuops-nvidia-driver.pref"},
                           {"failed": True, "item": {"dest": "/etc/apt/preferences.d/y.pref"}}, "garbage"]}
    assert txn.failure_message(failure) == (
        "One or more items failed (/etc/apt/preferences.d/gpuops-nvidia-driver.pref: Destination "
        "/etc/apt/preferences.d not writable; /etc/apt/preferences.d/y.pref: no message)")
    assert txn.failure_message({"msg": " held broken packages\n"}) == "held broken packages"
    assert txn.failure_message({}) == "no message"
    assert txn.failure_message(None) == "no message"


class FakeHost(object):
    """dpkg-query answers from ``self.packages``; apt-get and apt-mark change it (or fail)."""

    def __init__(self, packages, fail=None, check_mode=False):
        self.packages, self.fail, self.ran = packages, fail or (), []
        self.module = type("Module", (), {"check_mode": check_mode})()

    def run(self, args, check=True, what=None, env=None):
        self.ran.append(list(args))
        if args[0] in self.fail:
            if check:
                raise Failure("%s failed (rc 100): E: injected" % (what or args[0]), rc=100)
            return 100, "", "E: injected"
        if args[0] == "dpkg-query":
            out = "".join("%s\t%s\t%si \n" % (n, r["version"], "h" if r["held"] else "i")
                          for n, r in sorted(self.packages.items()))
            return 0, out, ""
        if args[0] == "apt-get":
            for item in args[args.index("install") + 1:]:
                if item.endswith("-"):
                    self.packages.pop(item[:-1], None)
                else:
                    name, version = item.split("=")
                    held = self.packages.get(name, {}).get("held", False)
                    self.packages[name] = {"version": version, "held": held}
        if args[0] == "apt-mark":
            for name in args[2:]:
                self.packages[name]["held"] = args[1] == "hold"
        return 0, "", ""

    def read(self, path):
        with open(path) as handle:
            return handle.read()


def _params(tmp_path, before_pin, now_pin, packages):
    pin = str(tmp_path / "gpuops-nvidia-driver.pref")
    if now_pin is not None:
        with open(pin, "w") as handle:
            handle.write(now_pin)
    state = {"target": "580.105.08",
             "transaction": {"before": {"files": {pin: before_pin}, "packages": packages}, "previous": "580.95.05"}}
    return pin, {"state": state, "platform": {"preferences_file": pin},
                 "failure": {"task": "Install the driver at its pinned version (apt)", "msg": "E: injected"}}


def test_restore_puts_back_reads_back_and_says_so(tmp_path):
    before = {"nvidia-driver-cuda": {"version": "580.95.05-1", "held": True}}
    pin, params = _params(tmp_path, "Pin: version 580.95.05-*\n", "Pin: version 580.105.08-*\n", before)
    host = FakeHost({"nvidia-driver-cuda": {"version": "580.105.08-1", "held": False},
                     "nvidia-kernel-dkms": {"version": "580.105.08-1", "held": False}})
    record = driver_resolve.restore(params, host)
    assert record["restored"] is True, record["msg"]
    with open(pin) as handle:
        assert handle.read() == "Pin: version 580.95.05-*\n"
    assert host.packages == before
    assert ["apt-get", "-q", "-y", "--no-install-recommends", "--allow-downgrades", "--allow-change-held-packages",
            "install", "nvidia-driver-cuda=580.95.05-1", "nvidia-kernel-dkms-"] in host.ran
    assert "Restored to driver 580.95.05" in record["msg"]
    assert "%s (Pin: version 580.95.05-*)" % pin in record["msg"]


def test_restore_that_fails_says_the_node_is_half_changed(tmp_path):
    before = {"nvidia-driver-cuda": {"version": "580.95.05-1", "held": True}}
    pin, params = _params(tmp_path, "Pin: version 580.95.05-*\n", "Pin: version 580.105.08-*\n", before)
    host = FakeHost({"nvidia-driver-cuda": {"version": "580.105.08-1", "held": False}}, fail=("apt-get",))
    record = driver_resolve.restore(params, host)
    assert record["restored"] is False
    assert "did NOT complete (apt-get install (the previous driver packages) failed (rc 100): E: injected)" \
        in record["msg"]
    assert "nvidia-driver-cuda: 580.95.05-1 held before, 580.105.08-1 not held now" in record["msg"]
    # the pin was put back before apt ran; the read-back says what is left
    assert record["remaining"] == ["nvidia-driver-cuda: 580.95.05-1 held before, 580.105.08-1 not held now"]


def test_restore_in_check_mode_changes_nothing(tmp_path):
    before = {"nvidia-driver-cuda": {"version": "580.95.05-1", "held": True}}
    pin, params = _params(tmp_path, None, "Pin: version 580.105.08-*\n", before)
    host = FakeHost({"nvidia-driver-cuda": {"version": "580.95.05-1", "held": True}}, check_mode=True)
    record = driver_resolve.restore(params, host)
    assert os.path.exists(pin)
    assert [args[0] for args in host.ran] == ["dpkg-query"]
    assert record["changed"] is False and "Check mode" in record["msg"]


def test_restore_without_snapshot_says_unknown():
    record = driver_resolve.restore({"state": {"target": "580.105.08", "transaction": {
        "before": None, "release_reason": "dnf: no snapshot"}}, "platform": {}, "failure": {}}, FakeHost({}))
    assert record["restored"] is False
    assert "Nothing was restored (dnf: no snapshot); what the node now has is unknown" in record["msg"]
