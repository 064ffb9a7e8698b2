"""Verify gpuops.dlserver.python_stack (venv backend) on Debian 12 lab nodes, after converge,
idempotence and side_effect (bad input refused, spec change converged, re-run idempotent)."""

import json
import os
import shlex

import pytest

PREFIX = "/opt/gpuops/envs"
VERIFY_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                             "plugins", "module_utils", "python_env", "python_stack_verify.py")
STATUS_FILE = "/etc/gpuops/python_stack.json"
MARKER = ".gpuops-python-stack.json"
# What each node was given (molecule.yml host_vars), after side_effect's spec change.
NODES = {
    "pys-uv": {"env": "pytorch", "installer": "uv", "pip": ["torch==2.13.0", "numpy", "tqdm"], "torch": True},
    "pys-pip": {"env": "data", "installer": "pip", "pip": ["numpy", "tqdm"], "torch": False},
}


@pytest.fixture(name="node")
def fixture_node(host):
    return NODES[host.backend.get_hostname()]


@pytest.fixture(name="status")
def fixture_status(host):
    return json.loads(host.file(STATUS_FILE).content_string)


def _marker(host, path):
    return json.loads(host.file(os.path.join(path, MARKER)).content_string)


def test_link_points_at_the_build_of_the_changed_spec(host, node, status):
    link = host.file(os.path.join(PREFIX, node["env"]))
    assert link.is_symlink
    target = link.linked_to
    assert os.path.dirname(target) == PREFIX and os.path.basename(target).startswith("." + node["env"] + "-")
    marker = _marker(host, target)
    assert marker["managed_by"] == "gpuops.dlserver.python_stack"
    assert marker["installer"] == node["installer"]
    assert marker["spec"]["pip"] == node["pip"]
    record = status["environments"][0]
    assert record["name"] == node["env"] and record["hash"] == marker["hash"] and record["target"] == target


def test_the_environment_has_the_new_packages_and_not_the_removed_one(host, node):
    python = os.path.join(PREFIX, node["env"], "bin/python")
    assert host.run("%s -c 'import numpy, tqdm'" % python).rc == 0
    gone = host.run("%s -c 'import lmdb'" % python)
    assert gone.rc != 0 and "No module named 'lmdb'" in gone.stderr


def test_the_previous_build_is_kept_for_rollback_and_failed_builds_are_gone(host, node):
    link_target = os.path.basename(host.file(os.path.join(PREFIX, node["env"])).linked_to)
    entries = host.run("ls -A %s" % PREFIX).stdout.split()
    builds = sorted(e for e in entries if e.startswith("." + node["env"] + "-"))
    assert len(builds) == 2, entries  # python_stack_keep_builds: 1
    previous = [b for b in builds if b != link_target][0]
    old = _marker(host, os.path.join(PREFIX, previous))
    assert "lmdb" in old["spec"]["pip"]
    assert host.run("%s/%s/bin/python -c 'import lmdb'" % (PREFIX, previous)).rc == 0
    # no staging directory, no unmarked build of the failed cases
    assert sorted(entries) == sorted(builds + [node["env"], "handmade"]), entries


def test_the_handmade_venv_is_untouched(host):
    assert host.file(os.path.join(PREFIX, "handmade/USER-FILE")).content_string == "made by hand\n"
    assert not host.file(os.path.join(PREFIX, "handmade", MARKER)).exists
    assert host.file(os.path.join(PREFIX, "handmade/bin/python")).exists


def test_verification_ran_the_mixed_precision_step_on_the_cpu(node, status):
    record = status["environments"][0]
    ver = record["verification"]
    assert ver["ok"] is True, ver
    assert ver["python"].startswith("3.11.")
    assert all(i["ok"] for i in ver["imports"].values())
    assert set(ver["imports"]) == ({"torch", "numpy", "tqdm"} if node["torch"] else {"numpy", "tqdm"})
    if node["torch"]:
        torch = ver["torch"]
        assert torch["version"] == "2.13.0+cpu"
        assert torch["cuda_available"] is False and torch["device"] == "cpu"
        assert torch["dtype"] == "bfloat16" and torch["autocast_dtype"] == "bfloat16"
        assert torch["ok"] is True and torch["grad_scaler"] is False
        assert "CPU (bfloat16 step ok)" in ver["summary"]
        assert {"what": "pytorch_index", "value": "cpu"}.items() <= record["decisions"][0].items()
        assert record["index_urls"][1].endswith("/pytorch/whl/cpu")
    else:
        assert "torch" not in ver and ver["summary"] == "imports ok"


def test_the_live_environment_runs_the_verification_again(host, node):
    # The measurements python_stack_host runs in an environment (its module_utils source, given to
    # the environment's python with -c: nothing of the role is copied to the host for it).
    with open(VERIFY_SOURCE) as handle:
        source = handle.read()
    out = host.run("%s/%s/bin/python -c %s --import numpy%s"
                   % (PREFIX, node["env"], shlex.quote(source), " --import torch" if node["torch"] else ""))
    assert out.rc == 0, out.stderr
    line = [x for x in out.stdout.splitlines() if x.startswith("GPUOPS-VERIFY ")][0]
    result = json.loads(line[len("GPUOPS-VERIFY "):])
    if node["torch"]:
        assert result["torch"]["ok"] is True and result["torch"]["device"] == "cpu"


def test_installers(host, node):
    uv = host.file("/opt/gpuops/python_stack/uv/bin/uv")
    assert uv.exists is (node["installer"] == "uv")
    if uv.exists:
        assert "0.13.9" in host.run("/opt/gpuops/python_stack/uv/bin/uv --version").stdout
    assert host.package("python3-venv").is_installed


def test_env_defaults_on_a_cpu_host(host, status):
    # No GPU in the probe's facts: no NCCL/CUDA defaults (they would be noise), an empty file.
    assert status["env_defaults"] == []
    assert host.file("/etc/gpuops/python_stack.env").content_string == ""
    profile = host.file("/etc/profile.d/gpuops-python-stack.sh")
    assert profile.mode == 0o644
    assert "/opt/gpuops/envs/" in profile.content_string
    assert host.run("bash -lc 'true'").rc == 0
