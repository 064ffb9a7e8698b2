# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36, the NVIDIA/hardware tables that were PENDING, row by row: container toolkit packages and
CDI units, PCI classes and PCIe rates, DCGM fields and CUDA-major packages, the CUDA repository's
architecture directories, the driver globs and NVLSM needs, nvidia-smi fields and topo codes, the
NVML enums, the dcgmi diag root keys.

Each row says what its quoted source says (a value edited without its source fails here), every row
has a source and a read date, the shapes the code uses are built from the rows, and the decisions
read from them are unchanged - except where the source contradicted the row (PCIe Gen6, three DCGM
help texts), which these tests pin."""
import fnmatch
import importlib.util
import os
import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware import gpu_peaks, precision
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm, dcgm_fields
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import (
    cuda_repos, driver_host, driver_resolve, driver_sources, nvidia_repo)
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import (
    nvidia_smi, nvidia_sources, nvidia_topo, nvml, pci, pci_sources)
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import dcgm_diag, measure

DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))

ALL_ROWS = [
    ("PACKAGE_ROWS", container_toolkit.PACKAGE_ROWS), ("CDI_UNIT_ROWS", container_toolkit.CDI_UNIT_ROWS),
    ("PCI_CLASS_ROWS", pci_sources.PCI_CLASS_ROWS), ("PCIE_RATE_ROWS", pci_sources.PCIE_RATE_ROWS),
    ("FIELD_ROWS", dcgm_fields.FIELD_ROWS), ("CUDA_MAJOR_ROWS", dcgm.CUDA_MAJOR_ROWS),
    ("ARCH_ROWS", cuda_repos.ARCH_ROWS), ("DRIVER_FAMILY_ROWS", driver_sources.DRIVER_FAMILY_ROWS),
    ("DRIVER_PATTERN_ROWS", driver_sources.DRIVER_PATTERN_ROWS),
    ("NVLSM_PACKAGE_ROWS", driver_sources.NVLSM_PACKAGE_ROWS), ("NVLSM_MODULE_ROWS", driver_sources.NVLSM_MODULE_ROWS),
    ("QUERY_FIELD_ROWS", nvidia_sources.QUERY_FIELD_ROWS), ("FIELD_FALLBACK_ROWS", nvidia_sources.FIELD_FALLBACK_ROWS),
    ("LINK_CODE_ROWS", nvidia_sources.LINK_CODE_ROWS), ("NVLINK_VERSION_ROWS", nvidia_sources.NVLINK_VERSION_ROWS),
    ("THROTTLE_REASON_ROWS", nvidia_sources.THROTTLE_REASON_ROWS),
    ("REMOTE_TYPE_ROWS", nvidia_sources.REMOTE_TYPE_ROWS), ("TOPOLOGY_LEVEL_ROWS", nvidia_sources.TOPOLOGY_LEVEL_ROWS),
    ("ROOT_KEY_ROWS", dcgm_diag.ROOT_KEY_ROWS),
]


@pytest.mark.parametrize("name, rows", ALL_ROWS, ids=[entry[0] for entry in ALL_ROWS])
def test_every_row_has_a_source_outside_this_repository_and_a_read_date(name, rows):
    assert rows, name
    for row in rows:
        assert DATE.fullmatch(row["read"]), (name, row)
        assert row["source"].strip() and "gpuops" not in row["source"], (name, row)
        assert row.get("unconfirmed") is None or len(row["unconfirmed"]) > 20, (name, row)
        for key, value in row.items():
            assert not isinstance(value, str) or "\n" not in value, (name, key)


# ---- the shapes the code reads are built from the rows, with the values they had ----------------------

def test_shapes_are_built_from_the_rows_and_unchanged():
    assert container_toolkit.PACKAGES == ["nvidia-container-toolkit", "nvidia-container-toolkit-base",
                                          "libnvidia-container-tools", "libnvidia-container1"]
    assert container_toolkit.CDI_UNITS == ("nvidia-cdi-refresh.path", "nvidia-cdi-refresh.service")
    assert pci.GPU_CLASSES == (0x0300, 0x0302) and pci.NVSWITCH_CLASSES == (0x0680,)
    assert pci.COMPANION_CLASSES == {0x0403: "audio", 0x0C03: "usb", 0x0C80: "serial_bus"}
    assert pci.NIC_CLASSES == {0x0200: "ethernet", 0x0207: "infiniband"}
    assert pci._SPEED_GEN == ((2.5, 1), (5.0, 2), (8.0, 3), (16.0, 4), (32.0, 5), (64.0, 6))
    assert precision.BF16_FROM == measure.NATIVE_BF16_FROM == (8, 0)
    assert dcgm.CUDA_MAJORS == ("11", "12", "13")
    assert cuda_repos.ARCHES == {"x86_64": "x86_64", "aarch64": "sbsa"}
    assert driver_resolve.DRIVER_FAMILY == ("nvidia-*", "libnv*", "libcuda*", "firmware-nvidia-gsp*")
    assert driver_host.DRIVER_PATTERNS == ("*nvidia*", "libcuda*", "nvlsm", "infiniband-diags")
    assert nvidia_repo.NVLSM_EXTRA_PACKAGES == ["infiniband-diags"] and nvidia_repo.NVLSM_MODULES == ["ib_umad"]
    assert nvidia_smi.QUERY_FIELDS == ("pci.bus_id", "name", "uuid", "memory.total", "driver_version", "compute_cap",
                                       "persistence_mode", "mig.mode.current", "power.limit", "ecc.mode.current")
    assert nvidia_smi.LEGACY_QUERY_FIELDS == tuple(f for f in nvidia_smi.QUERY_FIELDS if f != "compute_cap")
    assert nvidia_smi.FIELD_FALLBACKS == (("compute_cap", None), ("driver_version", "kmd_version"))
    assert nvidia_topo.LINK_CODES == ("X", "NV#", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC", "N/A")
    assert nvml.NVLINK_VERSIONS == {1: "1.0", 2: "2.0", 3: "2.2", 4: "3.0", 5: "3.1", 6: "4.0", 7: "5.0", 8: "6.0"}
    assert nvml._REMOTE_TYPES == {0: "gpu", 1: "ibmnpu", 2: "switch"}
    assert nvml._TOPOLOGY_CODES == {0: "PIX", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
    assert [bit for bit, _name in nvml.THROTTLE_REASONS] == [1 << n for n in range(9)]
    assert dcgm_diag.ROOT_KEYS == ("DCGM GPU Diagnostic", "DCGM Diagnostic")
    assert dcgm.FIELDS == dict((r["name"], (r["type"], r["help"])) for r in dcgm_fields.FIELD_ROWS)
    assert len(dcgm.FIELDS) == len(dcgm_fields.FIELD_ROWS) == 69


def test_my_tables_are_no_longer_pending_and_each_is_registered_or_built_from_a_registered_table():
    spec = importlib.util.spec_from_file_location("vendor_facts", os.path.join(REPO, "tools", "vendor_facts.py"))
    vendor_facts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vendor_facts)
    mine = [("engines/container_toolkit.py", "PACKAGES"), ("engines/container_toolkit.py", "CDI_UNITS"),
            ("hardware/gpu_peaks.py", "PCIE_X16_GBPS"), ("hardware/precision.py", "BF16_FROM"),
            ("validate/measure.py", "NATIVE_BF16_FROM"), ("monitoring/dcgm.py", "FIELDS"),
            ("monitoring/dcgm.py", "CUDA_MAJORS"), ("packages/cuda_repos.py", "ARCHES"),
            ("packages/driver_host.py", "DRIVER_PATTERNS"), ("packages/driver_resolve.py", "DRIVER_FAMILY"),
            ("packages/nvidia_repo.py", "NVLSM_EXTRA_PACKAGES"), ("packages/nvidia_repo.py", "NVLSM_MODULES"),
            ("probe/nvidia_smi.py", "QUERY_FIELDS"), ("probe/nvidia_smi.py", "LEGACY_QUERY_FIELDS"),
            ("probe/nvidia_smi.py", "FIELD_FALLBACKS"), ("probe/nvml.py", "NVLINK_VERSIONS"),
            ("probe/nvml.py", "THROTTLE_REASONS"), ("probe/nvml.py", "_REMOTE_TYPES"), ("probe/nvml.py", "_TOPOLOGY_CODES"),
            ("probe/nvidia_topo.py", "LINK_CODES"), ("probe/pci.py", "GPU_CLASSES"), ("probe/pci.py", "NVSWITCH_CLASSES"),
            ("probe/pci.py", "NIC_CLASSES"), ("probe/pci.py", "COMPANION_CLASSES"), ("probe/pci.py", "_SPEED_GEN"),
            ("validate/dcgm_diag.py", "ROOT_KEYS")]
    pending = set((entry[0], entry[1]) for entry in vendor_facts.pending())
    listed = set((entry[1], entry[2]) for entry in vendor_facts.registered())
    for folder_file, name in mine:
        key = ("plugins/module_utils/" + folder_file, name)
        assert key not in pending, key
        assert key in vendor_facts.DERIVED and vendor_facts.derived_from(key) in listed, key


# ---- each row says what its quoted source says ----------------------------------------------------------

@pytest.mark.parametrize("row", container_toolkit.PACKAGE_ROWS, ids=lambda row: row["package"])
def test_toolkit_package_is_the_install_guide_line(row):
    assert '"%s=${NVIDIA_CONTAINER_TOOLKIT_VERSION}"' % row["package"] in row["source"]


@pytest.mark.parametrize("row", container_toolkit.CDI_UNIT_ROWS, ids=lambda row: row["unit"])
def test_cdi_unit_is_named_by_the_guide_and_shipped_by_the_base_package(row):
    assert "- `%s`: " % row["unit"] in row["source"]
    assert '"%s /etc/systemd/system/"' % row["unit"] in row["source"]


@pytest.mark.parametrize("row", pci_sources.PCI_CLASS_ROWS, ids=lambda row: row["class"])
def test_pci_class_is_the_pci_ids_class_and_subclass_it_quotes(row):
    base, sub = re.search(r'"C ([0-9a-f]{2})  [^"/]+ / ([0-9a-f]{2})  ', row["source"]).groups()
    assert int(base + sub, 16) == int(row["class"], 16)
    assert "lspci" in row["source"]


@pytest.mark.parametrize("row", pci_sources.PCIE_RATE_ROWS, ids=lambda row: "gen%d" % row["gen"])
def test_pcie_rate_and_encoding_are_the_kernel_line_and_the_x16_peak_its_arithmetic(row):
    mbps, data, line = re.search(r'\? +(\d+)\*(\d+)/(\d+)"', row["source"]).groups()
    assert int(mbps) == int(row["gt_s"] * 1000) and row["encoding"] == "%sb/%sb" % (data, line)
    if row["x16_gbps"] is not None:
        assert abs(row["x16_gbps"] - pci_sources.x16_gbps_from_rate(row["gt_s"], row["encoding"])) < 0.05


def test_pcie_gen6_peak_is_flit_mode_without_128b_130b_and_gen1_2_are_not_judged():
    """SOURCE (Linux drivers/pci/pci.h): "(speed) == PCIE_SPEED_64_0GT ? 64000*1/1". The row said 126.0 (64 GT/s
    with 128b/130b, which PCIe 6.0's Flit mode does not use)."""
    assert gpu_peaks.PCIE_X16_GBPS == {3: 15.75, 4: 31.5, 5: 63.0, 6: 128.0}
    assert gpu_peaks.pcie_peak_gbps(6, 16) == 128.0 and gpu_peaks.pcie_peak_gbps(6, 8) == 64.0
    assert gpu_peaks.pcie_peak_gbps(2, 16) is None and gpu_peaks.pcie_peak_gbps(4, 8) == 15.75
    assert pci.link_speed_to_gen("64.0 GT/s PCIe") == 6 and pci.link_speed_to_gen("64.0 GT/s PCIe\n") == 6


_CSV_LINE = re.compile(r'default-counters\.csv.*?: "(?:# )?(DCGM_FI_[A-Z0-9_]+) *, *(\w+) *, *([^"]+)"')


@pytest.mark.parametrize("row", dcgm_fields.FIELD_ROWS, ids=lambda row: row["name"])
def test_dcgm_field_is_the_exporter_line_or_says_its_words_are_the_collections(row):
    quoted = _CSV_LINE.search(row["source"])
    if quoted:
        assert quoted.groups() == (row["name"], row["type"], row["help"])
        assert "unconfirmed" not in row
    else:
        assert "dcgm_fields.h" in row["source"] and row["unconfirmed"]
        assert re.search(r"#define %s[ )]" % row["name"], row["source"]), row["source"]
    assert row["type"] in dcgm.TYPES and "," not in row["help"] and row["help"].strip() == row["help"]


def test_dcgm_help_texts_the_sources_contradicted_are_fixed():
    """SOURCE (dcgm-exporter 4.5.3-4.8.2 etc/default-counters.csv): "DCGM_FI_DRIVER_VERSION, label, Driver Version",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL, counter, Total number of NVLink bandwidth counters for all lanes.";
    (DCGM v4.6.0 dcgm_fields.h) "The total number of bytes of active NvLink tx (transmit) data including both header
    and payload." The rows said "Driver version.", no final dot, and "not including protocol headers"."""
    assert dcgm.FIELDS["DCGM_FI_DRIVER_VERSION"] == ("label", "Driver Version")
    assert dcgm.FIELDS["DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"][1].endswith("for all lanes.")
    for name in ("DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_PROF_NVLINK_RX_BYTES"):
        assert "including both protocol headers" in dcgm.FIELDS[name][1] and "not including" not in dcgm.FIELDS[name][1]


@pytest.mark.parametrize("row", dcgm.CUDA_MAJOR_ROWS, ids=lambda row: row["cuda_major"])
def test_dcgm_cuda_major_is_a_package_dcgm_packaging_names(row):
    assert "CPACK_DEBIAN_CUDA%s_PACKAGE_NAME" % row["cuda_major"] in row["source"]
    assert '-cuda%s' % row["cuda_major"] in row["source"] and row["package"].endswith("-cuda" + row["cuda_major"])


@pytest.mark.parametrize("row", cuda_repos.ARCH_ROWS, ids=lambda row: row["machine"])
def test_cuda_repo_directory_is_in_its_source_with_packages_of_that_machine(row):
    assert "/%s/" % row["directory"] in row["source"]
    if row["machine"] == "aarch64":
        assert ".aarch64.rpm" in row["source"]


@pytest.mark.parametrize("row", driver_sources.DRIVER_FAMILY_ROWS + driver_sources.DRIVER_PATTERN_ROWS,
                         ids=lambda row: row["glob"])
def test_driver_glob_matches_a_package_its_source_names(row):
    quoted = re.findall(r'"(?:dep: |rec: )?([a-z0-9][a-z0-9.+${}-]+)', row["source"])
    names = [name.replace("${flavor}", "580") for name in quoted]
    names += re.findall(r'or ([a-z0-9][a-z0-9.+-]+) \(>=', row["source"])
    names += re.findall(r'install -y ([a-z0-9-]+)"', row["source"])
    assert any(fnmatch.fnmatchcase(name, row["glob"]) for name in names), (row["glob"], names)


def test_nvlsm_needs_are_named_in_their_sources_and_marked_unconfirmed():
    for row in driver_sources.NVLSM_PACKAGE_ROWS:
        assert row["package"] in row["source"] and row["unconfirmed"]
    for row in driver_sources.NVLSM_MODULE_ROWS:
        assert "requires %s" % row["module"] in row["source"] and row["unconfirmed"]


@pytest.mark.parametrize("row", nvidia_sources.QUERY_FIELD_ROWS + nvidia_sources.FIELD_FALLBACK_ROWS,
                         ids=lambda row: row["field"] + ("-fallback" if "instead" in row else ""))
def test_nvidia_smi_field_is_quoted_and_not_claimed_as_read_from_nvidia(row):
    assert '"%s"' % row["field"] in row["source"] or row.get("instead") == "kmd_version"
    assert row["unconfirmed"]


@pytest.mark.parametrize("row", nvidia_sources.LINK_CODE_ROWS, ids=lambda row: row["code"])
def test_topo_code_is_the_legend_word(row):
    if row["code"] == "N/A":
        assert row["unconfirmed"]
    else:
        assert re.search(r'"%s +=' % re.escape(row["code"]), row["source"]), row["source"]


def test_nvml_rows_are_the_nvml_h_lines_they_quote():
    for row in nvidia_sources.NVLINK_VERSION_ROWS:
        assert "= %d, //!< NVLink Version %s\"" % (row["value"], row["version"]) in row["source"]
    for row in nvidia_sources.REMOTE_TYPE_ROWS:
        assert "NVML_NVLINK_DEVICE_TYPE_%s = 0x%02X" % (row["remote"].upper(), row["value"]) in row["source"]
    for row in nvidia_sources.TOPOLOGY_LEVEL_ROWS:
        assert "NVML_TOPOLOGY_%s = %d," % (row["nvml"], row["level"]) in row["source"]
        assert re.search(r'legend[^"]*: "%s +=' % row["code"], row["source"])
    for row in nvidia_sources.THROTTLE_REASON_ROWS:
        macro, bit = re.search(r'"#define nvmlClocks(?:Event|Throttle)Reason(\w+) (0x[0-9A-F]{16})LL"',
                               row["source"]).groups()
        assert int(bit, 16) == int(row["bit"], 16)
        assert re.sub(r"(?<!^)([A-Z])", r"_\1", macro).lower() == row["name"]
        assert '"clocks_event_reasons.%s"' % row["name"] in row["source"] or row["unconfirmed"]


@pytest.mark.parametrize("row", dcgm_diag.ROOT_KEY_ROWS, ids=lambda row: row["key"])
def test_dcgm_diag_root_key_is_nvvs_name_of_its_release(row):
    assert '#define NVVS_NAME "%s"' % row["key"] in row["source"]
