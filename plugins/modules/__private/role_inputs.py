#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: role_inputs
short_description: Convert a role's variables once, by its argument specification
version_added: 0.1.0
description:
  - Reads the C(meta/argument_specs.yml) of a role of this collection and returns every variable it
    declares, converted to its declared type, as RV(inputs) (keys without the role prefix, so
    C(os_tuning_reboot) becomes C(inputs.reboot)). The collection's roles register the result and set
    it as the run-only host variable C(__<role>) (C(roles/common/tasks/preflight.yml); never a fact).
  - Ansible validates role variables against the argument spec but hands the role the raw values, so
    C(-e os_tuning_reboot=false) would stay the string C("false"). After this action the role reads only
    the converted values, so C(-e VAR=false) is false for every boolean, C(-e VAR=8) an integer for every
    integer.
  - A string, number or mapping where a list is expected, and anything but a mapping where a dict is
    expected, fails naming the variable (a string is never split into a list). C(null) is accepted only
    where the default is C(null) or the type is C(raw). Choices are checked after conversion.
  - For C(nvidia_driver) it also runs the checks the argument spec cannot make (URLs, a version
    against the branch, ranges, module and package names), on the controller, so that they cost
    no round trip to the host of their own.
  - Runs on the controller and changes nothing on the host (with O(gather), it reads facts from it
    once; those are real facts, as the setup module's).
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.flow
  - gpuops.dlserver.attributes.action_plugin
options:
  role:
    description: Name of a role of this collection (C(os_tuning), C(nvidia_driver), ...).
    type: str
    required: true
  entry_point:
    description: Entry point of the role's argument spec.
    type: str
    default: main
  platforms:
    description:
      - The platforms the role supports, a mapping of each distribution (C(ansible_distribution)) to the
        list of its versions (the major version, Ubuntu's full version). Given, the action first fails on
        a host whose C(ansible_facts) name another platform, with a message that lists the supported
        ones; nothing is converted then.
      - The collection's roles pass C(__common_supported_platforms) (C(roles/common/vars/main.yml)).
    type: dict
    version_added: 0.2.0
  gather:
    description:
      - Gather first, where this run has not yet, the facts the roles decide on (the setup module's
        C(virtual) subset, which brings C(distribution), C(kernel) and C(python) with it, one round
        trip to the host, only when one of them is missing), and return RV(in_container) (the
        inventory's C(gpuops_in_container) where it sets one, else whether the host is a container
        guest of one of O(container_types)).
      - The collection's roles gather in this step, so that a role run on its own has its facts and a
        role in C(playbooks/site.yml) evaluates no task for them.
    type: bool
    default: false
    version_added: 0.2.0
  container_types:
    description:
      - The C(ansible_facts.virtualization_type) values of a container guest (with
        C(virtualization_role) C(guest)), for O(gather).
      - The collection's roles pass C(__common_container_types) (C(roles/common/vars/main.yml)).
    type: list
    elements: str
    version_added: 0.2.0
  platform_vars:
    description:
      - Also return RV(platform_files), the role's per-platform variable files that apply to the host -
        C(vars/<os_family>.yml), then the first present of C(vars/<distribution>_<major>.yml) and
        C(vars/<distribution>.yml), each file once, in the order C(include_vars) loads them (a later
        file's top-level keys replace an earlier one's).
    type: bool
    default: false
    version_added: 0.2.0
notes:
  - Every role of the collection calls it in its preflight; a role of your own can use it for its own
    argument spec only if the role lives in this collection.
"""

EXAMPLES = r"""
- name: Take the role's inputs, converted by its argument spec, under a name of your own
  gpuops.dlserver.__private.role_inputs:
    role: os_tuning
  register: os_tuning_inputs

- name: Use them
  ansible.builtin.debug:
    msg: "reboot allowed: {{ os_tuning_inputs.inputs.reboot }}"
"""

RETURN = r"""
inputs:
  description: Every variable of the entry point, converted (keys without the role prefix).
  returned: success
  type: dict
  sample: {"reboot": false, "kernel_cmdline": ["iommu=pt"]}
in_container:
  description: Whether the host is a container guest (with O(gather)).
  returned: with O(gather)
  type: bool
platform_files:
  description: The role's platform variable files for the host, absolute paths, in load order.
  returned: with O(platform_vars)
  type: list
  elements: str
plan_current:
  description:
    - Whether this run's plan (C(gpuops_plan)) stands for the role - made in this run
      (C(__common_plan_made_from)), from this run's latest probe (C(__common_probe)) and from the inputs
      the role sees now; C(roles/common/tasks/gpu.yml) plans again where it does not.
  returned: entry point C(main)
  type: bool
secret:
  description: Whether the entry point declares a secret (C(no_log)); the result is then kept out of the output.
  returned: success
  type: bool
plan_reason:
  description: Why RV(plan_current) is what it is.
  returned: entry point C(main)
  type: str
ansible_facts:
  description: The facts O(gather) gathered (the setup module's own), where this run lacked them.
  returned: with O(gather), when facts were missing
  type: dict
problems:
  description: One message per variable of the wrong shape, each naming the variable.
  returned: failure
  type: list
  elements: str
  sample: ["os_tuning_kernel_cmdline must be a list, got a string ('iommu=pt')"]
notices:
  description:
    - What the checks accepted but the run should hear, each naming the variable (also printed
      as warnings) - an inventory group that matches no host (empty, or absent at its default
      name), a GPU clock whose maximum the probe did not read.
  returned: when there is one
  type: list
  elements: str
  sample: ["volcano_node_group: group 'gpu_nodes' is in the inventory but has no host, so it matches no host and
           configures nothing until a host joins it"]
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(
        argument_spec=dict(role=dict(type='str', required=True), entry_point=dict(type='str', default='main'),
                           platforms=dict(type='dict'), gather=dict(type='bool', default=False),
                           container_types=dict(type='list', elements='str'),
                           platform_vars=dict(type='bool', default=False)),
        supports_check_mode=True,
    )
    module.fail_json(msg='gpuops.dlserver.__private.role_inputs runs on the controller as an action plugin; '
                         'it was called as a module on the host')


if __name__ == '__main__':
    main()
