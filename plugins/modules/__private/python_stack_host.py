#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: python_stack_host
short_description: Plan, build atomically and verify the Python environments of gpuops.dlserver.python_stack
version_added: 0.1.0
description:
  - O(action=plan) fills in the declared environments' defaults (the registry of input checks,
    C(plugins/module_utils/core/input_checks.py), checked them before the role calls the module),
    resolves each for this host (the PyTorch wheel index matched to the driver's CUDA version,
    C(tensorflow[and-cuda]) where the driver runs that release's extra (CUDA 12, or 11.8 for 2.14), DALI's CUDA flavour), computes each environment's spec
    hash, reads what is on the host and decides per environment C(none), C(build), C(swap), C(remove),
    C(leave) or C(adopt). It also renders the framework environment defaults. What this host cannot
    build (a Python it lacks, a wheel without kernels for its GPUs) fails here, naming the environment
    and the cause, before anything changes. Changes nothing.
  - "O(action=plan) also reads the converged fast path: whether the distribution packages (O(os_packages)),
    the role's directories, uv, conda, the profile script and the environment file already are what the
    role writes, whether each environment's Jupyter kernel is current, and which environments the last
    status file records as verified in this very build (kept: not verified again). C(converged) is true
    when nothing would change (C(plugins/module_utils/python_env/stack_fast_path.py))."
  - O(action=converge) converges one planned environment. A build goes into
    C(<prefix>/.<name>-<hash>) beside the current one, its imports are checked with the
    environment's own Python, the role's marker file is written, and only then the link
    C(<prefix>/<name>) is moved to it (a rename, atomic). A failed build is removed and the
    previous environment stays where the link points, untouched.
  - O(action=verify) runs the verification script inside one environment (versions, CUDA
    availability and devices, one mixed-precision PyTorch step, one XLA-compiled TensorFlow
    step) and fails when the result is not what the host should give.
  - Environments without the role's marker file (C(.gpuops-python-stack.json)) are planned
    C(leave) - reported with their path and why, never changed or removed - unless the inputs'
    C(adopt) (python_stack_adopt) is true; then C(adopt) builds the declared environment beside
    it and swaps the link in, keeping a directory or file found there as C(<prefix>/.<name>-adopted)
    (the result's C(adopted) says where the old environment is). Plan/adopt.py decides.
  - O(action=write) renders, as O(action=plan) does, the files named in O(files) and writes them
    here (C(plugins/module_utils/core/files.py) - atomic, mode 0644, owner root, a diff under
    C(--diff), nothing written in check mode) - their text never travels through the controller.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details: O(action=write) returns the before and after of each file that changes.
  platform:
    platforms: posix
options:
  action:
    description: What to do.
    type: str
    choices: [plan, converge, verify, write]
    required: true
  files:
    description:
      - (write) The files to write - C(profile) (O(inputs) C(profile_file)), C(env_file)
        (O(inputs) C(env_file)), C(uv_requirement) (C(<home>/uv-requirements.txt)), C(condarc)
        (C(<conda_prefix>/.condarc)).
    type: list
    elements: str
    choices: [profile, env_file, uv_requirement, condarc]
    default: []
  inputs:
    description:
      - The role's variables converted by its argument spec (C(__python_stack)), keys without the
        C(python_stack_) prefix. Required with O(action=plan) and O(action=write).
    type: dict
  gpu:
    description: The probe's facts (C(gpuops_gpu)); the driver's CUDA version and the NICs are read from it.
    type: dict
    default: {}
  locks:
    description:
      - (plan) The text of each environment's C(lock_file), by environment name (the role reads the
        files on the controller).
    type: dict
    default: {}
  environment:
    description: One environment as O(action=plan) returned it (an item of its C(environments)).
    type: dict
  tools:
    description:
      - Installer paths, C(uv) (empty for pip), C(conda) (the conda executable, conda backend).
    type: dict
    default: {}
  expect_gpu:
    description: The host has GPUs and a loaded driver, so CUDA must be available inside the environment.
    type: bool
    default: false
  keep_builds:
    description:
      - How many earlier builds of an environment to keep beside the current one (rollback); required with
        O(action=converge) - the role passes C(python_stack_keep_builds), whose default its argument spec states.
    type: int
  kernel_dir:
    description:
      - Where Jupyter kernels are written (one directory per environment that asks for one); required with
        O(action=converge) - the role passes C(python_stack_kernel_dir), whose default its argument spec states.
    type: path
  cache_dir:
    description: Package cache of the installers (C(UV_CACHE_DIR), C(PIP_CACHE_DIR)); empty for none.
    type: path
    default: ""
  home:
    description: (plan) The role's own directory (uv's requirement and install, the conda installer).
    type: path
    default: /opt/gpuops/python_stack
  os_packages:
    description: (plan) The distribution packages of the venv backend, whose installation the fast path reads.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Read python_stack's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: python_stack
  register: python_stack_inputs

- name: Plan the environments
  gpuops.dlserver.__private.python_stack_host:
    action: plan
    inputs: "{{ python_stack_inputs.inputs }}"
    gpu: "{{ ansible_facts.gpuops_gpu }}"
  register: python_plan

- name: Converge each environment atomically
  gpuops.dlserver.__private.python_stack_host:
    action: converge
    environment: "{{ item }}"
    tools: {uv: /opt/gpuops/uv/bin/uv}
  loop: "{{ python_plan.environments }}"
"""

RETURN = r"""
written:
  description: (write) Each file named in O(files) (C(name), C(dest)) and whether this run changed it.
  returned: action=write
  type: list
  elements: dict
environments:
  description: (plan) Each environment resolved for this host, with C(action), C(reason), C(hash), C(link), C(target), C(decisions).
  returned: action=plan
  type: list
  elements: dict
env_defaults:
  description: (plan) The framework environment variables, C({name, value, reason}).
  returned: action=plan
  type: list
  elements: dict
profile:
  description: (plan) Text of the C(/etc/profile.d) script.
  returned: action=plan
  type: str
uv_index_args:
  description: (plan) pip's index arguments for installing uv (C(--trusted-host) for a plain-HTTP index).
  returned: action=plan
  type: list
  elements: str
condarc:
  description: (plan) Text of the system-wide C(.condarc) (conda backend).
  returned: action=plan
  type: str
env_file:
  description: (plan) Text of the C(KEY=VALUE) environment file.
  returned: action=plan
  type: str
uv_requirement:
  description: (plan) Text of the pinned, hash-checked requirement uv is installed from.
  returned: action=plan
  type: str
expect_gpu:
  description: (plan) The host has GPUs and a loaded driver, so verify expects CUDA.
  returned: action=plan
  type: bool
current:
  description: (plan) Per install and configure step, whether the host already is what it writes (null where not needed).
  returned: action=plan
  type: dict
converged:
  description: (plan) Nothing would change and nothing needs verifying; the role skips its steps.
  returned: action=plan
  type: bool
drift:
  description: (plan) What is not converged, in step order.
  returned: action=plan
  type: list
  elements: str
installer:
  description: (converge) C(uv), C(pip) or C(conda), what built the environment.
  returned: action=converge
  type: str
seconds:
  description: (converge) Seconds the build took (0 when nothing was built).
  returned: action=converge
  type: float
adopted:
  description: (converge, action C(adopt)) Where the environment the role took over is now (C(<prefix>/.<name>-adopted), or a link's old target).
  returned: action=converge and the environment was adopted
  type: str
verification:
  description: (verify) What the verification script saw, plus C(ok) and C(summary).
  returned: action=verify
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import stack_host


def main():
    module = AnsibleModule(
        argument_spec=dict(
            action=dict(type='str', required=True, choices=['plan', 'converge', 'verify', 'write']),
            files=dict(type='list', elements='str', default=[],
                       choices=['profile', 'env_file', 'uv_requirement', 'condarc']),
            inputs=dict(type='dict'),
            gpu=dict(type='dict', default={}),
            locks=dict(type='dict', default={}),
            environment=dict(type='dict'),
            tools=dict(type='dict', default={}),
            expect_gpu=dict(type='bool', default=False),
            keep_builds=dict(type='int'),
            kernel_dir=dict(type='path'),
            cache_dir=dict(type='path', default=''),
            home=dict(type='path', default='/opt/gpuops/python_stack'),
            os_packages=dict(type='list', elements='str', default=[]),
        ),
        required_if=[('action', 'converge', ['environment', 'keep_builds', 'kernel_dir']),
                     ('action', 'verify', ['environment']),
                     ('action', 'plan', ['inputs']),
                     ('action', 'write', ['inputs'])],
        supports_check_mode=True,
    )
    stack_host.ACTIONS[module.params['action']](module)


if __name__ == '__main__':
    main()
