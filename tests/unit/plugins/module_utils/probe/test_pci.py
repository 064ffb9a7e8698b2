# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI sysfs scan (plugins/module_utils/probe/pci.py) against the host fixtures."""

import os
import sys

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import pci
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.pci import (
    PciScanError,
    link_speed_to_gen,
    normalize_bus_id,
    nvml_bus_id,
    scan_pci,
)

FIXTURES = os.path.abspath(os.path.join(os.path.dirname(os.path.dirname(__file__)), "..", "..", "..", "fixtures"))
sys.path.insert(0, FIXTURES)
import build_sysfs  # noqa: E402  (tests/fixtures, standalone script)

HOSTS = build_sysfs.host_names()


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("sysfs")
    out = {}
    for host in HOSTS + ["bench-256fn"]:
        dest = str(base / host)
        build_sysfs.build(build_sysfs.load_spec(build_sysfs.host_dir(host)), dest)
        out[host] = dest
    return out


def _tree(tmp_path, devices, name="t"):
    dest = str(tmp_path / name)
    build_sysfs.build({"devices": devices}, dest)
    return dest


@pytest.mark.parametrize("text, expected", [
    ("0000:1b:00.0", "0000:1b:00.0"),
    ("00000000:1B:00.0", "0000:1b:00.0"),
    ("1B:00.0", "0000:1b:00.0"),
    ("0001:00:00.0", "0001:00:00.0"),
    ("00010000:E0:00.7", "10000:e0:00.7"),
    ("10000:e0:00.0", "10000:e0:00.0"),
    (b"00000000:DF:00.0", "0000:df:00.0"),
    ("  0000:c3:1f.1\n", "0000:c3:1f.1"),
])
def test_normalize_bus_id(text, expected):
    assert normalize_bus_id(text) == expected


@pytest.mark.parametrize("text", ["", "0000:1b:00", "0000:1b:00.8", "GPU0", "0000:1g:00.0", None])
def test_normalize_bus_id_rejects(text):
    with pytest.raises(ValueError):
        normalize_bus_id(text)


def test_nvml_bus_id_round_trip():
    assert nvml_bus_id("0000:1b:00.0") == "00000000:1B:00.0"
    assert normalize_bus_id(nvml_bus_id("10000:e0:00.0")) == "10000:e0:00.0"


@pytest.mark.parametrize("text, gen", [
    ("2.5 GT/s PCIe", 1), ("5.0 GT/s PCIe", 2), ("8.0 GT/s PCIe", 3), ("16.0 GT/s PCIe", 4),
    ("32.0 GT/s PCIe", 5), ("64.0 GT/s PCIe", 6), ("8 GT/s", 3), ("2.5 GT/s", 1),
    ("Unknown", None), ("Unknown speed", None), ("", None), (None, None), ("20.0 GT/s PCIe", None),
])
def test_link_speed_to_gen(text, gen):
    assert link_speed_to_gen(text) == gen


@pytest.mark.parametrize("host", HOSTS)
def test_scan_matches_expected(trees, host):
    expected = build_sysfs.load_json(host, "expected.json")
    found = scan_pci(trees[host])
    assert len(found["gpus"]) == expected["gpu_count"]
    assert len(found["nvswitches"]) == expected["nvswitch_count"]
    for gpu, want in zip(found["gpus"], expected["gpus"]):
        assert gpu["pci_bus_id"] == want["pci_bus_id"]
        assert gpu["pci_device_id"] == want["pci_device_id"]
        assert gpu["numa_node"] == want["numa_node"]
        for key, value in want["pcie"].items():
            assert gpu["pcie"][key] == value, (gpu["pci_bus_id"], key)
        assert gpu["pcie"]["degraded"] is want["degraded"]
        assert len(gpu["companions"]) == want["companions"]
        assert gpu["kernel_driver"] == "nvidia"
    assert [(n["pci_bus_id"], n["netdevs"], n["ib_devices"]) for n in found["nics"]] == [
        (n["pci_bus_id"], n["netdevs"], n["ib_devices"]) for n in expected["nics"]]


def test_rtx4090_audio_functions_are_companions_not_gpus(trees):
    found = scan_pci(trees["rtx4090-8gpu"])
    assert len(found["gpus"]) == 8
    for gpu in found["gpus"]:
        assert gpu["pci_class"] == "0x030000"
        (audio,) = gpu["companions"]
        assert audio["kind"] == "audio"
        assert audio["pci_device_id"] == "0x22ba"
        assert audio["pci_bus_id"] == gpu["pci_bus_id"][:-1] + "1"


def test_bmc_vga_and_other_vendors_are_not_gpus(trees):
    found = scan_pci(trees["cpu-only"])
    assert found == {"gpus": [], "nvswitches": [], "nics": [], "functions_scanned": found["functions_scanned"],
                     "errors": []}
    assert found["functions_scanned"] >= 8


def test_nvswitches_and_nics_of_hgx(trees):
    found = scan_pci(trees["hgx-h100-8gpu"])
    assert [s["pci_bus_id"] for s in found["nvswitches"]] == [
        "0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"]
    assert all(s["pci_device_id"] == "0x22a3" and s["kernel_driver"] == "nvidia-nvswitch"
               for s in found["nvswitches"])
    nic = found["nics"][0]
    assert nic["kind"] == "infiniband" and nic["pci_device_id"] == "0x1021"
    assert nic["netdevs"] == ["ibp24s0"] and nic["ib_devices"] == ["mlx5_0"]
    assert nic["virtual_function"] is False
    assert nic["pcie"]["max_gen"] == 5


def test_turing_companions_usb_and_serial_bus(tmp_path):
    root = _tree(tmp_path, [
        {"addr": "0000:65:00.0", "id": "10de:1e04", "class": "0x030000", "numa_node": 0},
        {"addr": "0000:65:00.1", "id": "10de:10f7", "class": "0x040300"},
        {"addr": "0000:65:00.2", "id": "10de:1ad6", "class": "0x0c0330"},
        {"addr": "0000:65:00.3", "id": "10de:1ad7", "class": "0x0c8000"},
    ])
    found = scan_pci(root)
    assert [g["pci_bus_id"] for g in found["gpus"]] == ["0000:65:00.0"]
    assert [c["kind"] for c in found["gpus"][0]["companions"]] == ["audio", "usb", "serial_bus"]


def test_degraded_reasons_and_missing_link_files(tmp_path):
    root = _tree(tmp_path, [
        {"addr": "0000:01:00.0", "id": "10de:2330", "class": "0x030200",
         "link": {"speed": "2.5 GT/s PCIe", "width": 16, "max_speed": "32.0 GT/s PCIe"}},
        {"addr": "0000:02:00.0", "id": "10de:2330", "class": "0x030200",
         "link": {"speed": "16.0 GT/s PCIe", "width": 8, "max_speed": "32.0 GT/s PCIe", "max_width": 16}},
        {"addr": "0000:03:00.0", "id": "10de:2330", "class": "0x030200", "numa_node": -1},
    ])
    idle, both, bare = scan_pci(root)["gpus"]
    assert idle["pcie"]["degraded"] is True and idle["pcie"]["degraded_reasons"] == ["gen"]
    assert both["pcie"]["degraded_reasons"] == ["gen", "width"]
    assert bare["pcie"] == {"current_gen": None, "max_gen": None, "current_width": None,
                            "max_width": None, "degraded": False, "degraded_reasons": []}
    assert bare["numa_node"] is None
    assert bare["kernel_driver"] is None


def test_plain_directories_instead_of_symlinks(tmp_path):
    base = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:3b:00.0"
    base.mkdir(parents=True)
    for name, value in (("vendor", "0x10de"), ("device", "0x1db6"), ("class", "0x030200"), ("numa_node", "1")):
        (base / name).write_text(value + "\n")
    (gpu,) = scan_pci(str(tmp_path / "sys"))["gpus"]
    assert gpu["pci_bus_id"] == "0000:3b:00.0" and gpu["numa_node"] == 1


def test_vmd_domain_orders_after_domain_zero(tmp_path):
    root = _tree(tmp_path, [
        {"addr": "10000:e1:00.0", "id": "10de:2330", "class": "0x030200"},
        {"addr": "0000:c1:00.0", "id": "10de:2330", "class": "0x030200"},
    ])
    assert [g["pci_bus_id"] for g in scan_pci(root)["gpus"]] == ["0000:c1:00.0", "10000:e1:00.0"]


def test_missing_root_names_the_path(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(PciScanError, match="sysfs_root %s does not exist" % missing):
        scan_pci(missing)


def test_root_without_pci_devices_names_the_path(tmp_path):
    with pytest.raises(PciScanError, match="has no bus/pci/devices"):
        scan_pci(str(tmp_path))


def test_other_vendors_cost_one_read(trees, monkeypatch):
    """Only ``vendor`` is read of functions that are neither NVIDIA nor Mellanox."""
    reads = []
    real_read = pci._read

    def counting(path):
        reads.append(path)
        return real_read(path)

    monkeypatch.setattr(pci, "_read", counting)
    found = scan_pci(trees["bench-256fn"])
    assert found["functions_scanned"] == 256
    relevant = set(g["pci_bus_id"] for g in found["gpus"]) | set(n["pci_bus_id"] for n in found["nics"])
    for path in reads:
        function = os.path.basename(os.path.dirname(path))
        if function not in relevant:
            assert os.path.basename(path) == "vendor", path
    # vendor of all 256, then class, device, 2 subsystem ids, numa_node and 4 link files
    assert len(reads) == 256 + 9 * len(relevant)


# ---- PCI Vital Product Data (NVLink 5 switch-management functions) ----

SW_MNG_VPD = build_sysfs.encode_vpd(
    "NVIDIA ConnectX-7 NVLink switch tray management",
    {"PN": "constructed", "SN": "MT0000X00001", "VA": "MLX:MN=MLNX:CSKU=V2:UUID=V3:PCI=V0:SMDL=SW_MNG"})
NIC_VPD = build_sysfs.encode_vpd(
    "NVIDIA ConnectX-7 HHHL adapter card, 400GbE / NDR IB (default mode), Single-port OSFP, PCIe 5.0 x16",
    {"PN": "MCX75310AAS-NEAT", "VA": "MLX:MN=MLNX:CSKU=V2:UUID=V3:PCI=V0:MODL=CX75310A"})


def test_vpd_bytes_by_hand():
    """The format itself, written out byte by byte (PCI Local Bus Specification, VPD)."""
    data = (b"\x82\x05\x00CX-7 "            # identifier string, 5 bytes
            b"\x90\x0e\x00"                  # VPD-R, 14 bytes
            b"PN\x03ABC"                     # part number
            b"V0\x03SW_"                     # not the marker: it must be whole
            b"RV\x02\x00\x00"                # checksum + reserved (not returned)
            b"\x91\x08\x00"                  # VPD-W, 8 bytes
            b"V1\x05SW_MN"                   # read-write keyword, still not the marker
            b"\x78")                         # end tag
    vpd = pci.parse_vpd(data)
    assert vpd == {"id_string": "CX-7", "ro": {"PN": b"ABC", "V0": b"SW_"}, "rw": {"V1": b"SW_MN"},
                   "complete": True}
    assert pci.vpd_has_sw_mng(data) is False
    # the same bytes with the whole marker in the VPD-W keyword (lengths adjusted)
    marked = data.replace(b"\x91\x08\x00V1\x05SW_MN", b"\x91\x09\x00V1\x06SW_MNG")
    assert pci.parse_vpd(marked)["rw"] == {"V1": b"SW_MNG"}
    assert pci.vpd_has_sw_mng(marked) is True


def test_vpd_rv_checksum_of_the_builder():
    end = SW_MNG_VPD.index(b"RV") + 3
    assert sum(SW_MNG_VPD[:end + 1]) % 256 == 0


@pytest.mark.parametrize("data, sw_mng", [(SW_MNG_VPD, True), (NIC_VPD, False)])
def test_sw_mng_marker(data, sw_mng):
    vpd = pci.parse_vpd(data)
    assert vpd["complete"] is True and vpd["id_string"].startswith("NVIDIA ConnectX-7")
    assert pci.vpd_text(vpd["ro"]["PN"]) in ("constructed", "MCX75310AAS-NEAT")
    assert pci.vpd_has_sw_mng(data) is sw_mng


# Issue 18 item 8. SOURCE: NVIDIA/nvrc src/mode.rs (count_sw_mng_from: a Mellanox function whose
# sysfs vpd bytes contain b"SW_MNG" anywhere is an NVLink management function; its tests use
# b"some data SW_MNG more data"), https://github.com/NVIDIA/nvrc
@pytest.mark.parametrize("data, marked", [
    (b"SMDL=SW_MNG", True), (b"SW_MNG", True), (b"MLX:SMDL=SW_MNG:X=1", True), (b"SW_MNG\x00\x00", True),
    (b"some data SW_MNG more data", True), (b"SW_MNGX", True), (b"sw_mng", False), (b"SW_MN", False),
    (b"", False), (None, False),
])
def test_sw_mng_anywhere_in_the_bytes(data, marked):
    assert pci.vpd_has_sw_mng(data) is marked


def test_sw_mng_outside_keyword_values():
    """The marker in the identifier string (product name) or in bytes between resources counts."""
    in_name = build_sysfs.encode_vpd("NVIDIA ConnectX-7 SW_MNG bridge", {"PN": "constructed"})
    assert pci.parse_vpd(in_name)["id_string"] == "NVIDIA ConnectX-7 SW_MNG bridge"
    assert pci.vpd_has_sw_mng(in_name) is True
    # a small resource (skipped by the parser) carrying it
    small = NIC_VPD[:-1] + b"\x06SW_MNG" + NIC_VPD[-1:]
    assert pci.parse_vpd(small)["complete"] is True and pci.vpd_has_sw_mng(NIC_VPD) is False
    assert pci.vpd_has_sw_mng(small) is True


@pytest.mark.parametrize("data, text", [
    (b"", None),
    (b"\x82", "too short"),
    (b"\x82\x10\x00short", "claims 16 bytes"),
    (b"\x00\x01\x02\x03", "small-resource tag 0x00"),
    (b"\xff" * 64, "tag 0xff"),
    (b"\x91\x03\x00V1\x00", "not the identifier string"),
    (b"\x82\x01\x00X\x90\x05\x00PN\x09AB", "runs past its resource"),
    (b"\x82\x01\x00X\x90\x03\x00\xff\xfe\x00\x78", "not ASCII"),
])
def test_garbage_vpd(data, text):
    if text is None:
        assert pci.parse_vpd(data) == {"id_string": None, "ro": {}, "rw": {}, "complete": False}
        return
    with pytest.raises(pci.VpdError, match=text):
        pci.parse_vpd(data)


def test_partial_vpd_keeps_what_was_read():
    cut = SW_MNG_VPD[:SW_MNG_VPD.index(b"\x78") - 2]  # end tag and the checksum lost
    vpd = pci.parse_vpd(cut)
    assert vpd["complete"] is False and vpd["id_string"].startswith("NVIDIA") and vpd["ro"] == {}
    # erased EEPROM after the last resource ends the data, it is not an error
    vpd = pci.parse_vpd(SW_MNG_VPD[:-1] + b"\xff" * 32)
    assert vpd["complete"] is False and pci.vpd_has_sw_mng(SW_MNG_VPD[:-1] + b"\xff" * 32) is True


def _nic(addr, vpd=None, ib="mlx5_0"):
    dev = {"addr": addr, "id": "15b3:1021", "class": "0x020700", "numa_node": 0, "infiniband": [ib],
           "link": {"speed": "32.0 GT/s PCIe", "width": 16}}
    if vpd is not None:
        dev["vpd"] = {"hex": vpd.hex()}
    return dev


def test_scan_tells_switch_management_from_ordinary_nics(tmp_path):
    root = _tree(tmp_path, [_nic("0000:05:00.0", SW_MNG_VPD, "mlx5_8"), _nic("0000:18:00.0", NIC_VPD),
                            _nic("0000:40:00.0", b"\x82\x10\x00short", "mlx5_1"), _nic("0000:4f:00.0", None, "mlx5_2"),
                            _nic("0000:50:00.0", b"\x82\x40\x00SMDL=SW_MNG cut short", "mlx5_3")])
    nics = dict((n["pci_bus_id"], n) for n in scan_pci(root)["nics"])
    assert nics["0000:05:00.0"]["nvlink_switch_mgmt"] is True
    assert nics["0000:05:00.0"]["vpd"]["part_number"] == "constructed"
    assert nics["0000:18:00.0"]["nvlink_switch_mgmt"] is False
    assert nics["0000:40:00.0"]["nvlink_switch_mgmt"] is None
    assert "claims 16 bytes" in nics["0000:40:00.0"]["vpd"]["error"]
    assert nics["0000:40:00.0"]["vpd"]["present"] is True and nics["0000:40:00.0"]["vpd"]["readable"] is False
    # a VPD that does not parse still shows the marker in its bytes
    assert nics["0000:50:00.0"]["nvlink_switch_mgmt"] is True
    assert "claims 64 bytes" in nics["0000:50:00.0"]["vpd"]["error"]
    assert nics["0000:4f:00.0"]["vpd"] == {"present": False, "readable": False, "error": None, "id_string": None,
                                           "part_number": None, "sw_mng": None}


def test_vpd_permission_denied_is_reported_not_raised(tmp_path, monkeypatch):
    root = _tree(tmp_path, [_nic("0000:05:00.0", SW_MNG_VPD)])
    real_open = os.open

    def fake_open(path, flags, *args):
        if str(path).endswith("/vpd"):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", fake_open)
    nic = scan_pci(root)["nics"][0]
    assert nic["nvlink_switch_mgmt"] is None
    assert nic["vpd"]["error"].startswith("permission denied reading ") and "root only" in nic["vpd"]["error"]


def test_hgx_b200_fixture(trees):
    found = scan_pci(trees["hgx-b200-8gpu"])
    assert len(found["gpus"]) == 8 and found["nvswitches"] == []
    mgmt = [n["pci_bus_id"] for n in found["nics"] if n["nvlink_switch_mgmt"]]
    plain = [n["pci_bus_id"] for n in found["nics"] if n["nvlink_switch_mgmt"] is False]
    assert mgmt == ["0000:05:00.0", "0000:05:00.1", "0000:06:00.0", "0000:06:00.1"]
    assert len(plain) == 8
    assert set(n["pci_device_id"] for n in found["nics"]) == {"0x1021"}
    assert found["errors"] == []
