"""The converged fast path of the nvidia_driver role: nvidia_repo.converged() and service_wants()
from the table data/nvidia_driver_converged.yml (drift cases must report NOT converged), and
driver_resolve.fast_path() against a host double (reboot marker, systemctl show, dkms status,
the kernel module's version in sysfs)."""
import copy
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_resolve
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo as repo

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "data", "nvidia_driver_converged.yml")) as _fh:
    TABLE = yaml.safe_load(_fh)


def put(tree, dotted, value):
    """Set tree[a][b]... for 'a.b...'; unit names carry dots, so a key is the longest match."""
    parts = dotted.split(".")
    node = tree
    while parts:
        for size in range(len(parts), 0, -1):
            key = ".".join(parts[:size])
            index = int(key) if key.isdigit() and isinstance(node, list) else None
            if index is not None or key in node or size == 1:
                parts = parts[size:]
                if not parts:
                    node[index if index is not None else key] = value
                    return
                node = node[index if index is not None else key]
                break


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["id"] for c in TABLE["cases"]])
def test_converged_table(case):
    world = {"state": copy.deepcopy(TABLE["base"]), "marker": TABLE["marker"], "units": copy.deepcopy(TABLE["units"]),
             "wants": copy.deepcopy(TABLE["wants"])}
    for dotted, value in (case.get("set") or {}).items():
        top = dotted.split(".")[0]
        if top in ("marker", "units", "wants"):
            put(world, dotted, value)
        else:
            put(world["state"], dotted, value)
    result = repo.converged(world["state"], world["marker"], world["units"], world["wants"], case.get("checks"))
    assert result["converged"] is (not case["expect"]), result
    for text in case["expect"]:
        assert any(text in reason for reason in result["reasons"]), (text, result["reasons"])


PLAN = {"persistence": {"enabled": True}, "fabric_manager": {"required": True},
        "driver": {"load_modules": {"value": True, "reason": "bare metal"},
                   "kernel_modules": {"value": "open"}}}
STATUS = {"persistence": {"started": True}, "fabric_manager": {"started": False}}
NAMES = {"persistenced": "nvidia-persistenced", "fabric_manager": "nvidia-fabricmanager"}


def test_service_wants():
    assert repo.service_wants(PLAN, STATUS, NAMES) == [
        {"name": "nvidia-persistenced", "enabled": True, "started": True},
        {"name": "nvidia-fabricmanager", "enabled": True, "started": False}]
    off = dict(PLAN, persistence={"enabled": False}, fabric_manager={"required": False})
    assert repo.service_wants(off, STATUS, NAMES) == [{"name": "nvidia-persistenced", "enabled": False,
                                                       "started": False}]


def test_parse_unit_states():
    text = ("Id=nvidia-persistenced.service\nLoadState=loaded\nUnitFileState=enabled\nActiveState=active\n\n"
            "Id=nvidia-fabricmanager.service\nLoadState=not-found\nUnitFileState=\nActiveState=inactive\n")
    states = driver_resolve.parse_unit_states(text)
    assert states["nvidia-persistenced.service"]["UnitFileState"] == "enabled"
    assert states["nvidia-fabricmanager.service"]["LoadState"] == "not-found"
    assert driver_resolve.parse_unit_states("") == {}


class FakeModule(object):
    def __init__(self, bins):
        self.bins = bins

    def get_bin_path(self, name, opt_dirs=None):
        return self.bins.get(name)


class FakeHost(object):
    """The edge double: answers systemctl show and dkms status, reads real files."""

    def __init__(self, units_text, dkms_text, bins=None):
        self.module = FakeModule(bins if bins is not None else {"systemctl": "/bin/systemctl",
                                                                "dkms": "/usr/sbin/dkms"})
        self.answers = {"/bin/systemctl": units_text, "/usr/sbin/dkms": dkms_text}
        self.calls = []

    def run(self, args, check=True, what=None, env=None):
        self.calls.append(list(args))
        return 0, self.answers[args[0]], ""

    def read(self, path):
        with open(path) as handle:
            return handle.read()


UNITS_OK = ("Id=nvidia-persistenced.service\nLoadState=loaded\nUnitFileState=enabled\nActiveState=active\n\n"
            "Id=nvidia-fabricmanager.service\nLoadState=loaded\nUnitFileState=enabled\nActiveState=inactive\n")
DKMS_OK = "nvidia/580.95.05, 6.1.0-28-amd64, x86_64: installed\n"
GPU_OK = {"source": "nvml", "driver": {"loaded": True, "version": "580.95.05", "kernel_module_flavor": "open"},
          "gpus": [{"uuid": "GPU-1", "pci_bus_id": "0000:07:00.0"}], "gpu_count": 1}


def fast_state():
    state = copy.deepcopy(TABLE["base"])
    state.update(status=STATUS, kernels=["6.1.0-28-amd64"],
                 headers=[{"kernel": "6.1.0-28-amd64", "installed": True, "available": True}])
    return state


def params(tmp_path, marker_text=None, gpu=None, module_version="580.95.05"):
    marker = tmp_path / "reboot-required"
    if marker_text is not None:
        marker.write_text(marker_text)
    sysfs = tmp_path / "sys"
    (sysfs / "module" / "nvidia").mkdir(parents=True)
    if module_version:
        (sysfs / "module" / "nvidia" / "version").write_text(module_version + "\n")
    return {"platform": {"backend": "apt", "reboot_marker": str(marker), "persistenced_service": "nvidia-persistenced",
                         "fabric_manager_service": "nvidia-fabricmanager"},
            "plan": PLAN, "gpu": gpu or GPU_OK, "sysfs_root": str(sysfs)}


def test_fast_path_converged_reads_dkms_and_verifies(tmp_path):
    host = FakeHost(UNITS_OK, DKMS_OK)
    out = driver_resolve.fast_path(params(tmp_path), host, fast_state())
    assert out["converged"] == {"converged": True, "reasons": []}
    assert out["after"]["dkms"]["status"] == [DKMS_OK.strip()] and out["after"]["kernels"] == ["6.1.0-28-amd64"]
    assert out["verified"]["verify"]["ran"] and out["verified"]["problems"] == []
    assert host.calls[0][:3] == ["/bin/systemctl", "show", "-p"]
    assert host.calls[0][4:] == ["nvidia-persistenced.service", "nvidia-fabricmanager.service"]


def test_fast_path_records_match_the_tasks(tmp_path):
    """The records of the fast path are those of action=after_install and action=verify."""
    host = FakeHost(UNITS_OK, DKMS_OK)
    p = params(tmp_path)
    out = driver_resolve.fast_path(p, host, fast_state())
    verify = driver_resolve.verify(dict(p, state={"target": "580.95.05"}), host)
    assert out["verified"] == verify
    dkms, problems = driver_resolve.dkms_check(host, PLAN, fast_state()["headers"])
    assert out["after"]["dkms"] == dkms and problems == []


@pytest.mark.parametrize("what,kwargs,host_args,reason", [
    ("marker line", {"marker_text": "nvidia_driver: driver 580.65.06 is loaded\n"}, (UNITS_OK, DKMS_OK),
     "reboot marker"),
    ("persistenced disabled", {}, (UNITS_OK.replace("UnitFileState=enabled", "UnitFileState=disabled", 1), DKMS_OK),
     "nvidia-persistenced.service is not enabled"),
    ("dkms not built", {}, (UNITS_OK, "nvidia/580.95.05: added\n"), "DKMS did not build"),
    ("kernel module of another version", {"module_version": "580.65.06"}, (UNITS_OK, DKMS_OK),
     "the kernel module is version 580.65.06"),
    ("a GPU NVML does not see", {"gpu": dict(GPU_OK, gpus=GPU_OK["gpus"] + [{"pci_bus_id": "0000:0f:00.0",
                                                                             "error": "gone"}])},
     (UNITS_OK, DKMS_OK), "NVML does not see GPU(s) 0000:0f:00.0"),
])
def test_fast_path_drift(tmp_path, what, kwargs, host_args, reason):
    out = driver_resolve.fast_path(params(tmp_path, **kwargs), FakeHost(*host_args), fast_state())
    assert out["converged"]["converged"] is False, what
    assert any(reason in r for r in out["converged"]["reasons"]), out["converged"]["reasons"]
    assert "after" not in out and "verified" not in out


def test_fast_path_not_converged_reads_no_dkms(tmp_path):
    state = fast_state()
    state["install_state"] = {"install": True, "missing": ["nvidia-smi"], "hold": []}
    host = FakeHost(UNITS_OK, DKMS_OK)
    out = driver_resolve.fast_path(params(tmp_path), host, state)
    assert out == {"converged": {"converged": False, "reasons": ["packages to install: nvidia-smi"]}}
    assert [c[0] for c in host.calls] == ["/bin/systemctl"]


def test_fast_path_not_applicable_does_not_verify(tmp_path):
    state = fast_state()
    state["activation"] = dict(state["activation"], action="not_applicable")
    out = driver_resolve.fast_path(params(tmp_path), FakeHost(UNITS_OK, DKMS_OK), state)
    assert out["converged"]["converged"] and "after" in out and "verified" not in out
