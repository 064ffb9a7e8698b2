# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Names, architectures and properties of NVIDIA PCI device ids.

Two sources, in this order:

1. the host's PCI ID database (``pci.ids``), when there is one: the name and the
   chip code name (``GH100``), from which the architecture follows. Only the
   ``10de`` vendor section is parsed, once per file, on first use.
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

import os
import re

DEFAULT_PCI_IDS_PATHS = (
    "/usr/share/misc/pci.ids",
    "/usr/share/hwdata/pci.ids",
    "/usr/share/pci.ids",
)

# oldest first; index order is age order
ARCHITECTURES = ("kepler", "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell")
CONTRACT_ARCHITECTURES = ("volta", "turing", "ampere", "ada", "hopper", "blackwell", "unknown")

_CHIP_ARCH = (
    (re.compile(r"^GK[12]\d"), "kepler"),
    (re.compile(r"^GM[12]\d"), "maxwell"),
    (re.compile(r"^GP1\d"), "pascal"),
    (re.compile(r"^GV1\d"), "volta"),
    (re.compile(r"^TU1\d"), "turing"),
    (re.compile(r"^GA1\d"), "ampere"),
    (re.compile(r"^AD1\d"), "ada"),
    (re.compile(r"^GH1\d"), "hopper"),
    (re.compile(r"^GB[12]\d"), "blackwell"),
)

# chips whose data-centre parts all support MIG (A100/A30/A800, H100/H200/H20/GH200, B200/B300)
_MIG_CHIPS = ("GA100", "GH100", "GB100", "GB110")

# A data-centre product name, for ids that pci.ids knows but KNOWN_GPUS does not:
# "Tesla ...", "A800 80GB PCIe", "H800", "L20", "B100", "HGX ...".
_DATACENTER_NAME_RE = re.compile(r"^(Tesla |HGX |[ABHL]\d+[A-Z]?\b|GH\d+\b|GB\d+\b)")


def _gpu(chip, name, datacenter, mig, memory_gb):
    return {
        "chip": chip,
        "name": name,
        "datacenter": datacenter,
        "mig_capable": mig,
        "memory_gb": memory_gb,
    }


# PCI device id -> model. Names as in pci.ids (the bracketed part).
KNOWN_GPUS = {
    # Volta
    0x1DB1: _gpu("GV100GL", "Tesla V100 SXM2 16GB", True, False, 16),
    0x1DB4: _gpu("GV100GL", "Tesla V100 PCIe 16GB", True, False, 16),
    0x1DB5: _gpu("GV100GL", "Tesla V100 SXM2 32GB", True, False, 32),
    0x1DB6: _gpu("GV100GL", "Tesla V100 PCIe 32GB", True, False, 32),
    0x1DB8: _gpu("GV100GL", "Tesla V100 SXM3 32GB", True, False, 32),
    0x1DF5: _gpu("GV100GL", "Tesla V100 SXM2 16GB", True, False, 16),
    0x1DF6: _gpu("GV100GL", "Tesla V100S PCIe 32GB", True, False, 32),
    # Turing
    0x1EB8: _gpu("TU104GL", "Tesla T4", True, False, 16),
    # Ampere
    0x20B0: _gpu("GA100", "A100 SXM4 40GB", True, True, 40),
    0x20B1: _gpu("GA100", "A100 PCIe 40GB", True, True, 40),
    0x20B2: _gpu("GA100", "A100 SXM4 80GB", True, True, 80),
    0x20B5: _gpu("GA100", "A100 PCIe 80GB", True, True, 80),
    0x20F1: _gpu("GA100", "A100 PCIe 40GB", True, True, 40),
    0x20B7: _gpu("GA100GL", "A30 PCIe", True, True, 24),
    0x2236: _gpu("GA102GL", "A10", True, False, 24),
    0x2235: _gpu("GA102GL", "A40", True, False, 48),
    0x2230: _gpu("GA102GL", "RTX A6000", False, False, 48),
    0x2204: _gpu("GA102", "GeForce RTX 3090", False, False, 24),
    # Ada Lovelace
    0x27B8: _gpu("AD104GL", "L4", True, False, 24),
    0x26B5: _gpu("AD102GL", "L40", True, False, 48),
    0x26B9: _gpu("AD102GL", "L40S", True, False, 48),
    0x26B1: _gpu("AD102GL", "RTX 6000 Ada Generation", False, False, 48),
    0x2684: _gpu("AD102", "GeForce RTX 4090", False, False, 24),
    # Hopper
    0x2330: _gpu("GH100", "H100 SXM5 80GB", True, True, 80),
    0x2331: _gpu("GH100", "H100 PCIe", True, True, 80),
    0x2321: _gpu("GH100", "H100L 94GB", True, True, 94),  # H100 NVL
    0x2335: _gpu("GH100", "H200 SXM 141GB", True, True, 141),
    0x233B: _gpu("GH100", "H200 NVL", True, True, 141),
    0x2329: _gpu("GH100", "H20", True, True, 96),
    0x232C: _gpu("GH100", "H20 HBM3e", True, True, None),
    0x2342: _gpu("GH100", "GH200 120GB / 480GB", True, True, 96),
    0x2348: _gpu("GH100", "GH200 144G HBM3e", True, True, 144),
    # Blackwell
    0x2901: _gpu("GB100", "B200", True, True, 180),
    0x2909: _gpu("GB100", "HGX B200 168GB", True, True, None),
    0x2B85: _gpu("GB202", "GeForce RTX 5090", False, False, 32),
}

# NVSwitch PCI ids (class 0x0680). No Blackwell-era (NVLink 5) switch id could be
# confirmed in pci.ids: on HGX B200 the switches are not host PCI functions, so
# NVML's NvLink remote device type is what reveals them.
NVSWITCHES = {
    0x1AF1: {"chip": "GA100", "name": "A100 NVSwitch", "generation": 2},
    0x22A3: {"chip": "GH100", "name": "H100 NVSwitch", "generation": 3},
}

# compute capability (major, minor) -> architecture, for ids nobody knows
_CC_ARCH = {
    (3,): "kepler", (5,): "maxwell", (6,): "pascal", (7, 0): "volta", (7, 2): "volta",
    (7, 5): "turing", (8, 0): "ampere", (8, 6): "ampere", (8, 7): "ampere",
    (8, 9): "ada", (9,): "hopper", (10,): "blackwell", (11,): "blackwell", (12,): "blackwell",
}


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


def split_pci_ids_name(text):
    """``"GH100 [H100 SXM5 80GB]"`` -> ``("GH100", "H100 SXM5 80GB")``.

    Tolerates a missing space before the bracket (``GH100[H100 SXM5 80GB]``, as
    in pci.ids of 2023). Without brackets the whole text is both chip and name.
    """
    text = text.strip()
    start = text.find("[")
    if start > 0 and text.endswith("]"):
        return text[:start].strip(), text[start + 1:-1].strip()
    return text, text


_VENDOR_LINE_RE = re.compile(rb"\n[0-9a-fA-F]{4} ")


class PciIds(object):
    """The NVIDIA (10de) section of a pci.ids file.

    The file is read on the first lookup; only the 10de section is searched, and
    only for the ids asked for (a host has a handful of distinct ids).
    """

    def __init__(self, path):
        self.path = path
        self._section = None
        self._found = {}

    def _load(self):
        self._section = b""
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except (IOError, OSError):
            return
        if data.startswith(b"10de "):
            vendor_line = 0
        else:
            vendor_line = data.find(b"\n10de ") + 1
            if vendor_line == 0:
                return
        start = data.find(b"\n", vendor_line)
        if start < 0:
            return
        end = _VENDOR_LINE_RE.search(data, start)
        self._section = data[start:end.start() + 1 if end else len(data)]

    def lookup(self, device_id):
        """``(chip, name)`` for an NVIDIA device id (int), or None."""
        if device_id in self._found:
            return self._found[device_id]
        if self._section is None:
            self._load()
        found = None
        if isinstance(device_id, int) and 0 <= device_id <= 0xFFFF:
            for key in (b"\n\t%04x " % device_id, b"\n\t%04X " % device_id):
                pos = self._section.find(key)
                if pos >= 0:
                    eol = self._section.find(b"\n", pos + 1)
                    line = self._section[pos + len(key):eol if eol >= 0 else None]
                    found = split_pci_ids_name(line.decode("utf-8", "replace"))
                    break
        self._found[device_id] = found
        return found

    def device_ids(self):
        """Every NVIDIA device id in the section (reads the whole section)."""
        if self._section is None:
            self._load()
        return [int(m.group(1), 16) for m in re.finditer(rb"\n\t([0-9a-fA-F]{4}) ", self._section)]


_PCI_IDS_CACHE = {}


def find_pci_ids(path=None, candidates=DEFAULT_PCI_IDS_PATHS):
    """A PciIds for ``path`` (or the first candidate that exists), or None."""
    paths = [path] if path else list(candidates)
    for candidate in paths:
        if candidate and os.path.isfile(candidate):
            cached = _PCI_IDS_CACHE.get(candidate)
            if cached is None:
                cached = _PCI_IDS_CACHE[candidate] = PciIds(candidate)
            return cached
    return None


def _device_int(device_id):
    if isinstance(device_id, int):
        return device_id
    try:
        return int(device_id, 16)
    except (TypeError, ValueError):
        return None


def describe_gpu(device_id, pci_ids=None):
    """Model facts for an NVIDIA GPU's PCI device id (``"0x2330"`` or int).

    Returns ``name``, ``chip``, ``architecture``, ``datacenter``, ``mig_capable``,
    ``memory_gb`` and ``name_source`` (``pci.ids``, ``table`` or None).
    """
    dev = _device_int(device_id)
    known = KNOWN_GPUS.get(dev)
    found = pci_ids.lookup(dev) if (pci_ids is not None and dev is not None) else None
    if found:
        chip, name, source = found[0], found[1], "pci.ids"
    elif known:
        chip, name, source = known["chip"], known["name"], "table"
    else:
        chip, name, source = None, None, None
    arch = architecture_from_chip(chip) or (architecture_from_chip(known["chip"]) if known else None)
    if known:
        datacenter, mig, memory = known["datacenter"], known["mig_capable"], known["memory_gb"]
    else:
        datacenter = bool(name and _DATACENTER_NAME_RE.match(name))
        mig = bool(datacenter and chip and chip.split("GL")[0] in _MIG_CHIPS)
        memory = None
    return {
        "name": name,
        "chip": chip,
        "architecture": arch or "unknown",
        "datacenter": datacenter,
        "mig_capable": mig,
        "memory_gb": memory,
        "name_source": source,
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
