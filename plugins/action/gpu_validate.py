# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action gpuops.dlserver.gpu_validate: the module of the same name, each option that stands for a
role variable and that the task does not give filled from the role's argument spec (issue 38).

The defaults of gpu_validate's variables are stated once, in roles/gpu_validate/meta/argument_specs.yml
(and common's for the probe's sysfs root); the module states none for them, so a task that calls the
module directly gets the role's defaults, read with the same code as the role's typed inputs
(``__private.role_inputs``' load_spec). Documented by the module (plugins/modules/gpu_validate.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.gpuops.dlserver.plugins.action.__private import role_inputs

# module option -> (role, entry point, variable) whose spec default fills it; the options named as the
# variable without its prefix are added below
FROM_SPEC = {
    'groups': ('gpu_validate', 'main', 'gpu_validate_checks'),
    'sysfs_root': ('common', 'gpu', 'gpuops_sysfs_root'),
}
FROM_SPEC.update((option, ('gpu_validate', 'main', 'gpu_validate_' + option)) for option in (
    'retired_page_limit', 'balance_thresholds', 'dataset_path', 'allow_cpu', 'thresholds', 'thresholds_by_model',
    'size_mib', 'resnet50', 'resnet50_batch', 'port', 'iperf3_port', 'timeout', 'record_dir', 'textfile_dir',
    'dcgm_diag_level', 'dcgm_diag_timeout', 'ib_write_bw', 'ib_port', 'ib_seconds', 'data_workers', 'data_images',
    'data_sample_mib', 'data_seconds', 'data_images_per_gpu'))
# module option -> (role, entry point, variable, factor): the variable's default in another unit
SCALED = {'refresh_seconds': ('gpu_validate', 'main', 'gpu_validate_refresh_days', 86400)}


def spec_defaults():
    """{module option: default}: each option of FROM_SPEC and SCALED at its variable's spec default."""
    return role_inputs.spec_defaults(FROM_SPEC, SCALED)


class ActionModule(ActionBase):
    """Run the module gpuops.dlserver.gpu_validate with the role's spec defaults where the task gives none."""

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = dict(self._task.args)
        for option, value in spec_defaults().items():
            if args.get(option) is None:
                args[option] = value
        result.update(self._execute_module(module_name='gpuops.dlserver.gpu_validate', module_args=args,
                                           task_vars=task_vars))
        return result
