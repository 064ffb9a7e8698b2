# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.download_failure: the message of a failed download, naming the URL that failed.

One filter per file, so that the file name is the filter name; the code is
``plugins/module_utils/core/download_failure.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: download_failure
author: gpuops.dlserver contributors
version_added: 0.3.0
short_description: The message of a failed download, naming exactly the URL that failed and its variable
description:
  - Reads the failure result of C(ansible.builtin.get_url) (with a checksums URL, it fetches two URLs)
    and says which URL failed - the file's or the checksums file's - with its HTTP status, and which
    variable sets that URL.
positional: _input, urls, role_text
options:
  _input:
    description: The failed task's result (C(ansible_failed_result)).
    type: dict
    required: true
  urls:
    description: Each variable mapped to the URL the task derived from it.
    type: dict
    required: true
  role_text:
    description: What the role says after the URL (what was left alone).
    type: str
    required: true
"""

EXAMPLES = r"""
- name: Name the URL that failed
  ansible.builtin.fail:
    msg: >-
      {{ ansible_failed_result | gpuops.dlserver.__private.download_failure({'node_exporter_binary_url': tarball_url,
         'node_exporter_checksums_url': checksums_url}, 'nothing on the host was changed') }}
  vars:
    tarball_url: http://mirror.example/files/node_exporter/1.9.1/node_exporter-1.9.1.linux-amd64.tar.gz
    checksums_url: http://mirror.example/files/node_exporter/1.9.1/sha256sums.txt
"""

RETURN = r"""
_value:
  description: One message, for example C(node_exporter_checksums_url - http://m/.../sha256sums.txt answered HTTP 404 (Not Found); ...).
  type: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.download_failure import message


def download_failure(result, urls, role_text):
    try:
        return message(result, urls, str(role_text))
    except ValueError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.download_failure: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.download_failure."""

    def filters(self):
        return {'download_failure': download_failure}
