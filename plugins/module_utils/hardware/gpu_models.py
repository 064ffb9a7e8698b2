# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names, architectures and properties of NVIDIA PCI device ids.

Two sources, in this order:

1. the host's PCI ID database (``pci.ids``), when there is one: the name and the
   chip code name (``GH100``), from which the architecture follows (read by
   hardware/pci_ids.py, which the caller passes in).
2. ``KNOWN_GPUS``: the GPUs a fleet really has. Every id below was checked
   against the public pci.ids database (pciutils/pciids); properties against
   NVIDIA's documentation (MIG user guide, "Supported GPUs").

An id found in neither source has architecture ``unknown`` and name None.

Architectures reported: ``volta``, ``turing``, ``ampere``, ``ada``, ``hopper``,
``blackwell`` and ``unknown`` (the fact contract), plus ``kepler``, ``maxwell``
and ``pascal`` for older GPUs found through pci.ids, so that the driver role can
refuse them by name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware import gpu_model_sources

# oldest first; index order is age order
ARCHITECTURES = ("kepler", "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")
CONTRACT_ARCHITECTURES = ("volta", "turing", "ampere", "ada", "hopper", "blackwell", "unknown")

# Chip code name prefix -> architecture, one row per architecture with its source and the date it was
# read (plain data: docs/vendor-facts.md lists it). The code names are the chip names the PCI ID
# database prints in brackets before the product ("1db1  GV100GL [Tesla V100 SXM2 16GB]"); the
# architecture each family belongs to is NVIDIA's naming in its architecture whitepapers, which were
# not re-read (each row says so). ``example``: a KNOWN_GPUS id whose pci.ids entry shows the prefix.
_WHITEPAPER = "NVIDIA's %s architecture whitepaper (https://www.nvidia.com/en-us/data-center/resources/)"


def _chip_row(prefix, pattern, arch, example):
    seen = ('; pci.ids shows it: %s' % example) if example else ''
    return {"prefix": prefix, "pattern": pattern, "architecture": arch, "read": gpu_model_sources.MODELS_READ,
            "source": "%s chip names%s; family named in %s" % (gpu_model_sources.PCI_IDS_SOURCE, seen,
                                                               _WHITEPAPER % arch.capitalize()),
            "unconfirmed": "the whitepaper was not re-read on %s%s" % (
                gpu_model_sources.MODELS_READ, '' if example else '; no pci.ids entry of this family was read')}


CHIP_ARCH_ROWS = (
    _chip_row("GK1x, GK2x", r"^GK[12]\d", "kepler", None),
    _chip_row("GM1x, GM2x", r"^GM[12]\d", "maxwell", None),
    _chip_row("GP1x", r"^GP1\d", "pascal", None),
    _chip_row("GV1x", r"^GV1\d", "volta", '"1db1  GV100GL [Tesla V100 SXM2 16GB]"'),
    _chip_row("TU1x", r"^TU1\d", "turing", '"1eb8  TU104GL [Tesla T4]"'),
    _chip_row("GA1x", r"^GA1\d", "ampere", '"20b0  GA100 [A100 SXM4 40GB]"'),
    _chip_row("AD1x", r"^AD1\d", "ada", '"26b9  AD102GL [L40S]"'),
    _chip_row("GH1x", r"^GH1\d", "hopper", '"2330  GH100 [H100 SXM5 80GB]"'),
    _chip_row("GB1x, GB2x", r"^GB[12]\d", "blackwell", '"2901  GB100 [B200]"'),
)
_CHIP_ARCH = tuple((re.compile(row["pattern"]), row["architecture"]) for row in CHIP_ARCH_ROWS)

# Chips whose data-centre parts support MIG (A100/A30/A800, H100/H200/H20/GH200, B200/B300), for ids
# KNOWN_GPUS does not have (describe_gpu): one row per chip with its source and read date. GB202 is not
# here although the MIG guide lists RTX PRO 6000 Blackwell: its parts are named "RTX PRO ...", which
# describe_gpu reads as workstation, so a row would change nothing; they are MIG-capable by their
# KNOWN_GPUS rows.
MIG_CHIP_ROWS = (
    {"chip": "GA100", "read": gpu_model_sources.MODELS_READ,
     "source": "%s lists A100-SXM4 40GB, A100-PCIE 40GB, A100-SXM4 80GB, A100-PCIE 80GB and A30 (GA100 and "
               "GA100GL in pci.ids)" % gpu_model_sources.MIG_GUIDE},
    {"chip": "GH100", "read": gpu_model_sources.MODELS_READ,
     "source": "%s lists H100-SXM5 80GB, H100-PCIE 80GB, H100-SXM5 94GB, H100-PCIE 94GB, H200-SXM5, H200 NVL, H20 "
               "and H100 on GH200 (all GH100 in pci.ids)" % gpu_model_sources.MIG_GUIDE},
    {"chip": "GB100", "read": gpu_model_sources.MODELS_READ,
     "source": "%s lists B200 and GB200 (GB100 in pci.ids)" % gpu_model_sources.MIG_GUIDE},
    {"chip": "GB110", "read": gpu_model_sources.MODELS_READ,
     "source": "%s names B300 and GB300 (GB110 in pci.ids)" % gpu_model_sources.MIG_GUIDE_620},
)
_MIG_CHIPS = tuple(row["chip"] for row in MIG_CHIP_ROWS)

# A data-centre product name, for ids that pci.ids knows but KNOWN_GPUS does not:
# "Tesla ...", "A800 80GB PCIe", "H800", "L20", "B100", "HGX ...".
_DATACENTER_NAME_RE = re.compile(r"^(Tesla |HGX |[ABHL]\d+[A-Z]?\b|GH\d+\b|GB\d+\b)")
# A workstation product name (Quadro, RTX Axxxx, RTX xxxx Ada, RTX PRO): DCGM profiling exists there too.
_WORKSTATION_NAME_RE = re.compile(r"^(Quadro |RTX A\d+|RTX \d+ Ada|RTX PRO )")

# NVIDIA's device ids grow with each generation: every Turing and newer GPU has an id of
# 0x1e00 or more (TU102 is 0x1e02), every Volta, Pascal, Maxwell and Kepler GPU one below
# (GV100 0x1db1-0x1df6, Titan V 0x1d81, GP108 up to 0x1d52). For an id no table knows this
# is the only hint there is: new silicon (Turing and newer) has a GSP and runs the open modules.
TURING_FIRST_DEVICE_ID = 0x1E00

SEGMENTS = ("datacenter", "workstation", "geforce")


def _gpu(chip, name, segment, mig, memory_gb, **extra):
    entry = {
        "chip": chip,
        "name": name,
        "segment": segment,
        "datacenter": segment == "datacenter",
        "mig_capable": mig,
        "memory_gb": memory_gb,
        # False where NVIDIA ships no proprietary kernel module for the GPU
        "proprietary": True,
        # Grace-based NVL rack trays (GB200/GB300): multi-node NVLink needs the IMEX daemon
        "imex": False,
        # SXM GPU that only exists on an NVSwitch baseboard (HGX/DGX)
        "nvswitch_baseboard": False,
    }
    entry.update(extra)
    return entry


# PCI device id -> model. Names as NVIDIA's driver README prints them (without "NVIDIA ").
# Sources (docs/hardware-gating.md): [README] the "Compatible GPUs" table of NVIDIA's
# open-gpu-kernel-modules README (device id per product, up to the 580/610 branches);
# [MIG] the MIG user guide's "Supported GPUs"; [pci.ids] the public PCI ID database.
# The table wins over a host's pci.ids for every property, and for the name where the
# host's (older) pci.ids has no product name for the id.
KNOWN_GPUS = {
    # Volta [pci.ids]
    0x1DB1: _gpu("GV100GL", "Tesla V100 SXM2 16GB", "datacenter", False, 16),
    0x1DB4: _gpu("GV100GL", "Tesla V100 PCIe 16GB", "datacenter", False, 16),
    0x1DB5: _gpu("GV100GL", "Tesla V100 SXM2 32GB", "datacenter", False, 32),
    0x1DB6: _gpu("GV100GL", "Tesla V100 PCIe 32GB", "datacenter", False, 32),
    0x1DB8: _gpu("GV100GL", "Tesla V100 SXM3 32GB", "datacenter", False, 32),
    0x1DF5: _gpu("GV100GL", "Tesla V100 SXM2 16GB", "datacenter", False, 16),
    0x1DF6: _gpu("GV100GL", "Tesla V100S PCIe 32GB", "datacenter", False, 32),
    # Turing [pci.ids]
    0x1EB8: _gpu("TU104GL", "Tesla T4", "datacenter", False, 16),
    # Ampere [README][MIG]
    0x20B0: _gpu("GA100", "A100 SXM4 40GB", "datacenter", True, 40),
    0x20B1: _gpu("GA100", "A100 PCIe 40GB", "datacenter", True, 40),
    0x20B2: _gpu("GA100", "A100 SXM4 80GB", "datacenter", True, 80),
    0x20B5: _gpu("GA100", "A100 PCIe 80GB", "datacenter", True, 80),
    0x20F1: _gpu("GA100", "A100 PCIe 40GB", "datacenter", True, 40),
    0x20B7: _gpu("GA100GL", "A30 PCIe", "datacenter", True, 24),
    0x20F3: _gpu("GA100", "A800-SXM4-80GB", "datacenter", True, 80),
    0x20F5: _gpu("GA100", "A800 80GB PCIe", "datacenter", True, 80),
    0x20F6: _gpu("GA100", "A800 40GB Active", "workstation", False, 40),
    0x2236: _gpu("GA102GL", "A10", "datacenter", False, 24),
    0x2235: _gpu("GA102GL", "A40", "datacenter", False, 48),
    0x25B6: _gpu("GA107GL", "A2 / A16", "datacenter", False, None),
    0x2230: _gpu("GA102GL", "RTX A6000", "workstation", False, 48),
    0x2231: _gpu("GA102GL", "RTX A5000", "workstation", False, 24),
    0x2233: _gpu("GA102GL", "RTX A5500", "workstation", False, 24),
    0x24B0: _gpu("GA104GL", "RTX A4000", "workstation", False, 16),
    0x2204: _gpu("GA102", "GeForce RTX 3090", "geforce", False, 24),
    # Ada Lovelace [README]
    0x27B8: _gpu("AD104GL", "L4", "datacenter", False, 24),
    0x26B5: _gpu("AD102GL", "L40", "datacenter", False, 48),
    0x26B9: _gpu("AD102GL", "L40S", "datacenter", False, 48),
    0x26BA: _gpu("AD102GL", "L20", "datacenter", False, 48),
    0x26B1: _gpu("AD102GL", "RTX 6000 Ada Generation", "workstation", False, 48),
    0x26B2: _gpu("AD102GL", "RTX 5000 Ada Generation", "workstation", False, 32),
    0x26B3: _gpu("AD102GL", "RTX 5880 Ada Generation", "workstation", False, 48),
    0x27B1: _gpu("AD104GL", "RTX 4500 Ada Generation", "workstation", False, 24),
    0x27B2: _gpu("AD104GL", "RTX 4000 Ada Generation", "workstation", False, 20),
    0x2684: _gpu("AD102", "GeForce RTX 4090", "geforce", False, 24),
    0x2685: _gpu("AD102", "GeForce RTX 4090 D", "geforce", False, 24),
    # Hopper [README][MIG]; floors per GPU (docs/hardware-gating.md)
    0x2330: _gpu("GH100", "H100 SXM5 80GB", "datacenter", True, 80),
    0x2331: _gpu("GH100", "H100 PCIe", "datacenter", True, 80),
    0x2339: _gpu("GH100", "H100", "datacenter", True, None),
    0x2321: _gpu("GH100", "H100L 94GB", "datacenter", True, 94),  # H100 NVL
    0x2322: _gpu("GH100", "H800 PCIe", "datacenter", True, 80),
    0x2324: _gpu("GH100", "H800", "datacenter", True, 80),
    0x233A: _gpu("GH100", "H800 NVL", "datacenter", True, 94),
    0x2335: _gpu("GH100", "H200 SXM 141GB", "datacenter", True, 141),
    0x233B: _gpu("GH100", "H200 NVL", "datacenter", True, 141),
    0x2329: _gpu("GH100", "H20", "datacenter", True, 96),
    0x232C: _gpu("GH100", "H20 HBM3e", "datacenter", True, None),
    0x230E: _gpu("GH100", "H20 NVL16", "datacenter", True, None),
    # Grace Hopper: open kernel modules only [2]
    0x2342: _gpu("GH100", "GH200 120GB / 480GB", "datacenter", True, 96, proprietary=False),
    0x2348: _gpu("GH100", "GH200 144G HBM3e", "datacenter", True, 144, proprietary=False),
    # Blackwell [README][MIG]; open kernel modules only (architecture rule)
    0x2901: _gpu("GB100", "B200", "datacenter", True, 180, nvswitch_baseboard=True),
    0x2909: _gpu("GB100", "HGX B200 168GB", "datacenter", True, None, nvswitch_baseboard=True),
    0x2941: _gpu("GB100", "GB200", "datacenter", True, 186, imex=True),
    0x3182: _gpu("GB110", "B300 SXM6 AC", "datacenter", True, 288, nvswitch_baseboard=True),
    0x31C2: _gpu("GB110", "GB300", "datacenter", True, 288, imex=True),
    0x31C3: _gpu("GB110", "GB300", "datacenter", True, 288, imex=True),
    0x2BB1: _gpu("GB202GL", "RTX PRO 6000 Blackwell Workstation Edition", "workstation", True, 96),
    0x2BB4: _gpu("GB202GL", "RTX PRO 6000 Blackwell Max-Q Workstation Edition", "workstation", True, 96),
    0x2BB5: _gpu("GB202GL", "RTX PRO 6000 Blackwell Server Edition", "datacenter", True, 96),
    0x2BB3: _gpu("GB202GL", "RTX PRO 5000 Blackwell", "workstation", True, 48),
    0x2C31: _gpu("GB203GL", "RTX PRO 4500 Blackwell", "workstation", True, 32),
    0x2C3A: _gpu("GB203GL", "RTX PRO 4500 Blackwell Server Edition", "datacenter", False, 32),
    0x2C34: _gpu("GB203GL", "RTX PRO 4000 Blackwell", "workstation", False, 24),
    0x2B85: _gpu("GB202", "GeForce RTX 5090", "geforce", False, 32),
    0x2B87: _gpu("GB202", "GeForce RTX 5090 D", "geforce", False, 32),
    0x2C02: _gpu("GB203", "GeForce RTX 5080", "geforce", False, 16),
    0x2C05: _gpu("GB203", "GeForce RTX 5070 Ti", "geforce", False, 16),
}

# Each row's source and the date it was read (plain data: docs/vendor-facts.md lists them), from
# hardware/gpu_model_sources.py (what was read, where and when).
for _id, _row in KNOWN_GPUS.items():
    _row.update(gpu_model_sources.model_source(_id, _row))

# Driver floor per PCI device id: a row (_floor) with the first driver version, the tag it comes
# from, its source and the date it was read. The floor is the first release whose README
# "Compatible GPUs" table in NVIDIA/open-gpu-kernel-modules lists the id (every release tag's
# README read, in version order); the tag is that release. Only GPUs
# launched after that README began (R515: Ada, Hopper, Blackwell) have one: an older GPU's
# first listing says when the table caught up, not when the driver did (Tesla T4 first
# appears in 575.51.02). An id the README never lists keeps the source named in its tag.
# A floor is a version-order floor: releases of newer branches that were cut before the id
# was added (see docs/hardware-gating.md) are not refused by it.
OPEN_GPU_README = "NVIDIA/open-gpu-kernel-modules"
# Every release tag's README was read on 2026-12-01 (issue 18 item 5) and again on 2026-12-07: all 193
# release tags of NVIDIA/open-gpu-kernel-modules from 515.43.04 to 595.45.04, each floor below is the
# first tag in version order whose "Compatible GPUs" table lists the id; 0x31c3 is in none of them.
_FLOORS_READ = "2026-12-07"


def _floor(version, tag):
    """A DRIVER_FLOORS row: the floor, the tag it comes from, its source and the date it was read."""
    if versions.driver_version_or_none(tag):
        source = ('%s README.md at tag %s, "Compatible GPUs" (https://github.com/%s/blob/%s/README.md): the first '
                  'of the release tags 515.43.04 ... 595.45.04, in version order, whose table lists the id; the row '
                  'and the release before it are quoted in tests/unit/plugins/module_utils/data/driver_floors.yml'
                  % (OPEN_GPU_README, tag, OPEN_GPU_README, tag))
    else:
        source = ("%s (docs/hardware-gating.md [19]); the id is in no README of the release tags 515.43.04 ... "
                  "595.45.04: its sibling's floor" % tag)
    row = {"version": version, "tag": tag, "source": source, "read": _FLOORS_READ}
    if not versions.driver_version_or_none(tag):
        row["unconfirmed"] = "no README release lists the id; the floor is its sibling's"
    return row


DRIVER_FLOORS = {
    # Ada Lovelace
    0x27B8: _floor("525.47.22", "525.47.22"),  # L4
    0x26B5: _floor("525.47.06", "525.47.06"),  # L40
    0x26B9: _floor("535.43.09", "535.43.09"),  # L40S
    0x26BA: _floor("535.43.23", "535.43.23"),  # L20
    0x26B1: _floor("525.47.06", "525.47.06"),  # RTX 6000 Ada
    0x26B2: _floor("535.43.08", "535.43.08"),  # RTX 5000 Ada
    0x26B3: _floor("535.43.23", "535.43.23"),  # RTX 5880 Ada
    0x27B1: _floor("535.43.10", "535.43.10"),  # RTX 4500 Ada
    0x27B2: _floor("535.43.08", "535.43.08"),  # RTX 4000 Ada
    0x2684: _floor("525.47.06", "525.47.06"),  # GeForce RTX 4090
    0x2685: _floor("535.43.23", "535.43.23"),  # GeForce RTX 4090 D
    # Hopper
    0x2330: _floor("525.47.07", "525.47.07"),  # H100 80GB HBM3
    0x2331: _floor("520.56.06", "520.56.06"),  # H100 PCIe
    0x2339: _floor("525.47.22", "525.47.22"),  # H100
    0x2321: _floor("535.43.09", "535.43.09"),  # H100 NVL
    0x2322: _floor("525.47.22", "525.47.22"),  # H800 PCIe
    0x2324: _floor("525.47.22", "525.47.22"),  # H800
    0x233A: _floor("535.43.09", "535.43.09"),  # H800 NVL
    0x2335: _floor("550.40.65", "550.40.65"),  # H200
    0x233B: _floor("565.57.01", "565.57.01"),  # H200 NVL
    0x2329: _floor("535.43.25", "535.43.25"),  # H20
    0x232C: _floor("535.216.03", "535.216.03"),  # H20-3e
    0x230E: _floor("580.82.07", "580.82.07"),  # H20 NVL16
    0x2342: _floor("535.43.19", "535.43.19"),  # GH200 120GB / 480GB
    0x2348: _floor("565.57.01", "565.57.01"),  # GH200 144G HBM3e
    # Blackwell
    0x2901: _floor("570.86.15", "570.86.15"),  # B200
    0x2941: _floor("570.123.01", "570.123.01"),  # GB200 (HGX GB200)
    0x3182: _floor("580.82.07", "580.82.07"),  # B300 SXM6 AC
    0x31C2: _floor("580.82.07", "580.82.07"),  # GB300
    # GB300 0x31c3 is in no README: its sibling's floor, from Blackwell Ultra's first driver
    # (GPU Operator's default driver of that release, docs/hardware-gating.md [19])
    0x31C3: _floor("580.82.07", "GPU Operator: Blackwell Ultra from 580.82.07"),
    0x2BB1: _floor("570.123.07", "570.123.07"),  # RTX PRO 6000 Blackwell Workstation Edition
    0x2BB4: _floor("570.123.07", "570.123.07"),  # RTX PRO 6000 Blackwell Max-Q Workstation Edition
    0x2BB5: _floor("575.57.08", "575.57.08"),  # RTX PRO 6000 Blackwell Server Edition
    0x2BB3: _floor("570.153.02", "570.153.02"),  # RTX PRO 5000 Blackwell
    0x2C31: _floor("570.169", "570.169"),  # RTX PRO 4500 Blackwell
    0x2C3A: _floor("580.142", "580.142"),  # RTX PRO 4500 Blackwell Server Edition
    0x2C34: _floor("570.169", "570.169"),  # RTX PRO 4000 Blackwell
    0x2B85: _floor("570.86.16", "570.86.16"),  # GeForce RTX 5090
    0x2B87: _floor("570.86.16", "570.86.16"),  # GeForce RTX 5090 D
    0x2C02: _floor("570.86.16", "570.86.16"),  # GeForce RTX 5080
    0x2C05: _floor("570.123.01", "570.123.01"),  # GeForce RTX 5070 Ti
}


def driver_floor(device_id):
    """The first driver that drives an NVIDIA GPU, by PCI device id (``"0x2bb1"`` or int).

    ``{"version": "570.123.07", "branch": 570, "source": "NVIDIA/open-gpu-kernel-modules
    570.123.07 README.md, Compatible GPUs"}``, or None where the table has no floor for the id.
    """
    floor = DRIVER_FLOORS.get(_device_int(device_id))
    if floor is None:
        return None
    version, tag = floor["version"], floor["tag"]
    if versions.driver_version_or_none(tag):
        source = "%s %s README.md, Compatible GPUs" % (OPEN_GPU_README, tag)
    else:
        source = tag
    return {"version": version, "branch": versions.driver_version(version, "DRIVER_FLOORS")["branch"], "source": source}


# NVSwitch PCI ids (class 0x0680). No Blackwell-era (NVLink 5) switch id could be
# confirmed in pci.ids: on HGX B200 the switches are not host PCI functions, so
# NVML's NvLink remote device type is what reveals them.
_FM_GUIDE = ("Fabric Manager User Guide (https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/"
             "index.html): NVSwitch generations")
NVSWITCHES = {
    0x1AF1: {"chip": "GA100", "name": "A100 NVSwitch", "generation": 2, "read": gpu_model_sources.MODELS_READ,
             "source": '%s: "1af1  GA100 [A100 NVSwitch]"; generation: %s' % (gpu_model_sources.PCI_IDS_SOURCE, _FM_GUIDE),
             "unconfirmed": "generation: the Fabric Manager guide was not re-read on 2026-12-07"},
    0x22A3: {"chip": "GH100", "name": "H100 NVSwitch", "generation": 3, "read": gpu_model_sources.MODELS_READ,
             "source": '%s: "22a3  GH100 [H100 NVSwitch]"; generation: %s' % (gpu_model_sources.PCI_IDS_SOURCE, _FM_GUIDE),
             "unconfirmed": "generation: the Fabric Manager guide was not re-read on 2026-12-07"},
}

# compute capability (major, minor) -> architecture, for ids nobody knows; one row per capability (or
# per major where every minor of it is one architecture), with its source and read date (plain data:
# docs/vendor-facts.md lists it).
_CC_GUIDE = ('CUDA C++ Programming Guide, "Compute Capabilities" (https://docs.nvidia.com/cuda/'
             'cuda-c-programming-guide/index.html#compute-capabilities)')


_CUDA_GPUS = 'NVIDIA "CUDA GPU Compute Capability" (https://developer.nvidia.com/cuda-gpus)'
# The rows of that page read on MODELS_READ (product columns joined); where a row's products carry the
# architecture's name, the row is confirmed; else the architecture is the programming guide's (not re-read).
_CUDA_GPUS_ROWS = {
    "8.6": '"8.6 | NVIDIA A40 NVIDIA A10 NVIDIA A16 NVIDIA A2 | NVIDIA RTX A6000 ..."',
    "8.7": '"8.7 | Jetson AGX Orin Jetson Orin NX Jetson Orin Nano"',
    "8.9": '"8.9 | NVIDIA L4 NVIDIA L40 NVIDIA L40S | NVIDIA RTX 6000 Ada ..."',
    "9.x": '"9.0 | NVIDIA GH200 NVIDIA H200 NVIDIA H100"',
    "10.x": '"10.3 | NVIDIA GB300 NVIDIA B300", "10.0 | NVIDIA GB200 NVIDIA B200"',
    "11.x": '"11.0 | Jetson T5000 Jetson T4000"',
    "12.x": '"12.1 | NVIDIA GB10 (DGX Spark)", "12.0 | NVIDIA RTX PRO 6000 Blackwell Server Edition ..."',
}
_CUDA_LEGACY = 'NVIDIA "Legacy CUDA GPU Compute Capability" (https://developer.nvidia.com/cuda-legacy-gpus)'
_CUDA_LEGACY_ROWS = {
    "5.x": '"5.3 | Jetson Nano", "5.2 | Tesla M60 Tesla M40 | ...", "5.0 | Quadro K2200 ..."',
    "6.x": '"6.2 | Jetson TX2", "6.1 | Tesla P40 Tesla P4 | ...", "6.0 | Tesla P100 | Quadro GP100"',
    "7.0": '"7.0 | NVIDIA V100 | Quadro GV100 NVIDIA TITAN V"',
    "7.2": '"7.2 | Jetson AGX Xavier Jetson Xavier NX"',
}
_NAMED_THERE = ("8.9",)  # 12.0 names Blackwell too, but 12.1 (GB10) does not


def _cc_row(capability, arch, note=''):
    row = {"capability": capability, "architecture": arch, "read": gpu_model_sources.MODELS_READ,
           "source": "%s: compute capability %s is %s%s" % (_CC_GUIDE, capability, arch.capitalize(), note)}
    if capability in _CUDA_GPUS_ROWS:
        row["source"] += "; %s: %s" % (_CUDA_GPUS, _CUDA_GPUS_ROWS[capability])
    if capability in _CUDA_LEGACY_ROWS:
        row["source"] += "; %s: %s" % (_CUDA_LEGACY, _CUDA_LEGACY_ROWS[capability])
    if capability not in _NAMED_THERE:
        row["unconfirmed"] = "architecture name: the programming guide was not re-read on %s%s" % (
            gpu_model_sources.MODELS_READ, "" if capability in _CUDA_GPUS_ROWS or capability in _CUDA_LEGACY_ROWS
            else "; no row of NVIDIA's compute capability pages was read for it")
    return row


CC_ARCH_ROWS = (
    _cc_row("3.x", "kepler"), _cc_row("5.x", "maxwell"), _cc_row("6.x", "pascal"),
    _cc_row("7.0", "volta"), _cc_row("7.2", "volta", " (Jetson Xavier)"), _cc_row("7.5", "turing"),
    _cc_row("8.0", "ampere"), _cc_row("8.6", "ampere"), _cc_row("8.7", "ampere", " (Jetson Orin)"),
    _cc_row("8.9", "ada"), _cc_row("9.x", "hopper"), _cc_row("10.x", "blackwell"),
    _cc_row("11.x", "blackwell", " (11.0: Jetson Thor, 10.1 before CUDA 13)"), _cc_row("12.x", "blackwell"),
)
_CC_ARCH = dict((tuple(int(p) for p in row["capability"].split(".") if p != "x"), row["architecture"])
                for row in CC_ARCH_ROWS)


def architecture_from_chip(chip):
    """``"GH100"`` -> ``"hopper"``; None when the code name is not an NVIDIA GPU chip we know."""
    if not chip:
        return None
    for regex, arch in _CHIP_ARCH:
        if regex.match(chip):
            return arch
    return None


def architecture_from_compute_capability(major, minor=None):
    """CUDA compute capability -> architecture name, or None."""
    try:
        major = int(major)
        minor = int(minor) if minor is not None else None
    except (TypeError, ValueError):
        return None
    return _CC_ARCH.get((major, minor)) or _CC_ARCH.get((major,))


def arch_at_least(arch, floor):
    """True when ``arch`` is ``floor`` or newer (unknown architectures never are)."""
    if arch not in ARCHITECTURES or floor not in ARCHITECTURES:
        return False
    return ARCHITECTURES.index(arch) >= ARCHITECTURES.index(floor)


def _device_int(device_id):
    if isinstance(device_id, int):
        return device_id
    try:
        return int(device_id, 16)
    except (TypeError, ValueError):
        return None


def _useful_pci_ids_name(found, dev):
    """False for what an old pci.ids says of an id it does not really know ("Device 2bb1",
    a bare chip code name without a product name)."""
    chip, name = found
    if not name or name.lower().startswith("device ") or name.lower() == "%04x" % dev:
        return False
    return name != chip


def id_generation_hint(device_id):
    """``"turing_or_newer"`` or ``"pre_turing"`` from an NVIDIA GPU's device id, None when unknown."""
    dev = _device_int(device_id)
    if dev is None or not 0 < dev <= 0xFFFF:
        return None
    return "turing_or_newer" if dev >= TURING_FIRST_DEVICE_ID else "pre_turing"


def describe_gpu(device_id, pci_ids=None):
    """Model facts for an NVIDIA GPU's PCI device id (``"0x2330"`` or int).

    Returns ``name``, ``chip``, ``architecture``, ``datacenter``, ``mig_capable``,
    ``memory_gb``, ``name_source`` (``pci.ids``, ``table`` or None), and the table's
    ``segment`` (``datacenter``, ``workstation``, ``geforce`` or None), ``min_branch``,
    ``min_version`` and ``driver_floor_source`` (driver_floor(); None without a floor),
    ``proprietary_supported``, ``imex``, ``nvswitch_baseboard``,
    ``known`` (the table has the id) and ``id_generation`` (id_generation_hint()).
    """
    dev = _device_int(device_id)
    known = KNOWN_GPUS.get(dev)
    floor = driver_floor(dev)
    found = pci_ids.lookup(dev) if (pci_ids is not None and dev is not None) else None
    if found and (not known or _useful_pci_ids_name(found, dev)):
        chip, name, source = found[0], found[1], "pci.ids"
    elif known:
        chip, name, source = known["chip"], known["name"], "table"
    elif found:
        chip, name, source = found[0], found[1], "pci.ids"
    else:
        chip, name, source = None, None, None
    # the table is curated: its chip decides the architecture where it has the id
    arch = (architecture_from_chip(known["chip"]) if known else None) or architecture_from_chip(chip)
    if known:
        datacenter, mig, memory = known["datacenter"], known["mig_capable"], known["memory_gb"]
        segment = known["segment"]
    else:
        datacenter = bool(name and _DATACENTER_NAME_RE.match(name))
        mig = bool(datacenter and chip and chip.split("GL")[0] in _MIG_CHIPS)
        memory = None
        if datacenter:
            segment = "datacenter"
        elif name and _WORKSTATION_NAME_RE.match(name):
            segment = "workstation"
        elif name and name.startswith(("GeForce ", "TITAN ")):
            segment = "geforce"
        else:
            segment = None
    return {
        "name": name,
        "chip": chip,
        "architecture": arch or "unknown",
        "datacenter": datacenter,
        "mig_capable": mig,
        "memory_gb": memory,
        "name_source": source,
        "segment": segment,
        "min_branch": floor["branch"] if floor else None,
        "min_version": floor["version"] if floor else None,
        "driver_floor_source": floor["source"] if floor else None,
        "proprietary_supported": known["proprietary"] if known else None,
        "imex": known["imex"] if known else False,
        "nvswitch_baseboard": known["nvswitch_baseboard"] if known else False,
        "known": known is not None,
        "id_generation": id_generation_hint(dev),
    }


def describe_nvswitch(device_id, pci_ids=None):
    """Name, chip and NVSwitch generation for an NVSwitch PCI device id."""
    dev = _device_int(device_id)
    known = NVSWITCHES.get(dev)
    found = pci_ids.lookup(dev) if (pci_ids is not None and dev is not None) else None
    if found:
        chip, name = found
    elif known:
        chip, name = known["chip"], known["name"]
    else:
        chip, name = None, None
    return {
        "name": name,
        "chip": chip,
        "generation": known["generation"] if known else None,
    }
