"""Verify gpuops.dlserver.dcgm_exporter (host mode) on the lab nodes, against the TEST DOUBLES of
NVIDIA's DCGM packages (nv-hostengine and dcgm-exporter stand-ins from the lab mirror).

dcgm-hgx stands for an HGX H100 (profiling-capable, MIG-capable), dcgm-rtx for 8x RTX 4090
(GeForce: no profiling) with extra fields, dcgm-cpu for a server without GPU. Expectations are
written here (field lists, flags, fixture bus ids), never read from the role's own record.
"""

import json
import os

import pytest

STATUS = "/etc/gpuops/dcgm_exporter.json"
CSV = "/etc/dcgm-exporter/gpuops-counters.csv"
UNIT = "/etc/systemd/system/dcgm-exporter.service"
BASE = ["DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL",
        "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_POWER_VIOLATION", "DCGM_FI_DEV_THERMAL_VIOLATION",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE"]
PROF = ["DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE", "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
        "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "DCGM_FI_PROF_PIPE_FP16_ACTIVE", "DCGM_FI_PROF_PCIE_TX_BYTES",
        "DCGM_FI_PROF_PCIE_RX_BYTES", "DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES"]
FIELDS = {"dcgm-hgx": BASE + PROF + ["DCGM_FI_DEV_MIG_MODE"],
          "dcgm-rtx": BASE + ["DCGM_FI_DEV_PSTATE"]}
INTERVAL = {"dcgm-hgx": "30000", "dcgm-rtx": "10000"}
# PCI bus ids of the fixture GPUs (tests/fixtures/hosts/<fixture>/spec.json).
GPUS = {"dcgm-hgx": ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
                     "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"],
        "dcgm-rtx": 8}
PACKAGES = ["datacenter-gpu-manager-4-core", "datacenter-gpu-manager-4-cuda12", "datacenter-gpu-manager-exporter"]


def node(host):
    return host.backend.get_hostname()


def status(host):
    return json.loads(host.file(STATUS).content_string)


def fields_of_csv(text):
    rows = [line.split(",") for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return [r[0].strip() for r in rows], [r[1].strip() for r in rows]


def journal(host, unit):
    return host.run("journalctl -u %s --no-pager -n 40" % unit).stdout


def test_cpu_only_node_gets_nothing_and_says_why(host):
    if node(host) != "dcgm-cpu":
        pytest.skip("GPU node")
    record = status(host)
    assert record["run"] is False and record["reason"] == "no NVIDIA GPU: nothing for DCGM to watch"
    assert record["verify"]["ok"] is None and "not verified: no NVIDIA GPU" in record["verify"]["reason"]
    assert not host.file(CSV).exists and not host.file(UNIT).exists
    assert not host.package("datacenter-gpu-manager-4-core").is_installed
    assert not host.file("/etc/apt/sources.list.d/gpuops-dcgm.sources").exists
    assert not host.socket("tcp://0.0.0.0:9400").is_listening


@pytest.fixture(name="gpu_node")
def fixture_gpu_node(host):
    if node(host) == "dcgm-cpu":
        pytest.skip("CPU-only node")
    return node(host)


def test_repository_is_the_double_with_a_checked_signed_by_keyring(host, gpu_node):
    text = host.file("/etc/apt/sources.list.d/gpuops-dcgm.sources").content_string
    release = "debian12" if gpu_node == "dcgm-hgx" else "debian13"
    mirror = "172.30.99.1:%s" % os.environ.get("GPUOPS_LAB_MIRROR_PORT", "8099")  # the lab mirror's port
    assert "URIs: http://%s/apt/cuda/%s/x86_64/\n" % (mirror, release) in text
    assert "Signed-By: /etc/apt/keyrings/gpuops-dcgm.asc\n" in text
    # Only the double's key is in the keyring (the collection's one key trust).
    shown = host.check_output("gpg --batch --no-tty --with-colons --show-keys /etc/apt/keyrings/gpuops-dcgm.asc")
    assert len([line for line in shown.splitlines() if line.startswith("pub:")]) == 1
    for name in PACKAGES:
        pkg = host.package(name)
        assert pkg.is_installed and pkg.version.endswith("+gpuops.testdouble"), name
    assert not host.package("datacenter-gpu-manager-4-proprietary").is_installed
    assert status(host)["repository"]["sources"] == ["/etc/apt/sources.list.d/gpuops-dcgm.sources"]


def test_counters_file_per_fixture(host, gpu_node):
    names, types = fields_of_csv(host.file(CSV).content_string)
    assert names == FIELDS[gpu_node]
    assert set(types) <= {"gauge", "counter"}
    if gpu_node == "dcgm-rtx":
        assert not [n for n in names if n.startswith("DCGM_FI_PROF_")]


def test_profiling_fields_dropped_with_the_reason_on_geforce(host, gpu_node):
    record = status(host)
    if gpu_node == "dcgm-hgx":
        assert record["profiling"]["value"] is True and record["dropped"] == []
        assert "DCGM_FI_DEV_MIG_MODE" in record["metrics"] and len(record["mig"]["capable_gpus"]) == 8
        return
    assert record["profiling"]["value"] is False
    dropped = dict((d["name"], d) for d in record["dropped"])
    assert sorted(dropped) == sorted(PROF)
    assert dropped["DCGM_FI_PROF_SM_OCCUPANCY"]["source"] == "dcgm_exporter_profiling_counters"
    assert "a GeForce GPU, neither data-centre nor workstation" in dropped["DCGM_FI_PROF_SM_ACTIVE"]["reason"]


def test_unit_points_the_exporter_at_the_host_engine(host, gpu_node):
    lines = host.file(UNIT).content_string.splitlines()
    assert ("ExecStart=/usr/bin/dcgm-exporter -f %s -a :9400 -c %s -d f -r localhost:5555"
            % (CSV, INTERVAL[gpu_node])) in lines
    for line in ("Requires=nvidia-dcgm.service", "DynamicUser=yes", "CapabilityBoundingSet=", "NoNewPrivileges=yes",
                 "PrivateDevices=yes", "ProtectSystem=strict"):
        assert line in lines, line
    assert not [line for line in lines if "SYS_ADMIN" in line]


def test_services_run_and_one_host_engine(host, gpu_node):
    for unit in ("nvidia-dcgm", "dcgm-exporter"):
        svc = host.service(unit)
        assert svc.is_running and svc.is_enabled, journal(host, unit)
    assert host.socket("tcp://127.0.0.1:5555").is_listening
    assert host.socket("tcp://0.0.0.0:9400").is_listening or host.socket("tcp://:::9400").is_listening
    engines = host.check_output("pgrep -fc '^/usr/bin/python3 /usr/bin/nv-hostengine' || true")
    assert engines.strip() == "1"
    user = host.check_output("ps -o user= -p $(systemctl show -p MainPID --value dcgm-exporter)")
    assert user.strip() != "root"


def test_metrics_served_are_the_counters_file_with_fixture_labels(host, gpu_node):
    page = host.check_output("curl -sf http://127.0.0.1:9400/metrics")
    assert "TEST DOUBLE of dcgm-exporter" in page
    served = sorted(set(line.split("{")[0] for line in page.splitlines() if line.startswith("DCGM_FI_")))
    assert served == sorted(FIELDS[gpu_node])
    temps = [line for line in page.splitlines() if line.startswith("DCGM_FI_DEV_GPU_TEMP{")]
    if isinstance(GPUS[gpu_node], list):
        assert sorted(line.split('pci_bus_id="')[1].split('"')[0] for line in temps) == GPUS[gpu_node]
    else:
        assert len(temps) == GPUS[gpu_node]
    record = status(host)
    assert record["verify"]["ok"] is True and record["verify"]["unexpected"] == []
