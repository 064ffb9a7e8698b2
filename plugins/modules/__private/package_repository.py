#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: package_repository
short_description: Check a package repository's key and render the repository's apt files
version_added: 0.2.0
description:
  - The one way the roles of the collection add an apt repository (through
    C(roles/common/tasks/package_repo.yml)); reads only, unless O(write) is set.
  - Checks the key URL first (https, http only when O(key.sha256) pins the file, or file), downloads
    the key once, checks its sha256 when given, reads its primary keys with C(gpg --show-keys) and
    exports only the wanted key into an armored keyring for C(Signed-By). A key file holding a second
    key is refused unless O(key.fingerprint) selects one; the others are reported, never trusted.
  - Renders the deb822 sources file and, with O(pin), the apt preferences that hold the packages at
    one version. Every value that reaches a file is checked with a full match first.
  - With O(skip_if_configured), when another sources file already names the URL, no file is
    returned (apt refuses one URL with two keyrings) and RV(configured_by) names that file.
  - With O(write), the files that are not current are written (or removed) here, with
    C(plugins/module_utils/core/files.py) (atomic, root 0644, a diff under C(--diff), nothing written in
    check mode) - their text never travels through the controller
    (C(roles/common/tasks/package_repo_write.yml)).
  - Logic in C(plugins/module_utils/packages/repo_files.py) and C(repo_trust.py).
author:
  - gpuops.dlserver contributors (@gpuops)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads the same in check mode; with O(write) it writes nothing then and reports what it would change.
  diff_mode:
    support: full
    details: With O(write), the before and after of each file that changes.
  platform:
    platforms: posix
options:
  url:
    description: The repository URL (a flat repository when O(suites) is C(/)).
    type: str
    required: true
  url_var:
    description: The variable O(url) came from, named in failures.
    type: str
    default: the repository URL
  suites:
    description: The repository's suites.
    type: list
    elements: str
    default: ['/']
  components:
    description: The repository's components (none for a flat repository).
    type: list
    elements: str
    default: []
  key:
    description: The repository key and how it is checked.
    type: dict
    required: true
    suboptions:
      url:
        description: URL of the key file (C(https://), C(http://) with O(key.sha256), or C(file://)).
        type: str
        required: true
      sha256:
        description: C(sha256:<hex>) of the key file, or C("").
        type: str
        default: ''
      fingerprint:
        description: The fingerprint of the key that signs the repository, or C("") (then the file must hold one key).
        type: str
        default: ''
      url_var:
        description: Variable named in failures about the URL.
        type: str
        default: the key URL
      checksum_var:
        description: Variable named in failures about the checksum.
        type: str
        default: the key checksum
      fingerprint_var:
        description: Variable named in failures about the fingerprint.
        type: str
        default: the key fingerprint
  keyring_file:
    description: Where the role writes the keyring (the C(Signed-By) of the sources file).
    type: path
    required: true
  sources_file:
    description: Where the role writes the deb822 sources file.
    type: path
    required: true
  preferences_file:
    description: Where the role writes the version pin (returned with empty content, to be removed, without O(pin)).
    type: path
  pin:
    description: The packages held at one version (C(packages), C(version) such as C(1.19.1-*), C(why), C(variable)).
    type: dict
  header:
    description: The first line of every file (which role manages it).
    type: str
    default: ''
  description:
    description: What the repository is, written as a comment into the sources file.
    type: str
    default: ''
  skip_if_configured:
    description: Return no file when another sources file of the host already names O(url).
    type: bool
    default: false
  write:
    description: Also write the files that are not current, and remove those no longer wanted.
    type: bool
    default: false
requirements:
  - gpg on the host
"""

EXAMPLES = r"""
- name: Check the key and render the repository files
  gpuops.dlserver.__private.package_repository:
    url: https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)
    key:
      url: https://nvidia.github.io/libnvidia-container/gpgkey
      fingerprint: C95B321B61E88C1809C4F759DDCAE044F796ECB0
    keyring_file: /etc/apt/keyrings/gpuops-nvidia-container-toolkit.asc
    sources_file: /etc/apt/sources.list.d/gpuops-nvidia-container-toolkit.sources
  register: repo
"""

RETURN = r"""
files:
  description:
    - The files to write (C(dest), C(content)); an empty C(content) means the file is removed.
    - C(current) says whether the host has the file so already (those exact bytes, mode 0644, owned by
      root; for an empty C(content), no file). A role writes only the files that are not current.
  returned: success
  type: list
  elements: dict
current:
  description:
    - Whether every file of RV(files) is current, so that there is nothing to write or remove (the
      converged fast path; the role then evaluates nothing more for this repository).
  returned: success
  type: bool
keyring:
  description: The key record (C(url), C(sha256), C(fingerprints), C(dropped), C(reason), C(content)); null when skipped.
  returned: success
  type: dict
configured_by:
  description: Other sources files that already name the URL (then RV(files) is empty).
  returned: success
  type: list
  elements: str
reason:
  description: What was decided and why.
  returned: success
  type: str
problems:
  description: What is wrong, each naming the variable to change.
  returned: always
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_files


def main():
    module = AnsibleModule(argument_spec=repo_files.MODULE_OPTIONS, supports_check_mode=True)
    repo_files.module_run(module)


if __name__ == '__main__':
    main()
