# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.dcgm_exporter_config.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: dcgm_exporter_config
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: Decide what the dcgm_exporter role deploys on a host
description:
- Takes the typed variables of the C(gpuops.dlserver.dcgm_exporter) role (the fact C(__dcgm_exporter))
  and the host's hardware plan (C(gpuops_plan), from the filter C(gpuops.dlserver.gpu_plan)) and returns
  the counters file, the exporter's command line, the DCGM packages and the status record.
- Every DCGM field name is checked against the collection's table of known fields; an unknown name fails,
  naming the variable it was listed in.
- Profiling fields (C(DCGM_FI_PROF_*)) are kept only where the plan says the GPUs support DCGM profiling;
  elsewhere each one is dropped with the plan's reason.
- On hosts with MIG-capable GPUs C(DCGM_FI_DEV_MIG_MODE) is exported; a device selection of whole GPUs
  (C(g)) where the plan enables MIG is an error.
- In host mode the exporter is pointed at the C(nvidia-dcgm) host engine (C(-r)); in container mode it
  runs with the GPUs passed in and C(SYS_ADMIN) only when profiling is on.
- The rules are in C(plugins/module_utils/monitoring/dcgm.py).
positional: _input, plan, gpu, platform, strict
options:
  _input:
    description: The role's variables without the C(dcgm_exporter_) prefix (the fact C(__dcgm_exporter)).
    type: dict
    required: true
  plan:
    description: The host's plan (C(gpuops_plan)).
    type: dict
    required: true
  gpu:
    description: The probe's facts (C(gpuops_gpu)); the driver version chooses the CUDA major of the DCGM
      packages when C(dcgm_exporter_cuda_major) is V(auto).
    type: dict
    default: {}
  platform:
    description: C(config_dir).
    type: dict
    default: {}
  strict:
    description: Fail on bad input (the default); V(false) returns the errors in C(errors) instead.
    type: bool
    default: true
"""

EXAMPLES = r"""
# gpuops_gpu and gpuops_plan come from gpuops.dlserver.gpu_facts and gpuops.dlserver.host_plan
- name: Read dcgm_exporter's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: dcgm_exporter
  register: dcgm_inputs

- name: Decide the counters, command line and packages
  ansible.builtin.set_fact:
    dcgm_config: >-
      {{ dcgm_inputs.inputs | gpuops.dlserver.__private.dcgm_exporter_config(gpuops_plan, gpuops_gpu,
                                                            {'config_dir': '/etc/dcgm-exporter'}) }}

- name: The metrics this host will serve
  ansible.builtin.debug:
    msg: "{{ dcgm_config.metric_names }}"
"""

RETURN = r"""
_value:
  description: The decisions.
  type: dict
  contains:
    ok:
      description: True when C(errors) is empty.
      type: bool
    errors:
      description: Each with C(variable) and C(message) (naming the variable).
      type: list
      elements: dict
    run:
      description: Whether the exporter runs on this host (the plan's C(roles.dcgm_exporter.run)), with
        C(reason).
      type: bool
    mode:
      description: V(host) or V(container).
      type: str
    profiling:
      description: C(value), C(reason), C(supported_gpus) from the plan.
      type: dict
    mig:
      description: C(capable_gpus) and C(reason).
      type: dict
    cuda_major:
      description: C(value) (V(11), V(12), V(13)) and C(reason).
      type: dict
    counters:
      description: The fields written to the counters file, each with C(name), C(type), C(help), C(source).
      type: list
      elements: dict
    dropped:
      description: Fields listed but not exported here, each with C(name), C(source) and C(reason).
      type: list
      elements: dict
    metric_names:
      description: The names of the fields exported (the metric names dcgm-exporter serves).
      type: list
      elements: str
    csv_path:
      description: Path of the counters file on the host.
      type: str
    csv:
      description: Content of the counters file.
      type: str
    exec_start:
      description: The exporter's command line (host mode) or the container engine's (container mode),
        as a list.
      type: list
      elements: str
    packages:
      description: Packages to install (host mode).
      type: list
      elements: str
    packages_missing:
      description:
        - The packages of C(packages) the host lacks, from the probe's read of the package state
          (C(gpuops_gpu.components.dcgm_exporter.packages)); all of them where the probe did not read it.
          Empty on a converged host, which then skips apt.
      type: list
      elements: str
    hostengine:
      description: C(service), C(address), C(reason) (host mode), else null.
      type: dict
    repository:
      description:
        - C(manage), C(sources_file), C(key_path) (host mode), else null. The repository URL and key are
          the collection's C(gpuops_cuda_repo) (C(roles/common/tasks/cuda_repo.yml)).
      type: dict
    container:
      description: C(image), C(argv), C(stop), C(capabilities), C(capabilities_reason) (container mode),
        else null.
      type: dict
    status:
      description: The record the role writes to its status file.
      type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.dcgm import decide
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain


def dcgm_exporter_config(inputs, plan, gpu=None, platform=None, strict=True):
    """Return the dcgm_exporter decisions for ``inputs`` (the role's typed variables) and ``plan``."""
    if not isinstance(inputs, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.dcgm_exporter_config: the inputs must be a dictionary '
                                 '(the fact __dcgm_exporter), got %s' % type(inputs).__name__)
    if not isinstance(plan, dict):
        raise AnsibleFilterError('gpuops.dlserver.__private.dcgm_exporter_config: the plan must be a dictionary '
                                 '(gpuops_plan), got %s' % type(plan).__name__)
    result = decide(plain(inputs), plain(plan), plain(gpu) or {}, plain(platform) or {})
    if result['errors'] and strict:
        raise AnsibleFilterError('gpuops.dlserver.__private.dcgm_exporter_config: %s'
                                 % '; '.join(e['message'] for e in result['errors']))
    return result


class FilterModule(object):
    """gpuops.dlserver.__private.dcgm_exporter_config."""

    def filters(self):
        return {'dcgm_exporter_config': dcgm_exporter_config}
