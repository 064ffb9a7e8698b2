# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI sysfs scan: the depth of the GPU probe that needs no driver.

Reads ``<sysfs_root>/bus/pci/devices/*`` and keeps what a GPU server is made of:
NVIDIA GPUs and NVSwitches (vendor ``0x10de``), the GPUs' companion functions
(HDMI audio, USB, serial bus) and Mellanox/NVIDIA network adapters (vendor
``0x15b3``) for topology. Everything else is skipped after reading its vendor.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

NVIDIA_VENDOR = 0x10DE
MELLANOX_VENDOR = 0x15B3

# class >> 8 (base class + subclass)
GPU_CLASSES = (0x0300, 0x0302)
NVSWITCH_CLASSES = (0x0680,)
COMPANION_CLASSES = {0x0403: "audio", 0x0C03: "usb", 0x0C80: "serial_bus"}
NIC_CLASSES = {0x0200: "ethernet", 0x0207: "infiniband"}

# GT/s per lane -> PCIe generation
_SPEED_GEN = ((2.5, 1), (5.0, 2), (8.0, 3), (16.0, 4), (32.0, 5), (64.0, 6))

_BUS_ID_RE = re.compile(
    r"^\s*(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})\.([0-7])\s*$"
)
_SPEED_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*GT/s")


class PciScanError(Exception):
    """The sysfs tree cannot be scanned (missing root or no bus/pci/devices)."""


def parse_bus_id(value):
    """Return ``(domain, bus, device, function)`` ints for a PCI address.

    Accepts sysfs (``0000:1b:00.0``), NVML/nvidia-smi (``00000000:1B:00.0``)
    and domain-less (``1b:00.0``) forms. Raises ValueError otherwise.
    """
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    match = _BUS_ID_RE.match(value or "")
    if not match:
        raise ValueError("not a PCI address: %r" % (value,))
    domain = int(match.group(1) or "0", 16)
    return (domain, int(match.group(2), 16), int(match.group(3), 16), int(match.group(4), 16))


def normalize_bus_id(value):
    """Normalise a PCI address to sysfs form: ``0000:1b:00.0`` (lower case).

    The domain keeps at least four hex digits (``10000:e0:00.0`` stays as is on
    VMD hosts). Raises ValueError for text that is not a PCI address.
    """
    return "%04x:%02x:%02x.%x" % parse_bus_id(value)


def nvml_bus_id(value):
    """The NVML spelling of a PCI address: ``00000000:1B:00.0``."""
    domain, bus, dev, fn = parse_bus_id(value)
    return "%08X:%02X:%02X.%X" % (domain, bus, dev, fn)


def link_speed_to_gen(text):
    """``"16.0 GT/s PCIe"`` -> 4; unknown or unreadable -> None."""
    if not text:
        return None
    match = _SPEED_RE.match(text)
    if not match:
        return None
    speed = float(match.group(1))
    for gts, gen in _SPEED_GEN:
        if abs(speed - gts) < 0.01:
            return gen
    return None


def _read(path):
    # os.open/os.read: a sysfs attribute is one short read, and a Python file
    # object costs more than the read itself (the 256-function scan budget).
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, 256).decode("ascii", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)


def _int(text, base=10):
    if text is None:
        return None
    try:
        return int(text, base)
    except ValueError:
        return None


def _hex_id(text, width=4):
    value = _int(text, 16)
    if value is None:
        return None
    return "0x%0*x" % (width, value)


def pcie_link(dev_path):
    """Current/max generation and width of a function's link, and whether it is degraded."""
    current_gen = link_speed_to_gen(_read(os.path.join(dev_path, "current_link_speed")))
    max_gen = link_speed_to_gen(_read(os.path.join(dev_path, "max_link_speed")))
    current_width = _int(_read(os.path.join(dev_path, "current_link_width")))
    max_width = _int(_read(os.path.join(dev_path, "max_link_width")))
    reasons = []
    if current_gen is not None and max_gen is not None and current_gen < max_gen:
        reasons.append("gen")
    if current_width is not None and max_width is not None and current_width < max_width:
        reasons.append("width")
    return {
        "current_gen": current_gen,
        "max_gen": max_gen,
        "current_width": current_width,
        "max_width": max_width,
        "degraded": bool(reasons),
        "degraded_reasons": reasons,
    }


def _numa_node(dev_path):
    node = _int(_read(os.path.join(dev_path, "numa_node")))
    if node is None or node < 0:
        return None
    return node


def _kernel_driver(dev_path):
    try:
        return os.path.basename(os.readlink(os.path.join(dev_path, "driver")))
    except (IOError, OSError):
        return None


def _listdir(path):
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError):
        return []


def _function(addr, dev_path, vendor, cls, full):
    entry = {
        "pci_bus_id": addr,
        "pci_vendor_id": "0x%04x" % vendor,
        "pci_device_id": _hex_id(_read(os.path.join(dev_path, "device"))),
        "pci_class": "0x%06x" % cls,
    }
    if full:
        entry["pci_subsystem_vendor_id"] = _hex_id(_read(os.path.join(dev_path, "subsystem_vendor")))
        entry["pci_subsystem_device_id"] = _hex_id(_read(os.path.join(dev_path, "subsystem_device")))
        entry["numa_node"] = _numa_node(dev_path)
        entry["pcie"] = pcie_link(dev_path)
        entry["kernel_driver"] = _kernel_driver(dev_path)
    return entry


def _sort_key(name):
    try:
        return (0, parse_bus_id(name))
    except ValueError:
        return (1, name)


def devices_dir(sysfs_root):
    """``<sysfs_root>/bus/pci/devices``, or PciScanError naming the path that is missing."""
    if not os.path.isdir(sysfs_root):
        raise PciScanError("sysfs_root %s does not exist or is not a directory" % sysfs_root)
    path = os.path.join(sysfs_root, "bus", "pci", "devices")
    if not os.path.isdir(path):
        raise PciScanError("sysfs_root %s has no bus/pci/devices (looked for %s)" % (sysfs_root, path))
    return path


def scan_pci(sysfs_root="/sys"):
    """Scan PCI functions under ``sysfs_root``.

    Returns ``{"gpus": [...], "nvswitches": [...], "nics": [...], "functions_scanned": n}``,
    each list ordered by PCI address. Every GPU carries ``companions`` (its
    audio/USB/serial-bus functions). Raises PciScanError when the tree is missing.
    """
    base = devices_dir(sysfs_root)
    gpus, nvswitches, nics, companions = [], [], [], []
    names = os.listdir(base)
    # sysfs names are fixed width, so plain sorting is address order; only a
    # mix of domain widths (VMD's 10000:...) needs the parsing key.
    if len(set(len(name) for name in names)) > 1:
        names.sort(key=_sort_key)
    else:
        names.sort()
    for name in names:
        dev_path = os.path.join(base, name)
        vendor = _int(_read(os.path.join(dev_path, "vendor")), 16)
        if vendor not in (NVIDIA_VENDOR, MELLANOX_VENDOR):
            continue
        cls = _int(_read(os.path.join(dev_path, "class")), 16)
        if cls is None:
            continue
        try:
            addr = normalize_bus_id(name)
        except ValueError:
            continue
        base_sub = cls >> 8
        if vendor == NVIDIA_VENDOR:
            if base_sub in GPU_CLASSES:
                entry = _function(addr, dev_path, vendor, cls, True)
                entry["companions"] = []
                gpus.append(entry)
            elif base_sub in NVSWITCH_CLASSES:
                nvswitches.append(_function(addr, dev_path, vendor, cls, True))
            elif base_sub in COMPANION_CLASSES:
                entry = _function(addr, dev_path, vendor, cls, False)
                entry["kind"] = COMPANION_CLASSES[base_sub]
                companions.append(entry)
        elif base_sub in NIC_CLASSES:
            entry = _function(addr, dev_path, vendor, cls, True)
            entry["kind"] = NIC_CLASSES[base_sub]
            entry["netdevs"] = _listdir(os.path.join(dev_path, "net"))
            entry["ib_devices"] = _listdir(os.path.join(dev_path, "infiniband"))
            entry["virtual_function"] = os.path.exists(os.path.join(dev_path, "physfn"))
            nics.append(entry)

    by_slot = dict((gpu["pci_bus_id"].rsplit(".", 1)[0], gpu) for gpu in gpus)
    for comp in companions:
        owner = by_slot.get(comp["pci_bus_id"].rsplit(".", 1)[0])
        if owner is not None:
            owner["companions"].append(comp)
    return {
        "gpus": gpus,
        "nvswitches": nvswitches,
        "nics": nics,
        "functions_scanned": len(names),
    }
