# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.dlserver.gpu_facts through AnsibleModule: arguments, check mode, facts, failures."""

import os
import sys

import pytest
import yaml
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.modules import gpu_facts

TESTS = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path[0:0] = [os.path.join(TESTS, "unit"), os.path.join(TESTS, "fixtures")]
import build_sysfs  # noqa: E402
import fake_pynvml  # noqa: E402


class ExitJson(Exception):
    pass


class FailJson(Exception):
    pass


@pytest.fixture(autouse=True)
def capture_exit(monkeypatch):
    def exit_json(self, **kwargs):
        raise ExitJson(kwargs)

    def fail_json(self, **kwargs):
        kwargs["failed"] = True
        raise FailJson(kwargs)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("sysfs")
    out = {}
    for host in ("hgx-h100-8gpu", "v100-2gpu", "cpu-only"):
        out[host] = str(base / host)
        build_sysfs.build(build_sysfs.load_spec(build_sysfs.host_dir(host)), out[host])
    return out


def _run(args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as info:
            gpu_facts.main()
    return info.value.args[0]


def _args(trees, host, tmp_path, **extra):
    args = {"sysfs_root": trees[host], "procfs_root": str(tmp_path), "pci_ids_path": str(tmp_path / "none")}
    args.update(extra)
    return args


@pytest.mark.parametrize("check_mode", [False, True])
def test_pci_depth_changes_nothing(trees, tmp_path, monkeypatch, check_mode):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    args = _args(trees, "hgx-h100-8gpu", tmp_path, nvidia_smi="disabled", _ansible_check_mode=check_mode)
    result = _run(args)
    assert result["changed"] is False and "failed" not in result
    facts = result["ansible_facts"]["gpuops_gpu"]
    assert facts["source"] == "pci"
    assert (facts["gpu_count"], facts["nvswitch_count"], len(facts["nics"])) == (8, 4, 8)
    assert facts["capabilities"] == {"fabric_manager_required": True, "open_kernel_modules_supported": True,
                                     "mig_capable": True, "dcgm_profiling_supported": True}
    assert facts["driver"] == {"loaded": True, "version": "535.161.08", "cuda_version": None,
                               "kernel_module_flavor": None}
    assert facts["gpus"][0]["architecture"] == "hopper"


def test_nvml_depth(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.from_host("hgx-h100-8gpu"))
    result = _run(_args(trees, "hgx-h100-8gpu", tmp_path, nvml="required"))
    facts = result["ansible_facts"]["gpuops_gpu"]
    assert result["changed"] is False
    assert facts["source"] == "nvml"
    assert facts["driver"]["cuda_version"] == "12.2"
    assert facts["topology"]["matrix"]["GPU0"]["GPU7"] == "NV18"


def test_nvidia_smi_depth_runs_commands_with_c_locale(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    replay = build_sysfs.replay_nvidia_smi("v100-2gpu")
    seen = []

    def run_command(self, args, **kwargs):
        seen.append(kwargs.get("environ_update"))
        return replay(args)

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    result = _run(_args(trees, "v100-2gpu", tmp_path))
    facts = result["ansible_facts"]["gpuops_gpu"]
    assert facts["source"] == "nvidia-smi"
    assert facts["driver"]["cuda_version"] == "11.4"
    assert seen and all(env == {"LC_ALL": "C"} for env in seen)
    assert replay.calls[0][0] == "/usr/bin/nvidia-smi"


def test_bad_sysfs_root_fails_naming_it(tmp_path):
    result = _run({"sysfs_root": str(tmp_path / "missing")})
    assert result["failed"] is True
    assert str(tmp_path / "missing") in result["msg"]


def test_nvml_required_without_binding_fails_with_instructions(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    result = _run(_args(trees, "v100-2gpu", tmp_path, nvml="required"))
    assert result["failed"] is True
    assert "gpuops_nvml_install: true" in result["msg"]
    assert "ansible_python_interpreter" in result["msg"]


def test_bad_choice_is_refused(trees, tmp_path):
    result = _run(_args(trees, "cpu-only", tmp_path, nvml="maybe"))
    assert result["failed"] is True and "nvml" in result["msg"]


def test_cpu_only_host(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.from_host("v100-2gpu"))
    facts = _run(_args(trees, "cpu-only", tmp_path))["ansible_facts"]["gpuops_gpu"]
    assert (facts["source"], facts["gpu_count"], facts["nvswitch_count"], facts["gpus"]) == ("pci", 0, 0, [])
    assert not any(facts["capabilities"].values())
    assert "topology" not in facts
    assert sys.modules["pynvml"].fake_state["calls"] == 0


def test_documentation_matches_the_argument_spec(monkeypatch):
    """DOCUMENTATION options and the argument_spec name the same options, types and defaults."""
    doc = yaml.safe_load(gpu_facts.DOCUMENTATION)
    yaml.safe_load(gpu_facts.EXAMPLES)
    yaml.safe_load(gpu_facts.RETURN)
    captured = {}

    class Stop(Exception):
        pass

    def fake_init(self, argument_spec, **kwargs):
        captured.update(argument_spec=argument_spec, **kwargs)
        raise Stop()

    monkeypatch.setattr(basic.AnsibleModule, "__init__", fake_init)
    with pytest.raises(Stop):
        gpu_facts.main()
    spec = captured["argument_spec"]
    assert captured["supports_check_mode"] is True
    assert sorted(spec) == sorted(doc["options"])
    for name, option in doc["options"].items():
        assert spec[name]["type"] == option["type"], name
        assert spec[name].get("default") == option.get("default"), name
        assert spec[name].get("choices") == option.get("choices"), name
