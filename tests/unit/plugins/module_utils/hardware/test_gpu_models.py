# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU names and architectures (plugins/module_utils/hardware/gpu_models.py)."""

import os

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware import gpu_models, pci_ids as pci_ids_module
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.gpu_models import (
    CONTRACT_ARCHITECTURES,
    KNOWN_GPUS,
    NVSWITCHES,
    arch_at_least,
    architecture_from_chip,
    architecture_from_compute_capability,
    describe_gpu,
    describe_nvswitch,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.pci_ids import (
    PciIds,
    find_pci_ids,
    split_pci_ids_name,
)

EXCERPT = os.path.abspath(os.path.join(os.path.dirname(os.path.dirname(__file__)), "..", "..", "..",
                                       "fixtures", "hosts", "pci.ids.excerpt"))


@pytest.fixture
def pci_ids():
    return PciIds(EXCERPT)


def test_excerpt_is_parsed_lazily_and_only_for_nvidia(pci_ids):
    assert pci_ids._section is None
    assert pci_ids.lookup(0x2330) == ("GH100", "H100 SXM5 80GB")
    # 10dd's 0100 and 10df's 0720 are other vendors' devices
    assert pci_ids.lookup(0x0100) is None
    assert pci_ids.lookup(0x0720) is None
    assert len(pci_ids.device_ids()) == 50


def test_subsystem_and_comment_lines_are_skipped(pci_ids):
    assert pci_ids.lookup(0x2204) == ("GA102", "GeForce RTX 3090")
    assert pci_ids.lookup(0x147D) is None
    assert pci_ids.lookup(0x25B6) == ("GA107GL", "A2 / A16")
    assert pci_ids.lookup(0x2B85) == ("GB202", "GeForce RTX 5090")


README_EXCERPT = os.path.join(os.path.dirname(EXCERPT), "nvidia-readme-gpus.excerpt")


def _readme_rows():
    rows = {}
    with open(README_EXCERPT) as handle:
        for line in handle:
            if line.startswith("|"):
                name, ids = [cell.strip() for cell in line.strip().strip("|").split("|")]
                rows.setdefault(int(ids.split()[0], 16), set()).add(name)
    return rows


@pytest.mark.parametrize("device_id", sorted(KNOWN_GPUS))
def test_table_has_a_source_for_every_id(pci_ids, device_id):
    """Every id of the own table is in the pci.ids excerpt with the same chip and name, or in
    NVIDIA's driver README table under the same product name (ids newer than pci.ids)."""
    model = KNOWN_GPUS[device_id]
    in_pci_ids = pci_ids.lookup(device_id) == (model["chip"], model["name"])
    in_readme = "NVIDIA " + model["name"] in _readme_rows().get(device_id, ())
    assert in_pci_ids or in_readme, "%04x %s has no source" % (device_id, model["name"])
    assert model["segment"] in gpu_models.SEGMENTS


@pytest.mark.parametrize("device_id, branch, version", [
    # issue 18 item 5; SOURCE: open-gpu-kernel-modules README "Compatible GPUs" at each tag
    (0x2335, 550, "550.40.65"), (0x233B, 565, "565.57.01"), (0x2348, 565, "565.57.01"),
    (0x3182, 580, "580.82.07"), (0x31C2, 580, "580.82.07"), (0x31C3, 580, "580.82.07"),
    (0x2BB1, 570, "570.123.07"), (0x2BB4, 570, "570.123.07"), (0x2BB5, 575, "575.57.08"),
    (0x2C3A, 580, "580.142"), (0x230E, 580, "580.82.07"), (0x2941, 570, "570.123.01"),
    (0x2BB3, 570, "570.153.02"), (0x2321, 535, "535.43.09"), (0x233A, 535, "535.43.09"),
    (0x2329, 535, "535.43.25"), (0x26BA, 535, "535.43.23"),
    (0x2330, 525, "525.47.07"), (0x2901, 570, "570.86.15"),
    # older than the README's first release (R515): no floor of their own
    (0x20B2, None, None), (0x1EB8, None, None), (0x1DB1, None, None), (0x9999, None, None),
])
def test_driver_floors_are_per_gpu(device_id, branch, version):
    model = describe_gpu(device_id)
    assert (model["min_branch"], model["min_version"]) == (branch, version)
    floor = gpu_models.driver_floor("0x%04x" % device_id)
    assert (floor and (floor["branch"], floor["version"])) == ((branch, version) if branch else None)


FLOOR_CASES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "driver_floors.yml")


def _floor_cases():
    import yaml
    with open(FLOOR_CASES) as handle:
        return yaml.safe_load(handle)["cases"]


@pytest.mark.parametrize("case", _floor_cases(), ids=lambda case: case["device_id"])
def test_driver_floor_is_the_first_readme_listing(case):
    """Each floor is the release whose README first lists the id (row quoted in the table)."""
    device_id = int(case["device_id"], 16)
    assert "| %04X" % device_id in case["first_row"].replace("|", "| ", 1).replace("|  ", "| ") or \
        (" %04X " % device_id) in case["first_row"]
    floor = gpu_models.driver_floor(device_id)
    assert floor == {"version": case["version"], "branch": int(case["version"].split(".")[0]),
                     "source": "NVIDIA/open-gpu-kernel-modules %s README.md, Compatible GPUs" % case["tag"]}
    assert describe_gpu(device_id)["driver_floor_source"] == floor["source"]
    # the release before it in version order does not list it: the floor is not too late
    previous = tuple(int(part) for part in case["previous_tag"].split("."))
    assert previous < tuple(int(part) for part in case["version"].split("."))
    assert device_id in KNOWN_GPUS


def test_every_floor_is_in_the_table_or_named():
    assert set(gpu_models.DRIVER_FLOORS) <= set(KNOWN_GPUS)
    readme_floors = set(int(case["device_id"], 16) for case in _floor_cases())
    others = set(gpu_models.DRIVER_FLOORS) - readme_floors
    assert others == {0x31C3}
    assert "GPU Operator" in gpu_models.driver_floor(0x31C3)["source"]


def test_grace_trays_need_imex_and_gh200_no_proprietary_modules():
    assert sorted("%04x" % d for d, m in KNOWN_GPUS.items() if m["imex"]) == ["2941", "31c2", "31c3"]
    assert sorted("%04x" % d for d, m in KNOWN_GPUS.items() if not m["proprietary"]) == ["2342", "2348"]
    assert sorted("%04x" % d for d, m in KNOWN_GPUS.items() if m["nvswitch_baseboard"]) == [
        "2901", "2909", "3182"]


@pytest.mark.parametrize("text", ["10de  NVIDIA Corporation\n\t2bb1  GB202GL\n",
                                  "10de  NVIDIA Corporation\n\t2bb1  Device 2bb1\n",
                                  "10de  NVIDIA Corporation\n\t2b00  GB202\n"])
def test_table_wins_where_an_old_pci_ids_says_nothing_useful(tmp_path, text):
    path = tmp_path / "pci.ids"
    path.write_text(text)
    model = describe_gpu("0x2bb1", PciIds(str(path)))
    assert (model["name"], model["architecture"], model["name_source"], model["mig_capable"]) == (
        "RTX PRO 6000 Blackwell Workstation Edition", "blackwell", "table", True)
    assert model["segment"] == "workstation" and model["min_branch"] == 570


@pytest.mark.parametrize("device_id, hint", [
    ("0x1e02", "turing_or_newer"), ("0x3300", "turing_or_newer"), ("0x1df6", "pre_turing"),
    ("0x15f8", "pre_turing"), ("zz", None), (None, None), ("0x0000", None),
])
def test_id_generation_hint(device_id, hint):
    assert gpu_models.id_generation_hint(device_id) == hint


@pytest.mark.parametrize("device_id", sorted(NVSWITCHES))
def test_nvswitch_ids_agree_with_the_public_database(pci_ids, device_id):
    assert pci_ids.lookup(device_id) == (NVSWITCHES[device_id]["chip"], NVSWITCHES[device_id]["name"])


def test_pci_ids_of_2023_without_space_before_bracket(tmp_path):
    # verbatim from Debian's pci.ids 0.0~2023.04.11
    path = tmp_path / "pci.ids"
    path.write_text("10de  NVIDIA Corporation\n\t2321  GH100\n\t2330  GH100[H100 SXM5 80GB]\n10df  Emulex Corporation\n")
    ids = PciIds(str(path))
    assert ids.lookup(0x2330) == ("GH100", "H100 SXM5 80GB")
    assert ids.lookup(0x2321) == ("GH100", "GH100")
    # an id that old database lacks falls back to the table
    model = describe_gpu("0x2335", ids)
    assert (model["name"], model["architecture"], model["name_source"]) == ("H200 SXM 141GB", "hopper", "table")


@pytest.mark.parametrize("text, expected", [
    ("GH100 [H100 SXM5 80GB]", ("GH100", "H100 SXM5 80GB")),
    ("GH100[H100 SXM5 80GB]", ("GH100", "H100 SXM5 80GB")),
    ("GA107BM / GN20-P0-R-K2 [GeForce RTX 3050 6GB Laptop GPU]",
     ("GA107BM / GN20-P0-R-K2", "GeForce RTX 3050 6GB Laptop GPU")),
    ("TU102 USB 3.1 Host Controller", ("TU102 USB 3.1 Host Controller", "TU102 USB 3.1 Host Controller")),
])
def test_split_pci_ids_name(text, expected):
    assert split_pci_ids_name(text) == expected


@pytest.mark.parametrize("chip, arch", [
    ("GK106", "kepler"), ("GK208B", "kepler"), ("GM107", "maxwell"), ("GM204GL", "maxwell"),
    ("GP102", "pascal"), ("GV100GL", "volta"), ("TU104GL", "turing"), ("GA100", "ampere"),
    ("GA102GL", "ampere"), ("AD102", "ada"), ("AD104GL", "ada"), ("GH100", "hopper"),
    ("GB100", "blackwell"), ("GB202", "blackwell"), ("GB110", "blackwell"),
    ("GF114", None), ("MT28908", None), ("", None), (None, None),
])
def test_architecture_from_chip(chip, arch):
    assert architecture_from_chip(chip) == arch


@pytest.mark.parametrize("major, minor, arch", [
    (7, 0, "volta"), (7, 5, "turing"), (8, 0, "ampere"), (8, 6, "ampere"), (8, 9, "ada"),
    (9, 0, "hopper"), (10, 0, "blackwell"), (12, 0, "blackwell"), (6, 1, "pascal"), ("x", 0, None),
    (2, 0, None),
])
def test_architecture_from_compute_capability(major, minor, arch):
    assert architecture_from_compute_capability(major, minor) == arch


def test_arch_at_least():
    assert arch_at_least("volta", "volta")
    assert arch_at_least("hopper", "turing")
    assert not arch_at_least("pascal", "volta")
    assert not arch_at_least("unknown", "kepler")


@pytest.mark.parametrize("device_id, name, arch, datacenter, mig", [
    ("0x2330", "H100 SXM5 80GB", "hopper", True, True),
    ("0x20b2", "A100 SXM4 80GB", "ampere", True, True),
    ("0x20b7", "A30 PCIe", "ampere", True, True),
    ("0x2236", "A10", "ampere", True, False),
    ("0x1eb8", "Tesla T4", "turing", True, False),
    ("0x2684", "GeForce RTX 4090", "ada", False, False),
    ("0x26b1", "RTX 6000 Ada Generation", "ada", False, False),
    ("0x2901", "B200", "blackwell", True, True),
    ("0x2b85", "GeForce RTX 5090", "blackwell", False, False),
    # in pci.ids only: heuristics from the name and the chip
    ("0x2324", "H800", "hopper", True, True),
    ("0x20bd", "A800 SXM4 40GB", "ampere", True, True),
    ("0x15f8", "Tesla P100 PCIe 16GB", "pascal", True, False),
    ("0x25b6", "A2 / A16", "ampere", True, False),
    ("0x3182", "B300 SXM6 AC", "blackwell", True, True),
    ("0x1b06", "GeForce GTX 1080 Ti", "pascal", False, False),
    ("0x1380", "GeForce GTX 750 Ti", "maxwell", False, False),
    ("0x11cb", "GeForce GT 740", "kepler", False, False),
])
def test_describe_gpu_with_pci_ids(pci_ids, device_id, name, arch, datacenter, mig):
    model = describe_gpu(device_id, pci_ids)
    assert (model["name"], model["architecture"], model["datacenter"], model["mig_capable"]) == (
        name, arch, datacenter, mig)
    assert model["name_source"] == "pci.ids"


def test_describe_gpu_without_pci_ids_uses_the_table():
    model = describe_gpu(0x2330)
    assert model == {"name": "H100 SXM5 80GB", "chip": "GH100", "architecture": "hopper",
                     "datacenter": True, "mig_capable": True, "memory_gb": 80, "name_source": "table",
                     "segment": "datacenter", "min_branch": 525, "min_version": "525.47.07",
                     "driver_floor_source": "NVIDIA/open-gpu-kernel-modules 525.47.07 README.md, Compatible GPUs",
                     "proprietary_supported": True, "imex": False, "nvswitch_baseboard": False,
                     "known": True, "id_generation": "turing_or_newer"}


@pytest.mark.parametrize("device_id", ["0x2fff", "0x0000", "zz", None])
def test_unknown_id_is_unknown(pci_ids, device_id):
    model = describe_gpu(device_id, pci_ids)
    assert model["architecture"] == "unknown"
    assert model["name"] is None
    assert model["datacenter"] is False and model["mig_capable"] is False


def test_mig_capable_table_entries():
    """MIG: A100, A30, A800, H100, H200, H20, H800, GH200, B200, GB200, B300, GB300 and RTX PRO
    6000/5000/4500 Blackwell (NVIDIA MIG user guide, supported GPUs)."""
    mig = sorted("%04x" % dev for dev, model in KNOWN_GPUS.items() if model["mig_capable"])
    assert mig == ["20b0", "20b1", "20b2", "20b5", "20b7", "20f1", "20f3", "20f5", "230e", "2321", "2322",
                   "2324", "2329", "232c", "2330", "2331", "2335", "2339", "233a", "233b", "2342", "2348",
                   "2901", "2909", "2941", "2bb1", "2bb3", "2bb4", "2bb5", "2c31", "3182", "31c2", "31c3"]


def test_table_architectures_are_contract_values():
    for model in KNOWN_GPUS.values():
        assert architecture_from_chip(model["chip"]) in CONTRACT_ARCHITECTURES


def test_describe_nvswitch(pci_ids):
    assert describe_nvswitch("0x22a3", pci_ids) == {"name": "H100 NVSwitch", "chip": "GH100", "generation": 3}
    assert describe_nvswitch("0x1af1") == {"name": "A100 NVSwitch", "chip": "GA100", "generation": 2}
    assert describe_nvswitch("0x9999") == {"name": None, "chip": None, "generation": None}


def test_find_pci_ids_takes_first_existing_and_caches(tmp_path, monkeypatch):
    monkeypatch.setattr(pci_ids_module, "_PCI_IDS_CACHE", {})
    second = tmp_path / "hwdata.ids"
    second.write_text("10de  NVIDIA Corporation\n\t2330  GH100 [H100 SXM5 80GB]\n")
    candidates = (str(tmp_path / "missing.ids"), str(second))
    found = find_pci_ids(candidates=candidates)
    assert found.path == str(second)
    assert find_pci_ids(candidates=candidates) is found
    assert find_pci_ids(str(tmp_path / "missing.ids")) is None
    assert find_pci_ids(candidates=()) is None


def test_unreadable_or_vendorless_file_gives_no_names(tmp_path):
    path = tmp_path / "other.ids"
    path.write_text("8086  Intel Corporation\n\t1572  Ethernet Controller X710 for 10GbE SFP+\n")
    assert PciIds(str(path)).lookup(0x1572) is None
    assert PciIds(str(tmp_path / "absent")).lookup(0x2330) is None


@pytest.mark.parametrize("device_id, branch, ok, text", [
    # RTX PRO 6000 Blackwell Workstation: listed from 570.123.07, so R570 is accepted (issue 18 item 5)
    ("0x2bb1", 570, True, "570.123.07 or later"),
    # RTX PRO 4500 Blackwell Server Edition: first listed in 580.142
    ("0x2c3a", 575, False, "580 or newer (580.142 or later)"),
    ("0x2c3a", 580, True, "580.142 or later"),
    # H20 NVL16: first listed in 580.82.07
    ("0x230e", 575, False, "580 or newer (580.82.07 or later)"),
    # H100 NVL: R535, not R525
    ("0x2321", 525, False, "535 or newer (535.43.09 or later)"),
])
def test_the_planner_reads_the_floors(device_id, branch, ok, text):
    from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.gpu_plan import build_plan
    model = describe_gpu(device_id)
    facts = {"source": "pci", "gpu_count": 1, "nvswitch_count": 0, "nvswitches": [], "nics": [], "errors": [],
             "driver": {"loaded": False, "version": None, "cuda_version": None},
             "gpus": [{"pci_bus_id": "0000:01:00.0", "pci_device_id": device_id, "numa_node": 0,
                       "architecture": model["architecture"], "name": model["name"],
                       "datacenter": model["datacenter"], "mig_capable": model["mig_capable"],
                       "pcie": {"current_gen": 5, "max_gen": 5, "current_width": 16, "max_width": 16}}]}
    plan = build_plan(facts, {"driver_branch": branch, "strict": False})
    assert plan["ok"] is ok
    assert plan["driver"]["branch"]["min_version"] == model["min_version"]
    messages = plan["driver"]["branch"]["reason"] + " ".join(e["message"] for e in plan["errors"])
    assert text in messages
