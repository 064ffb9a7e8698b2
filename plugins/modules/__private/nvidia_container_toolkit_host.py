#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: nvidia_container_toolkit_host
short_description: Decide and validate the NVIDIA Container Toolkit and container engine configuration of a host
version_added: 0.1.0
description:
  - The decisions of the C(gpuops.dlserver.nvidia_container_toolkit) role, in one round trip per phase
    (logic in C(plugins/module_utils/engines/container_toolkit.py) and C(plugins/module_utils/engines/container_engines.py)).
  - The inputs, and a known-vulnerable toolkit version (the collection's table of NVIDIA security
    bulletins), are refused before the role calls the module, on the controller, by the registry of input
    checks (C(plugins/module_utils/core/input_checks.py)).
  - C(action=resolve) reads the engines the host has and their
    configuration files, computes the merged files and has each engine validate them
    (C(dockerd --validate --config-file), C(containerd --config <file> config dump)) before anything is written.
    Every failure names the file or variable to change; nothing on the host changes.
  - C(action=resolve) also reads whether the host already is what the role leaves (the converged fast path,
    RV(converged)) - the packages at the pinned version and held, the toolkit's C(config.toml) with the merged
    settings, the engines' files (the role's drop-ins by content, owner root, group root, mode 0644; the user's
    files by content), the CDI refresh units enabled
    (and active where the specification is generated) - and, where it is, makes the verification of
    C(action=verify) in the same round trip (RV(verify)). The role then runs none of its other tasks.
  - C(action=runtime) merges O(inputs) runtime settings into the toolkit's C(config.toml) (after the packages
    are installed) and writes it here when it changes (C(plugins/module_utils/core/files.py) - atomic, root
    0644, the old file kept beside it, a diff under C(--diff), nothing written in check mode).
  - C(action=write) merges the engines' files as C(action=resolve) does and writes those that change here
    (the same writer; the user's file kept beside it; Docker's file checked by C(dockerd --validate) before
    it replaces the old one). The merged text never travels through the controller.
  - C(action=verify) reads the installed toolkit versions (checked against the table again), the engines'
    merged configuration and whether a CDI specification exists. In check mode it reports what it found
    (RV(problems) and a warning) instead of failing - a dry run predicts, and on a converged host it
    reads what a run would read, so the role's status record is the same in both.
  - C(action=resolve) and C(action=verify) read only. Runs in check mode.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpuops.dlserver.attributes.host_files
options:
  action:
    description: What to do.
    type: str
    required: true
    choices: [resolve, runtime, verify, write]
  inputs:
    description: The role's converted inputs (the fact C(__nvidia_container_toolkit)).
    type: dict
    default: {}
  platform:
    description: Paths and names of this platform (the role's C(vars)).
    type: dict
    default: {}
  driver:
    description: Whether the NVIDIA driver is loaded and why not (from C(gpuops_gpu.driver) and the plan).
    type: dict
    default: {}
  in_container:
    description: Whether the host is a container guest.
    type: bool
    default: false
  engines:
    description: The configured engines whose live configuration C(action=verify) reads.
    type: list
    elements: str
    default: []
  pin:
    description: The pinned package version pattern (C(1.19.1-*)) C(action=verify) checks the packages against.
    type: str
    default: '*'
  repository:
    description:
      - With C(action=resolve), the toolkit's apt repository is checked in the same round trip - the
        options of C(gpuops.dlserver.__private.package_repository) (C(url), C(key), C(keyring_file), C(sources_file),
        C(preferences_file), C(header), C(description), C(pin.variable), C(pin.why), ...), checked by the
        same argument spec; the pin holds RV(packages) at the version of O(inputs) (C(1.19.1-*) for C(1.19.1)).
      - The answer is RV(repository); a bad option, a key that cannot be fetched or whose checksum or
        fingerprint does not match fails the module, naming the variable, before anything changes.
    type: dict
requirements:
  - Python 3.8 or newer on the host (TOML is read with tomllib on 3.11 and newer, else with the collection's reader)
notes:
  - The known-vulnerable versions are data in the collection
    (C(plugins/module_utils/engines/container_toolkit.py), C(VULNERABILITIES)), each row with its NVIDIA bulletin.
"""

EXAMPLES = r"""
- name: Read nvidia_container_toolkit's variables, converted by its argument spec
  gpuops.dlserver.__private.role_inputs:
    role: nvidia_container_toolkit
  register: toolkit_inputs

- name: Decide and validate before any change
  gpuops.dlserver.__private.nvidia_container_toolkit_host:
    action: resolve
    inputs: "{{ toolkit_inputs.inputs }}"
    platform:
      runtime_path: /usr/bin/nvidia-container-runtime
      runtime_config: /etc/nvidia-container-runtime/config.toml
      docker_daemon_json: /etc/docker/daemon.json
      containerd_config: /etc/containerd/config.toml
      containerd_dropin: /etc/containerd/conf.d/99-gpuops-nvidia.toml
      containerd_import: /etc/containerd/conf.d/*.toml
      crio_dropin: /etc/crio/crio.conf.d/99-gpuops-nvidia.conf
    driver: {loaded: false, reason: no driver}
  register: toolkit_decisions
  check_mode: false
"""

RETURN = r"""
engines:
  description: The engines to configure, with the reason.
  returned: action is resolve
  type: dict
  sample: {value: [docker, containerd], reason: the engines installed on the host}
files:
  description:
    - The files to write (C(dest), C(content), C(engine), C(validate), C(backup)); only those that are not already
      so on the host - the role's drop-ins by content, owner root, group root and mode 0644, the user's
      C(daemon.json) and containerd C(config.toml) by content (their owner and mode stay the user's).
  returned: action is resolve
  type: list
  elements: dict
packages:
  description: The toolkit packages the role installs, pins and holds (the repository and its key are
    C(gpuops.dlserver.__private.package_repository)'s, through C(roles/common/tasks/package_repo.yml)).
  returned: action is resolve
  type: list
  elements: str
change:
  description: A toolkit package is not installed, or not at the wanted version.
  returned: action is resolve
  type: bool
install_state:
  description:
    - "Whether the install step must run at all (C(install)), the toolkit packages not installed
      (C(missing)) and those to hold afterwards (C(hold)), from the dpkg state read once; a
      converged host skips apt."
  returned: action is resolve
  type: dict
  sample: {install: false, missing: [], hold: []}
vulnerabilities:
  description: The verdict on the wanted version (C(refused), C(cves), C(accepted), C(fixed_in), C(reason)).
  returned: action is resolve
  type: dict
installed:
  description: The installed toolkit packages and their versions, and the verdict on them.
  returned: always
  type: dict
runtime:
  description:
    - The toolkit's C(config.toml) with the settings merged in - C(current) (the file already has them, root:root
      0644) and the merged C(settings).
  returned: action is resolve
  type: dict
units:
  description: The CDI refresh units as systemctl reads them (C(enabled), C(active)); empty where CDI is not wanted.
  returned: action is resolve
  type: dict
  sample: {nvidia-cdi-refresh.path: {enabled: enabled, active: active}}
converged:
  description:
    - Whether a run would change nothing (C(current)), and each thing that would change (C(reasons)); a
      verification problem of a host whose files are in place is one of them.
  returned: action is resolve
  type: dict
  sample: {current: false, reasons: ["/etc/docker/daemon.json would change (docker)"]}
repository:
  description:
    - With O(repository), what C(gpuops.dlserver.__private.package_repository) returns for it - the C(files) to write,
      each with C(current) (the host has it so already), C(current) when all are, the checked C(keyring),
      C(configured_by), C(reason); C(null) without O(repository).
  returned: action is resolve
  type: dict
written:
  description: Each engine file that the merge changes (C(dest), C(engine)) and whether this run changed it.
  returned: action is write
  type: list
  elements: dict
verify:
  description:
    - What the host shows after the run. For C(action=resolve), only where the host is converged (else C(null)).
  returned: action is verify or resolve
  type: dict
problems:
  description: What is wrong, each naming the file or variable to change.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import toolkit_host
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure, Host, fail_problems


def main():
    module = AnsibleModule(
        argument_spec=dict(
            action=dict(type='str', required=True, choices=['resolve', 'runtime', 'verify', 'write']),
            inputs=dict(type='dict', default={}),
            platform=dict(type='dict', default={}),
            driver=dict(type='dict', default={}),
            in_container=dict(type='bool', default=False),
            engines=dict(type='list', elements='str', default=[]),
            pin=dict(type='str', default='*'),
            repository=dict(type='dict'),
        ),
        supports_check_mode=True,
    )
    host = Host(module)
    action = {'resolve': toolkit_host.resolve, 'runtime': toolkit_host.runtime,
              'verify': toolkit_host.verify, 'write': toolkit_host.write}[module.params['action']]
    try:
        result = action(module, host)
    except Failure as exc:
        exc.fail_json(module)
    if result['problems'] and action is toolkit_host.verify and module.check_mode:
        # a dry run where the role would change something: the host is not what a run leaves
        module.warn('check mode: the host does not pass verification yet: %s' % '; '.join(result['problems']))
    elif result['problems']:
        fail_problems(module, result)
    module.exit_json(changed=result.pop('changed', False), **result)


if __name__ == '__main__':
    main()
