# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One plan per host: the plan's options from every role's TYPED inputs, and what the plan
publishes for other hosts (the exporters' listen addresses and the scrape address).

``inputs`` maps a role to its inputs as ``core/role_inputs.convert_inputs`` returns them
(``{'nvidia_driver': {'force': False, 'branch': None, ...}, 'dcgm_exporter': {...}}``), so the
plan never reads a raw variable and every role sees the same answer (action
``gpuops.dlserver.host_plan``).

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.ipmi_exporter import DEVICE as IPMI_DEVICE, local_mode
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.gpu_plan import build_plan
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.options import validate_plan_options

# plan option -> (role, key of the role's typed inputs)
PLAN_INPUTS = {
    'driver_force': ('nvidia_driver', 'force'),
    'kernel_modules': ('nvidia_driver', 'kernel_modules'),
    'driver_branch': ('nvidia_driver', 'branch'),
    'driver_version': ('nvidia_driver', 'version'),
    'driver_upgrade': ('nvidia_driver', 'upgrade'),
    'driver_source': ('nvidia_driver', 'source'),
    'driver_adopt': ('nvidia_driver', 'adopt'),
    'toolkit_adopt': ('nvidia_container_toolkit', 'adopt'),
    'dcgm_adopt': ('dcgm_exporter', 'adopt'),
    'mig': ('nvidia_driver', 'mig_mode'),
    'persistence': ('nvidia_driver', 'persistence'),
    'dcgm_profiling': ('dcgm_exporter', 'profiling'),
    'cuda_without_gpu': ('cuda_toolkit', 'without_gpu'),
    'cuda_versions': ('cuda_toolkit', 'versions'),
}

# What other hosts read of this one (the prometheus role): exporter -> (role, typed input key).
PUBLISHED = {
    'node_exporter': ('node_exporter', 'listen_address'),
    'dcgm_exporter': ('dcgm_exporter', 'listen_address'),
}


def plan_options(inputs, in_container, platform=None):
    """The options of build_plan() from the roles' typed inputs (an empty string means unset) and
    the host's ``platform`` (``{distribution, major}`` of ansible_facts: the driver branches its
    source carries come from packages/driver_branches.py, so the plan decides the branch in one pass)."""
    inputs = inputs or {}
    platform = platform or {}
    options = {'in_container': in_container, 'distribution': platform.get('distribution') or None,
               'distribution_major': platform.get('major') or None}
    for option, (role, key) in PLAN_INPUTS.items():
        value = (inputs.get(role) or {}).get(key)
        options[option] = None if value == '' else value
    return options


def same_inputs(plan, inputs, in_container, platform=None):
    """Whether ``plan`` was computed from these typed inputs and platform (its options).

    The plan is computed once per run; it is computed again only when a role sees other inputs
    than the plan was made from (role parameters, or a test harness feeding one role several
    inputs in one run).
    """
    if not isinstance(plan, dict) or not isinstance(plan.get('options'), dict):
        return False
    wanted = validate_plan_options(plan_options(inputs, in_container, platform))
    have = dict(plan['options'])
    for key in ('source_branches', 'strict'):
        wanted.pop(key, None)
        have.pop(key, None)
    return wanted == have


def build_host_plan(facts, inputs, in_container, platform=None, scrape_address=None, bmc=None):
    """The host's plan from its probe facts, every role's typed inputs and its ``platform``
    (``{distribution, major}``, from ansible_facts: distribution, distribution_major_version).

    Adds what other hosts read of this one: ``exporters.<name>.listen_address``,
    ``host.scrape_address`` (where Prometheus reaches the host) and ``bmc`` (``bmc`` is common's
    entry point ``bmc`` converted: the host's ``bmc_address``; with ipmi_exporter's typed inputs, the
    module that holds its credentials and, where the host serves BMCs, its modules).
    ValueError on bad options, as build_plan().
    """
    plan = build_plan(facts, plan_options(inputs, in_container, platform))
    for exporter, (role, key) in PUBLISHED.items():
        plan['exporters'][exporter]['listen_address'] = ((inputs or {}).get(role) or {}).get(key)
    plan['host']['scrape_address'] = scrape_address
    plan['bmc'] = published_bmc(bmc, (inputs or {}).get('ipmi_exporter'), (facts or {}).get('bmc'))
    return plan


def published_bmc(bmc, ipmi, probed=None):
    """What the plan publishes of the host's BMC for the prometheus role and ipmi_exporter: ``address``
    (``bmc_address``, None where unset), ``module`` (``ipmi_exporter_module``: the credential set of the
    exporter that scrapes it), ``serves`` (the modules this host's ipmi_exporter serves remotely; empty
    where it does not), ``listen_address`` (``ipmi_exporter_listen_address``), ``inband_device`` (the
    probe's in-band BMC device, ``probed``: ``gpuops_gpu.bmc``; None where it found none or did not
    look), ``local`` and ``local_reason`` (whether ipmi_exporter serves this host's BMC in-band at
    ``/metrics``: monitoring/ipmi_exporter.py local_mode). Never a user name or a password."""
    bmc = bmc or {}
    ipmi = ipmi or {}
    address = bmc.get('bmc_address') or None
    remote = bool(ipmi.get('remote'))
    device = (probed or {}).get('inband_device') if isinstance(probed, dict) else None
    local, local_reason = local_mode(ipmi.get('local') or 'auto', device == IPMI_DEVICE)
    return {'address': address, 'module': ipmi.get('module') or 'default',
            'serves': sorted(str(m) for m in (ipmi.get('modules') or {})) if remote else [],
            'listen_address': ipmi.get('listen_address'), 'inband_device': device,
            'local': local, 'local_reason': local_reason}
