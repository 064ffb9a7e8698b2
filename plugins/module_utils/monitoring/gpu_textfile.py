# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPU facts of a host in Prometheus' text format, for node_exporter's textfile collector.

``render(gpu, plan, reboot_marker, os_tuning_status)`` turns what the collection knows about a
host into metrics (``gpuops_*``), so that Prometheus sees them next to the exporters' own:

- what the probe saw on PCI (``gpuops_gpus_on_pci``, per GPU ``gpuops_gpu_info`` and its PCIe
  link) - the count the GPUMissing alert compares with DCGM's, and the evidence that stays when
  a GPU has fallen off the bus and no GPU exporter can see it;
- the driver (``gpuops_driver_loaded``, ``gpuops_driver_info``);
- the plan's decisions (``gpuops_plan_role_run{role}``, ``gpuops_plan_driver_required``);
- pending reboots (``/run/gpuops/reboot-required``, one line per role) and the kernel updates
  os_tuning's hold keeps back (its status file).

The output holds no timestamp, so an unchanged host gives unchanged bytes (the role writes it on
every run and reports a change only when a value changed). Pure functions; tested from
``tests/unit/plugins/module_utils/data/gpu_textfile_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

HELP = {
    'gpuops_gpus_on_pci': 'NVIDIA GPUs the gpuops probe found on PCI at the last run.',
    'gpuops_nvswitches_on_pci': 'NVIDIA NVSwitches the gpuops probe found on PCI at the last run.',
    'gpuops_gpu_info': 'One series per GPU on PCI (value 1), its identity in labels.',
    'gpuops_gpu_pcie_link_current_gen': 'PCIe generation the GPU link runs at.',
    'gpuops_gpu_pcie_link_max_gen': 'Highest PCIe generation the GPU link supports.',
    'gpuops_gpu_pcie_link_current_width': 'PCIe lanes the GPU link runs with.',
    'gpuops_gpu_pcie_link_max_width': 'PCIe lanes the GPU link supports.',
    'gpuops_gpu_pcie_link_degraded': '1 when the GPU link runs below its maximum speed or width (speed may be idle power saving).',
    'gpuops_gpu_pcie_link_width_degraded': '1 when the GPU link runs with fewer lanes than it supports (a seating, riser or slot fault).',
    'gpuops_probe_info': 'Depth the gpuops probe answered from (pci, nvml, nvidia-smi), value 1.',
    'gpuops_driver_loaded': '1 when the NVIDIA kernel driver was loaded at the last run.',
    'gpuops_driver_info': 'NVIDIA driver and CUDA versions at the last run, value 1.',
    'gpuops_plan_driver_required': '1 when the gpuops plan requires the NVIDIA driver on this host.',
    'gpuops_plan_role_run': '1 when the gpuops plan runs the role on this host, 0 when it skips it.',
    'gpuops_plan_warnings': 'Warnings of the gpuops plan for this host.',
    'gpuops_reboot_required': '1 while a reboot a gpuops role asked for is pending.',
    'gpuops_reboot_required_role': 'One series per role whose reboot is pending, value 1.',
    'gpuops_kernel_updates_held_back': 'Kernel package updates the os_tuning hold keeps back.',
    'gpuops_kernel_updates_held_back_checked': '1 when os_tuning could check for held-back kernel updates.',
}


def escape(value):
    """A label value in Prometheus' text format."""
    return str(value).replace('\\', '\\\\').replace('\n', '\\n').replace('"', '\\"')


def _labels(labels):
    if not labels:
        return ''
    return '{%s}' % ','.join('%s="%s"' % (k, escape(v)) for k, v in labels)


def _int(value):
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def parse_reboot_marker(text):
    """Roles (sorted) with a pending reboot, from the lines ``<role>: <reason>`` of the marker."""
    roles = set()
    for line in (text or '').splitlines():
        role, sep, _reason = line.partition(':')
        if sep and role.strip():
            roles.add(role.strip())
    return sorted(roles)


def held_back(os_tuning_status):
    """``(checked, total, security)`` of os_tuning's held-back kernel updates (None: no status)."""
    if not isinstance(os_tuning_status, dict):
        return None
    record = (os_tuning_status.get('package_holds') or {}).get('kernel_updates_held_back')
    if not isinstance(record, dict):
        return None
    updates = record.get('updates') or []
    security = record.get('security') or []
    return bool(record.get('checked')), len(updates), len(security)


def _link(gpu):
    pcie = gpu.get('pcie') if isinstance(gpu.get('pcie'), dict) else {}
    cur_gen, max_gen = _int(pcie.get('current_gen')), _int(pcie.get('max_gen'))
    cur_w, max_w = _int(pcie.get('current_width')), _int(pcie.get('max_width'))
    width = cur_w is not None and max_w is not None and cur_w < max_w
    degraded = pcie.get('degraded')
    if not isinstance(degraded, bool):
        degraded = width or (cur_gen is not None and max_gen is not None and cur_gen < max_gen)
    return {'current_gen': cur_gen, 'max_gen': max_gen, 'current_width': cur_w, 'max_width': max_w,
            'degraded': degraded, 'width_degraded': width}


def samples(gpu, plan, reboot_marker, os_tuning_status):
    """``[(metric, [(label, value)], number)]`` in output order."""
    gpu = gpu if isinstance(gpu, dict) else {}
    plan = plan if isinstance(plan, dict) else {}
    gpus = sorted([g for g in gpu.get('gpus') or [] if isinstance(g, dict)],
                  key=lambda g: str(g.get('pci_bus_id')))
    out = []
    count = _int(gpu.get('gpu_count'))
    out.append(('gpuops_gpus_on_pci', [], count if count is not None else len(gpus)))
    nvswitch = _int(gpu.get('nvswitch_count'))
    out.append(('gpuops_nvswitches_on_pci', [], nvswitch if nvswitch is not None else 0))
    for g in gpus:
        bus = [('pci_bus_id', g.get('pci_bus_id'))]
        numa = g.get('numa_node')
        out.append(('gpuops_gpu_info', bus + [
            ('pci_device_id', g.get('pci_device_id') or ''), ('architecture', g.get('architecture') or 'unknown'),
            ('name', g.get('name') or ''), ('numa_node', '' if numa is None else numa)], 1))
    for key in ('current_gen', 'max_gen', 'current_width', 'max_width'):
        for g in gpus:
            value = _link(g)[key]
            if value is not None:
                out.append(('gpuops_gpu_pcie_link_%s' % key, [('pci_bus_id', g.get('pci_bus_id'))], value))
    for key in ('degraded', 'width_degraded'):
        for g in gpus:
            out.append(('gpuops_gpu_pcie_link_%s' % key, [('pci_bus_id', g.get('pci_bus_id'))],
                        1 if _link(g)[key] else 0))
    out.append(('gpuops_probe_info', [('source', gpu.get('source') or 'unknown')], 1))
    driver = gpu.get('driver') if isinstance(gpu.get('driver'), dict) else {}
    out.append(('gpuops_driver_loaded', [], 1 if driver.get('loaded') is True else 0))
    if driver.get('version'):
        out.append(('gpuops_driver_info', [('version', driver['version']),
                                           ('cuda_version', driver.get('cuda_version') or '')], 1))
    if isinstance(plan.get('driver'), dict):
        out.append(('gpuops_plan_driver_required', [], 1 if plan['driver'].get('required') else 0))
    roles = plan.get('roles') if isinstance(plan.get('roles'), dict) else {}
    for role in sorted(roles):
        if isinstance(roles[role], dict):
            out.append(('gpuops_plan_role_run', [('role', role)], 1 if roles[role].get('run') else 0))
    if isinstance(plan.get('warnings'), list):
        out.append(('gpuops_plan_warnings', [], len(plan['warnings'])))
    pending = parse_reboot_marker(reboot_marker)
    out.append(('gpuops_reboot_required', [], 1 if pending else 0))
    for role in pending:
        out.append(('gpuops_reboot_required_role', [('role', role)], 1))
    held = held_back(os_tuning_status)
    if held is not None:
        checked, total, security = held
        out.append(('gpuops_kernel_updates_held_back_checked', [], 1 if checked else 0))
        out.append(('gpuops_kernel_updates_held_back', [('security', 'false')], total - security))
        out.append(('gpuops_kernel_updates_held_back', [('security', 'true')], security))
    return out


def render(gpu, plan, reboot_marker=None, os_tuning_status=None):
    """The textfile content (str, ends with a newline)."""
    lines = []
    seen = set()
    for metric, labels, value in samples(gpu, plan, reboot_marker, os_tuning_status):
        if metric not in seen:
            seen.add(metric)
            lines.append('# HELP %s %s' % (metric, HELP[metric]))
            lines.append('# TYPE %s gauge' % metric)
        lines.append('%s%s %s' % (metric, _labels(labels), value))
    return '\n'.join(lines) + '\n'
