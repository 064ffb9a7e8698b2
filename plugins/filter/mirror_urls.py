# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.mirror_urls: what the roles read from the artifact mirror.

One filter per file, so that the file name is the filter name; the table is
``plugins/module_utils/packages/mirror_urls.py`` and the vendor URLs are the roles' own defaults.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: mirror_urls
author: gpuops.dlserver contributors
version_added: 0.2.0
short_description: Every vendor URL the roles read, and where it lives under the artifact mirror
description:
  - Returns one row per role variable that holds a vendor download or repository URL (NVIDIA's CUDA
    and libnvidia-container repositories and key, the node_exporter release, the PyTorch and
    NVIDIA package indexes, the Miniforge installer, Volcano's Helm chart repository), with its default
    (the vendor URL, read from the roles' argument specs), its path under the mirror and its URL under
    O(_input).
  - When C(gpuops_mirror_url) is set, every role takes these URLs from the mirror unless the inventory
    set the variable to something else; this filter shows what a site must put there
    (C(playbooks/mirror.yml) prints it).
  - Fails on a mirror URL that is not http(s):// or file:///.
positional: _input
options:
  _input:
    description: The mirror's base URL (C(gpuops_mirror_url)); empty gives the rows without C(url).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Show what the roles read from the mirror
  ansible.builtin.debug:
    msg: "{{ item.vendor_url }} -> {{ item.url }} ({{ item.kind }})"
  loop: "{{ 'http://mirror.example.internal/gpuops' | gpuops.dlserver.mirror_urls }}"
  loop_control:
    label: "{{ item.variable }}"
"""

RETURN = r"""
_value:
  description:
    - A list of C(variable), C(vendor_url), C(path) (under the
      mirror; C({version}), C({arch}) and C($(ARCH)) are the roles' placeholders), C(kind) and C(url)
      (null when O(_input) is empty).
  type: list
  elements: dict
"""

import os

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.action.__private.role_inputs import ROLES_DIR, read_yaml
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.mirror_urls import mirror_table


def role_defaults(roles_dir=ROLES_DIR):
    """Every variable's default, over every entry point of every role's argument spec."""
    defaults = {}
    for role in sorted(os.listdir(roles_dir)):
        path = os.path.join(roles_dir, role, 'meta', 'argument_specs.yml')
        if not os.path.isfile(path):
            continue
        with open(path) as handle:
            specs = (read_yaml(handle) or {}).get('argument_specs') or {}
        for entry in specs.values():
            for name, spec in ((entry or {}).get('options') or {}).items():
                defaults.setdefault(name, (spec or {}).get('default'))
    return defaults


def mirror_urls(mirror_url):
    try:
        return mirror_table(role_defaults(), mirror_url or '')
    except (ValueError, IOError, OSError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.mirror_urls: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.mirror_urls."""

    def filters(self):
        return {'mirror_urls': mirror_urls}
