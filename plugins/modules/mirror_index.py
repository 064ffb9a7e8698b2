#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: mirror_index
short_description: Check artifact lists and keep the SHA256SUMS index of an artifact mirror
version_added: 0.1.0
description:
  - An artifact mirror is a directory of vendor files and repositories served over HTTP, with
    C(SHA256SUMS) at its root (C(sha256sum -c) format). Air-gapped sites fill one from a
    connected host with C(playbooks/mirror.yml) and point the roles' URL variables at it;
    the collection's lab serves one to its test nodes. The layout is in C(docs/mirror.md).
  - Records the sha256 of the listed O(artifacts) and of every file under the O(scan)
    directories in C(SHA256SUMS). Every line another tool wrote is kept.
  - Each listed artifact must already be in the mirror with the listed checksum; the module
    fails, naming the file, when it is missing or differs.
  - With O(validate_only=true) it only checks the mirror playbook's variables by what they mean
    and touches nothing, so a playbook can refuse bad input before it downloads anything - the
    mirror directory O(path) (C(gpuops_mirror_dir), absolute, no C(..), neither C(/) nor a system
    directory), each artifact (C(path) relative without C(..) so it stays under the mirror; C(url)
    with a scheme the download can use, C(https://), C(http://) or C(file://); C(checksum) a
    C(sha256), other algorithms named as such), O(mirror_url) and O(host). Each problem names the
    variable and the entry (C(docs/input-checks.md)).
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - gpuops.dlserver.attributes.host_files
options:
  path:
    description:
      - The mirror directory.
    type: path
    required: true
  artifacts:
    description:
      - Files fetched into the mirror, as in C(gpuops_mirror_artifacts).
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Path of the file inside the mirror (relative, no C(..)); required.
        type: str
      url:
        description: Where it was fetched from (required by O(validate_only)).
        type: str
      checksum:
        description: The file's checksum, C(sha256) then a colon and 64 hex digits; required.
        type: str
  scan:
    description:
      - Directories of the mirror (relative) whose every file is hashed; their old lines in
        C(SHA256SUMS) are replaced, so files removed from them leave the index too.
    type: list
    elements: str
    default: []
  validate_only:
    description:
      - Only check O(path), O(artifacts) (URL included), O(mirror_url) and O(host) and report; read
        and write nothing.
    type: bool
    default: false
  mirror_url:
    description:
      - C(gpuops_mirror_url), where the mirror will be served (checked by O(validate_only)); empty
        for unset.
    type: str
    default: ''
  host:
    description:
      - C(gpuops_mirror_host), the one inventory host that fills the mirror (checked by
        O(validate_only), a host name, not a pattern); empty for localhost.
    type: str
    default: ''
notes:
  - C(SHA256SUMS) is written atomically; lines it cannot parse are kept at its end.
  - The layout, filling and serving of a mirror are described in C(docs/mirror.md).
"""

EXAMPLES = r"""
- name: Refuse bad mirror variables before downloading anything
  gpuops.dlserver.mirror_index:
    path: /srv/gpuops-mirror
    artifacts: "{{ gpuops_mirror_artifacts }}"
    mirror_url: "{{ gpuops_mirror_url | default(omit) }}"
    host: "{{ gpuops_mirror_host | default('localhost') }}"
    validate_only: true

- name: Record the fetched artifacts in SHA256SUMS
  gpuops.dlserver.mirror_index:
    path: /srv/gpuops-mirror
    artifacts: "{{ gpuops_mirror_artifacts }}"

- name: Index an apt repository another tool wrote into the mirror
  gpuops.dlserver.mirror_index:
    path: /srv/gpuops-mirror
    scan: [apt/cuda]
"""

RETURN = r"""
index:
  description: Path of the C(SHA256SUMS) file.
  returned: unless validate_only
  type: str
  sample: /srv/gpuops-mirror/SHA256SUMS
added:
  description: Paths the index did not list before.
  returned: unless validate_only
  type: list
  elements: str
  sample: [files/nvidia/cuda-keyring_1.1-1_all.deb]
updated:
  description: Paths whose checksum changed.
  returned: unless validate_only
  type: list
  elements: str
removed:
  description: Paths under O(scan) directories that are no longer there.
  returned: unless validate_only
  type: list
  elements: str
kept:
  description: Lines of other tools kept as they were.
  returned: unless validate_only
  type: int
  sample: 42
problems:
  description: What is wrong with the artifact list or the mirror (empty on success).
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import mirror_module


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type='path', required=True),
            artifacts=dict(type='list', elements='dict', default=[], options=dict(
                path=dict(type='str'),
                url=dict(type='str'),
                checksum=dict(type='str', no_log=False),
            )),
            scan=dict(type='list', elements='str', default=[]),
            validate_only=dict(type='bool', default=False),
            mirror_url=dict(type='str', default=''),
            host=dict(type='str', default=''),
        ),
        supports_check_mode=True,
    )
    mirror_module.run(module)


if __name__ == '__main__':
    main()
