"""The converged fast path of python_stack (module_utils/python_env/stack_fast_path.py, its case
table data/python_stack_fast_path_cases.yml), the status that keeps the last verification, and
the host read stack_host.read_current on real files (edited, re-moded: not current)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_fast_path as sf
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_host
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_status

HERE = os.path.dirname(os.path.dirname(__file__))
with open(os.path.join(HERE, "data", "python_stack_fast_path_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
VERIFIED = {"ok": True, "hash": "abc123", "expect_gpu": False, "summary": "torch 2.13.0 CPU (bfloat16 step ok)"}
BASE_ENV = {"name": "pytorch", "state": "present", "action": "none", "verify": True, "hash": "abc123",
            "kernel_current": None, "previous_verification": VERIFIED}
BASE_CURRENT = {"os_packages": True, "directories": True, "uv": True, "conda": None, "profile": True,
                "env_file_dir": True, "env_file": True}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_fast_path(case):
    current = dict(BASE_CURRENT, **case.get("current", {}))
    current = dict((k, v) for k, v in current.items() if v != "MISSING")
    env = dict(BASE_ENV, **case.get("env", {}))
    result = sf.fast_path(current, [env], case.get("verify", True))
    assert result == {"converged": case.get("converged", False), "drift": case.get("drift", [])}


PREVIOUS = {"environments": [{"name": "pytorch", "hash": "abc123", "verification": VERIFIED}]}


@pytest.mark.parametrize("env, previous, expect_gpu, verify, kept", [
    ({}, PREVIOUS, False, True, True),
    ({"hash": "def456"}, PREVIOUS, False, True, False),          # another build
    ({}, PREVIOUS, True, True, False),                           # the driver came: CUDA expected now
    ({}, {"environments": [{"name": "pytorch", "hash": "abc123",
                            "verification": dict(VERIFIED, ok=None)}]}, False, True, False),  # not verified
    ({}, None, False, True, False),                              # no status yet
    ({}, {"environments": "garbage"}, False, True, False),
    ({"action": "build"}, PREVIOUS, False, True, False),
    ({"verify": False}, PREVIOUS, False, True, False),
    ({}, PREVIOUS, False, False, False),
    ({"name": "other"}, PREVIOUS, False, True, False),
])
def test_previous_verification(env, previous, expect_gpu, verify, kept):
    got = sf.previous_verification(dict(BASE_ENV, **env), previous, expect_gpu, verify)
    assert (got == VERIFIED) if kept else got is None


def test_uv_requirement_is_what_the_role_wrote():
    assert sf.uv_requirement("0.13.9", "d7f4") == "uv==0.13.9 --hash=sha256:d7f4\n"


def _plan_env():
    return {"name": "pytorch", "backend": "venv", "state": "present", "python": "3.11", "hash": "abc123",
            "link": "/opt/gpuops/envs/pytorch", "target": "/opt/gpuops/envs/.pytorch-abc123",
            "spec": {"pip": ["torch"], "conda": [], "index_url": "", "extra_index_urls": []},
            "decisions": [], "action": "none", "verify": True, "previous_verification": VERIFIED}


def test_status_keeps_the_previous_verification():
    """A no-op run records what the run that verified the build recorded: the file does not change."""
    fresh = stack_status.status({"environments": [_plan_env()]},
                                {"results": [{"item": {"name": "pytorch"}, "verification": dict(VERIFIED, seconds=3.2)}]},
                                True)
    noop = stack_status.status({"environments": [_plan_env()]}, {}, True)
    assert fresh == noop
    unverified = stack_status.status({"environments": [dict(_plan_env(), previous_verification=None)]}, {}, True)
    assert unverified["environments"][0]["verification"]["ok"] is None


class _Module(object):
    """What read_current asks of AnsibleModule: its parameters, and no package tool on this host."""

    def __init__(self, home, packages=()):
        self.params = {"home": home, "os_packages": list(packages)}

    def get_bin_path(self, name):
        return None

    def fail_json(self, **kwargs):
        raise AssertionError(kwargs["msg"])


def _write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)


@pytest.mark.skipif(os.getuid() != 0, reason="the role's files are root's: the read compares owner 0")
def test_read_current_on_real_files(tmp_path):
    home, prefix = str(tmp_path / "home"), str(tmp_path / "envs")
    inputs = {"prefix": prefix, "cache_dir": "", "installer": "uv", "uv_version": "0.13.9",
              "profile_file": str(tmp_path / "profile.d" / "p.sh"), "env_file": str(tmp_path / "etc" / "p.env")}
    plan = {"backends": ["venv"], "uv_requirement": sf.uv_requirement("0.13.9", "d7f4"), "condarc": "",
            "profile": "export A=1\n", "env_file": "A=1\n"}
    for d in (home, prefix, os.path.dirname(inputs["env_file"])):
        os.makedirs(d)
        os.chmod(d, 0o755)
    os.makedirs(os.path.join(home, "uv", "uv-0.13.9.dist-info"))
    _write(os.path.join(home, "uv-requirements.txt"), plan["uv_requirement"])
    _write(inputs["profile_file"], plan["profile"])
    _write(inputs["env_file"], plan["env_file"])
    module = _Module(home)
    current = stack_host.read_current(module, inputs, plan)
    assert current == dict(BASE_CURRENT, os_packages=True)
    assert sf.fast_path(current, [BASE_ENV], True)["converged"]
    _write(inputs["profile_file"], "export A=2\n")                      # edited
    os.chmod(inputs["env_file"], 0o600)                                # re-moded
    os.chmod(prefix, 0o777)
    os.rmdir(os.path.join(home, "uv", "uv-0.13.9.dist-info"))          # uv removed
    current = stack_host.read_current(module, inputs, plan)
    assert current == dict(BASE_CURRENT, directories=False, uv=False, profile=False, env_file=False)
    assert sf.fast_path(current, [BASE_ENV], True)["drift"] == [
        "the role's directories", "uv (requirement file and install)", "the profile script", "the environment file"]
    # A host without framework defaults: the environment file is empty, and current as such.
    empty = dict(plan, env_file="", profile="export A=2\n")
    _write(inputs["env_file"], "")
    assert stack_host.read_current(module, inputs, empty)["env_file"] is True
    _write(inputs["env_file"], "", mode=0o600)
    assert stack_host.read_current(module, inputs, empty)["env_file"] is False
    os.unlink(inputs["env_file"])
    assert stack_host.read_current(module, inputs, empty)["env_file"] is False
    with pytest.raises(AssertionError, match="os_packages"):
        stack_host.read_current(_Module(home, ["python3-venv; rm -rf /"]), inputs, plan)
