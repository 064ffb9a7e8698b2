# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.dlserver.__private.python_stack_host through AnsibleModule, for real: venvs are built with this
Python and pip from a local PEP 503 index (file://) holding two tiny wheels made here.

Proves the atomic swap: a build, a no-op, a spec change beside the old build, a failed
install that leaves the previous environment importable, a hand-made venv left alone (and
taken over with python_stack_adopt, kept beside the builds), check mode, and the plan's refusals."""
import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile

import pytest
import yaml
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import python_stack as ps
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_host

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import indexes as ix

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import requirements as rq
from ansible_collections.gpuops.dlserver.plugins.modules.__private import python_stack_host
from module_harness import ExitJson, FailJson  # noqa: E402 pylint: disable=wrong-import-order

ROLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "python_stack"))


def _wheel(directory, name, version):
    """A minimal pure-Python wheel whose module ``name`` has ``__version__``."""
    dist = "%s-%s" % (name, version)
    files = {"%s.py" % name: "__version__ = %r\n" % version,
             "%s.dist-info/METADATA" % dist: "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version),
             "%s.dist-info/WHEEL" % dist: "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(text)))
    record.append("%s.dist-info/RECORD,," % dist)
    path = os.path.join(directory, "%s-py3-none-any.whl" % dist)
    with zipfile.ZipFile(path, "w") as archive:
        for name_, text in files.items():
            archive.writestr(name_, text)
        archive.writestr("%s.dist-info/RECORD" % dist, "\n".join(record) + "\n")
    return os.path.basename(path)


@pytest.fixture(name="index", scope="module")
def fixture_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("index")
    files = root / "files"
    files.mkdir()
    for name in ("gpuops_alpha", "gpuops_beta"):
        wheel = _wheel(str(files), name, "1.0")
        digest = hashlib.sha256((files / wheel).read_bytes()).hexdigest()
        page = root / "simple" / rq.canonical(name)
        page.mkdir(parents=True)
        (page / "index.html").write_text(ix.simple_project_page(name, [(wheel, digest)], "../../files/"))
    return "file://%s/simple" % root


def _inputs(tmp_path, index, envs):
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        data = yaml.safe_load(handle)
    inputs = dict((k[len("python_stack_"):], v) for k, v in data.items())
    inputs.update({"environments": envs, "prefix": str(tmp_path / "envs"), "pip_index_url": index,
                   "pytorch_index_url": "", "cache_dir": ""})
    return inputs


def _call(args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as exc:
            python_stack_host.main()
    return exc.type is ExitJson, exc.value.args[0]


def _plan(tmp_path, index, envs, monkeypatch, gpu=None):
    monkeypatch.setattr(stack_host, "_python_for", lambda version: sys.executable if version == "3.11" else None)
    return _call({"action": "plan", "inputs": _inputs(tmp_path, index, envs), "gpu": gpu or {}})


def _converge(env, **extra):
    args = {"action": "converge", "environment": env, "tools": {"uv": ""}, "keep_builds": 1,
            "kernel_dir": "/usr/local/share/jupyter/kernels"}
    args.update(extra)
    return _call(args)


def _imports(link, module):
    return subprocess.run([os.path.join(link, "bin", "python"), "-c", "import %s" % module],
                          capture_output=True, check=False).returncode == 0


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the plan is pinned to Python 3.11 here")
def test_build_noop_change_failure_and_handmade(tmp_path, index, monkeypatch):
    ok, plan = _plan(tmp_path, index, [{"name": "app", "pip": ["gpuops-alpha"]}], monkeypatch)
    assert ok, plan
    env = plan["environments"][0]
    assert env["action"] == "build" and "does not exist yet" in env["reason"]
    assert env["interpreter"] == sys.executable

    # check mode: nothing is built
    ok, res = _converge(env, _ansible_check_mode=True)
    assert ok and res["changed"] and not os.path.exists(env["prefix"])

    ok, res = _converge(env)
    assert ok and res["changed"] and res["installer"] == "pip", res
    link = env["link"]
    assert os.path.islink(link) and os.readlink(link) == os.path.basename(env["target"])
    assert _imports(link, "gpuops_alpha")
    marker = json.load(open(os.path.join(link, ps.MARKER)))
    assert marker["hash"] == env["hash"] and marker["spec"]["pip"] == ["gpuops-alpha"]

    # the same spec: nothing to do
    ok, plan = _plan(tmp_path, index, [{"name": "app", "pip": ["gpuops-alpha"]}], monkeypatch)
    assert plan["environments"][0]["action"] == "none"
    ok, res = _converge(plan["environments"][0])
    assert ok and not res["changed"]

    # a package the index lacks: the build fails, names the environment, the old one stays
    ok, plan = _plan(tmp_path, index, [{"name": "app", "pip": ["gpuops-alpha", "gpuops-missing"]}], monkeypatch)
    bad = plan["environments"][0]
    ok, res = _converge(bad)
    assert not ok
    assert "environment app: installing the packages (pip) failed" in res["msg"]
    assert "previous environment is unchanged" in res["msg"]
    assert os.readlink(link) == os.path.basename(env["target"]) and _imports(link, "gpuops_alpha")
    assert not os.path.exists(bad["target"])
    assert not [e for e in os.listdir(env["prefix"]) if ".build-" in e]

    # a spec change: built beside, swapped in, the old build kept (keep_builds 1)
    ok, plan = _plan(tmp_path, index, [{"name": "app", "pip": ["gpuops-beta"]}], monkeypatch)
    new = plan["environments"][0]
    assert new["action"] == "build" and "the spec changed" in new["reason"]
    ok, res = _converge(new)
    assert ok and res["changed"], res
    assert os.readlink(link) == os.path.basename(new["target"])
    assert _imports(link, "gpuops_beta") and not _imports(link, "gpuops_alpha")
    assert os.path.isdir(env["target"])

    # a hand-made venv where a declared environment would go: reported with its path, left alone
    handmade = tmp_path / "envs" / "mine"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(handmade)], check=True)
    (handmade / "notes.txt").write_text("the team's own\n")
    ok, plan = _plan(tmp_path, index, [{"name": "mine", "pip": ["gpuops-alpha"]}], monkeypatch)
    assert ok, plan
    mine = plan["environments"][0]
    assert mine["action"] == "leave" and str(handmade) in mine["reason"] and "python_stack_adopt: true" in mine["reason"]
    ok, res = _converge(mine)
    assert ok and not res["changed"] and res["action"] == "leave"
    assert handmade.is_dir() and not handmade.is_symlink() and not (handmade / ps.MARKER).exists()

    # with python_stack_adopt: built beside it and swapped in; the hand-made one kept beside the builds
    monkeypatch.setattr(stack_host, "_python_for", lambda version: sys.executable)
    ok, plan = _call({"action": "plan", "gpu": {}, "inputs": dict(
        _inputs(tmp_path, index, [{"name": "mine", "pip": ["gpuops-alpha"]}]), adopt=True)})
    mine = plan["environments"][0]
    assert mine["action"] == "adopt" and "python_stack_adopt is true" in mine["reason"]
    ok, res = _converge(mine, _ansible_check_mode=True)
    assert ok and res["changed"] and handmade.is_dir() and not handmade.is_symlink()
    ok, res = _converge(mine)
    assert ok and res["changed"], res
    aside = tmp_path / "envs" / ".mine-adopted"
    assert res["adopted"] == str(aside) and (aside / "notes.txt").read_text() == "the team's own\n"
    assert handmade.is_symlink() and os.readlink(str(handmade)) == os.path.basename(mine["target"])
    assert _imports(str(handmade), "gpuops_alpha")
    ok, res = _converge(mine)
    assert ok and not res["changed"] and res["action"] == "none"
    assert aside.is_dir()

    # verify: the import check of the live environment through the link
    ok, res = _call({"action": "verify", "environment": new})
    assert ok, res
    assert res["verification"]["ok"] is True and res["verification"]["imports"]["gpuops_beta"]["version"] == "1.0"

    # absent: the role's environment is removed, link and build
    ok, plan = _plan(tmp_path, index, [{"name": "app", "state": "absent"}], monkeypatch)
    assert plan["environments"][0]["action"] == "remove"
    ok, res = _converge(plan["environments"][0])
    assert ok and res["changed"] and not os.path.lexists(link) and not os.path.exists(new["target"])


def test_plan_refuses_a_python_the_host_lacks(tmp_path, index, monkeypatch):
    ok, res = _plan(tmp_path, index, [{"name": "old", "python": "3.8", "pip": ["gpuops-alpha"]}], monkeypatch)
    assert not ok
    assert "environment old: Python 3.8 is not on this host" in res["msg"]


def test_the_registry_reports_every_bad_entry_before_the_plan(tmp_path, index):
    # the registry of input checks (core/input_checks.py) refuses the entries on the controller
    # before the role calls the module, whose plan does not check them again
    inputs = _inputs(tmp_path, index, [{"name": "a", "pip": ["torch==="]}, {"name": "b", "backend": "pipx", "pip": ["x"]}])
    problems = [p for p in input_checks.problems("python_stack", inputs, "main", {})
                if p.startswith("python_stack_environments")]
    assert len(problems) == 2, problems
    assert "python_stack_environments[a]" in problems[0] and "python_stack_environments[b]" in problems[1]


def test_plan_on_a_gpu_host_matches_the_driver(tmp_path, index, monkeypatch):
    gpu = {"gpu_count": 8, "driver": {"loaded": True, "cuda_version": "12.8"}, "nics": []}
    inputs = _inputs(tmp_path, index, [{"name": "pt", "pip": ["torch==2.9.1"]}])
    inputs["pytorch_index_url"] = "https://download.pytorch.org/whl"
    monkeypatch.setattr(stack_host, "_python_for", lambda version: sys.executable)
    ok, res = _call({"action": "plan", "inputs": inputs, "gpu": gpu})
    assert ok
    env = res["environments"][0]
    assert env["spec"]["extra_index_urls"] == ["https://download.pytorch.org/whl/cu128"]
    assert res["cuda_version"] == "12.8"
    assert "export NCCL_IB_DISABLE=1" in res["profile"] and "CUDA_DEVICE_ORDER=PCI_BUS_ID\n" in res["env_file"]
    assert json.loads(res["condarc"])["channels"] == ["conda-forge"]


def _gpu_host(arch, cc, name, cuda, driver):
    return {"gpu_count": 1, "nics": [], "driver": {"loaded": True, "cuda_version": cuda, "version": driver},
            "gpus": [{"pci_bus_id": "0000:06:00.0", "architecture": arch, "compute_capability": cc, "name": name}]}


def test_plan_gives_a_v100_a_wheel_with_its_kernels(tmp_path, index, monkeypatch):
    # torch 2.11's cu128 starts at Turing (RELEASE.md "For Release 2.11": "| 12.8.1 | Turing(7.5), ...").
    inputs = _inputs(tmp_path, index, [{"name": "pt", "pip": ["torch==2.11.0"]}])
    inputs["pytorch_index_url"] = "https://example.invalid/whl"
    monkeypatch.setattr(stack_host, "_python_for", lambda version: sys.executable)
    ok, res = _call({"action": "plan", "inputs": inputs,
                     "gpu": _gpu_host("volta", "7.0", "Tesla V100-SXM2-32GB", "13.0", "580.95.05")})
    assert ok, res
    assert res["environments"][0]["spec"]["extra_index_urls"] == ["https://example.invalid/whl/cu126"]


def test_plan_refuses_a_torch_without_kernels_for_the_gpu(tmp_path, index, monkeypatch):
    inputs = _inputs(tmp_path, index, [{"name": "pt", "pip": ["torch==2.6.0"]}])
    monkeypatch.setattr(stack_host, "_python_for", lambda version: sys.executable)
    ok, res = _call({"action": "plan", "inputs": inputs,
                     "gpu": _gpu_host("blackwell", "10.0", "NVIDIA B200", "12.8", "570.195.03")})
    assert not ok
    assert "nothing was changed" in res["msg"]
    assert "environment pt: torch 2.6 ships cu118/cu124/cu126" in res["msg"]
    assert "cu126 has no kernels for NVIDIA B200 at 0000:06:00.0 (compute capability 10.0)" in res["msg"]
    assert "torch 2.7 (cu128)" in res["msg"]


@pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the plan is pinned to Python 3.11 here")
def test_plan_refuses_a_lock_file_entry_that_is_no_pin_naming_the_file_and_line(tmp_path, index, monkeypatch):
    # issue 37: the lock file's text (read on the controller by the role's preflight) is checked in the plan,
    # before any environment is built
    monkeypatch.setattr(stack_host, "_python_for", lambda version: sys.executable if version == "3.11" else None)
    envs = [{"name": "locked", "lock_file": "locks/locked.txt"}]
    ok, res = _call({"action": "plan", "inputs": _inputs(tmp_path, index, envs), "gpu": {},
                     "locks": {"locked": "gpuops-alpha==1.0\ngpuops-beta\n"}})
    assert not ok
    assert res["problems"] == [
        "environment locked: python_stack_environments[locked].lock_file locks/locked.txt line 2: 'gpuops-beta' is "
        "not an exact pin: no version at all; give an exact pin (name==X or name===X) or its --hash, e.g. regenerate "
        "the file with uv pip compile --generate-hashes (or pip-compile --generate-hashes)"]
    assert not (tmp_path / "envs").exists()
    ok, res = _call({"action": "plan", "inputs": _inputs(tmp_path, index, envs), "gpu": {},
                     "locks": {"locked": "gpuops-alpha==1.0\ngpuops-beta==1.0\n"}})
    assert ok, res


@pytest.mark.skipif(os.geteuid() != 0, reason="the files are written root-owned")
def test_write_renders_the_files_on_the_host_as_the_plan_does(tmp_path, index, monkeypatch):
    monkeypatch.setattr(stack_host, "_python_for", lambda version: sys.executable if version == "3.11" else None)
    inputs = _inputs(tmp_path, index, [])
    inputs.update(profile_file=str(tmp_path / "profile.sh"), env_file=str(tmp_path / "env"),
                  env_defaults={"NCCL_DEBUG": "WARN"})
    ok, plan = _call({"action": "plan", "inputs": inputs, "home": str(tmp_path)})
    assert ok, plan
    args = {"action": "write", "inputs": inputs, "home": str(tmp_path),
            "files": ["profile", "env_file", "uv_requirement"], "_ansible_diff": True}
    ok, checked = _call(dict(args, _ansible_check_mode=True))
    assert ok and checked["changed"] and [d["after"] for d in checked["diff"]] == [
        plan["profile"], plan["env_file"], plan["uv_requirement"]]
    assert not (tmp_path / "profile.sh").exists(), "check mode wrote"
    ok, written = _call(args)
    assert ok and [w["name"] for w in written["written"] if w["changed"]] == ["profile", "env_file", "uv_requirement"]
    assert (tmp_path / "profile.sh").read_text() == plan["profile"]
    assert (tmp_path / "uv-requirements.txt").read_text() == plan["uv_requirement"]
    ok, again = _call(args)
    assert ok and not again["changed"]
    ok, plan = _call({"action": "plan", "inputs": inputs, "home": str(tmp_path)})
    assert plan["current"]["profile"] and plan["current"]["env_file"]
