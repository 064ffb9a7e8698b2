# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nvidia-smi depth (plugins/module_utils/probe/nvidia_smi.py) against captured outputs."""

import os
import sys

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import nvidia_smi
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_topo import parse_nvidia_topo

TESTS = os.path.abspath(os.path.join(os.path.dirname(os.path.dirname(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(TESTS, "fixtures"))
import build_sysfs  # noqa: E402

SMI_HOSTS = [h for h in build_sysfs.host_names()
             if os.path.exists(os.path.join(build_sysfs.host_dir(h), "nvidia-smi", "captures.json"))]
SMI = "/usr/bin/nvidia-smi"


def test_capture_hosts():
    assert SMI_HOSTS == ["dgx-a100-8gpu", "hgx-h100-8gpu", "rtx4090-8gpu", "v100-2gpu"]


def test_parse_query_values_and_not_available():
    text = ("00000000:1B:00.0, NVIDIA H100 80GB HBM3, GPU-1, 81559, 535.161.08, 9.0, Enabled, Disabled, 700.00, Enabled\n"
            "00000000:18:00.0, NVIDIA GeForce RTX 4090, GPU-2, 24564, 550.54.14, 8.9, Disabled, [N/A], 450.00, [N/A]\n"
            "00000000:3B:00.0, Tesla V100-PCIE-32GB, GPU-3, 32510, 470.1, [Not Supported], [Unknown Error], "
            "[N/A], [Not Supported], Disabled\n")
    h100, rtx, v100 = nvidia_smi.parse_query(text)
    assert h100 == {"pci_bus_id": "0000:1b:00.0", "name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-1",
                    "memory_total_mib": 81559, "driver_version": "535.161.08", "compute_capability": "9.0",
                    "persistence_mode": True, "mig_mode": {"current": False, "pending": None},
                    "power_limit_w": 700, "ecc_mode": {"current": True, "pending": None}}
    assert rtx["mig_mode"] is None and rtx["ecc_mode"] is None and rtx["persistence_mode"] is False
    assert v100["compute_capability"] is None and v100["persistence_mode"] is None
    assert v100["power_limit_w"] is None and v100["ecc_mode"] == {"current": False, "pending": None}


def test_parse_query_rejects_a_short_row():
    with pytest.raises(ValueError, match="line 1: 3 fields"):
        nvidia_smi.parse_query("00000000:1B:00.0, x, y\n")


def test_parse_cuda_version():
    banner = "| NVIDIA-SMI 535.161.08             Driver Version: 535.161.08   CUDA Version: 12.2     |"
    assert nvidia_smi.parse_cuda_version(banner) == "12.2"
    assert nvidia_smi.parse_cuda_version("CUDA Version: N/A") is None
    assert nvidia_smi.parse_cuda_version(None) is None


@pytest.mark.parametrize("host", SMI_HOSTS)
def test_collect_from_captures(host):
    expected = build_sysfs.load_json(host, "expected.json")
    run = build_sysfs.replay_nvidia_smi(host)
    found = nvidia_smi.collect(SMI, run)
    assert found["answered"] is True and found["errors"] == []
    assert sorted(found["gpus"]) == [g["pci_bus_id"] for g in expected["gpus"]]
    assert found["driver_version"] == expected["driver"]["version"]
    assert found["cuda_version"] == expected["driver"]["cuda_version"]
    for want in expected["gpus"]:
        assert found["gpus"][want["pci_bus_id"]]["name"] == want["nvml_name"]
    with open(os.path.join(build_sysfs.host_dir(host), expected["topo_file"])) as handle:
        assert found["topo"] == parse_nvidia_topo(handle.read())
    assert found["index_to_bus"] == dict(("GPU%d" % i, g["pci_bus_id"]) for i, g in enumerate(expected["gpus"]))
    assert run.calls[-2:] == [[SMI], [SMI, "topo", "-m"]]


def test_old_driver_retry_without_compute_cap():
    run = build_sysfs.replay_nvidia_smi("v100-2gpu")
    found = nvidia_smi.collect(SMI, run)
    assert [c[1] for c in run.calls[:2]] == [
        "--query-gpu=" + ",".join(nvidia_smi.QUERY_FIELDS),
        "--query-gpu=" + ",".join(nvidia_smi.LEGACY_QUERY_FIELDS)]
    gpu = found["gpus"]["0000:3b:00.0"]
    assert gpu["compute_capability"] is None and gpu["memory_total_mib"] == 32510
    assert found["cuda_version"] == "11.4"


def test_driver_not_talking():
    message = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
               "Make sure that the latest NVIDIA driver is installed and running.\n")
    calls = []

    def run(args):
        calls.append(args)
        return 9, message, ""

    found = nvidia_smi.collect(SMI, run)
    assert found["answered"] is False
    assert found["reason"].startswith("nvidia-smi failed (rc=9): NVIDIA-SMI has failed")
    assert len(calls) == 1


def test_garbled_query_output():
    found = nvidia_smi.collect(SMI, lambda args: (0, "something else entirely\n", ""))
    assert found["answered"] is False and "not understood" in found["reason"]


def _with_topo_answer(rc, out, err):
    """The rtx4090 captures, but ``topo -m`` answers (rc, out, err)."""
    replay = build_sysfs.replay_nvidia_smi("rtx4090-8gpu")
    return lambda args: (rc, out, err) if args[1:] == ["topo", "-m"] else replay(args)


def test_topo_failure_keeps_the_answer():
    found = nvidia_smi.collect(SMI, _with_topo_answer(1, "", "topo: not supported in this mode"))
    assert found["answered"] is True and found["topo"] is None
    assert found["errors"] == [{"source": "nvidia-smi",
                                "error": "nvidia-smi topo -m failed (rc=1): topo: not supported in this mode"}]


def test_unreadable_topo_text_is_an_error_entry():
    found = nvidia_smi.collect(SMI, _with_topo_answer(0, "GPU0\tGPU1\nbanana\n", ""))
    assert found["answered"] is True and found["topo"] is None
    assert found["errors"][0]["error"].startswith("nvidia-smi topo -m")


@pytest.mark.parametrize("cell", ["inf", "-inf", "nan", "[N/A]", "[Not Supported]", "[Unknown Error]",
                                  "[GPU requires reset]", "[Insufficient Permissions]", "N/A", "garbage"])
def test_values_that_are_no_numbers_become_none(cell):
    row = ("00000000:1B:00.0, NVIDIA H100 80GB HBM3, GPU-x, {c}, 535.161.08, 9.0, Enabled, Disabled, {c}, "
           "Enabled\n").format(c=cell)
    gpu = nvidia_smi.parse_query(row)[0]
    assert gpu["memory_total_mib"] is None and gpu["power_limit_w"] is None
    assert gpu["name"] == "NVIDIA H100 80GB HBM3" and gpu["persistence_mode"] is True


def test_bracketed_text_is_no_value():
    row = "00000000:1B:00.0, [Unknown Error], [GPU is lost], 81559, [Unknown Error], [N/A], [N/A], [N/A], 700.00, [N/A]\n"
    gpu = nvidia_smi.parse_query(row)[0]
    assert (gpu["name"], gpu["uuid"], gpu["driver_version"], gpu["compute_capability"]) == (None, None, None, None)
    assert gpu["mig_mode"] is None and gpu["ecc_mode"] is None
    assert (gpu["memory_total_mib"], gpu["power_limit_w"]) == (81559, 700)


# ---- R610: KMD Version / CUDA UMD Version (issue 18, "Real output the parsers must read") ----
# SOURCE: https://github.com/sgl-project/sglang/issues/27487 (B200, 610.43.02) and the corpus in
# tests/fixtures/nvidia-smi/ (test_smi_corpus.py); NVIDIA's nvidia-smi documentation, quoted in
# https://github.com/PrismML-Eng/Bonsai-demo/pull/122: "deprecated Driver Version and CUDA Version
# in favor of KMD Version and CUDA UMD Version".

def test_parse_cuda_version_of_the_r610_banner():
    banner = "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |"
    assert nvidia_smi.parse_cuda_version(banner) == "13.3"
    assert nvidia_smi.parse_cuda_version("CUDA UMD Version: N/A") is None


def _query_row(driver_cell):
    return ("00000000:63:00.0, NVIDIA B200, GPU-1, 183359, %s, 10.0, Enabled, Disabled, 1000.00, Enabled\n"
            % driver_cell)


@pytest.mark.parametrize("cell, version", [
    # nvidia-smi -q of 610.47 prints "610.47 [Deprecated; will be removed in CUDA 14.0. Use KMD Version
    # instead]" (https://github.com/Jaded-Encoding-Thaumaturgy/vs-jetpack/pull/297)
    ("610.47 [Deprecated; will be removed in CUDA 14.0. Use KMD Version instead]", "610.47"),
    ("570.133.07", "570.133.07"), ("[Requested functionality has been deprecated]", None),
    ("not a version", None),
])
def test_driver_version_cell(cell, version):
    assert nvidia_smi.parse_query(_query_row(cell))[0]["driver_version"] == version


def _r610_runner(driver_field):
    """A 610 driver: ``driver_version`` answered as ``driver_field`` says, ``kmd_version`` works."""
    calls = []

    def run(args):
        calls.append(args)
        if args[1:2] == ["--query-gpu=pci.bus_id,kmd_version"]:
            return 0, "00000000:63:00.0, 610.43.02\n", ""
        if args[1:] and args[1].startswith("--query-gpu="):
            fields = args[1].split("=", 1)[1].split(",")
            if "driver_version" in fields and driver_field == "refused":
                return 2, 'Field "driver_version" is not a valid field to query.\n', ""
            cell = "610.43.02" if "kmd_version" in fields else "[Requested functionality has been deprecated]"
            return 0, _query_row(cell), ""
        if args == [SMI]:
            return 0, "| NVIDIA-SMI 610.43.02              KMD Version: 610.43.02     CUDA UMD Version: 13.3     |\n", ""
        return 1, "", "no topo here"
    run.calls = calls
    return run


@pytest.mark.parametrize("driver_field", ["refused", "deprecated"])
def test_r610_driver_version_falls_back_to_kmd_version(driver_field):
    run = _r610_runner(driver_field)
    found = nvidia_smi.collect(SMI, run)
    assert found["answered"] is True
    assert found["driver_version"] == "610.43.02" and found["cuda_version"] == "13.3"
    assert found["gpus"]["0000:63:00.0"]["driver_version"] == "610.43.02"
    queries = [c[1] for c in run.calls if c[1:] and c[1].startswith("--query-gpu=")]
    if driver_field == "refused":
        assert queries[1] == "--query-gpu=" + ",".join(
            "kmd_version" if f == "driver_version" else f for f in nvidia_smi.QUERY_FIELDS)
    else:
        assert queries[1] == "--query-gpu=pci.bus_id,kmd_version"


def test_both_fields_refused_drops_compute_cap_then_renames_driver_version():
    seen = []

    def run(args):
        seen.append(args)
        if args[1:] and args[1].startswith("--query-gpu="):
            fields = args[1].split("=", 1)[1].split(",")
            for field in ("compute_cap", "driver_version"):
                if field in fields:
                    return 2, 'Field "%s" is not a valid field to query.\n' % field, ""
            return 0, "00000000:63:00.0, NVIDIA B200, GPU-1, 183359, 610.43.02, Enabled, Disabled, 1000.00, Enabled\n", ""
        return 1, "", "no"

    found = nvidia_smi.collect(SMI, run)
    assert found["answered"] is True and found["driver_version"] == "610.43.02"
    # three tries of the GPU query; the maximum clocks are a query of their own, answered here with a row
    # of the wrong shape: unknown
    assert len([a for a in seen if a[1:] and a[1].startswith("--query-gpu=") and "clocks.max." not in a[1]]) == 3
    assert found["gpus"]["0000:63:00.0"]["max_clocks"] == {"graphics_mhz": None, "memory_mhz": None}


# --- the maximum clocks (gpu_facts max_clocks), from real published output ---------------------
SETTINGS = os.path.join(TESTS, "fixtures", "nvidia-smi-settings")
with open(os.path.join(TESTS, "unit", "plugins", "module_utils", "data", "max_clocks_cases.yml")) as _fh:
    MAX_CLOCK_CASES = yaml.safe_load(_fh)


def _published_cells(case):
    """The two clock cells of a fixture's row (the fixture names its SOURCE)."""
    with open(os.path.join(SETTINGS, case["source"])) as handle:
        lines = handle.read().splitlines()
    assert any(line.startswith("# SOURCE: ") for line in lines), case["source"]
    rows = [[c.strip() for c in line.split(",")] for line in lines if line.strip() and not line.startswith("# ")]
    header = rows[0] if isinstance(case["graphics"], str) else None
    data = rows[1:] if header else rows
    row = data[case["row"]]
    pick = (lambda key: row[header.index(case[key])]) if header else (lambda key: row[case[key]])
    return pick("graphics"), pick("memory")


@pytest.mark.parametrize("case", MAX_CLOCK_CASES, ids=[c["name"] for c in MAX_CLOCK_CASES])
def test_max_clocks_of_published_output(case):
    graphics, memory = _published_cells(case)
    assert {"graphics_mhz": nvidia_smi.mhz(graphics), "memory_mhz": nvidia_smi.mhz(memory)} == case["expect"]
    # the probe's own query (nounits) answered with the same values: the GPU's max_clocks fact
    bus = "00000000:01:00.0"
    query = "%s, %s, %s\n" % (bus, graphics.replace(" MHz", ""), memory.replace(" MHz", ""))

    def run(args):
        if args[1:2] == ["--query-gpu=" + ",".join(nvidia_smi.MAX_CLOCK_FIELDS)]:
            return 0, query, ""
        if args[1:] and args[1].startswith("--query-gpu="):
            return 0, "%s, GPU, GPU-1, 1, 595.71.05, 12.0, Enabled, [N/A], 600.00, [N/A]\n" % bus, ""
        return 1, "", "not captured"

    found = nvidia_smi.collect(SMI, run)
    assert found["gpus"]["0000:01:00.0"]["max_clocks"] == case["expect"]


@pytest.mark.parametrize("cell,value", [("3105", 3105), ("3105 MHz", 3105), ("[N/A]", None), ("N/A", None),
                                        ("[Not Supported]", None), ("0", None), ("", None), ("3105\n", 3105),
                                        ("3105\nMHz", None), ("-5", None), ("31.5", None), ("abc", None)])
def test_a_clock_cell(cell, value):
    # a cell is stripped like every cell of the query (a trailing newline is the row's end); a newline
    # inside it is no clock
    assert nvidia_smi.mhz(cell) == value


def test_max_clocks_unknown_where_the_query_fails_or_says_nothing():
    def run_with(answer):
        def run(args):
            if args[1:] and "clocks.max." in args[1]:
                return answer
            if args[1:] and args[1].startswith("--query-gpu="):
                return 0, ("00000000:01:00.0, GPU, GPU-1, 1, 550.54.14, 8.9, Enabled, [N/A], 450.00, [N/A]\n"
                           "00000000:02:00.0, GPU, GPU-2, 1, 550.54.14, 8.9, Enabled, [N/A], 450.00, [N/A]\n"), ""
            return 1, "", "not captured"
        return run

    unknown = {"graphics_mhz": None, "memory_mhz": None}
    refused = nvidia_smi.collect(SMI, run_with((2, 'Field "clocks.max.graphics" is not a valid field to query.', "")))
    assert refused["answered"] is True and [g["max_clocks"] for g in refused["gpus"].values()] == [unknown] * 2
    partial = nvidia_smi.collect(SMI, run_with((0, "00000000:02:00.0, [N/A], 10501\n", "")))
    assert partial["gpus"]["0000:01:00.0"]["max_clocks"] == unknown
    assert partial["gpus"]["0000:02:00.0"]["max_clocks"] == {"graphics_mhz": None, "memory_mhz": 10501}


@pytest.mark.parametrize("host", SMI_HOSTS)
def test_captured_hosts_without_a_max_clock_capture_leave_the_maxima_unknown(host):
    found = nvidia_smi.collect(SMI, build_sysfs.replay_nvidia_smi(host))
    assert all(g["max_clocks"] == {"graphics_mhz": None, "memory_mhz": None} for g in found["gpus"].values())
