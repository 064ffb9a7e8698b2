# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.cuda_repository: NVIDIA's CUDA repository of a host.

One filter per file, so that the file name is the filter name; the code is
``plugins/module_utils/packages/cuda_repos.py`` (the collection's one table).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: cuda_repository
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: NVIDIA's CUDA repository of a host, and how its key is checked
description:
  - Looks the host up in the collection's one table of NVIDIA's CUDA repositories (directory such as
    C(debian12), C(debian13), C(ubuntu2204), C(ubuntu2404), C(rhel9); architecture directory; the key
    file and fingerprint that sign that directory) and applies the C(gpuops_cuda_repo_*) variables (a
    mirror's base URL, a whole repository URL, another key URL, fingerprint or checksum).
  - Fails naming the variable on a URL that is not http(s)/file, a plain-http key URL without a
    checksum, a malformed fingerprint or checksum, or a platform the table does not know.
  - Used by C(roles/common/tasks/cuda_repo.yml), which sets C(gpuops_cuda_repo) for every role that
    installs from the CUDA repository.
positional: _input, facts
options:
  _input:
    description: The C(gpuops_cuda_repo_*) variables, converted by the C(cuda_repo) entry point of the common role.
    type: dict
    required: true
  facts:
    description: C(ansible_facts) (C(distribution), C(distribution_major_version), C(distribution_version), C(architecture)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Read the collection's CUDA repository variables (gpuops_cuda_repo_*), converted
  gpuops.dlserver.__private.role_inputs:
    role: common
    entry_point: cuda_repo
  register: cuda_repo_inputs

- name: The CUDA repository of this host
  ansible.builtin.set_fact:
    cuda_repo: "{{ cuda_repo_inputs.inputs | gpuops.dlserver.__private.cuda_repository(ansible_facts) }}"

- name: Show it
  ansible.builtin.debug:
    msg: "{{ cuda_repo.url }} signed by {{ cuda_repo.key_url }} ({{ cuda_repo.reason }})"
"""

RETURN = r"""
_value:
  description:
    - C(url) (ends with C(/)), C(key_url), C(fingerprint), C(sha256), C(directory), C(arch), C(key_file),
      C(reason) and C(key_reason).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import cuda_repos


def cuda_repository(inputs, facts):
    facts = facts or {}
    try:
        return cuda_repos.from_inputs(inputs, {
            'distribution': facts.get('distribution'), 'major': facts.get('distribution_major_version'),
            'version': facts.get('distribution_version'), 'architecture': facts.get('architecture')})
    except ValueError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.cuda_repository: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.cuda_repository."""

    def filters(self):
        return {'cuda_repository': cuda_repository}
