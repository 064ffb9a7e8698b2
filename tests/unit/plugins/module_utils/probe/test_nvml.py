# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVML depth (plugins/module_utils/probe/nvml.py), driven by the test double tests/unit/fake_pynvml.py."""

import copy
import os
import sys

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import nvml
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_topo import parse_nvidia_topo

TESTS = os.path.abspath(os.path.join(os.path.dirname(os.path.dirname(__file__)), "..", "..", ".."))
sys.path[0:0] = [os.path.join(TESTS, "unit"), os.path.join(TESTS, "fixtures")]
import build_sysfs  # noqa: E402
import fake_pynvml  # noqa: E402

GPU_HOSTS = [h for h in build_sysfs.host_names()
             if os.path.exists(os.path.join(build_sysfs.host_dir(h), "nvml.json"))]


def _expected(host):
    return build_sysfs.load_json(host, "expected.json")


def _pci_buses(host):
    return [g["pci_bus_id"] for g in _expected(host)["gpus"]]


def _switches(host):
    spec = build_sysfs.load_json(host, "spec.json")
    return [d["addr"] for d in spec["devices"] if d["class"].startswith("0x0680")]


def _gpu_matrix(host, found):
    """NVML's pairwise codes, re-keyed GPU0..n in PCI order like nvidia-smi."""
    names = dict((bus, "GPU%d" % i) for i, bus in enumerate(_pci_buses(host)))
    return dict((names[a], dict((names[b], code) for b, code in row.items())) for a, row in found["topology"].items())


def _topo_gpu_block(host):
    """The GPU x GPU cells of the host's real ``nvidia-smi topo -m`` text."""
    with open(os.path.join(build_sysfs.host_dir(host), _expected(host)["topo_file"])) as handle:
        topo = parse_nvidia_topo(handle.read())
    gpus = [g["name"] for g in topo["gpus"]]
    return dict((a, dict((b, topo["matrix"][a][b]) for b in gpus if b != a)) for a in gpus)


@pytest.mark.parametrize("value, text", [(12040, "12.4"), (12020, "12.2"), (11040, "11.4"), (13000, "13.0"),
                                         (0, None), (None, None), ("x", None)])
def test_cuda_version_text(value, text):
    assert nvml.cuda_version_text(value) == text


def test_decode_throttle_reasons():
    assert nvml.decode_throttle_reasons(0) == []
    assert nvml.decode_throttle_reasons(None) is None
    assert nvml.decode_throttle_reasons(0x1 | 0x20 | 0x80) == ["gpu_idle", "sw_thermal_slowdown",
                                                               "hw_power_brake_slowdown"]


def test_affinity_to_cpus():
    words = fake_pynvml._cpu_words("0-2,63-65,130", 4)
    assert nvml.affinity_to_cpus(words) == [0, 1, 2, 63, 64, 65, 130]
    assert nvml.affinity_to_cpus([]) == []


def test_import_reports_a_missing_binding(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    module, reason = nvml.import_pynvml(["/opt/gpuops/nvml"])
    assert module is None
    assert reason.startswith("pynvml not importable")
    assert "/opt/gpuops/nvml" in reason


def test_import_from_an_extra_directory(tmp_path, monkeypatch):
    monkeypatch.delitem(sys.modules, "pynvml", raising=False)
    (tmp_path / "pynvml.py").write_text("WHERE = 'target dir'\n")
    before = list(sys.path)
    try:
        module, reason = nvml.import_pynvml([str(tmp_path)])
        assert reason is None and module.WHERE == "target dir"
        assert sys.path == before
    finally:
        sys.modules.pop("pynvml", None)


@pytest.mark.parametrize("host", GPU_HOSTS)
def test_collect_every_gpu_host(host):
    expected = _expected(host)
    fake = fake_pynvml.from_host(host)
    found = nvml.collect(fake, _pci_buses(host), _switches(host))
    assert found["answered"] is True and found["errors"] == []
    assert sorted(found["gpus"]) == _pci_buses(host)
    assert found["cuda_version"] == expected["driver"]["cuda_version"]
    assert found["driver_version"] == expected["driver"]["version"]
    for want in expected["gpus"]:
        gpu = found["gpus"][want["pci_bus_id"]]
        assert gpu["name"] == want["nvml_name"]
        assert gpu["uuid"].startswith("GPU-")
        assert gpu["cpu_affinity"] and gpu["cpu_affinity_text"]
    assert fake.fake_state["init"] is False  # nvmlShutdown was called


@pytest.mark.parametrize("host", [h for h in GPU_HOSTS if "topo_file" in _expected(h)])
def test_nvml_topology_matches_the_real_topo_text(host):
    """GPU x GPU codes built from NVML equal what nvidia-smi printed on that machine."""
    found = nvml.collect(fake_pynvml.from_host(host), _pci_buses(host), _switches(host))
    assert _gpu_matrix(host, found) == _topo_gpu_block(host)


def test_nvml_topology_without_a_topo_text():
    host = "a100-pcie-4gpu-degraded"
    found = nvml.collect(fake_pynvml.from_host(host), _pci_buses(host))
    assert _gpu_matrix(host, found) == _expected(host)["nvml_matrix"]


def test_cpu_affinity_matches_the_topo_text():
    found = nvml.collect(fake_pynvml.from_host("hgx-h100-8gpu"), _pci_buses("hgx-h100-8gpu"))
    first = found["gpus"]["0000:1b:00.0"]
    assert first["cpu_affinity_text"] == "0-47,96-143"
    assert len(first["cpu_affinity"]) == 96


def test_hgx_details():
    found = nvml.collect(fake_pynvml.from_host("hgx-h100-8gpu"), _pci_buses("hgx-h100-8gpu"), _switches("hgx-h100-8gpu"))
    gpu = found["gpus"]["0000:1b:00.0"]
    assert gpu["memory_total_mib"] == 81559
    assert gpu["compute_capability"] == "9.0"
    assert gpu["ecc_mode"] == {"current": True, "pending": True}
    assert gpu["mig_mode"] == {"current": False, "pending": False}
    assert gpu["persistence_mode"] is True
    assert (gpu["power_limit_w"], gpu["power_default_limit_w"], gpu["power_min_limit_w"],
            gpu["power_max_limit_w"]) == (700, 700, 200, 700)
    assert gpu["clocks"] == {"sm_mhz": 345, "mem_mhz": 2619}
    assert gpu["throttle_reasons"] == ["gpu_idle"]
    assert gpu["gpu_numa_id"] is None  # not a coherent (C2C) platform: NVML says Not Supported
    assert gpu["nvlink_active_count"] == 18
    assert len(gpu["nvlinks"]) == 18
    assert set(l["remote_pci_bus_id"] for l in gpu["nvlinks"]) == set(_switches("hgx-h100-8gpu"))
    assert all(l["version"] == "4.0" and l["remote_type"] == "switch" for l in gpu["nvlinks"])
    assert [p["links"] for p in gpu["nvlink_peers"]] == [18] * 7
    assert found["gpus"]["0000:c3:00.0"]["throttle_reasons"] == ["sw_power_cap", "sw_thermal_slowdown"]


def test_gpus_without_nvlink_or_ecc():
    host = "rtx4090-8gpu"
    found = nvml.collect(fake_pynvml.from_host(host), _pci_buses(host))
    gpu = found["gpus"]["0000:18:00.0"]
    assert gpu["nvlinks"] == [] and gpu["nvlink_active_count"] == 0 and gpu["nvlink_peers"] == []
    assert gpu["ecc_mode"] is None and gpu["mig_mode"] is None and gpu["serial"] is None
    assert gpu["persistence_mode"] is False
    assert gpu["power_max_limit_w"] == 600


def test_a_lost_gpu_is_reported_and_the_others_stay():
    host = "hgx-h100-8gpu"
    buses = _pci_buses(host)
    found = nvml.collect(fake_pynvml.from_host(host, lost=(3,)), buses, _switches(host))
    assert found["answered"] is True
    assert found["gpus"][buses[3]] == {"error": "GPU is lost"}
    assert found["errors"] == [{"source": "nvml", "pci_bus_id": buses[3], "error": "GPU is lost"}]
    good = [b for b in buses if b != buses[3]]
    assert all(found["gpus"][b]["name"] == "NVIDIA H100 80GB HBM3" for b in good)
    assert sorted(found["topology"]) == good
    assert all(code == "NV18" for row in found["topology"].values() for code in row.values())


def test_a_gpu_lost_during_the_field_reads():
    """GPU_IS_LOST from a field (not from the handle) marks that GPU only."""
    host = "v100-2gpu"
    fake = fake_pynvml.from_host(host)
    real = fake.nvmlDeviceGetMemoryInfo

    def memory(handle, version=None):
        if handle.index == 1:
            raise fake.NVMLError(fake.NVML_ERROR_GPU_IS_LOST)
        return real(handle)

    fake.nvmlDeviceGetMemoryInfo = memory
    found = nvml.collect(fake, _pci_buses(host))
    assert found["gpus"]["0000:d8:00.0"] == {"error": "GPU is lost", "nvml_index": 1}
    assert found["gpus"]["0000:3b:00.0"]["memory_total_mib"] == 32510
    assert found["errors"][0]["pci_bus_id"] == "0000:d8:00.0"


def test_lost_gpu_unknown_to_pci_is_reported_by_index():
    host = "v100-2gpu"
    found = nvml.collect(fake_pynvml.from_host(host, lost=(1,)), ["0000:3b:00.0"])
    assert found["errors"] == [{"source": "nvml", "nvml_index": 1, "error": "GPU is lost"}]


def test_old_driver_missing_functions():
    """The v100 fixture's driver (470) lacks the event-reason, NUMA id and remote-type calls."""
    host = "v100-2gpu"
    found = nvml.collect(fake_pynvml.from_host(host), _pci_buses(host))
    gpu = found["gpus"]["0000:3b:00.0"]
    assert gpu["throttle_reasons"] == ["gpu_idle"]  # from the deprecated ThrottleReasons call
    assert gpu["gpu_numa_id"] is None
    assert gpu["compute_capability"] == "7.0"
    assert found["errors"] == []


def test_old_binding_without_the_functions():
    host = "hgx-h100-8gpu"
    fake = fake_pynvml.from_host(host, missing_attrs=(
        "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCpuAffinity",
        "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetHandleByPciBusId_v2",
        "nvmlDeviceGetNvLinkRemoteDeviceType"))
    assert not hasattr(fake, "nvmlDeviceGetCpuAffinity")
    found = nvml.collect(fake, _pci_buses(host), _switches(host))
    gpu = found["gpus"]["0000:1b:00.0"]
    assert gpu["cpu_affinity"] is None and gpu["cpu_affinity_text"] is None
    assert gpu["throttle_reasons"] == ["gpu_idle"]
    assert found["cuda_version"] == "12.2"
    # remote type unknown: the remote bus ids are the PCI NVSwitches, so the fabric still shows
    assert all(l["remote_type"] is None for l in gpu["nvlinks"])
    assert [p["links"] for p in gpu["nvlink_peers"]] == [18] * 7


def test_switch_fabric_needs_a_type_or_a_pci_nvswitch():
    """Without the remote type and without PCI NVSwitches the links lead nowhere known."""
    host = "hgx-h100-8gpu"
    fake = fake_pynvml.from_host(host, missing=("nvmlDeviceGetNvLinkRemoteDeviceType",))
    found = nvml.collect(fake, _pci_buses(host), ())
    assert found["gpus"]["0000:1b:00.0"]["nvlink_peers"] == []
    assert found["topology"]["0000:1b:00.0"]["0000:43:00.0"] == "NODE"
    assert found["topology"]["0000:1b:00.0"]["0000:9d:00.0"] == "SYS"


def test_switch_seen_only_through_nvml():
    """HGX B200: NVSwitches are no host PCI functions; the remote type says switch."""
    host = "hgx-h100-8gpu"
    found = nvml.collect(fake_pynvml.from_host(host), _pci_buses(host), ())
    assert found["topology"]["0000:1b:00.0"]["0000:df:00.0"] == "NV18"


def test_direct_gpu_to_gpu_nvlink():
    data = copy.deepcopy(fake_pynvml.load_host("v100-2gpu"))
    a, b = data["devices"]
    a["nvlinks"] = [{"count": 4, "state": 1, "remote_bus_id": b["bus_id"], "remote_type": 0, "version": 2},
                    {"count": 2, "state": 0, "remote_bus_id": b["bus_id"], "remote_type": 0, "version": 2}]
    b["nvlinks"] = [{"count": 4, "state": 1, "remote_bus_id": a["bus_id"], "remote_type": 0, "version": 2}]
    found = nvml.collect(fake_pynvml.make_module(data), ["0000:3b:00.0", "0000:d8:00.0"])
    assert found["topology"] == {"0000:3b:00.0": {"0000:d8:00.0": "NV4"}, "0000:d8:00.0": {"0000:3b:00.0": "NV4"}}
    gpu = found["gpus"]["0000:3b:00.0"]
    assert gpu["nvlink_active_count"] == 4 and len(gpu["nvlinks"]) == 6
    assert gpu["nvlinks"][5] == {"link": 5, "active": False, "remote_pci_bus_id": None,
                                 "remote_type": None, "version": "2.0"}


@pytest.mark.parametrize("code, text", [("DRIVER_NOT_LOADED", "nvmlInit failed: Driver Not Loaded"),
                                        ("LIBRARY_NOT_FOUND", "nvmlInit failed: NVML Shared Library Not Found"),
                                        ("LIB_RM_VERSION_MISMATCH",
                                         "nvmlInit failed: RM has detected an NVML/RM version mismatch.")])
def test_init_failure(code, text):
    found = nvml.collect(fake_pynvml.from_host("hgx-h100-8gpu", init_error=code), _pci_buses("hgx-h100-8gpu"))
    assert found["answered"] is False and found["reason"] == text and found["gpus"] == {}


def test_permission_denied_field_is_none_not_an_error():
    fake = fake_pynvml.from_host("v100-2gpu")

    def denied(handle):
        raise fake.NVMLError(fake.NVML_ERROR_NO_PERMISSION)

    fake.nvmlDeviceGetSerial = denied
    found = nvml.collect(fake, _pci_buses("v100-2gpu"))
    assert found["gpus"]["0000:3b:00.0"]["serial"] is None and found["errors"] == []


def test_nvml_bus_ids_are_normalised():
    found = nvml.collect(fake_pynvml.from_host("dgx-a100-8gpu"), [])
    assert sorted(found["gpus"]) == _pci_buses("dgx-a100-8gpu")
    assert all(bus == bus.lower() and bus.startswith("0000:") for bus in found["gpus"])


def test_fake_errors_match_the_real_binding():
    """The test double's error classes and texts follow nvidia-ml-py's."""
    import importlib
    real = importlib.import_module("pynvml")  # nvidia-ml-py, a test requirement (requirements/test.txt)
    fake = fake_pynvml.from_host("v100-2gpu")
    for name in ("NVML_ERROR_GPU_IS_LOST", "NVML_ERROR_DRIVER_NOT_LOADED", "NVML_ERROR_FUNCTION_NOT_FOUND",
                 "NVML_ERROR_NOT_SUPPORTED", "NVML_TOPOLOGY_NODE", "NVML_NVLINK_VERSION_4_0",
                 "NVML_NVLINK_DEVICE_TYPE_SWITCH", "NVML_CLOCK_SM", "NVML_NVLINK_MAX_LINKS"):
        assert getattr(fake, name) == getattr(real, name), name
    err = fake.NVMLError(fake.NVML_ERROR_GPU_IS_LOST)
    assert type(err).__name__ == "NVMLError_GpuIsLost" and str(err) == "GPU is lost"
    assert str(real.NVMLError(real.NVML_ERROR_GPU_IS_LOST)) == str(err)


def test_nvlink5_switches_seen_through_the_remote_type():
    """HGX B200: the 18 NVLinks of each GPU end at switches that are no host PCI functions."""
    host = "hgx-b200-8gpu"
    found = nvml.collect(fake_pynvml.from_host(host), _pci_buses(host), _switches(host))
    assert _switches(host) == []
    gpu = found["gpus"]["0000:1b:00.0"]
    assert [l["remote_type"] for l in gpu["nvlinks"]] == ["switch"] * 18
    assert set(l["version"] for l in gpu["nvlinks"]) == {"5.0"}
    assert found["topology"]["0000:1b:00.0"]["0000:df:00.0"] == "NV18"


def test_nvml_init_timeout():
    import threading
    release = threading.Event()
    fake = fake_pynvml.from_host("v100-2gpu")
    fake.nvmlInit = lambda: release.wait(30)
    try:
        found = nvml.collect(fake, _pci_buses("v100-2gpu"), init_timeout=0.2)
    finally:
        release.set()
    assert found["answered"] is False and found["reason"].startswith("nvmlInit did not return within 0.2 s")
    assert fake.fake_state["calls"] == 0  # nothing else was asked of a hung NVML


def test_nvml_init_error_passes_through_the_worker_thread():
    found = nvml.collect(fake_pynvml.from_host("v100-2gpu", init_error="DRIVER_NOT_LOADED"),
                         _pci_buses("v100-2gpu"), init_timeout=5)
    assert found == dict(found, answered=False, reason="nvmlInit failed: Driver Not Loaded")


def test_max_clocks_from_nvml():
    # the maxima of published nvidia-smi output (tests/fixtures/nvidia-smi-settings/max-clocks-rtx6000ada-*.csv:
    # 3105 / 10001 MHz), given to one device of the double
    host = "rtx4090-8gpu"
    data = fake_pynvml.inject_device(fake_pynvml.load_host(host), 0, max_clocks={"graphics": 3105, "sm": 3105,
                                                                                 "mem": 10001})
    data = fake_pynvml.inject_device(data, 1, max_clocks={"graphics": 0, "sm": 0})
    found = nvml.collect(fake_pynvml.make_module(data), _pci_buses(host))
    gpus = [found["gpus"][bus] for bus in _pci_buses(host)]
    assert gpus[0]["max_clocks"] == {"graphics_mhz": 3105, "memory_mhz": 10001}
    # 0 is no maximum, a missing clock is Not Supported: unknown, never an error
    assert gpus[1]["max_clocks"] == {"graphics_mhz": None, "memory_mhz": None}
    assert gpus[2]["max_clocks"] == {"graphics_mhz": None, "memory_mhz": None}
    assert found["errors"] == []


def test_max_clocks_unknown_on_an_old_driver():
    found = nvml.collect(fake_pynvml.from_host("v100-2gpu", missing=("nvmlDeviceGetMaxClockInfo",)),
                         _pci_buses("v100-2gpu"))
    assert all(g["max_clocks"] == {"graphics_mhz": None, "memory_mhz": None} for g in found["gpus"].values())
