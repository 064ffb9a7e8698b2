#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: host_plan
short_description: Check every role's inputs and compute the host's hardware plan, once per run
version_added: 0.2.0
description:
  - Converts the variables of EVERY role of the collection by its C(meta/argument_specs.yml) (the same
    conversion as C(gpuops.dlserver.__private.role_inputs)) and fails, naming each bad variable, when any of them
    has the wrong shape or value - on every host, whether or not the role will run there.
  - Before that it names every variable with a public role's prefix (C(nvidia_driver_), C(os_tuning_), ...)
    that the role's argument spec does not declare (a typo such as C(nvidia_driver_brnach)), with the
    closest declared name; a warning, or - with C(gpuops_unknown_variables=error) - a failure before any
    change (C(ignore) says nothing). The longest role prefix wins; C(gpuops_*) names and the roles'
    published facts (C(<role>_status), C(gpu_validate_report)) are not reported.
  - Then computes the host's hardware plan from the probe's facts and the roles' TYPED inputs
    (C(nvidia_driver_force), C(nvidia_driver_kernel_modules), C(nvidia_driver_branch),
    C(nvidia_driver_version), C(nvidia_driver_upgrade), C(nvidia_driver_mig_mode),
    C(nvidia_driver_persistence), C(dcgm_exporter_profiling)), with the rules of the
    C(gpuops.dlserver.gpu_plan) filter (C(docs/hardware-gating.md)).
  - The plan also publishes what other hosts read of this one - the exporters' listen addresses
    (C(exporters.node_exporter.listen_address), C(exporters.dcgm_exporter.listen_address)) and
    C(host.scrape_address) (C(prometheus_target_address), else C(ansible_host), else the inventory name).
  - The collection calls it from C(roles/common/tasks/plan.yml) with the plan of the run, which it
    returns as it is where it was made in this run, from this probe and from the same inputs.
    C(plan.yml) sets a plan it computes as the run-only host variables C(gpuops_plan) and
    C(__common_plan_made_from) (C(set_fact), never written to a fact cache;
    C(roles/common/tasks/plan_record.yml) writes it to C(/etc/gpuops/plan.json)); every role reads
    that plan and never computes its own.
  - Fails, before anything else, where the run's extra variables (C(-e)) define a name the collection
    computes (C(gpuops_plan), C(__common_probe), C(__<role>), ...) - an extra variable would override
    the value computed in the run.
  - Runs on the controller and changes nothing on the host.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - gpuops.dlserver.attributes.action_plugin
options:
  probe:
    description:
      - The registered result of M(gpuops.dlserver.gpu_facts) in this run (C(__common_probe)); the plan
        is made from its C(ansible_facts.gpuops_gpu), never from a fact of a cache or an earlier run.
    type: dict
    required: true
  in_container:
    description: The host is a container guest (C(gpuops_in_container)).
    type: bool
    default: false
  plan:
    description:
      - The plan computed earlier in the run (C(gpuops_plan)). When O(made_from) says it was made in
        this run from the same probe, and it was computed from the same typed inputs and platform,
        it is returned as it is (C(computed=false)) - the plan is computed once per run, and again
        only after a probe that differs or for a role that sees other inputs (role parameters).
    type: dict
  made_from:
    description: What O(plan) was made from (C(__common_plan_made_from), RV(made_from) of the call that made it).
    type: dict
  strict:
    description: Fail when the plan has errors (conflicts between the inputs and the hardware).
    type: bool
    default: true
  settings_checks:
    description:
      - Also return, per role, what the registry of input checks found in its inputs (the checks that
        need neither the host nor the network - a repository key over plain http without a checksum,
        a repository URL, paths, thresholds - which this action runs on every host anyway,
        C(plugins/module_utils/core/input_checks.py)) as RV(settings)
        (C(plugins/module_utils/plan/settings_checks.py) runs no check of its own). A problem still
        fails the task, naming the variable. The read-only C(gpuops.dlserver.probe) playbook sets it,
        so that its report says which checks each role's settings passed.
    type: bool
    default: false
seealso:
  - module: gpuops.dlserver.gpu_facts
"""

EXAMPLES = r"""
- name: Probe the GPUs
  gpuops.dlserver.gpu_facts:
  register: probe

- name: Check every role's inputs and plan this host
  gpuops.dlserver.host_plan:
    probe: "{{ probe }}"
    in_container: false
  register: host_plan

- name: Gate on it
  ansible.builtin.debug:
    msg: "{{ host_plan.plan.roles.nvidia_driver.reason }}"
"""

RETURN = r"""
plan:
  description:
    - The host's plan (the shape the C(gpuops.dlserver.gpu_plan) filter returns; C(docs/hardware-gating.md)),
      plus C(exporters.<name>.listen_address), C(host.scrape_address) and C(bmc) (the host's C(bmc_address), its
      C(ipmi_exporter_module), the modules its ipmi_exporter serves and its listen address; never a credential).
      C(driver.branch.from) says
      where the branch came from - C(nvidia_driver_branch), C(nvidia_driver_version), C(installed),
      C(newest_supported) (the newest branch every GPU supports that the source carries, by the table of
      C(plugins/module_utils/packages/driver_branches.py) for the host's C(ansible_facts.distribution),
      C(distribution_major_version) and C(nvidia_driver_source), so the branch is decided in one pass),
      C(source) (left open, the table having no row for the platform or source) or C(none).
  returned: success, and on a conflict
  type: dict
computed:
  description: Whether the plan was computed now (false - O(plan) was returned, made from the same inputs).
  returned: success
  type: bool
settings:
  description:
    - Per role, C(checked) (true, every role has registered checks), C(problems) (each naming its
      variable; empty, since a problem fails the task) and C(reason) (the registry that checked it).
  returned: success (null unless O(settings_checks) is true)
  type: dict
made_from:
  description:
    - What the plan was made from - C(run) (this run's identity), C(probe) (a digest of the probe's GPU
      facts) and C(inputs) (a digest of each role's typed inputs). C(gpuops.dlserver.__private.role_inputs) compares
      it with what a role sees (its C(plan_current)).
  returned: success
  type: dict
problems:
  description: One message per bad variable of any role, each naming the variable.
  returned: failure on bad input
  type: list
  elements: str
notices:
  description:
    - What the checks accepted but could not check, each naming the variable (also printed as
      warnings) - a requested GPU clock whose maximum this run's probe did not read (said as not
      checked, maximum unknown), the rolling upgrade's Kubernetes group when it matches no host.
  returned: when there is one
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(probe=dict(type='dict', required=True), in_container=dict(type='bool', default=False),
                           plan=dict(type='dict'), made_from=dict(type='dict'),
                           strict=dict(type='bool', default=True),
                           settings_checks=dict(type='bool', default=False)),
        supports_check_mode=True,
    )
    module.fail_json(msg='gpuops.dlserver.host_plan runs on the controller as an action plugin; '
                         'it was called as a module on the host')


if __name__ == '__main__':
    main()
