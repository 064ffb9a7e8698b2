# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.ipmi_exporter_verify.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc
list); the documentation is below, the rules are in ``plugins/module_utils/``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: ipmi_exporter_verify
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: One line per BMC that ipmi_exporter's verify scraped
description:
- From the registered results of the verify step's scrapes of C(/ipmi?target=<bmc>&module=<m>), one verdict per
  BMC (C(plugins/module_utils/monitoring/ipmi_exporter.py) C(remote_verdict)) - the exporter answered with
  C(ipmi_up) (C(ok)), and whether every collector is up (C(up)); a BMC that refuses the credentials is one line
  (C(ipmi_up 0)), never a failure of the others.
positional: _input
options:
  _input:
    description: The C(results) of the looped C(ansible.builtin.uri) task (each with C(item), C(status), C(content)).
    type: list
    elements: dict
    required: true
"""

EXAMPLES = r"""
- name: One line per BMC
  ansible.builtin.set_fact:
    verdicts: "{{ scrapes.results | gpuops.dlserver.__private.ipmi_exporter_verify }}"
"""

RETURN = r"""
_value:
  description: Per BMC C(target), C(module), C(ok), C(up), C(line).
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring.ipmi_exporter import remote_verdict


def ipmi_exporter_verify(results):
    if not isinstance(results, list):
        raise AnsibleFilterError('gpuops.dlserver.__private.ipmi_exporter_verify: the uri results must be a list, '
                                 'got a %s' % type(results).__name__)
    verdicts = []
    for result in results:
        if not isinstance(result, dict) or not isinstance(result.get('item'), dict):
            raise AnsibleFilterError('gpuops.dlserver.__private.ipmi_exporter_verify: each result needs its item '
                                     '(target, module), got %r' % (result,))
        item = result['item']
        verdicts.append(remote_verdict(item.get('target'), item.get('module'), result.get('content'),
                                       result.get('status', -1)))
    return verdicts


class FilterModule(object):
    """gpuops.dlserver.__private.ipmi_exporter_verify."""

    def filters(self):
        return {'ipmi_exporter_verify': ipmi_exporter_verify}
