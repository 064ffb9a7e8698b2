# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU probe: PCI sysfs, then NVML or nvidia-smi, merged into the fact contract.

``probe(...)`` returns the dict that gpu_facts publishes as ``ansible_facts.gpuops_gpu``
(docs/architecture.md section 3). PCI decides which GPUs exist and the counts; the deeper
depths only add detail to the GPUs PCI saw. ``depths_tried`` says why each deeper
depth did or did not answer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import nvidia_smi as smi_depth
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import nvml as nvml_depth
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.gpu_models import (
    architecture_from_compute_capability,
    describe_gpu,
    describe_nvswitch,
)
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.pci_ids import find_pci_ids
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware.capabilities import capabilities_from_facts
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.pci import CONNECTX7_DEVICE, PciScanError, scan_pci

NVML_CHOICES = ("auto", "required", "disabled")
NVIDIA_SMI_CHOICES = ("auto", "disabled")

_PROC_VERSION_RE = re.compile(r"Kernel Module(?:\s+for\s+\S+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)")


class ProbeError(Exception):
    """The probe cannot give an answer (bad sysfs_root, NVML required but absent)."""


def _read_text(path):
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except (IOError, OSError):
        return None


def read_driver(sysfs_root, procfs_root):
    """What the kernel says of the nvidia module: loaded, version, flavour (open/proprietary)."""
    module_dir = os.path.join(sysfs_root, "module", "nvidia")
    loaded = os.path.isdir(module_dir)
    version = (_read_text(os.path.join(module_dir, "version")) or "").strip() or None
    flavor = None
    proc = _read_text(os.path.join(procfs_root, "driver", "nvidia", "version")) if procfs_root else None
    if proc:
        loaded = True
        match = _PROC_VERSION_RE.search(proc)
        if match and not version:
            version = match.group(1)
        if "Kernel Module" in proc:
            flavor = "open" if "Open Kernel Module" in proc else "proprietary"
    return {"loaded": loaded, "version": version, "kernel_module_flavor": flavor}


def _pci_gpu(entry, pci_ids):
    gpu = dict(entry)
    model = describe_gpu(entry["pci_device_id"], pci_ids)
    gpu.update(model)
    gpu["pci_name"] = model["name"]
    return gpu


def _tried(depth, answered, reason=None):
    return {"depth": depth, "answered": answered, "reason": reason}


def _merge_detail(gpu, detail, source):
    for key, value in detail.items():
        if key in ("pci_bus_id", "driver_version"):
            continue
        if key == "name":
            if value:
                gpu["name"] = value
                gpu["name_source"] = source
            continue
        gpu[key] = value
    if gpu.get("architecture") == "unknown" and gpu.get("compute_capability"):
        major, dummy, minor = gpu["compute_capability"].partition(".")
        gpu["architecture"] = architecture_from_compute_capability(major, minor or None) or "unknown"


def _merge_depth(gpus, found, source, sysfs_root, errors):
    """Add a deeper depth's per-GPU detail to the PCI GPUs; GPUs PCI did not see are only noted."""
    by_bus = dict((gpu["pci_bus_id"], gpu) for gpu in gpus)
    label = "NVML" if source == "nvml" else source
    for bus, detail in sorted(found["gpus"].items()):
        if bus in by_bus:
            _merge_detail(by_bus[bus], detail, source)
        else:
            errors.append({"source": source, "pci_bus_id": bus,
                           "error": "GPU reported by %s is not on PCI under %s; ignored" % (label, sysfs_root)})


def _topology_from_nvml(gpus, matrix):
    names = dict((gpu["pci_bus_id"], "GPU%d" % gpu["index"]) for gpu in gpus)
    order = [gpu["pci_bus_id"] for gpu in gpus if gpu["pci_bus_id"] in matrix]
    out = {}
    for bus_a in order:
        row = matrix[bus_a]
        cells = {}
        for bus_b in order:
            code = "X" if bus_b == bus_a else row.get(bus_b)
            if code:
                cells[names[bus_b]] = code
        out[names[bus_a]] = cells
    return {
        "source": "nvml",
        "gpus": dict((names[bus], bus) for bus in matrix if bus in names),
        "nics": [],
        "matrix": out,
    }


def _topology_from_smi(gpus, topo, index_to_bus):
    by_bus = dict((gpu["pci_bus_id"], gpu) for gpu in gpus)
    rename = {}
    for smi_name, bus in index_to_bus.items():
        if bus in by_bus:
            rename[smi_name] = "GPU%d" % by_bus[bus]["index"]
    matrix = {}
    for row_name, row in topo.get("matrix", {}).items():
        if row_name.startswith("GPU") and row_name not in rename:
            continue
        cells = {}
        for col_name, code in row.items():
            if col_name.startswith("GPU") and col_name not in rename:
                continue
            cells[rename.get(col_name, col_name)] = code
        matrix[rename.get(row_name, row_name)] = cells
    for entry in topo.get("gpus", ()):
        gpu = by_bus.get(index_to_bus.get(entry.get("name")))
        if gpu is None:
            continue
        gpu.setdefault("cpu_affinity", entry.get("cpu_affinity"))
        gpu.setdefault("numa_affinity", entry.get("numa_affinity"))
    return {
        "source": "nvidia-smi",
        "gpus": dict((rename[name], bus) for name, bus in index_to_bus.items() if name in rename),
        "nics": list(topo.get("nics", ())),
        "matrix": matrix,
    }


def _unexpected(depth, exc):
    return "unexpected error in the %s depth: %s: %s" % (depth, type(exc).__name__, exc)


def _run_nvml(nvml, nvml_path, gpus, nvswitches, tried, errors, init_timeout=None):
    try:
        return _run_nvml_depth(nvml, nvml_path, gpus, nvswitches, tried, errors, init_timeout)
    except ProbeError:
        raise
    except Exception as exc:  # a broken binding must not end the probe with a traceback
        if nvml == "required":
            raise ProbeError("nvml: required, but " + _unexpected("NVML", exc))
        tried.append(_tried("nvml", False, _unexpected("NVML", exc)))
        return None


def _run_nvml_depth(nvml, nvml_path, gpus, nvswitches, tried, errors, init_timeout):
    if nvml == "disabled":
        tried.append(_tried("nvml", False, "disabled by the nvml option"))
        return None
    if not gpus:
        tried.append(_tried("nvml", False, "skipped: no NVIDIA GPU on PCI"))
        return None
    module, reason = nvml_depth.import_pynvml(nvml_path)
    if module is None:
        if nvml == "required":
            raise ProbeError("nvml: required, but the NVML binding is missing: %s. %s"
                             % (reason, nvml_depth.INSTALL_HINT))
        tried.append(_tried("nvml", False, reason))
        return None
    found = nvml_depth.collect(module, [g["pci_bus_id"] for g in gpus], [s["pci_bus_id"] for s in nvswitches],
                               init_timeout=init_timeout)
    if not found["answered"]:
        if nvml == "required":
            raise ProbeError("nvml: required, but NVML did not answer: %s" % found["reason"])
        tried.append(_tried("nvml", False, found["reason"]))
        return None
    tried.append(_tried("nvml", True))
    errors.extend(found["errors"])
    return found


def _run_smi(nvidia_smi, binary, get_bin_path, run_command, gpus, tried, errors):
    try:
        return _run_smi_depth(nvidia_smi, binary, get_bin_path, run_command, gpus, tried, errors)
    except Exception as exc:  # never a traceback: the depth did not answer, and says why
        tried.append(_tried("nvidia-smi", False, _unexpected("nvidia-smi", exc)))
        return None


def _run_smi_depth(nvidia_smi, binary, get_bin_path, run_command, gpus, tried, errors):
    if nvidia_smi == "disabled":
        tried.append(_tried("nvidia-smi", False, "disabled by the nvidia_smi option"))
        return None
    if not gpus:
        tried.append(_tried("nvidia-smi", False, "skipped: no NVIDIA GPU on PCI"))
        return None
    if binary:
        if not os.path.exists(binary):
            tried.append(_tried("nvidia-smi", False, "nvidia-smi not found at %s" % binary))
            return None
    elif get_bin_path is not None:
        binary = get_bin_path("nvidia-smi")
    if not binary:
        tried.append(_tried("nvidia-smi", False, "nvidia-smi not found"))
        return None
    if run_command is None:
        tried.append(_tried("nvidia-smi", False, "no command runner given"))
        return None
    found = smi_depth.collect(binary, run_command)
    if not found["answered"]:
        tried.append(_tried("nvidia-smi", False, found["reason"]))
        return None
    tried.append(_tried("nvidia-smi", True))
    errors.extend(found["errors"])
    return found


def nvlink_fabric(nics, nvswitches, gpus, source):
    """What says this host has an NVSwitch fabric, from every depth.

    NVLink 5 systems (HGX/DGX B200, B300) have no NVSwitch on the host's PCI bus; their
    switch trays are managed through ConnectX-7 functions whose VPD carries SW_MNG, and
    at the NVML depth the GPUs' NVLinks end at a device of remote type "switch".
    """
    mgmt = [n for n in nics if n.get("nvlink_switch_mgmt") is True]
    unreadable = [n["pci_bus_id"] for n in nics
                  if n.get("pci_device_id") == "0x%04x" % CONNECTX7_DEVICE and not n.get("virtual_function")
                  and (n.get("vpd") or {}).get("present") and not (n.get("vpd") or {}).get("readable")]
    switch_links = None
    if source == "nvml":
        switch_links = 0
        for gpu in gpus:
            for link in gpu.get("nvlinks") or ():
                if link.get("active") and link.get("remote_type") == "switch":
                    switch_links += 1
    return {
        "nvswitch_pci_count": len(nvswitches),
        "switch_mgmt_nic_count": len(mgmt),
        "vpd_unreadable": unreadable,
        "nvml_switch_links": switch_links,
        "detected": bool(nvswitches or mgmt or switch_links),
        "nvlink5": bool(mgmt),
    }


def probe(sysfs_root="/sys", procfs_root="/proc", pci_ids_path=None, nvml="auto",
          nvml_path=nvml_depth.DEFAULT_NVML_PATHS, nvidia_smi="auto", nvidia_smi_path=None,
          run_command=None, get_bin_path=None, nvml_init_timeout=None):
    """Probe the host and return the ``gpuops_gpu`` facts.

    ``run_command(args) -> (rc, stdout, stderr)`` runs nvidia-smi (with a C locale and a time
    limit: the caller's runner enforces it); ``get_bin_path(name)`` finds it when
    ``nvidia_smi_path`` is not given. ``nvml_init_timeout`` (seconds) bounds nvmlInit.
    Raises ProbeError when the sysfs tree is missing or unreadable, or ``nvml="required"``
    cannot be met. Any other error of a deeper depth becomes that depth's reason in
    ``depths_tried``.
    """
    if nvml not in NVML_CHOICES:
        raise ProbeError("nvml must be one of %s, got %r" % (", ".join(NVML_CHOICES), nvml))
    if nvidia_smi not in NVIDIA_SMI_CHOICES:
        raise ProbeError("nvidia_smi must be one of %s, got %r" % (", ".join(NVIDIA_SMI_CHOICES), nvidia_smi))
    try:
        scan = scan_pci(sysfs_root)
    except PciScanError as exc:
        raise ProbeError(str(exc))

    pci_ids = find_pci_ids(pci_ids_path)
    gpus = [_pci_gpu(entry, pci_ids) for entry in scan["gpus"]]
    for index, gpu in enumerate(gpus):
        gpu["index"] = index
    nvswitches = []
    for entry in scan["nvswitches"]:
        switch = dict(entry)
        switch.update(describe_nvswitch(entry["pci_device_id"], pci_ids))
        nvswitches.append(switch)

    tried = [_tried("pci", True)]
    errors = list(scan.get("errors") or ())
    source = "pci"
    topology = None

    found = _run_nvml(nvml, nvml_path, gpus, nvswitches, tried, errors, nvml_init_timeout)
    if found is not None:
        source = "nvml"
        tried.append(_tried("nvidia-smi", False, "skipped: NVML answered"))
        _merge_depth(gpus, found, "nvml", sysfs_root, errors)
        topology = _topology_from_nvml(gpus, found["topology"])
    else:
        found = _run_smi(nvidia_smi, nvidia_smi_path, get_bin_path, run_command, gpus, tried, errors)
        if found is not None:
            source = "nvidia-smi"
            _merge_depth(gpus, found, "nvidia-smi", sysfs_root, errors)
            if found["topo"] is not None:
                topology = _topology_from_smi(gpus, found["topo"], found["index_to_bus"])
    deep_driver = found["driver_version"] if found else None
    deep_cuda = found["cuda_version"] if found else None

    driver = read_driver(sysfs_root, procfs_root)
    if source != "pci":
        driver["loaded"] = True
        driver["version"] = deep_driver or driver["version"]
    driver["cuda_version"] = deep_cuda

    fabric = nvlink_fabric(scan["nics"], nvswitches, gpus, source)
    if fabric["vpd_unreadable"]:
        errors.append({"source": "pci", "error": (
            "the VPD of %d ConnectX-7 function(s) (%s) could not be read, so NVLink 5 switch-management "
            "functions (SW_MNG) cannot be told from ordinary NICs; run the probe as root (VPD is root-only)"
            % (len(fabric["vpd_unreadable"]), ", ".join(fabric["vpd_unreadable"])))})
    facts = {
        "source": source,
        "depths_tried": tried,
        "gpu_count": len(gpus),
        "nvswitch_count": len(nvswitches),
        "gpus": gpus,
        "nvswitches": nvswitches,
        "nics": scan["nics"],
        "nvswitch_mgmt_nics": [
            {"pci_bus_id": n["pci_bus_id"], "ib_devices": n["ib_devices"], "netdevs": n["netdevs"],
             "numa_node": n.get("numa_node")}
            for n in scan["nics"] if n.get("nvlink_switch_mgmt") is True],
        "nvlink_fabric": fabric,
        "driver": driver,
        "pci_ids_path": pci_ids.path if pci_ids is not None else None,
        "errors": errors,
    }
    facts["capabilities"] = capabilities_from_facts(facts)
    if topology is not None:
        facts["topology"] = topology
    return facts
