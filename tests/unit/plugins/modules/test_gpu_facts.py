# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.dlserver.gpu_facts through AnsibleModule: arguments, check mode, facts, failures.

The module reports ``changed: false`` by construction, so no test here asserts it: "changes
nothing" is checked on the tree it read (a digest before and after) and on the commands it ran.
"""

import errno
import hashlib
import os
import stat
import sys
import threading

import pytest
import yaml
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.modules import gpu_facts

TESTS = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path[0:0] = [os.path.join(TESTS, "unit"), os.path.join(TESTS, "fixtures")]
import build_sysfs  # noqa: E402
import fake_pynvml  # noqa: E402
from module_harness import ExitJson, FailJson  # noqa: E402 pylint: disable=wrong-import-order


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("sysfs")
    out = {}
    for host in ("hgx-h100-8gpu", "v100-2gpu", "cpu-only", "hgx-b200-8gpu"):
        out[host] = str(base / host)
        build_sysfs.build(build_sysfs.load_spec(build_sysfs.host_dir(host)), out[host])
    return out


def _run(args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as info:
            gpu_facts.main()
    return info.value.args[0]


def _args(trees, host, tmp_path, **extra):
    args = {"sysfs_root": trees[host], "procfs_root": str(tmp_path), "pci_ids_path": str(tmp_path / "none"),
            "packages": "disabled"}
    args.update(extra)
    return args


def _digest(root):
    """Every path, link target, mode and file content under ``root``."""
    sha = hashlib.sha256()
    for base, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(base, name)
            st = os.lstat(path)
            sha.update(("%s %o %d\n" % (os.path.relpath(path, root), st.st_mode, st.st_size)).encode())
            if os.path.islink(path):
                sha.update(os.readlink(path).encode())
            elif os.path.isfile(path):
                with open(path, "rb") as handle:
                    sha.update(handle.read())
    return sha.hexdigest()


def _strip_timeout(args):
    """The nvidia-smi command line inside the module's ``timeout -k 5 N`` wrapper."""
    if os.path.basename(args[0]) == "timeout":
        assert args[1:3] == ["-k", "5"]
        return list(args[4:])
    return list(args)


@pytest.mark.parametrize("check_mode", [False, True])
def test_pci_depth_changes_nothing(trees, tmp_path, monkeypatch, check_mode):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    commands = []
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, args, **kw: commands.append(args))
    before = _digest(trees["hgx-h100-8gpu"])
    args = _args(trees, "hgx-h100-8gpu", tmp_path, nvidia_smi="disabled", _ansible_check_mode=check_mode)
    result = _run(args)
    assert "failed" not in result, result
    assert _digest(trees["hgx-h100-8gpu"]) == before and commands == []
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
    assert facts["source"] == "nvml"
    assert facts["driver"]["cuda_version"] == "12.2"
    assert facts["topology"]["matrix"]["GPU0"]["GPU7"] == "NV18"


def test_nvidia_smi_depth_runs_commands_with_c_locale(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    replay = build_sysfs.replay_nvidia_smi("v100-2gpu")
    seen = []

    def run_command(self, args, **kwargs):
        seen.append((kwargs.get("environ_update"), args[:4]))
        return replay(_strip_timeout(args))

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    result = _run(_args(trees, "v100-2gpu", tmp_path))
    facts = result["ansible_facts"]["gpuops_gpu"]
    assert facts["source"] == "nvidia-smi"
    assert facts["driver"]["cuda_version"] == "11.4"
    assert seen and all(env == {"LC_ALL": "C"} for env, dummy in seen)
    # every call is bounded: coreutils timeout, KILL 5 s after TERM at the default 30 s
    assert all(argv == ["/usr/bin/timeout", "-k", "5", "30"] for dummy, argv in seen)
    assert replay.calls[0][0] == "/usr/bin/nvidia-smi"


def test_hung_nvidia_smi_does_not_hang_the_probe(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    calls = []

    def run_command(self, args, **kwargs):
        calls.append(args)
        return 124, "", ""  # what coreutils timeout answers for a command it killed

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    result = _run(_args(trees, "v100-2gpu", tmp_path, nvidia_smi_timeout=7))
    facts = result["ansible_facts"]["gpuops_gpu"]
    assert facts["source"] == "pci" and facts["gpu_count"] == 2
    reason = dict((d["depth"], d["reason"]) for d in facts["depths_tried"])["nvidia-smi"]
    assert "did not answer within 7 s" in reason, reason
    assert calls[0][:4] == ["/usr/bin/timeout", "-k", "5", "7"]


def test_nvidia_smi_timeout_zero_runs_without_a_limit(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    replay = build_sysfs.replay_nvidia_smi("v100-2gpu")
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, args, **kw: replay(args))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    facts = _run(_args(trees, "v100-2gpu", tmp_path, nvidia_smi_timeout=0))["ansible_facts"]["gpuops_gpu"]
    assert facts["source"] == "nvidia-smi"
    assert all(call[0] == "/usr/bin/nvidia-smi" for call in replay.calls)


def test_without_coreutils_timeout_the_probe_says_so(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    replay = build_sysfs.replay_nvidia_smi("v100-2gpu")
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, args, **kw: replay(args))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **k: None if name == "timeout" else "/usr/bin/" + name)
    facts = _run(_args(trees, "v100-2gpu", tmp_path))["ansible_facts"]["gpuops_gpu"]
    assert facts["source"] == "nvidia-smi"
    assert {"source": "nvidia-smi", "error": "coreutils timeout not found: nvidia-smi runs without a time limit"} \
        in facts["errors"]


@pytest.fixture
def hung_nvml(monkeypatch):
    """A pynvml whose nvmlInit blocks, as on a GPU hung in the driver; released after the test."""
    release = threading.Event()
    fake = fake_pynvml.from_host("hgx-h100-8gpu")

    def nvmlInit():
        release.wait(60)

    fake.nvmlInit = nvmlInit
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    yield fake
    release.set()


def test_hung_nvml_init_times_out(trees, tmp_path, hung_nvml):
    result = _run(_args(trees, "hgx-h100-8gpu", tmp_path, nvidia_smi="disabled", nvml_init_timeout=1))
    facts = result["ansible_facts"]["gpuops_gpu"]
    assert facts["source"] == "pci" and facts["gpu_count"] == 8
    reason = dict((d["depth"], d["reason"]) for d in facts["depths_tried"])["nvml"]
    assert reason.startswith("nvmlInit did not return within 1 s"), reason


def test_hung_nvml_init_with_nvml_required_fails(trees, tmp_path, hung_nvml):
    result = _run(_args(trees, "hgx-h100-8gpu", tmp_path, nvml="required", nvml_init_timeout=1))
    assert result["failed"] is True and "nvmlInit did not return within 1 s" in result["msg"]


@pytest.mark.parametrize("nvml, failed", [("auto", False), ("required", True)])
def test_unexpected_error_in_nvml_is_that_depths_reason(trees, tmp_path, monkeypatch, nvml, failed):
    fake = fake_pynvml.from_host("hgx-h100-8gpu")

    def broken():
        raise RuntimeError("binding bug")

    fake.nvmlDeviceGetCount = broken
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    result = _run(_args(trees, "hgx-h100-8gpu", tmp_path, nvidia_smi="disabled", nvml=nvml))
    text = "unexpected error in the NVML depth: RuntimeError: binding bug"
    if failed:
        assert result["failed"] is True and text in result["msg"]
    else:
        facts = result["ansible_facts"]["gpuops_gpu"]
        assert facts["source"] == "pci"
        assert dict((d["depth"], d["reason"]) for d in facts["depths_tried"])["nvml"] == text


def test_unexpected_error_in_nvidia_smi_is_that_depths_reason(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)

    def run_command(self, args, **kwargs):
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    facts = _run(_args(trees, "v100-2gpu", tmp_path))["ansible_facts"]["gpuops_gpu"]
    reason = dict((d["depth"], d["reason"]) for d in facts["depths_tried"])["nvidia-smi"]
    assert reason.startswith("unexpected error in the nvidia-smi depth: UnicodeDecodeError"), reason


def test_any_other_error_fails_without_a_traceback(trees, tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise KeyError("gpus")

    monkeypatch.setattr(gpu_facts, "gather", boom)
    result = _run(_args(trees, "cpu-only", tmp_path))
    assert result["failed"] is True
    assert result["msg"] == "gpu_facts failed unexpectedly: KeyError: 'gpus'"
    assert "Traceback" in result["exception"]


def _fail_open(monkeypatch, suffix, code):
    real_open = os.open

    def fake_open(path, flags, *args, **kwargs):
        if str(path).endswith(suffix):
            raise OSError(code, os.strerror(code), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)


def test_permission_denied_on_sysfs_fails_naming_the_path(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    _fail_open(monkeypatch, "0000:1b:00.0/class", errno.EACCES)
    result = _run(_args(trees, "hgx-h100-8gpu", tmp_path, nvidia_smi="disabled"))
    assert result["failed"] is True
    assert "permission denied reading " in result["msg"] and "0000:1b:00.0/class" in result["msg"]
    assert "Traceback" not in result["msg"]


def test_io_error_on_one_gpu_keeps_it_in_errors(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    _fail_open(monkeypatch, "0000:43:00.0/current_link_width", errno.EIO)
    facts = _run(_args(trees, "hgx-h100-8gpu", tmp_path, nvidia_smi="disabled"))["ansible_facts"]["gpuops_gpu"]
    assert facts["gpu_count"] == 8
    gpu = [g for g in facts["gpus"] if g["pci_bus_id"] == "0000:43:00.0"][0]
    assert gpu["pcie"]["current_width"] is None and gpu["pcie"]["max_width"] == 16
    assert [(e["pci_bus_id"], e["error"].endswith("current_link_width: Input/output error"))
            for e in facts["errors"]] == [("0000:43:00.0", True)]


def test_io_error_on_a_gpus_class_lists_it(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    _fail_open(monkeypatch, "0000:c3:00.0/class", errno.EIO)
    facts = _run(_args(trees, "hgx-h100-8gpu", tmp_path, nvidia_smi="disabled"))["ansible_facts"]["gpuops_gpu"]
    assert facts["gpu_count"] == 7
    assert [e["pci_bus_id"] for e in facts["errors"]] == ["0000:c3:00.0"]
    assert "NVIDIA function not classified" in facts["errors"][0]["error"]


def test_hgx_b200_switch_trays_found_through_vpd(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    facts = _run(_args(trees, "hgx-b200-8gpu", tmp_path, nvidia_smi="disabled"))["ansible_facts"]["gpuops_gpu"]
    assert (facts["gpu_count"], facts["nvswitch_count"]) == (8, 0)
    assert [n["pci_bus_id"] for n in facts["nvswitch_mgmt_nics"]] == [
        "0000:05:00.0", "0000:05:00.1", "0000:06:00.0", "0000:06:00.1"]
    assert facts["capabilities"]["fabric_manager_required"] is True
    assert facts["nvlink_fabric"]["nvlink5"] is True


def test_hgx_b200_vpd_unreadable_is_reported(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    _fail_open(monkeypatch, "/vpd", errno.EACCES)
    facts = _run(_args(trees, "hgx-b200-8gpu", tmp_path, nvidia_smi="disabled"))["ansible_facts"]["gpuops_gpu"]
    assert facts["nvswitch_mgmt_nics"] == []
    assert len(facts["nvlink_fabric"]["vpd_unreadable"]) == 12
    assert all(n["nvlink_switch_mgmt"] is None and "permission denied" in n["vpd"]["error"] for n in facts["nics"])
    assert any("could not be read" in e["error"] and "root" in e["error"] for e in facts["errors"])
    # the plan still requires Fabric Manager (B200 exists only on NVSwitch baseboards), with a warning
    assert facts["capabilities"]["fabric_manager_required"] is True


@pytest.mark.parametrize("name", ["nvidia_smi_timeout", "nvml_init_timeout"])
def test_negative_timeouts_are_refused(trees, tmp_path, name):
    result = _run(_args(trees, "cpu-only", tmp_path, **{name: -1}))
    assert result["failed"] is True and name in result["msg"]


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


def test_packages_auto_reports_who_installed_the_driver(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    seen = []

    def run_command(self, args, **kwargs):
        seen.append((kwargs.get("environ_update"), list(args)))
        if args[0].endswith("dpkg-query"):
            return 0, "ii \tnvidia-kernel-open-dkms\t535.161.08-1\n", ""
        if args[1:] == ["policy"]:
            return 0, "Package files:\n 100 /var/lib/dpkg/status\n     release a=now\n", ""
        return 0, ("nvidia-kernel-open-dkms:\n  Installed: 535.161.08-1\n  Candidate: 535.161.08-1\n"
                   "  Version table:\n *** 535.161.08-1 100\n        100 /var/lib/dpkg/status\n"), ""

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, *a, **k: "/usr/bin/" + name if name in ("dpkg-query", "apt-cache") else None)
    result = _run(_args(trees, "hgx-h100-8gpu", tmp_path, nvidia_smi="disabled", packages="auto"))
    driver = result["ansible_facts"]["gpuops_gpu"]["driver"]
    assert driver["installed_packages"] == {"nvidia-kernel-open-dkms": "535.161.08-1"}
    # no configured repository carries it: a .deb installed by hand, "other"
    assert driver["package_origins"] == {"nvidia-kernel-open-dkms": "other"}
    assert driver["packages_read"] == {"answered": True, "reason": None}
    assert all(env == {"LC_ALL": "C"} for env, dummy in seen) and len(seen) == 3


def test_status_dir_returns_the_digests_status_file_takes(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    records = tmp_path / "gpuops"
    records.mkdir()
    (records / "plan.json").write_text("{}\n")
    (records / "notes.txt").write_text("not a record\n")
    args = _args(trees, "v100-2gpu", tmp_path, nvidia_smi="disabled")
    assert "status_files" not in _run(args)
    result = _run(dict(args, status_dir=str(records)))
    uid_root = os.stat(str(records / "plan.json")).st_uid == 0
    assert result["status_files"] == {str(records / "plan.json"): {
        "sha256": hashlib.sha256(b"{}\n").hexdigest(),
        "attrs": uid_root and stat.S_IMODE(os.stat(str(records / "plan.json")).st_mode) == 0o644}}
    # a directory that is not there yet (a new host): nothing known, the records are written
    assert _run(dict(args, status_dir=str(tmp_path / "missing")))["status_files"] == {}
