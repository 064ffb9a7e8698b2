# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reads of gpuops.dlserver.gpu_validate beside the probe's facts: NVML error counters, the
kernel module version, system memory and CPUs, the dataset path's block device, NIC speeds, the
InfiniBand ports, and
the parsers of iperf3's JSON and Fabric Manager's version line. Reads never raise: what cannot be
read is None (the checks then say "not reported"). ``run_command(argv) -> (rc, out, err)``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvml import import_pynvml
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.pci import nvml_bus_id
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.ib_perf import DEVICE_RE, port_entry

_FM_VERSION_RE = re.compile(r'version is\s*:\s*([0-9]+(?:\.[0-9]+){1,3})')

# nvml constants (nvml.h): NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC,
# NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS / _DOUBLE_BIT_ECC_ERROR
_UNCORRECTED, _VOLATILE = 1, 0
_RETIRE_CAUSES = (0, 1)


def _read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except (IOError, OSError, UnicodeDecodeError):
        return None


def _try(fn, *args):
    try:
        return fn(*args)
    except Exception:  # pylint: disable=broad-except  # a field the GPU/driver lacks: not reported
        return None


def nvml_counters(bus_ids, nvml_path):
    """``{bus_id: {ecc_volatile_uncorrected, row_remap_pending, row_remap_failure, retired_pages,
    retired_pages_pending}}``, and the reason when NVML did not answer."""
    pynvml, reason = import_pynvml(nvml_path)
    if pynvml is None:
        return {}, reason
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # pylint: disable=broad-except
        return {}, 'nvmlInit failed: %s' % exc
    out = {}
    try:
        for bus in bus_ids:
            handle = _try(pynvml.nvmlDeviceGetHandleByPciBusId, nvml_bus_id(bus))
            if handle is None:
                continue
            entry = {'ecc_volatile_uncorrected': _try(pynvml.nvmlDeviceGetTotalEccErrors, handle, _UNCORRECTED,
                                                      _VOLATILE)}
            remap = _try(pynvml.nvmlDeviceGetRemappedRows, handle)
            entry['row_remap_pending'] = bool(remap[2]) if remap else None
            entry['row_remap_failure'] = bool(remap[3]) if remap else None
            pages = [_try(pynvml.nvmlDeviceGetRetiredPages, handle, cause) for cause in _RETIRE_CAUSES]
            entry['retired_pages'] = None if None in pages else sum(len(p) for p in pages)
            pending = _try(pynvml.nvmlDeviceGetRetiredPagesPendingStatus, handle)
            entry['retired_pages_pending'] = bool(pending) if pending is not None else None
            out[bus] = entry
    finally:
        _try(pynvml.nvmlShutdown)
    return out, None


def kernel_module_version(sysfs_root):
    return _read(os.path.join(sysfs_root, 'module', 'nvidia', 'version')) or None


def memory_mib(proc='/proc'):
    text = _read(os.path.join(proc, 'meminfo')) or ''
    match = re.search(r'^MemTotal:\s+(\d+) kB', text, re.M)
    return int(match.group(1)) // 1024 if match else None


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def dataset_device(path, sys_root='/sys'):
    """``{path, device, kind}``: kind nvme, ssd, hdd, md, dm, virtual (overlay, tmpfs, NFS...)."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError as exc:
        return {'path': path, 'error': 'cannot stat: %s' % exc.strerror}
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    link = os.path.join(sys_root, 'dev', 'block', '%d:%d' % (major, minor))
    if not os.path.exists(link):
        return {'path': path, 'device': '%d:%d' % (major, minor),
                'kind': 'virtual (overlay, tmpfs or network filesystem)'}
    real = os.path.realpath(link)
    name = os.path.basename(real)
    if os.path.exists(os.path.join(real, 'partition')):
        real = os.path.dirname(real)
    disk = os.path.basename(real)
    if disk.startswith('nvme'):
        kind = 'nvme'
    elif disk.startswith('md'):
        kind = 'md'
    elif disk.startswith('dm-'):
        kind = 'dm'
    else:
        rotational = _read(os.path.join(real, 'queue', 'rotational'))
        kind = 'hdd' if rotational == '1' else ('ssd' if rotational == '0' else 'unknown')
    return {'path': path, 'device': name, 'kind': kind}


def nics(sys_root='/sys'):
    """Physical network interfaces (with a device link) and their link speed in Mb/s."""
    base = os.path.join(sys_root, 'class', 'net')
    out = []
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return out
    for name in names:
        if not os.path.exists(os.path.join(base, name, 'device')):
            continue
        speed = _read(os.path.join(base, name, 'speed'))
        kind = 'infiniband' if _read(os.path.join(base, name, 'type')) == '32' else 'ethernet'
        try:
            mbps = int(speed) if speed is not None and int(speed) > 0 else None
        except ValueError:
            mbps = None
        out.append({'name': name, 'speed_mbps': mbps, 'kind': kind})
    return out


def ib_ports(sys_root='/sys', devices=()):
    """Every port of the RDMA devices under ``<sys_root>/class/infiniband`` and of ``devices`` (the
    probe's ``ib_devices`` of its NICs), as ``ib_perf.port_entry``; a device without a readable port
    is listed with ``port: None``."""
    base = os.path.join(sys_root, 'class', 'infiniband')
    try:
        names = set(os.listdir(base))
    except OSError:
        names = set()
    names.update(devices or ())
    out = []
    for device in sorted(names):
        if not DEVICE_RE.fullmatch(str(device)):
            continue
        try:
            numbers = [n for n in os.listdir(os.path.join(base, device, 'ports')) if n.isdigit()]
        except OSError:
            numbers = []
        if not numbers:
            out.append({'device': device, 'port': None, 'active': False, 'rate_gbps': None, 'link_layer': None})
        for number in sorted(numbers, key=int):
            where = os.path.join(base, device, 'ports', number)
            out.append(port_entry(device, int(number), _read(os.path.join(where, 'state')),
                                  _read(os.path.join(where, 'rate')), _read(os.path.join(where, 'link_layer'))))
    return out


_ENV_LINE_RE = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)=([^\n]*)')


def env_file(path):
    """KEY=VALUE lines of an EnvironmentFile (python_stack's NCCL settings); {} when absent."""
    text = _read(path) if path else None
    out = {}
    for line in (text or '').splitlines():
        match = _ENV_LINE_RE.fullmatch(line.strip())
        if match:
            out[match.group(1)] = match.group(2)
    return out


def fabric_manager_version(text):
    match = _FM_VERSION_RE.search(text or '')
    return match.group(1) if match else None


def iperf3_result(rc, out, err):
    """``{gbps}`` from ``iperf3 -J`` output, or ``{error}``."""
    try:
        data = json.loads(out or '{}')
    except ValueError:
        data = {}
    if data.get('error') or rc != 0:
        return {'error': data.get('error') or (err or out or 'rc %s' % rc).strip()[:300]}
    try:
        bits = data['end']['sum_received']['bits_per_second']
    except (KeyError, TypeError):
        return {'error': 'iperf3 printed no sum_received'}
    return {'gbps': round(bits / 1e9, 3)}
