#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: dcgm_exporter_host
short_description: Read whether the host already is what gpuops.dlserver.dcgm_exporter leaves
version_added: 0.2.0
description:
  - The one read of the host the C(gpuops.dlserver.dcgm_exporter) role makes after it decided (filter
    C(gpuops.dlserver.__private.dcgm_exporter_config)); the decision is C(plugins/module_utils/monitoring/dcgm_host.py).
  - "Reads, in one round trip: whether C(gpg) is installed (host mode), the configuration directory
    (root:root 0755), the counters file and the unit (the decided bytes, root:root 0644), the exporter's unit
    and the C(nvidia-dcgm) host engine (enabled and running), the exporter units the role takes over (stopped
    and disabled), the container engine and the image (container mode). The DCGM packages are the probe's
    read (C(packages_missing) of the decision)."
  - Where all of that is current, it also reads the exporter's metrics page and compares it with the
    counters file (filter C(gpuops.dlserver.__private.dcgm_exporter_verify)'s comparison), so that a converged host
    runs no further task of the role.
  - With O(repository) (host mode), NVIDIA's CUDA repository DCGM comes from is checked in the same round trip,
    as C(gpuops.dlserver.__private.package_repository) checks it (the collection's repository library), so that a
    converged host asks nothing more about it.
  - Fails when host mode has no apt (before any change), naming C(dcgm_exporter_mode).
  - Changes nothing on the host.
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpuops.dlserver.attributes.host_check_mode
options:
  config:
    description: What the filter C(gpuops.dlserver.__private.dcgm_exporter_config) decided (C(__dcgm_exporter_config)).
    type: dict
    required: true
  config_dir:
    description: The exporter's configuration directory.
    type: path
    required: true
  unit_file:
    description: The path of the exporter's systemd unit.
    type: path
    required: true
  service:
    description: The exporter's unit name.
    type: str
    default: dcgm-exporter
  hostengine_service:
    description: The DCGM host engine's unit name (host mode).
    type: str
    default: nvidia-dcgm
  backend:
    description: The package manager of the host (host mode installs DCGM with apt).
    type: str
    required: true
  page_timeout:
    description: Seconds to wait for the metrics page (one attempt; the role's verification retries).
    type: int
    default: 10
  repository:
    description:
      - In host mode, the CUDA repository to check in the same round trip - the options of
        C(gpuops.dlserver.__private.package_repository) (C(url), C(key), C(keyring_file), C(sources_file), C(header),
        C(description), C(skip_if_configured), ...), checked by the same argument spec.
      - The answer is RV(repository). A bad option, a key that cannot be fetched or whose checksum or fingerprint
        does not match fails the module, naming the variable, before anything changes. Where C(gpg) is not
        installed the key cannot be checked yet; RV(repository) is then null and the role checks the repository
        again once it installed C(gpg).
    type: dict
    version_added: 0.2.0
"""

EXAMPLES = r"""
- name: Read the files, units, image and metrics page the role manages
  gpuops.dlserver.__private.dcgm_exporter_host:
    config: "{{ dcgm_config }}"
    config_dir: /etc/dcgm-exporter
    unit_file: /etc/systemd/system/dcgm-exporter.service
    backend: apt
  register: dcgm_host
"""

RETURN = r"""
host:
  description:
    - "What was read: C(gpg) (bool), C(directory), C(counters) and C(unit_file) (each true when already what the
      role writes), C(units) (unit to C(enabled) and C(active) as systemctl answers), C(engine) and C(image)
      (container mode; null in host mode), C(page) (the comparison, null when not read)."
  returned: always
  type: dict
verified:
  description:
    - The comparison of the metrics page with the counters file (C(ok), C(served), C(not_served), C(unexpected),
      C(reason)), as the filter C(gpuops.dlserver.__private.dcgm_exporter_verify) returns it; null when the page was not
      read (something else would change first).
  returned: always
  type: dict
converged:
  description: Whether a run would change nothing (C(current)), and each thing that would change (C(reasons)).
  returned: always
  type: dict
  sample: {current: false, reasons: [the counters file /etc/dcgm-exporter/gpuops-counters.csv would change]}
repository:
  description:
    - With O(repository) in host mode, what C(gpuops.dlserver.__private.package_repository) returns for it - the C(files)
      to write, each with C(current) (the host has it so already), C(current) when all are, the checked
      C(keyring), C(configured_by), C(reason); null without O(repository), in container mode, and where C(gpg)
      is not installed yet.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm_host, dcgm_module


def main():
    module = AnsibleModule(
        argument_spec=dict(
            config=dict(type='dict', required=True),
            config_dir=dict(type='path', required=True),
            unit_file=dict(type='path', required=True),
            service=dict(type='str', default=dcgm_host.SERVICE),
            hostengine_service=dict(type='str', default=dcgm_host.HOSTENGINE),
            backend=dict(type='str', required=True),
            page_timeout=dict(type='int', default=10),
            repository=dict(type='dict'),
        ),
        supports_check_mode=True,
    )
    dcgm_module.run(module)


if __name__ == '__main__':
    main()
