# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The merge into the fact contract (plugins/module_utils/probe/gpu_probe.py): every host, every depth."""

import copy
import os
import sys

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import gpu_probe
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.capabilities import capabilities_from_facts
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.gpu_probe import ProbeError, probe
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_topo import parse_nvidia_topo

TESTS = os.path.abspath(os.path.join(os.path.dirname(os.path.dirname(__file__)), "..", "..", ".."))
sys.path[0:0] = [os.path.join(TESTS, "unit"), os.path.join(TESTS, "fixtures")]
import build_sysfs  # noqa: E402
import fake_pynvml  # noqa: E402

HOSTS = build_sysfs.host_names()
EXCERPT = os.path.join(build_sysfs.HOSTS_DIR, "pci.ids.excerpt")
ARCHITECTURES = ("volta", "turing", "ampere", "ada", "hopper", "blackwell", "unknown",
                 "kepler", "maxwell", "pascal")


def _has(host, *parts):
    return os.path.exists(os.path.join(build_sysfs.host_dir(host), *parts))


NVML_HOSTS = [h for h in HOSTS if _has(h, "nvml.json")]
SMI_HOSTS = [h for h in HOSTS if _has(h, "nvidia-smi", "captures.json")]


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("sysfs")
    out = {}
    for host in HOSTS:
        dest = str(base / host)
        build_sysfs.build(build_sysfs.load_spec(build_sysfs.host_dir(host)), dest)
        out[host] = dest
    return out


@pytest.fixture
def no_pynvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)


@pytest.fixture
def smi_binary(tmp_path):
    path = tmp_path / "nvidia-smi"
    path.write_text("#!/bin/sh\nexit 99  # never run: tests answer through replay_nvidia_smi\n")
    return str(path)


def _probe(trees, host, tmp_path, **kwargs):
    kwargs.setdefault("procfs_root", str(tmp_path / "proc"))
    kwargs.setdefault("pci_ids_path", str(tmp_path / "no-pci.ids"))
    kwargs.setdefault("get_bin_path", lambda name: None)
    return probe(sysfs_root=trees[host], **kwargs)


def _check_contract(facts, expected, name_key):
    assert facts["gpu_count"] == expected["gpu_count"]
    assert facts["nvswitch_count"] == expected["nvswitch_count"]
    assert [g["index"] for g in facts["gpus"]] == list(range(expected["gpu_count"]))
    for gpu, want in zip(facts["gpus"], expected["gpus"]):
        assert gpu["pci_bus_id"] == want["pci_bus_id"]
        assert gpu["pci_device_id"] == want["pci_device_id"]
        assert gpu["numa_node"] == want["numa_node"]
        assert gpu["architecture"] == want["architecture"] and gpu["architecture"] in ARCHITECTURES
        assert gpu["name"] == want[name_key]
        assert dict((k, gpu["pcie"][k]) for k in want["pcie"]) == want["pcie"]
        assert gpu["pcie"]["degraded"] is want["degraded"]
        assert isinstance(gpu["datacenter"], bool) and isinstance(gpu["mig_capable"], bool)
    assert facts["capabilities"] == expected["capabilities"]
    assert facts["capabilities"] == capabilities_from_facts(facts)
    assert set(facts["driver"]) >= {"loaded", "version", "cuda_version"}
    assert facts["driver"]["loaded"] is expected["driver"]["loaded"]
    for switch in facts["nvswitches"]:
        assert switch["generation"] == expected["nvswitch_generation"]
    assert [n["pci_bus_id"] for n in facts["nics"]] == [n["pci_bus_id"] for n in expected["nics"]]
    assert isinstance(facts["errors"], list)


@pytest.mark.parametrize("host", HOSTS)
def test_pci_depth(trees, host, tmp_path, no_pynvml):
    expected = build_sysfs.load_json(host, "expected.json")
    facts = _probe(trees, host, tmp_path)
    assert facts["source"] == "pci"
    _check_contract(facts, expected, "table_name")
    assert "topology" not in facts
    assert facts["driver"]["version"] == expected["driver"]["version"]
    assert facts["driver"]["cuda_version"] is None
    reasons = dict((d["depth"], d["reason"]) for d in facts["depths_tried"])
    if expected["gpu_count"]:
        assert reasons["nvml"].startswith("pynvml not importable")
        assert reasons["nvidia-smi"] == "nvidia-smi not found"
    else:
        assert reasons["nvml"] == reasons["nvidia-smi"] == "skipped: no NVIDIA GPU on PCI"


@pytest.mark.parametrize("host", NVML_HOSTS)
def test_nvml_depth(trees, host, tmp_path, monkeypatch):
    expected = build_sysfs.load_json(host, "expected.json")
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.from_host(host))
    facts = _probe(trees, host, tmp_path)
    assert facts["source"] == "nvml"
    assert [(d["depth"], d["answered"]) for d in facts["depths_tried"]] == [
        ("pci", True), ("nvml", True), ("nvidia-smi", False)]
    _check_contract(facts, expected, "nvml_name")
    assert facts["driver"] == dict(expected["driver"], kernel_module_flavor=None)
    assert facts["errors"] == []
    topology = facts["topology"]
    assert topology["source"] == "nvml"
    assert topology["gpus"] == dict(("GPU%d" % i, g["pci_bus_id"]) for i, g in enumerate(expected["gpus"]))
    if "topo_file" in expected:
        with open(os.path.join(build_sysfs.host_dir(host), expected["topo_file"])) as handle:
            real = parse_nvidia_topo(handle.read())
        names = [g["name"] for g in real["gpus"]]
        assert topology["matrix"] == dict((a, dict((b, real["matrix"][a][b]) for b in names)) for a in names)
    else:
        for row, cells in expected["nvml_matrix"].items():
            assert topology["matrix"][row] == dict(cells, **{row: "X"})
    for gpu in facts["gpus"]:
        assert gpu["uuid"].startswith("GPU-") and gpu["name_source"] == "nvml"


@pytest.mark.parametrize("host", SMI_HOSTS)
def test_nvidia_smi_depth(trees, host, tmp_path, no_pynvml, smi_binary):
    expected = build_sysfs.load_json(host, "expected.json")
    run = build_sysfs.replay_nvidia_smi(host)
    facts = _probe(trees, host, tmp_path, nvidia_smi_path=smi_binary, run_command=run)
    assert facts["source"] == "nvidia-smi"
    _check_contract(facts, expected, "nvml_name")
    assert facts["driver"]["version"] == expected["driver"]["version"]
    assert facts["driver"]["cuda_version"] == expected["driver"]["cuda_version"]
    with open(os.path.join(build_sysfs.host_dir(host), expected["topo_file"])) as handle:
        real = parse_nvidia_topo(handle.read())
    assert facts["topology"]["matrix"] == real["matrix"]
    assert facts["topology"]["nics"] == real["nics"]
    for gpu, entry in zip(facts["gpus"], real["gpus"]):
        assert gpu["cpu_affinity"] == entry["cpu_affinity"]
        assert gpu["numa_affinity"] == entry["numa_affinity"]
    assert all(call[0] == smi_binary for call in run.calls)


def test_pci_names_from_a_pci_ids_file(trees, tmp_path, no_pynvml):
    facts = _probe(trees, "hgx-h100-8gpu", tmp_path, pci_ids_path=EXCERPT)
    assert facts["pci_ids_path"] == EXCERPT
    assert set((g["name"], g["name_source"], g["chip"]) for g in facts["gpus"]) == {
        ("H100 SXM5 80GB", "pci.ids", "GH100")}
    assert [s["name"] for s in facts["nvswitches"]] == ["H100 NVSwitch"] * 4


def test_degraded_gpu_shows(trees, tmp_path, no_pynvml):
    facts = _probe(trees, "a100-pcie-4gpu-degraded", tmp_path)
    degraded = [(g["pci_bus_id"], g["pcie"]["degraded_reasons"]) for g in facts["gpus"] if g["pcie"]["degraded"]]
    assert degraded == [("0000:ca:00.0", ["width"])]


def test_nvml_required_without_binding_says_how_to_get_it(trees, tmp_path, no_pynvml):
    with pytest.raises(ProbeError) as info:
        _probe(trees, "hgx-h100-8gpu", tmp_path, nvml="required")
    message = str(info.value)
    assert "gpuops_nvml_install: true" in message
    assert "pip --target /opt/gpuops/nvml" in message
    assert "ansible_python_interpreter" in message and "nvidia-ml-py" in message


def test_nvml_required_but_driver_not_loaded(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.from_host("hgx-h100-8gpu", init_error="DRIVER_NOT_LOADED"))
    with pytest.raises(ProbeError, match="NVML did not answer: nvmlInit failed: Driver Not Loaded"):
        _probe(trees, "hgx-h100-8gpu", tmp_path, nvml="required")


def test_nvml_failure_falls_back_to_nvidia_smi(trees, tmp_path, monkeypatch, smi_binary):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.from_host("hgx-h100-8gpu", init_error="DRIVER_NOT_LOADED"))
    facts = _probe(trees, "hgx-h100-8gpu", tmp_path, nvidia_smi_path=smi_binary,
                   run_command=build_sysfs.replay_nvidia_smi("hgx-h100-8gpu"))
    assert facts["source"] == "nvidia-smi"
    assert facts["depths_tried"][1] == {"depth": "nvml", "answered": False,
                                        "reason": "nvmlInit failed: Driver Not Loaded"}


def test_disabled_depths(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.from_host("hgx-h100-8gpu"))
    facts = _probe(trees, "hgx-h100-8gpu", tmp_path, nvml="disabled", nvidia_smi="disabled")
    assert facts["source"] == "pci"
    assert [d["reason"] for d in facts["depths_tried"][1:]] == [
        "disabled by the nvml option", "disabled by the nvidia_smi option"]
    assert sys.modules["pynvml"].fake_state["calls"] == 0


def test_nvidia_smi_path_that_does_not_exist(trees, tmp_path, no_pynvml):
    facts = _probe(trees, "v100-2gpu", tmp_path, nvidia_smi_path=str(tmp_path / "nowhere"))
    assert facts["depths_tried"][2]["reason"] == "nvidia-smi not found at %s" % (tmp_path / "nowhere")


def test_nvidia_smi_found_on_path(trees, tmp_path, no_pynvml):
    run = build_sysfs.replay_nvidia_smi("v100-2gpu")
    facts = _probe(trees, "v100-2gpu", tmp_path, get_bin_path=lambda name: "/opt/bin/" + name, run_command=run)
    assert facts["source"] == "nvidia-smi" and run.calls[0][0] == "/opt/bin/nvidia-smi"


def test_lost_gpu_keeps_the_count(trees, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.from_host("hgx-h100-8gpu", lost=(3,)))
    facts = _probe(trees, "hgx-h100-8gpu", tmp_path)
    assert facts["source"] == "nvml" and facts["gpu_count"] == 8
    lost = facts["gpus"][3]
    assert lost["error"] == "GPU is lost" and lost["architecture"] == "hopper" and lost["name"] == "H100 SXM5 80GB"
    assert facts["errors"] == [{"source": "nvml", "pci_bus_id": "0000:61:00.0", "error": "GPU is lost"}]
    assert "GPU3" not in facts["topology"]["matrix"]
    assert facts["topology"]["matrix"]["GPU0"]["GPU7"] == "NV18"


def test_gpu_only_nvml_sees_is_not_added(trees, tmp_path, monkeypatch):
    data = copy.deepcopy(fake_pynvml.load_host("v100-2gpu"))
    extra = copy.deepcopy(data["devices"][1])
    extra["bus_id"] = "00000000:AF:00.0"
    data["devices"].append(extra)
    data["topology"] = ["X SYSTEM SYSTEM", "SYSTEM X SYSTEM", "SYSTEM SYSTEM X"]
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.make_module(data))
    facts = _probe(trees, "v100-2gpu", tmp_path)
    assert facts["gpu_count"] == 2 and len(facts["gpus"]) == 2
    assert facts["errors"][0]["pci_bus_id"] == "0000:af:00.0"
    assert "not on PCI" in facts["errors"][0]["error"]
    assert sorted(facts["topology"]["matrix"]) == ["GPU0", "GPU1"]


def test_unknown_device_gets_architecture_from_compute_capability(tmp_path, monkeypatch):
    root = str(tmp_path / "sys")
    build_sysfs.build({"devices": [{"addr": "0000:41:00.0", "id": "10de:2fff", "class": "0x030200",
                                    "numa_node": 0}]}, root)
    facts = probe(sysfs_root=root, procfs_root=str(tmp_path), pci_ids_path=EXCERPT, nvml="disabled",
                  nvidia_smi="disabled")
    assert facts["gpus"][0]["architecture"] == "unknown" and facts["gpus"][0]["name"] is None
    # a device id of Turing or later: new silicon, which the open modules drive
    assert facts["gpus"][0]["id_generation"] == "turing_or_newer"
    assert facts["capabilities"]["open_kernel_modules_supported"] is True
    data = copy.deepcopy(fake_pynvml.load_host("v100-2gpu"))
    data["devices"] = [dict(data["devices"][0], bus_id="00000000:41:00.0", compute_capability=[12, 0],
                            name="NVIDIA Future GPU")]
    data["topology"] = ["X"]
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.make_module(data))
    facts = probe(sysfs_root=root, procfs_root=str(tmp_path), pci_ids_path=EXCERPT)
    assert facts["gpus"][0]["architecture"] == "blackwell"
    assert facts["gpus"][0]["name"] == "NVIDIA Future GPU"


@pytest.mark.parametrize("text, version, flavor", [
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
     "(dvs-builder@U22-I3-B17-02-5)  Tue Sep 23 09:55:41 UTC 2025\nGCC version:  gcc version 11.4.0\n",
     "580.95.05", "open"),
    ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.135  Fri Jan 10 20:00:00 UTC 2025\n",
     "550.135", "proprietary"),
])
def test_driver_from_procfs(tmp_path, text, version, flavor):
    (tmp_path / "proc" / "driver" / "nvidia").mkdir(parents=True)
    (tmp_path / "proc" / "driver" / "nvidia" / "version").write_text(text)
    (tmp_path / "sys").mkdir()
    driver = gpu_probe.read_driver(str(tmp_path / "sys"), str(tmp_path / "proc"))
    assert driver == {"loaded": True, "version": version, "kernel_module_flavor": flavor}


def test_driver_from_sysfs_only(trees, tmp_path):
    assert gpu_probe.read_driver(trees["v100-2gpu"], str(tmp_path)) == {
        "loaded": True, "version": "470.223.02", "kernel_module_flavor": None}
    assert gpu_probe.read_driver(trees["cpu-only"], str(tmp_path)) == {
        "loaded": False, "version": None, "kernel_module_flavor": None}


def test_bad_sysfs_root(tmp_path):
    with pytest.raises(ProbeError, match="sysfs_root %s does not exist" % (tmp_path / "x")):
        probe(sysfs_root=str(tmp_path / "x"))
    with pytest.raises(ProbeError, match="has no bus/pci/devices"):
        probe(sysfs_root=str(tmp_path))


@pytest.mark.parametrize("kwargs", [{"nvml": "sometimes"}, {"nvidia_smi": "required"}])
def test_bad_choices(trees, tmp_path, kwargs):
    with pytest.raises(ProbeError, match="must be one of"):
        _probe(trees, "cpu-only", tmp_path, **kwargs)


def test_smi_topology_renames_gpus_into_pci_order():
    """nvidia-smi's GPU<n> become GPU<pci index>; a GPU PCI has but nvidia-smi lacks is skipped."""
    gpus = [{"pci_bus_id": "0000:1b:00.0", "index": 0}, {"pci_bus_id": "0000:43:00.0", "index": 1},
            {"pci_bus_id": "0000:52:00.0", "index": 2}]
    topo = {"gpus": [{"name": "GPU0", "cpu_affinity": [0], "numa_affinity": 0},
                     {"name": "GPU1", "cpu_affinity": [1], "numa_affinity": 1}],
            "nics": [{"name": "NIC0", "device": "mlx5_0"}],
            "matrix": {"GPU0": {"GPU0": "X", "GPU1": "PIX", "NIC0": "SYS"},
                       "GPU1": {"GPU0": "PIX", "GPU1": "X", "NIC0": "PIX"},
                       "NIC0": {"GPU0": "SYS", "GPU1": "PIX", "NIC0": "X"}}}
    out = gpu_probe._topology_from_smi(gpus, topo, {"GPU0": "0000:1b:00.0", "GPU1": "0000:52:00.0"})
    assert out["gpus"] == {"GPU0": "0000:1b:00.0", "GPU2": "0000:52:00.0"}
    assert out["matrix"] == {"GPU0": {"GPU0": "X", "GPU2": "PIX", "NIC0": "SYS"},
                             "GPU2": {"GPU0": "PIX", "GPU2": "X", "NIC0": "PIX"},
                             "NIC0": {"GPU0": "SYS", "GPU2": "PIX", "NIC0": "X"}}
    assert gpus[2]["cpu_affinity"] == [1] and "cpu_affinity" not in gpus[1]


def test_hgx_b200_fabric_at_every_depth(trees, tmp_path, monkeypatch):
    """NVLink 5: no PCI NVSwitch; PCI finds the switch-management functions, NVML the switch links."""
    monkeypatch.setitem(sys.modules, "pynvml", None)
    facts = _probe(trees, "hgx-b200-8gpu", tmp_path)
    assert facts["nvlink_fabric"] == {"nvswitch_pci_count": 0, "switch_mgmt_nic_count": 4, "vpd_unreadable": [],
                                      "nvml_switch_links": None, "detected": True, "nvlink5": True}
    ib = [["mlx5_8"], ["mlx5_9"], ["mlx5_10"], ["mlx5_11"]]
    assert [n["ib_devices"] for n in facts["nvswitch_mgmt_nics"]] == ib
    assert all(g["nvswitch_baseboard"] and g["segment"] == "datacenter" for g in facts["gpus"])
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.from_host("hgx-b200-8gpu"))
    facts = _probe(trees, "hgx-b200-8gpu", tmp_path)
    assert facts["source"] == "nvml" and facts["nvlink_fabric"]["nvml_switch_links"] == 8 * 18
    assert facts["driver"]["cuda_version"] == "12.8"


def test_expected_switch_management_functions(trees, tmp_path, no_pynvml):
    for host in HOSTS:
        expected = build_sysfs.load_json(host, "expected.json")
        facts = _probe(trees, host, tmp_path)
        assert [n["pci_bus_id"] for n in facts["nvswitch_mgmt_nics"]] == expected.get("nvswitch_mgmt_nics", []), host
