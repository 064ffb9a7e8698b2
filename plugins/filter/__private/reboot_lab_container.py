# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.reboot_lab_container: TEST-ONLY, a lab container's reboot decision under
the lab's switch gpuops_lab_container_reboot.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is below, the code is ``plugins/module_utils/plan/reboot.py`` (lab_container).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: reboot_lab_container
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: TEST-ONLY - make a lab container reboot where a host would
description:
  - TEST-ONLY, for the lab's failure injection (C(molecule/rolling_upgrade)). A container cannot
    reboot its kernel, so every role's reboot decision there is C(skipped). With the switch
    C(gpuops_lab_container_reboot) set to a number of seconds on a container of the lab's group
    C(lab_nodes), this filter turns such a C(skipped) decision into C(reboot) with that timeout
    and the command C(systemctl reboot) - systemd's reboot stops the container, and nothing
    restarts it - so that the collection's reboot handler really reboots and a playbook's
    handling of a reboot that does not return can be tested.
  - On any other host the switch is ignored, and a needed reboot's reason says so. C(0) (the
    default) leaves every decision as it is.
  - The private role C(common)'s C(reboot.yml) applies it to every role's decision.
positional: _input, seconds, in_container, lab_node
options:
  _input:
    description: A role's reboot decision, C({needed, action, reason, timeout}).
    type: dict
    required: true
  seconds:
    description: The switch C(gpuops_lab_container_reboot) (C(0) off, else 1 to 3600 seconds to wait).
    type: int
    required: true
  in_container:
    description: Whether the host is a container guest (C(gpuops_in_container)).
    type: bool
    required: true
  lab_node:
    description: Whether the host is in the lab's group C(lab_nodes).
    type: bool
    required: true
"""

EXAMPLES = r"""
- name: TEST-ONLY - the decision as the lab's switch makes it
  ansible.builtin.debug:
    msg: "{{ decision | gpuops.dlserver.__private.reboot_lab_container(20, true, true) }}"
  vars:
    decision: {needed: true, action: skipped, timeout: 1800,
               reason: "driver 470.223.02 is loaded: driver 580.95.05 needs a reboot; not rebooted: running in a container"}
  # action: reboot, timeout: 20, command: systemctl reboot
"""

RETURN = r"""
_value:
  description:
    - The decision; where the switch applies, C(action) C(reboot), C(timeout) the switch's seconds,
      C(command) C(systemctl reboot) and a reason that names the TEST-ONLY switch.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.reboot import lab_container


def reboot_lab_container(decision, seconds, in_container, lab_node):
    try:
        return lab_container(dict(decision), seconds, in_container, lab_node)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.reboot_lab_container: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.reboot_lab_container."""

    def filters(self):
        return {'reboot_lab_container': reboot_lab_container}
