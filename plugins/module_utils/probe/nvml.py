# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVML depth of the GPU probe, through the ``pynvml`` binding (nvidia-ml-py).

The binding is imported at run time (from ``sys.path`` plus extra directories
such as /opt/gpuops/nvml, where the collection installs it with
``pip --target``). Every field is read on its own: a function an old driver or
an old binding lacks (AttributeError, NVML_ERROR_FUNCTION_NOT_FOUND) or that a
GPU does not support gives None for that field only. An NVML error that makes a
GPU unusable (GPU is lost, unknown error) is reported on that GPU and does not
hide the others.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os
import sys
import threading

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import nvidia_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.pci import normalize_bus_id, nvml_bus_id
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_topo import compress_cpu_list

DEFAULT_NVML_PATHS = ("/opt/gpuops/nvml",)

INSTALL_HINT = (
    "Set gpuops_nvml_install: true to let the collection install nvidia-ml-py with "
    "pip --target /opt/gpuops/nvml (the system Python is not touched), or install the "
    "nvidia-ml-py package into the Python interpreter that ansible_python_interpreter names."
)

# nvmlGpuTopologyLevel_t -> nvidia-smi topo -m code. INTERNAL (two GPUs on one board)
# is reported as PIX: the board's own PCIe switch is the single bridge between them.
# The NVML tables below are built from nvidia_sources (each row with its source).
_TOPOLOGY_CODES = dict((r["level"], r["code"]) for r in nvidia_sources.TOPOLOGY_LEVEL_ROWS)

# nvmlClocksEventReasons bits, named as nvidia-smi --query-gpu=clocks_event_reasons.* names them
THROTTLE_REASONS = tuple((int(r["bit"], 16), r["name"]) for r in nvidia_sources.THROTTLE_REASON_ROWS)

# nvmlNvlinkVersion_t -> NVLink version
NVLINK_VERSIONS = dict((r["value"], r["version"]) for r in nvidia_sources.NVLINK_VERSION_ROWS)
_REMOTE_TYPES = dict((r["value"], r["remote"]) for r in nvidia_sources.REMOTE_TYPE_ROWS)

# errors that mean "this field is not available here", not "this GPU is broken"
_FIELD_ERRORS = (
    "NVML_ERROR_NOT_SUPPORTED",
    "NVML_ERROR_FUNCTION_NOT_FOUND",
    "NVML_ERROR_NOT_FOUND",
    "NVML_ERROR_NO_PERMISSION",
    "NVML_ERROR_INVALID_ARGUMENT",
)

_CPU_SET_WORDS = 64  # 64 x 64 bits: affinity masks for up to 4096 CPUs


def import_pynvml(extra_paths=DEFAULT_NVML_PATHS):
    """Import the binding; returns ``(module, None)`` or ``(None, reason)``.

    ``extra_paths`` are put in front of sys.path for the import only.
    """
    paths = [p for p in (extra_paths or ()) if p]
    added = [p for p in paths if os.path.isdir(p) and p not in sys.path]
    sys.path[0:0] = added
    try:
        return importlib.import_module("pynvml"), None
    except ImportError as exc:
        where = "sys.path" + (" and %s" % ", ".join(paths) if paths else "")
        return None, "pynvml not importable (%s; looked in %s)" % (exc, where)
    finally:
        for path in added:
            try:
                sys.path.remove(path)
            except ValueError:
                pass


def cuda_version_text(value):
    """NVML's CUDA driver version int (12040) -> ``"12.4"``."""
    try:
        value = int(value)
    except (TypeError, ValueError):
        return None
    if value <= 0:
        return None
    return "%d.%d" % (value // 1000, (value % 1000) // 10)


def decode_throttle_reasons(mask):
    """Clock event/throttle reason bitmask -> list of names (``[]`` for none)."""
    if mask is None:
        return None
    return [name for bit, name in THROTTLE_REASONS if mask & bit]


def affinity_to_cpus(words):
    """NVML CPU affinity words (64-bit each, lowest CPU first) -> sorted CPU list."""
    cpus = []
    for index, word in enumerate(words or ()):
        word = int(word)
        bit = 0
        while word:
            if word & 1:
                cpus.append(index * 64 + bit)
            word >>= 1
            bit += 1
    return cpus


def _text(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _watts(milliwatts):
    if milliwatts is None:
        return None
    watts = milliwatts / 1000.0
    return int(watts) if watts == int(watts) else round(watts, 2)


def _bool_pair(pair):
    if pair is None:
        return None
    return {"current": bool(pair[0]), "pending": bool(pair[1])}


class _GpuFailed(Exception):
    """An NVML error that makes one GPU unreadable."""


class NvmlReader(object):
    """Reads what the probe needs from an initialised pynvml module."""

    def __init__(self, pynvml):
        self.nvml = pynvml
        self.error_class = getattr(pynvml, "NVMLError", Exception)
        self.field_codes = set(
            getattr(pynvml, name) for name in _FIELD_ERRORS if hasattr(pynvml, name)
        )

    def is_field_error(self, exc):
        return getattr(exc, "value", None) in self.field_codes

    def call(self, name, *args):
        """Call ``pynvml.<name>``; None when the binding, driver or GPU lacks it.

        Raises _GpuFailed for any other NVML error.
        """
        func = getattr(self.nvml, name, None)
        if func is None:
            return None
        try:
            return func(*args)
        except self.error_class as exc:
            if self.is_field_error(exc):
                return None
            raise _GpuFailed(str(exc))

    def first(self, names, *args):
        for name in names:
            value = self.call(name, *args)
            if value is not None:
                return value
        return None

    def gpu(self, handle):
        call = self.call
        info = {}
        info["name"] = _text(call("nvmlDeviceGetName", handle))
        info["uuid"] = _text(call("nvmlDeviceGetUUID", handle))
        info["serial"] = _text(call("nvmlDeviceGetSerial", handle))
        memory = call("nvmlDeviceGetMemoryInfo", handle)
        info["memory_total_mib"] = int(memory.total) // 1048576 if memory is not None else None
        cc = call("nvmlDeviceGetCudaComputeCapability", handle)
        info["compute_capability"] = "%d.%d" % (cc[0], cc[1]) if cc else None
        info["ecc_mode"] = _bool_pair(call("nvmlDeviceGetEccMode", handle))
        info["mig_mode"] = _bool_pair(call("nvmlDeviceGetMigMode", handle))
        persistence = call("nvmlDeviceGetPersistenceMode", handle)
        info["persistence_mode"] = bool(persistence) if persistence is not None else None
        info["power_limit_w"] = _watts(
            self.first(("nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetPowerManagementLimit"), handle)
        )
        info["power_default_limit_w"] = _watts(call("nvmlDeviceGetPowerManagementDefaultLimit", handle))
        limits = call("nvmlDeviceGetPowerManagementLimitConstraints", handle)
        info["power_min_limit_w"] = _watts(limits[0]) if limits else None
        info["power_max_limit_w"] = _watts(limits[1]) if limits else None
        words = call("nvmlDeviceGetCpuAffinity", handle, _CPU_SET_WORDS)
        cpus = affinity_to_cpus(words) if words is not None else None
        info["cpu_affinity"] = cpus
        info["cpu_affinity_text"] = compress_cpu_list(cpus) if cpus else None
        info["gpu_numa_id"] = call("nvmlDeviceGetNumaNodeId", handle)
        clock_sm = getattr(self.nvml, "NVML_CLOCK_SM", 1)
        clock_mem = getattr(self.nvml, "NVML_CLOCK_MEM", 2)
        info["clocks"] = {
            "sm_mhz": call("nvmlDeviceGetClockInfo", handle, clock_sm),
            "mem_mhz": call("nvmlDeviceGetClockInfo", handle, clock_mem),
        }
        # the GPU's highest clocks (nvmlDeviceGetMaxClockInfo): what a requested application or
        # locked clock may not exceed; None where the driver or the GPU does not say
        clock_graphics = getattr(self.nvml, "NVML_CLOCK_GRAPHICS", 0)
        info["max_clocks"] = {
            "graphics_mhz": _mhz(call("nvmlDeviceGetMaxClockInfo", handle, clock_graphics)),
            "memory_mhz": _mhz(call("nvmlDeviceGetMaxClockInfo", handle, clock_mem)),
        }
        reasons = self.first(
            ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"), handle
        )
        info["throttle_reasons"] = decode_throttle_reasons(reasons)
        info["nvlinks"] = self.nvlinks(handle)
        return info

    def nvlinks(self, handle):
        links = []
        max_links = int(getattr(self.nvml, "NVML_NVLINK_MAX_LINKS", 18))
        for link in range(max_links):
            state = self.call("nvmlDeviceGetNvLinkState", handle, link)
            if state is None:
                break  # no NVLink, or past the last link
            entry = {"link": link, "active": bool(state), "remote_pci_bus_id": None, "remote_type": None}
            if state:
                remote = self.call("nvmlDeviceGetNvLinkRemotePciInfo", handle, link)
                if remote is not None:
                    try:
                        entry["remote_pci_bus_id"] = normalize_bus_id(_text(remote.busId))
                    except ValueError:
                        pass
                rtype = self.call("nvmlDeviceGetNvLinkRemoteDeviceType", handle, link)
                if rtype is not None:
                    entry["remote_type"] = _REMOTE_TYPES.get(rtype, "unknown")
            entry["version"] = NVLINK_VERSIONS.get(self.call("nvmlDeviceGetNvLinkVersion", handle, link))
            links.append(entry)
        return links

    def bus_id(self, handle):
        info = self.call("nvmlDeviceGetPciInfo", handle)
        if info is None:
            return None
        try:
            return normalize_bus_id(_text(info.busId))
        except ValueError:
            return None

    def common_ancestor(self, handle_a, handle_b):
        try:
            level = self.call("nvmlDeviceGetTopologyCommonAncestor", handle_a, handle_b)
        except _GpuFailed:
            return None
        return _TOPOLOGY_CODES.get(level)


def _mhz(value):
    """A clock NVML gave, as whole MHz; None for no answer or nothing plausible (0 means unknown)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return value


def _nvlink_topology(gpus, nvswitch_bus_ids):
    """Per GPU: active link count, peers ``{bus: n}``; NVSwitch fabrics count as all-to-all."""
    buses = set(gpus)
    switches = set(nvswitch_bus_ids or ())
    active, direct, on_fabric = {}, {}, set()
    for bus, info in gpus.items():
        count, peers = 0, {}
        for link in info.get("nvlinks") or ():
            if not link["active"]:
                continue
            count += 1
            remote = link["remote_pci_bus_id"]
            if link["remote_type"] == "switch" or remote in switches:
                on_fabric.add(bus)
            elif remote in buses and remote != bus:
                peers[remote] = peers.get(remote, 0) + 1
        active[bus] = count
        direct[bus] = peers
    result = {}
    for bus in gpus:
        peers = dict(direct[bus])
        if bus in on_fabric:
            for other in on_fabric:
                if other != bus:
                    peers[other] = active[bus]
        result[bus] = peers
    return active, result


DEFAULT_INIT_TIMEOUT = 30


class InitTimeout(Exception):
    """nvmlInit did not return in time (a hung GPU or driver)."""


def init_with_timeout(pynvml, timeout):
    """Call ``pynvml.nvmlInit()`` in a worker thread and wait at most ``timeout`` seconds.

    The binding calls into libnvidia-ml through ctypes, which releases the GIL, so a call
    stuck in the driver does not stop this thread from giving up. The stuck thread is a
    daemon: it cannot be killed, but it does not keep the module's process alive, and NVML
    is never used again in this run. Raises InitTimeout, or what nvmlInit raised.
    """
    if timeout is None:
        pynvml.nvmlInit()
        return
    outcome = {}

    def target():
        try:
            pynvml.nvmlInit()
            outcome["ok"] = True
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="gpuops-nvmlInit")
    worker.daemon = True
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise InitTimeout("nvmlInit did not return within %s s (a hung GPU or driver?); NVML is not used "
                          "in this run" % timeout)
    if "error" in outcome:
        raise outcome["error"]


def collect(pynvml, pci_gpu_bus_ids=(), nvswitch_bus_ids=(), init_timeout=None):
    """Everything NVML says about the GPUs.

    Returns a dict: ``answered`` (bool), ``reason`` (why not), ``driver_version``,
    ``cuda_version``, ``gpus`` ({sysfs bus id: detail}), ``topology``
    ({bus: {bus: code}}) and ``errors`` (list of dicts). ``init_timeout`` (seconds)
    bounds nvmlInit (init_with_timeout()).
    """
    result = {
        "answered": False,
        "reason": None,
        "driver_version": None,
        "cuda_version": None,
        "gpus": {},
        "topology": {},
        "errors": [],
    }
    reader = NvmlReader(pynvml)
    try:
        init_with_timeout(pynvml, init_timeout)
    except InitTimeout as exc:
        result["reason"] = str(exc)
        return result
    except reader.error_class as exc:
        result["reason"] = "nvmlInit failed: %s" % exc
        return result
    except Exception as exc:  # a broken binding or library: report it, never crash the probe
        result["reason"] = "nvmlInit failed: %s" % exc
        return result
    try:
        _collect(reader, result, pci_gpu_bus_ids, nvswitch_bus_ids)
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
    return result


def _collect(reader, result, pci_gpu_bus_ids, nvswitch_bus_ids):
    nvml = reader.nvml
    result["answered"] = True
    try:
        result["driver_version"] = _text(reader.call("nvmlSystemGetDriverVersion"))
        result["cuda_version"] = cuda_version_text(
            reader.first(("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"))
        )
    except _GpuFailed as exc:
        result["errors"].append({"source": "nvml", "error": "system query failed: %s" % exc})

    handles = {}
    try:
        count = reader.call("nvmlDeviceGetCount") or 0
    except _GpuFailed as exc:
        result["errors"].append({"source": "nvml", "error": "nvmlDeviceGetCount failed: %s" % exc})
        count = 0
    lost_indexes = []
    for index in range(count):
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            bus = reader.bus_id(handle)
        except (reader.error_class, _GpuFailed) as exc:
            lost_indexes.append((index, str(exc)))
            continue
        if bus is not None:
            handles[bus] = (index, handle)

    # PCI-seen GPUs NVML did not list by index: ask by bus id, which names the broken one
    attached = 0
    for bus in pci_gpu_bus_ids:
        if bus in handles:
            continue
        getter = getattr(nvml, "nvmlDeviceGetHandleByPciBusId_v2", None) or getattr(
            nvml, "nvmlDeviceGetHandleByPciBusId", None)
        if getter is None:
            continue
        try:
            handles[bus] = (None, getter(nvml_bus_id(bus)))
        except reader.error_class as exc:
            result["gpus"][bus] = {"error": str(exc)}
            result["errors"].append({"source": "nvml", "pci_bus_id": bus, "error": str(exc)})
            attached += 1
    # index failures not explained by a PCI GPU above (which index is which cannot be known)
    for index, message in lost_indexes[attached:]:
        result["errors"].append({"source": "nvml", "nvml_index": index, "error": message})

    good = {}
    for bus, (index, handle) in sorted(handles.items()):
        try:
            info = reader.gpu(handle)
        except _GpuFailed as exc:
            result["gpus"][bus] = {"error": str(exc), "nvml_index": index}
            result["errors"].append({"source": "nvml", "pci_bus_id": bus, "error": str(exc)})
            continue
        info["nvml_index"] = index
        result["gpus"][bus] = info
        good[bus] = handle

    active, peers = _nvlink_topology(
        dict((bus, result["gpus"][bus]) for bus in good), nvswitch_bus_ids
    )
    buses = sorted(good)
    matrix = dict((bus, {}) for bus in buses)
    for pos, bus_a in enumerate(buses):
        info = result["gpus"][bus_a]
        info["nvlink_active_count"] = active[bus_a]
        info["nvlink_peers"] = [
            {"pci_bus_id": other, "links": n} for other, n in sorted(peers[bus_a].items())
        ]
        for bus_b in buses[pos + 1:]:
            code = reader.common_ancestor(good[bus_a], good[bus_b])
            matrix[bus_a][bus_b] = code
            matrix[bus_b][bus_a] = code
    for bus_a in buses:
        for bus_b, n in peers[bus_a].items():
            if n and bus_b in matrix[bus_a]:
                matrix[bus_a][bus_b] = "NV%d" % n
    result["topology"] = matrix
