# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI sysfs scan: the depth of the GPU probe that needs no driver.

Reads ``<sysfs_root>/bus/pci/devices/*`` and keeps what a GPU server is made of:
NVIDIA GPUs and NVSwitches (vendor ``0x10de``), the GPUs' companion functions
(HDMI audio, USB, serial bus) and Mellanox/NVIDIA network adapters (vendor
``0x15b3``) for topology. Everything else is skipped after reading its vendor.

On NVLink 5 systems (HGX/DGX B200, B300) the NVSwitches are not host PCI functions:
the host reaches them through ConnectX-7 functions (15b3:1021) whose PCI Vital
Product Data carries ``SW_MNG`` (anywhere in its bytes), next to ordinary ConnectX-7 NICs
with the same id.
``parse_vpd`` reads that data (PCI Local Bus Specification, VPD: large-resource
tags 0x82 identifier string, 0x90 VPD-R, 0x91 VPD-W, small end tag 0x78).

Faults: a sysfs file that is missing reads as None; permission denied raises
SysfsPermissionError (the scan cannot be trusted); any other I/O error on a GPU's
files keeps the GPU and is listed in the scan's ``errors``. VPD is readable by root
only on real hosts: a VPD that cannot be read is reported on the NIC, never fatal.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import pci_sources

NVIDIA_VENDOR = 0x10DE
MELLANOX_VENDOR = 0x15B3

# class >> 8 (base class + subclass), built from pci_sources.PCI_CLASS_ROWS (each row with its source)
GPU_CLASSES = tuple(int(r["class"], 16) for r in pci_sources.PCI_CLASS_ROWS if r["role"] == "gpu")
NVSWITCH_CLASSES = tuple(int(r["class"], 16) for r in pci_sources.PCI_CLASS_ROWS if r["role"] == "nvswitch")
COMPANION_CLASSES = dict((int(r["class"], 16), r["kind"]) for r in pci_sources.PCI_CLASS_ROWS if r["role"] == "companion")
NIC_CLASSES = dict((int(r["class"], 16), r["kind"]) for r in pci_sources.PCI_CLASS_ROWS if r["role"] == "nic")

# GT/s per lane -> PCIe generation (pci_sources.PCIE_RATE_ROWS)
_SPEED_GEN = tuple((r["gt_s"], r["gen"]) for r in pci_sources.PCIE_RATE_ROWS)

_BUS_ID_RE = re.compile(
    r"^\s*(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})\.([0-7])\s*$"
)
_SPEED_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*GT/s")


class PciScanError(Exception):
    """The sysfs tree cannot be scanned (missing root or no bus/pci/devices)."""


class SysfsPermissionError(PciScanError):
    """A sysfs file the scan needs cannot be read: permission denied (names the path)."""

    def __init__(self, path, error):
        PciScanError.__init__(
            self, "permission denied reading %s (%s): the PCI scan needs read access to sysfs; run the "
                  "probe as root (become: true) or point sysfs_root at a readable tree" % (path, error))
        self.path = path


class SysfsReadError(Exception):
    """An I/O error other than a missing file or a permission problem."""

    def __init__(self, path, error):
        Exception.__init__(self, "cannot read %s: %s" % (path, error))
        self.path = path


_MISSING = (errno.ENOENT, errno.ENOTDIR, errno.ENODEV, errno.ENXIO)
_DENIED = (errno.EACCES, errno.EPERM)

# NVLink 5 switch-management ConnectX-7 functions carry this in their VPD
SW_MNG = b"SW_MNG"
CONNECTX7_DEVICE = 0x1021

# VPD resource tags (PCI Local Bus Specification 3.0, section 6.4 / appendix I)
VPD_TAG_ID_STRING = 0x82
VPD_TAG_RO = 0x90
VPD_TAG_RW = 0x91
VPD_TAG_END = 0x78
VPD_MAX_BYTES = 32768


class VpdError(ValueError):
    """The bytes are not PCI VPD (short, garbage, or a bad length)."""


def parse_vpd(data):
    """Parse PCI Vital Product Data.

    Returns ``{"id_string": str|None, "ro": {kw: bytes}, "rw": {kw: bytes}, "complete": bool}``;
    ``complete`` is False when the data ends before the end tag (a partial read). Raises
    VpdError when the bytes are not VPD at all (no identifier-string or VPD-R tag first, a
    resource running past the data, a keyword running past its resource).
    """
    if isinstance(data, str):
        data = data.encode("latin-1")
    data = bytes(data or b"")
    result = {"id_string": None, "ro": {}, "rw": {}, "complete": False}
    pos = 0
    first = True
    while pos < len(data):
        tag = data[pos]
        if tag == VPD_TAG_END:
            result["complete"] = True
            return result
        if tag in (0x00, 0xFF) and not first:
            # erased EEPROM after the last resource: treat as the end of what was written
            return result
        if not tag & 0x80:
            if first:
                raise VpdError("VPD starts with small-resource tag 0x%02x, not the identifier string" % tag)
            # other small resources: skip them (length in the low 3 bits)
            pos += 1 + (tag & 0x07)
            continue
        if pos + 3 > len(data):
            if first:
                raise VpdError("VPD too short: %d byte(s)" % len(data))
            return result
        length = data[pos + 1] | (data[pos + 2] << 8)
        body = data[pos + 3:pos + 3 + length]
        if first and tag not in (VPD_TAG_ID_STRING, VPD_TAG_RO):
            raise VpdError("VPD starts with tag 0x%02x, not the identifier string (0x82)" % tag)
        if len(body) < length:
            if first:
                raise VpdError("VPD resource 0x%02x claims %d bytes, only %d present" % (tag, length, len(body)))
            return result
        first = False
        if tag == VPD_TAG_ID_STRING:
            result["id_string"] = body.decode("ascii", "replace").strip("\x00 ").strip() or None
        elif tag in (VPD_TAG_RO, VPD_TAG_RW):
            target = result["ro" if tag == VPD_TAG_RO else "rw"]
            kpos = 0
            while kpos + 3 <= len(body):
                keyword = body[kpos:kpos + 2]
                klen = body[kpos + 2]
                value = body[kpos + 3:kpos + 3 + klen]
                if len(value) < klen:
                    raise VpdError("VPD keyword %r runs past its resource" % keyword)
                try:
                    name = keyword.decode("ascii")
                except UnicodeDecodeError:
                    raise VpdError("VPD keyword %r is not ASCII" % keyword)
                if name != "RV" and name != "RW":
                    target[name] = value
                kpos += 3 + klen
        pos += 3 + length
    return result


def vpd_text(value):
    """A VPD keyword value as text (trailing NULs and spaces stripped)."""
    return value.decode("ascii", "replace").rstrip("\x00 ").strip()


def vpd_has_sw_mng(data):
    """True when the bytes of a function's VPD mark an NVLink switch-management function.

    ``SW_MNG`` is looked for anywhere in the raw VPD (identifier string, keyword values,
    vendor keywords such as ``VA`` = ``...:SMDL=SW_MNG``, whatever sits between them), as
    NVIDIA's own NVRC does with the bytes of sysfs ``vpd``: a marker outside a well-formed
    keyword value still counts. Case matters (``sw_mng`` is not the marker).
    """
    if isinstance(data, str):
        data = data.encode("latin-1")
    return SW_MNG in bytes(data or b"")


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


def _raise_for(path, exc):
    if exc.errno in _MISSING:
        return None
    if exc.errno in _DENIED:
        raise SysfsPermissionError(path, os.strerror(exc.errno))
    raise SysfsReadError(path, os.strerror(exc.errno) if exc.errno else exc)


def _read(path, size=256):
    # os.open/os.read: a sysfs attribute is one short read, and a Python file
    # object costs more than the read itself (the 256-function scan budget).
    # Missing -> None; permission denied -> SysfsPermissionError; other errors -> SysfsReadError.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        return _raise_for(path, exc)
    try:
        return os.read(fd, size).decode("ascii", "replace").strip()
    except OSError as exc:
        return _raise_for(path, exc)
    finally:
        os.close(fd)


def read_vpd_bytes(dev_path):
    """``(bytes or None, error text or None)``: the raw VPD of a PCI function directory.

    No ``vpd`` file: ``(None, None)``. Permission denied (root-only on real hosts), an I/O
    error or an empty file give ``(None, reason)``; nothing raises.
    """
    path = os.path.join(dev_path, "vpd")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        if exc.errno in _MISSING:
            return None, None
        if exc.errno in _DENIED:
            return None, "permission denied reading %s (VPD is readable by root only)" % path
        return None, "cannot read %s: %s" % (path, os.strerror(exc.errno) if exc.errno else exc)
    try:
        chunks = []
        total = 0
        while total < VPD_MAX_BYTES:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        return None, "cannot read %s: %s" % (path, os.strerror(exc.errno) if exc.errno else exc)
    finally:
        os.close(fd)
    if not data:
        return None, "%s is empty" % path
    return data, None


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


class _Reads(object):
    """Reads one function's sysfs files; an I/O error is recorded, not raised."""

    def __init__(self, addr, errors):
        self.addr = addr
        self.errors = errors

    def __call__(self, path):
        try:
            return _read(path)
        except SysfsReadError as exc:
            if self.errors is not None:
                self.errors.append({"source": "pci", "pci_bus_id": self.addr, "error": str(exc)})
            return None


def pcie_link(dev_path, read=None):
    """Current/max generation and width of a function's link, and whether it is degraded."""
    read = read or _read
    current_gen = link_speed_to_gen(read(os.path.join(dev_path, "current_link_speed")))
    max_gen = link_speed_to_gen(read(os.path.join(dev_path, "max_link_speed")))
    current_width = _int(read(os.path.join(dev_path, "current_link_width")))
    max_width = _int(read(os.path.join(dev_path, "max_link_width")))
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


def _numa_node(dev_path, read=None):
    node = _int((read or _read)(os.path.join(dev_path, "numa_node")))
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


def _function(addr, dev_path, vendor, cls, full, errors=None):
    read = _Reads(addr, errors)
    entry = {
        "pci_bus_id": addr,
        "pci_vendor_id": "0x%04x" % vendor,
        "pci_device_id": _hex_id(read(os.path.join(dev_path, "device"))),
        "pci_class": "0x%06x" % cls,
    }
    if full:
        entry["pci_subsystem_vendor_id"] = _hex_id(read(os.path.join(dev_path, "subsystem_vendor")))
        entry["pci_subsystem_device_id"] = _hex_id(read(os.path.join(dev_path, "subsystem_device")))
        entry["numa_node"] = _numa_node(dev_path, read)
        entry["pcie"] = pcie_link(dev_path, read)
        entry["kernel_driver"] = _kernel_driver(dev_path)
    return entry


def _nic_vpd(entry, dev_path, errors):
    """VPD facts of a Mellanox function: ``vpd`` and ``nvlink_switch_mgmt`` (bool or None).

    The marker is looked for in the raw bytes, so a VPD that does not parse still shows it;
    without the marker such a VPD leaves ``nvlink_switch_mgmt`` unknown (None).
    """
    data, error = read_vpd_bytes(dev_path)
    vpd = None
    if data is not None:
        try:
            vpd = parse_vpd(data)
        except VpdError as exc:
            error = "%s: %s" % (os.path.join(dev_path, "vpd"), exc)
    info = {"present": data is not None or error is not None, "readable": vpd is not None, "error": error,
            "id_string": None, "part_number": None, "sw_mng": None}
    if data is not None and (vpd is not None or vpd_has_sw_mng(data)):
        info["sw_mng"] = vpd_has_sw_mng(data)
    if vpd is not None:
        info["id_string"] = vpd["id_string"]
        info["part_number"] = vpd_text(vpd["ro"]["PN"]) if "PN" in vpd["ro"] else None
        if not vpd["complete"]:
            info["error"] = "VPD ends before its end tag (partial read)"
    entry["vpd"] = info
    entry["nvlink_switch_mgmt"] = info["sw_mng"]
    if error is not None and errors is not None:
        errors.append({"source": "pci", "pci_bus_id": entry["pci_bus_id"], "error": error})


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

    Returns ``{"gpus": [...], "nvswitches": [...], "nics": [...], "functions_scanned": n,
    "errors": [...]}``, each list ordered by PCI address. Every GPU carries ``companions``
    (its audio/USB/serial-bus functions); every Mellanox function ``vpd`` and
    ``nvlink_switch_mgmt``. Raises PciScanError when the tree is missing and
    SysfsPermissionError (a PciScanError) when a file it needs cannot be read for lack of
    permission. An I/O error on a GPU's files keeps the GPU and adds an entry to ``errors``;
    an NVIDIA function whose class cannot be read is listed in ``errors`` with its address.
    """
    base = devices_dir(sysfs_root)
    gpus, nvswitches, nics, companions, errors = [], [], [], [], []
    try:
        names = os.listdir(base)
    except OSError as exc:
        if exc.errno in _DENIED:
            raise SysfsPermissionError(base, os.strerror(exc.errno))
        raise PciScanError("cannot list %s: %s" % (base, os.strerror(exc.errno) if exc.errno else exc))
    # sysfs names are fixed width, so plain sorting is address order; only a
    # mix of domain widths (VMD's 10000:...) needs the parsing key.
    if len(set(len(name) for name in names)) > 1:
        names.sort(key=_sort_key)
    else:
        names.sort()
    for name in names:
        dev_path = os.path.join(base, name)
        try:
            vendor = _int(_read(os.path.join(dev_path, "vendor")), 16)
        except SysfsReadError as exc:
            errors.append({"source": "pci", "pci_bus_id": name, "error": str(exc)})
            continue
        if vendor not in (NVIDIA_VENDOR, MELLANOX_VENDOR):
            continue
        try:
            addr = normalize_bus_id(name)
        except ValueError:
            continue
        try:
            cls = _int(_read(os.path.join(dev_path, "class")), 16)
        except SysfsReadError as exc:
            cls = None
            if vendor == NVIDIA_VENDOR:
                errors.append({"source": "pci", "pci_bus_id": addr,
                               "error": "NVIDIA function not classified (GPU or NVSwitch unknown): %s" % exc})
        if cls is None:
            continue
        base_sub = cls >> 8
        if vendor == NVIDIA_VENDOR:
            if base_sub in GPU_CLASSES:
                entry = _function(addr, dev_path, vendor, cls, True, errors)
                entry["companions"] = []
                gpus.append(entry)
            elif base_sub in NVSWITCH_CLASSES:
                nvswitches.append(_function(addr, dev_path, vendor, cls, True, errors))
            elif base_sub in COMPANION_CLASSES:
                entry = _function(addr, dev_path, vendor, cls, False, errors)
                entry["kind"] = COMPANION_CLASSES[base_sub]
                companions.append(entry)
        elif base_sub in NIC_CLASSES:
            entry = _function(addr, dev_path, vendor, cls, True, errors)
            entry["kind"] = NIC_CLASSES[base_sub]
            entry["netdevs"] = _listdir(os.path.join(dev_path, "net"))
            entry["ib_devices"] = _listdir(os.path.join(dev_path, "infiniband"))
            entry["virtual_function"] = os.path.exists(os.path.join(dev_path, "physfn"))
            _nic_vpd(entry, dev_path, None)  # unreadable VPD: on the NIC; the probe sums it up
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
        "errors": errors,
    }
