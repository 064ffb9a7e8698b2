"""bmc/recovery.py and bmc/credentials.py: whether the reboot handler power-cycles a host through its
BMC (only a host this play took down and that did not come back in time, once, with valid inputs),
the one line it reports, and the BMC inputs' careless values refused naming the variable, the
password in no message (data/bmc_recovery_cases.yml, data/bmc_credentials_cases.yml)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import credentials, recovery

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "data", "bmc_recovery_cases.yml")) as _fh:
    RECOVERY = yaml.safe_load(_fh)
with open(os.path.join(HERE, "data", "bmc_credentials_cases.yml")) as _fh:
    CREDENTIALS = yaml.safe_load(_fh)["cases"]
PASSWORDS = ["s3cret-Pw.1", "pa ss;rm -rf /", "a@b%c+d=e:f,g/h^i-j", "pw\nx", "pass word", "pa'ss\"w", "$(id)`x`",
             "pa\\ss", "abcdefghijklmnopqrstu"]


@pytest.mark.parametrize("case", RECOVERY["decide"], ids=[c["id"] for c in RECOVERY["decide"]])
def test_decide(case):
    state = dict(RECOVERY["defaults"], **case["state"])
    got = recovery.decide(state)
    assert got["action"] == case["action"]
    assert case["reason"] in got["reason"], got["reason"]
    assert got["reason"].startswith("gpu-07")
    password = state["inputs"].get("gpuops_bmc_password")
    assert password not in got["reason"]


@pytest.mark.parametrize("case", RECOVERY["report"], ids=[c["id"] for c in RECOVERY["report"]])
def test_report(case):
    got = recovery.report(case["decision"], case["powered"], case["back"], case["error"],
                          secret=RECOVERY["defaults"]["inputs"]["gpuops_bmc_password"])
    want = case["expect"]
    assert (got["power_cycled"], got["back"]) == (want["power_cycled"], want["back"])
    assert want["message"] in got["message"], got["message"]
    assert "\n" not in got["message"] and "s3cret-Pw.1" not in got["message"]


@pytest.mark.parametrize("case", CREDENTIALS, ids=[c["id"] for c in CREDENTIALS])
def test_credentials(case):
    inputs = dict(case["inputs"])
    if inputs.get("bmc_address") == "LONG_ADDRESS":
        inputs["bmc_address"] = "a" * 300
    found = credentials.problems(inputs)
    assert len(found) == len(case["expect"]), found
    for problem, want in zip(found, case["expect"]):
        assert want in problem, problem
    for problem in found:
        for password in PASSWORDS:
            assert password not in problem


def test_the_password_is_in_no_message_whatever_it_is():
    for password in PASSWORDS:
        for problem in credentials.problems({"gpuops_bmc_recovery": True, "gpuops_bmc_password": password,
                                             "bmc_address": "", "gpuops_bmc_user": ""}):
            assert password not in problem


def test_only_a_timeout_after_the_reboot_command_is_mended():
    base = dict(RECOVERY["defaults"], enabled=True, attempts=0)
    assert recovery.decide(dict(base, reboot_issued=True, failure="Timed out waiting for last boot time check "
                                                                  "(timeout=600)"))["action"] == "power_cycle"
    for issued in (False, None, "true", 1):
        assert recovery.decide(dict(base, reboot_issued=issued, failure="Timed out waiting"))["action"] == "none"
    assert recovery.decide(dict(base, enabled="true", reboot_issued=True, failure="Timed out"))["action"] == "none"


SKIPPED = {"changed": False, "skipped": True, "skip_reason": "Conditional result was False"}


@pytest.mark.parametrize("power, wait, expected", [
    # the decision was not to power-cycle: both steps skipped
    (SKIPPED, SKIPPED, (False, False, "")),
    (None, None, (False, False, "")),
    # the BMC refused (ignore_errors kept the host going): the wait was skipped
    ({"failed": True, "msg": "Unable to establish IPMI v2 / RMCP+ session"}, SKIPPED,
     (False, False, "Unable to establish IPMI v2 / RMCP+ session")),
    # the BMC took it, the host did not answer again
    ({"changed": True, "powerstate": "on"}, {"failed": True, "msg": "timed out waiting for connection"},
     (True, False, "timed out waiting for connection")),
    ({"changed": True, "powerstate": "on"}, {"changed": False, "elapsed": 42}, (True, True, "")),
    # a failed result without a message still says something
    ({"failed": True}, SKIPPED, (False, False, "no message")),
])
def test_the_outcome_is_read_from_the_registered_steps(power, wait, expected):
    assert recovery.outcome(power, wait) == expected


@pytest.mark.parametrize("power, wait", [("ok", None), (None, ["failed"]), (True, None)])
def test_a_result_that_is_not_a_registered_result_is_refused(power, wait):
    with pytest.raises(ValueError, match="registered result"):
        recovery.outcome(power, wait)
