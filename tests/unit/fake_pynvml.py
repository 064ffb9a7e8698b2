# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST DOUBLE for the ``pynvml`` binding (nvidia-ml-py). Used only by tests.

It is not NVIDIA's code, talks to no driver and is never shipped to targets. It
replays a host fixture's ``nvml.json`` (tests/fixtures/hosts/<host>/nvml.json)
through the pynvml functions and constants gpuops.dlserver's probe calls, with
the same numeric constant values and error behaviour as nvidia-ml-py:

* errors are ``NVMLError`` instances whose ``value`` is the NVML return code and
  whose class is the matching subclass (``NVMLError_GpuIsLost`` ...); ``str()``
  gives NVML's text ("GPU is lost", "Driver Not Loaded" ...);
* a field the fixture does not have raises NVML_ERROR_NOT_SUPPORTED, as the
  library does for a feature the GPU lacks.

NVLinks: each ``nvlinks`` entry of a device (``count`` links with ``state``, ``remote_bus_id``,
``remote_type`` and ``version``) answers nvmlDeviceGetNvLinkState/RemotePciInfo/Version and
nvmlDeviceGetNvLinkRemoteDeviceType; ``remote_type`` 2 is NVML_NVLINK_DEVICE_TYPE_SWITCH, which
is how NVLink 5 hosts (HGX B200, fixture ``hgx-b200-8gpu``) show switches that are no PCI
functions; an entry without ``remote_type`` answers NVML_NVLINK_DEVICE_TYPE_UNKNOWN.

Injections, for the failure paths:

* ``lost=(index, ...)``: those GPUs answer every call with NVML_ERROR_GPU_IS_LOST;
* ``missing=("nvmlDeviceGetNumaNodeId", ...)`` (plus the fixture's
  ``missing_functions``): calls raise NVML_ERROR_FUNCTION_NOT_FOUND, as the
  binding does when the installed libnvidia-ml is older than the function;
* ``missing_attrs=(...)``: the function does not exist at all (AttributeError),
  as with an old binding;
* ``init_error="DRIVER_NOT_LOADED"`` (or the fixture's ``init_error``):
  ``nvmlInit`` raises that error;
* memory error counters (gpuops.dlserver.gpu_validate): a device's ``ecc_errors``
  (``{"uncorrected_volatile": 2}``), ``remapped_rows`` and ``retired_pages`` answer
  nvmlDeviceGetTotalEccErrors/RemappedRows/RetiredPages; ``inject_device()`` adds them.

Use::

    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml.from_host("hgx-h100-8gpu"))
"""

import json
import os
import types

HOSTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "hosts")

# Values as defined in nvidia-ml-py's pynvml.py
CONSTANTS = {
    "NVML_SUCCESS": 0,
    "NVML_ERROR_UNINITIALIZED": 1,
    "NVML_ERROR_INVALID_ARGUMENT": 2,
    "NVML_ERROR_NOT_SUPPORTED": 3,
    "NVML_ERROR_NO_PERMISSION": 4,
    "NVML_ERROR_ALREADY_INITIALIZED": 5,
    "NVML_ERROR_NOT_FOUND": 6,
    "NVML_ERROR_INSUFFICIENT_SIZE": 7,
    "NVML_ERROR_INSUFFICIENT_POWER": 8,
    "NVML_ERROR_DRIVER_NOT_LOADED": 9,
    "NVML_ERROR_TIMEOUT": 10,
    "NVML_ERROR_IRQ_ISSUE": 11,
    "NVML_ERROR_LIBRARY_NOT_FOUND": 12,
    "NVML_ERROR_FUNCTION_NOT_FOUND": 13,
    "NVML_ERROR_CORRUPTED_INFOROM": 14,
    "NVML_ERROR_GPU_IS_LOST": 15,
    "NVML_ERROR_RESET_REQUIRED": 16,
    "NVML_ERROR_OPERATING_SYSTEM": 17,
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH": 18,
    "NVML_ERROR_MEMORY": 20,
    "NVML_ERROR_UNKNOWN": 999,
    "NVML_FEATURE_DISABLED": 0,
    "NVML_FEATURE_ENABLED": 1,
    "NVML_DEVICE_MIG_DISABLE": 0,
    "NVML_DEVICE_MIG_ENABLE": 1,
    "NVML_CLOCK_GRAPHICS": 0,
    "NVML_CLOCK_SM": 1,
    "NVML_CLOCK_MEM": 2,
    "NVML_NVLINK_MAX_LINKS": 36,
    "NVML_NVLINK_DEVICE_TYPE_GPU": 0x00,
    "NVML_NVLINK_DEVICE_TYPE_IBMNPU": 0x01,
    "NVML_NVLINK_DEVICE_TYPE_SWITCH": 0x02,
    "NVML_NVLINK_DEVICE_TYPE_UNKNOWN": 0xFF,
    "NVML_NVLINK_VERSION_INVALID": 0,
    "NVML_NVLINK_VERSION_1_0": 1,
    "NVML_NVLINK_VERSION_2_0": 2,
    "NVML_NVLINK_VERSION_2_2": 3,
    "NVML_NVLINK_VERSION_3_0": 4,
    "NVML_NVLINK_VERSION_3_1": 5,
    "NVML_NVLINK_VERSION_4_0": 6,
    "NVML_NVLINK_VERSION_5_0": 7,
    "NVML_NVLINK_VERSION_6_0": 8,
    "NVML_TOPOLOGY_INTERNAL": 0,
    "NVML_TOPOLOGY_SINGLE": 10,
    "NVML_TOPOLOGY_MULTIPLE": 20,
    "NVML_TOPOLOGY_HOSTBRIDGE": 30,
    "NVML_TOPOLOGY_NODE": 40,
    "NVML_TOPOLOGY_SYSTEM": 50,
}

# NVML's error texts (nvidia-ml-py's NVMLError._errcode_to_string)
ERROR_TEXT = {
    1: "Uninitialized",
    2: "Invalid Argument",
    3: "Not Supported",
    4: "Insufficient Permissions",
    5: "Already Initialized",
    6: "Not Found",
    7: "Insufficient Size",
    8: "Insufficient External Power",
    9: "Driver Not Loaded",
    10: "Timeout",
    11: "Interrupt Request Issue",
    12: "NVML Shared Library Not Found",
    13: "Function Not Found",
    14: "Corrupted infoROM",
    15: "GPU is lost",
    16: "GPU requires restart",
    17: "The operating system has blocked the request.",
    18: "RM has detected an NVML/RM version mismatch.",
    20: "Insufficient Memory",
    999: "Unknown Error",
}

# topology level names used in nvml.json -> NVML_TOPOLOGY_* value
_LEVELS = {"X": 0, "INTERNAL": 0, "SINGLE": 10, "MULTIPLE": 20, "HOSTBRIDGE": 30, "NODE": 40, "SYSTEM": 50}


def _error_classes():
    class NVMLError(Exception):
        _valClassMapping = {}

        def __new__(cls, value):
            target = NVMLError._valClassMapping.get(value, cls) if cls is NVMLError else cls
            obj = Exception.__new__(target)
            obj.value = value
            return obj

        def __init__(self, value):
            Exception.__init__(self, value)
            self.value = value

        def __str__(self):
            return ERROR_TEXT.get(self.value, "NVML Error with code %d" % self.value)

        def __eq__(self, other):
            return getattr(other, "value", None) == self.value

        def __hash__(self):
            return hash(self.value)

    classes = {"NVMLError": NVMLError}
    for name, value in CONSTANTS.items():
        if not name.startswith("NVML_ERROR_"):
            continue
        class_name = "NVMLError_" + "".join(part.capitalize() for part in name[len("NVML_ERROR_"):].split("_"))

        def make_new(code):
            def new(cls, *args):
                return NVMLError.__new__(cls, code)
            return new

        def make_init(code):
            def init(self, *args):
                NVMLError.__init__(self, code)
            return init

        sub = type(class_name, (NVMLError,), {"__new__": make_new(value), "__init__": make_init(value)})
        NVMLError._valClassMapping[value] = sub
        classes[class_name] = sub
    return classes


def expand_cpus(text):
    cpus = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-")
            cpus.extend(range(int(low), int(high) + 1))
        else:
            cpus.append(int(part))
    return cpus


def _cpu_words(text, size):
    words = [0] * size
    for cpu in expand_cpus(text):
        if cpu // 64 < size:
            words[cpu // 64] |= 1 << (cpu % 64)
    return words


def _norm_bus(text):
    if isinstance(text, bytes):
        text = text.decode()
    domain, bus, rest = text.split(":") if text.count(":") == 2 else (["0"] + text.split(":"))
    slot, fn = rest.split(".")
    return "%08X:%02X:%02X.%X" % (int(domain, 16), int(bus, 16), int(slot, 16), int(fn, 16))


class Obj(object):
    """A plain attribute bag standing in for an NVML C structure."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


class Handle(object):
    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return "<fake nvmlDevice %d>" % self.index


def load_host(host):
    """The nvml.json of a host fixture (a name under tests/fixtures/hosts, or a path)."""
    path = host if os.path.isfile(host) else os.path.join(HOSTS_DIR, host, "nvml.json")
    with open(path) as handle:
        return json.load(handle)


def inject_device(data, index, **fields):
    """A copy of nvml.json ``data`` with ``fields`` set on device ``index`` (e.g. ecc_errors)."""
    data = json.loads(json.dumps(data))
    data["devices"][index].update(fields)
    return data


def from_host(host, **kwargs):
    """``make_module(load_host(host), **kwargs)``."""
    return make_module(load_host(host), **kwargs)


def make_module(data, lost=(), missing=(), missing_attrs=(), init_error=None):
    """A module object that behaves like ``pynvml`` for ``data`` (an nvml.json dict)."""
    mod = types.ModuleType("pynvml")
    mod.__doc__ = "Test double for pynvml (tests/unit/fake_pynvml.py); not NVIDIA's binding."
    mod.__file__ = __file__
    mod.FAKE = True
    for name, value in CONSTANTS.items():
        setattr(mod, name, value)
    errors = _error_classes()
    for name, cls in errors.items():
        setattr(mod, name, cls)
    NVMLError = errors["NVMLError"]

    devices = data.get("devices", [])
    by_bus = dict((_norm_bus(dev["bus_id"]), index) for index, dev in enumerate(devices))
    topology = [row.split() for row in data.get("topology", [])]
    lost = set(lost)
    missing = set(missing) | set(data.get("missing_functions", ()))
    init_error = init_error or data.get("init_error")
    state = {"init": False, "calls": 0}
    mod.fake_state = state

    def fail(code_name):
        raise NVMLError(CONSTANTS["NVML_ERROR_" + code_name])

    def guard(name):
        state["calls"] += 1
        if name in missing:
            fail("FUNCTION_NOT_FOUND")
        if not state["init"]:
            fail("UNINITIALIZED")

    def device(name, handle):
        guard(name)
        if not isinstance(handle, Handle) or not 0 <= handle.index < len(devices):
            fail("INVALID_ARGUMENT")
        if handle.index in lost:
            fail("GPU_IS_LOST")
        return devices[handle.index]

    def field(dev, key):
        if key not in dev:
            fail("NOT_SUPPORTED")
        return dev[key]

    def links(dev, link):
        expanded = []
        for spec in dev.get("nvlinks", ()):
            expanded.extend([spec] * int(spec.get("count", 1)))
        if not expanded:
            fail("NOT_SUPPORTED")
        if not 0 <= link < len(expanded):
            fail("INVALID_ARGUMENT")
        return expanded[link]

    def pci_info(bus_id, pci_device_id=0):
        bus = _norm_bus(bus_id)
        return Obj(busId=bus.encode(), busIdLegacy=bus[4:].encode(), domain=int(bus[:8], 16),
                   bus=int(bus[9:11], 16), device=int(bus[12:14], 16), pciDeviceId=pci_device_id,
                   pciSubSystemId=0)

    def nvmlInit():
        state["calls"] += 1
        if init_error:
            fail(init_error)
        state["init"] = True

    def nvmlShutdown():
        guard("nvmlShutdown")
        state["init"] = False

    def nvmlSystemGetDriverVersion():
        guard("nvmlSystemGetDriverVersion")
        return data["driver_version"]

    def nvmlSystemGetCudaDriverVersion():
        guard("nvmlSystemGetCudaDriverVersion")
        return data["cuda_driver_version"]

    def nvmlSystemGetCudaDriverVersion_v2():
        guard("nvmlSystemGetCudaDriverVersion_v2")
        return data["cuda_driver_version"]

    def nvmlDeviceGetCount():
        guard("nvmlDeviceGetCount")
        return len(devices)

    def nvmlDeviceGetHandleByIndex(index):
        guard("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(devices):
            fail("INVALID_ARGUMENT")
        if index in lost:
            fail("GPU_IS_LOST")
        return Handle(index)

    def nvmlDeviceGetHandleByPciBusId(bus_id):
        guard("nvmlDeviceGetHandleByPciBusId")
        index = by_bus.get(_norm_bus(bus_id))
        if index is None:
            fail("NOT_FOUND")
        if index in lost:
            fail("GPU_IS_LOST")
        return Handle(index)

    def nvmlDeviceGetPciInfo(handle):
        dev = device("nvmlDeviceGetPciInfo", handle)
        return pci_info(dev["bus_id"])

    def nvmlDeviceGetName(handle):
        return field(device("nvmlDeviceGetName", handle), "name")

    def nvmlDeviceGetUUID(handle):
        return field(device("nvmlDeviceGetUUID", handle), "uuid")

    def nvmlDeviceGetSerial(handle):
        return field(device("nvmlDeviceGetSerial", handle), "serial")

    def nvmlDeviceGetMemoryInfo(handle, version=None):
        total = field(device("nvmlDeviceGetMemoryInfo", handle), "memory_total")
        return Obj(total=total, free=total, used=0)

    def nvmlDeviceGetCudaComputeCapability(handle):
        return tuple(field(device("nvmlDeviceGetCudaComputeCapability", handle), "compute_capability"))

    def nvmlDeviceGetEccMode(handle):
        return list(field(device("nvmlDeviceGetEccMode", handle), "ecc_mode"))

    def nvmlDeviceGetMigMode(handle):
        return list(field(device("nvmlDeviceGetMigMode", handle), "mig_mode"))

    def nvmlDeviceGetPersistenceMode(handle):
        return field(device("nvmlDeviceGetPersistenceMode", handle), "persistence_mode")

    def nvmlDeviceGetPowerManagementLimit(handle):
        return field(device("nvmlDeviceGetPowerManagementLimit", handle), "power_limit")

    def nvmlDeviceGetEnforcedPowerLimit(handle):
        return field(device("nvmlDeviceGetEnforcedPowerLimit", handle), "enforced_power_limit")

    def nvmlDeviceGetPowerManagementDefaultLimit(handle):
        return field(device("nvmlDeviceGetPowerManagementDefaultLimit", handle), "power_default_limit")

    def nvmlDeviceGetPowerManagementLimitConstraints(handle):
        return list(field(device("nvmlDeviceGetPowerManagementLimitConstraints", handle),
                          "power_limit_constraints"))

    def nvmlDeviceGetCpuAffinity(handle, cpu_set_size):
        text = field(device("nvmlDeviceGetCpuAffinity", handle), "cpu_affinity")
        return _cpu_words(text, cpu_set_size)

    def nvmlDeviceGetNumaNodeId(handle):
        return field(device("nvmlDeviceGetNumaNodeId", handle), "numa_node_id")

    def nvmlDeviceGetClockInfo(handle, clock_type):
        clocks = field(device("nvmlDeviceGetClockInfo", handle), "clocks")
        key = {CONSTANTS["NVML_CLOCK_SM"]: "sm", CONSTANTS["NVML_CLOCK_MEM"]: "mem",
               CONSTANTS["NVML_CLOCK_GRAPHICS"]: "sm"}.get(clock_type)
        if key is None:
            fail("INVALID_ARGUMENT")
        return field(clocks, key)

    def nvmlDeviceGetMaxClockInfo(handle, clock_type):
        # "max_clocks": {"graphics": MHz, "sm": MHz, "mem": MHz}; a device without it: Not Supported
        clocks = field(device("nvmlDeviceGetMaxClockInfo", handle), "max_clocks")
        key = {CONSTANTS["NVML_CLOCK_GRAPHICS"]: "graphics", CONSTANTS["NVML_CLOCK_SM"]: "sm",
               CONSTANTS["NVML_CLOCK_MEM"]: "mem"}.get(clock_type)
        if key is None:
            fail("INVALID_ARGUMENT")
        return field(clocks, key)

    def nvmlDeviceGetCurrentClocksEventReasons(handle):
        return field(device("nvmlDeviceGetCurrentClocksEventReasons", handle), "clocks_event_reasons")

    def nvmlDeviceGetCurrentClocksThrottleReasons(handle):
        return field(device("nvmlDeviceGetCurrentClocksThrottleReasons", handle), "clocks_event_reasons")

    def nvmlDeviceGetNvLinkState(handle, link):
        return links(device("nvmlDeviceGetNvLinkState", handle), link)["state"]

    def nvmlDeviceGetNvLinkRemotePciInfo(handle, link):
        spec = links(device("nvmlDeviceGetNvLinkRemotePciInfo", handle), link)
        if not spec.get("state"):
            fail("NOT_SUPPORTED")
        return pci_info(spec["remote_bus_id"])

    def nvmlDeviceGetNvLinkRemoteDeviceType(handle, link):
        spec = links(device("nvmlDeviceGetNvLinkRemoteDeviceType", handle), link)
        return spec.get("remote_type", CONSTANTS["NVML_NVLINK_DEVICE_TYPE_UNKNOWN"])

    def nvmlDeviceGetNvLinkVersion(handle, link):
        return links(device("nvmlDeviceGetNvLinkVersion", handle), link)["version"]

    def nvmlDeviceGetTopologyCommonAncestor(handle_a, handle_b):
        device("nvmlDeviceGetTopologyCommonAncestor", handle_a)
        device("nvmlDeviceGetTopologyCommonAncestor", handle_b)
        if not topology:
            fail("NOT_SUPPORTED")
        return _LEVELS[topology[handle_a.index][handle_b.index]]

    # Memory error counters (gpu_validate): a device's "ecc_errors" {"uncorrected_volatile": n, ...},
    # "remapped_rows" [corrected, uncorrected, pending, failure] and "retired_pages" {"0": [...], "1": [...]}
    # (by cause); a device without them answers NOT_SUPPORTED, as GeForce boards do.
    def nvmlDeviceGetTotalEccErrors(handle, error_type, counter_type):
        dev = device("nvmlDeviceGetTotalEccErrors", handle)
        key = "%s_%s" % ({0: "corrected", 1: "uncorrected"}.get(error_type, "?"),
                         {0: "volatile", 1: "aggregate"}.get(counter_type, "?"))
        return field(field(dev, "ecc_errors"), key)

    def nvmlDeviceGetRemappedRows(handle):
        return tuple(field(device("nvmlDeviceGetRemappedRows", handle), "remapped_rows"))

    def nvmlDeviceGetRetiredPages(handle, cause):
        return list(field(field(device("nvmlDeviceGetRetiredPages", handle), "retired_pages"), str(cause)))

    def nvmlDeviceGetRetiredPagesPendingStatus(handle):
        return int(field(device("nvmlDeviceGetRetiredPagesPendingStatus", handle), "retired_pages_pending"))

    functions = dict(
        (name, value) for name, value in locals().items()
        if name.startswith("nvml") and callable(value)
    )
    functions["nvmlDeviceGetPciInfo_v3"] = nvmlDeviceGetPciInfo
    functions["nvmlDeviceGetHandleByPciBusId_v2"] = nvmlDeviceGetHandleByPciBusId
    for name, func in functions.items():
        if name not in missing_attrs:
            setattr(mod, name, func)
    return mod
