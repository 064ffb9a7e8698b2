# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The attribute blocks the collection's modules share, each stated once. Use them after
ansible.builtin.action_common_attributes (which describes each attribute); a module states
only what differs (a facts attribute, a diff it does return)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):  # pylint: disable=too-few-public-methods
    """Fragments: gpuops.dlserver.attributes.host_check_mode, .host_files, .action_plugin."""

    DOCUMENTATION = r'''
options: {}
'''

    # A module that runs on the host, behaves the same in check mode and returns no diff.
    HOST_CHECK_MODE = r'''
options: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
'''

    # A module that writes files on the host: nothing in check mode (it reports what it would
    # change), the before and after of each file it changes under --diff.
    HOST_FILES = r'''
options: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  platform:
    platforms: posix
'''

    # A module with an action plugin of its own, as one that works on the controller only (it
    # checks and plans, changes nothing, returns no diff); a module that also works on the host
    # states what differs (status_file: a diff, posix).
    ACTION_PLUGIN = r'''
options: {}
attributes:
  action:
    support: full
  async:
    support: none
  bypass_host_loop:
    support: none
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: all
'''
