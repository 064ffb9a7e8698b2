# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action gpuops.dlserver.__private.node_exporter_textfile: the module of the same name, its
``os_tuning_status_file`` filled from os_tuning's argument spec where the task gives none (issue 38:
the default is stated once, in the spec; node_exporter reads no variable of os_tuning's).
Documented by the module (plugins/modules/__private/node_exporter_textfile.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.dlserver.plugins.action.__private import role_inputs

FROM_SPEC = {'os_tuning_status_file': ('os_tuning', 'main', 'os_tuning_status_file')}


class ActionModule(ActionBase):
    """Run the module with os_tuning's spec default of its status file where the task gives none."""

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        for option, value in role_inputs.spec_defaults(FROM_SPEC).items():
            if args.get(option) is None:
                args[option] = value
        result.update(self._execute_module(module_name='gpuops.dlserver.__private.node_exporter_textfile',
                                           module_args=args, task_vars=task_vars))
        return result
