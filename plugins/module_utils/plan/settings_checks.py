# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The settings checks a read-only probe runs for every role the plan runs (issue 34).

A role's settings can fail a run long after other roles changed the host: a repository key over
plain http without a checksum, a repository URL that is no URL, a bad path. Each role checks
them in its own first module call, on the host; the probe (``playbooks/probe.yml``) asks the
same checks on the controller, from the typed inputs the plan was made from, so that its report
predicts the failure instead of calling the role unknown. These are the roles' OWN checks
(``input_problems`` and friends in module_utils), never copies; checks that need the network
(does the mirror serve the release?) or the host are not among them, and the report says so.

``settings_report(inputs, platform)`` -> ``{role: {checked, problems, reason}}``; pure, standard
library and the collection's module_utils only (reached through the action gpuops.dlserver.host_plan,
option ``settings_checks``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import inputs as validate_inputs

# What each check covers, said in the report next to its verdict.
COVERS = {
    'nvidia_driver': 'driver version and branch settings',
    'nvidia_container_toolkit': 'version, repository URL and key trust (URL, checksum, fingerprint)',
    'cuda_toolkit': 'toolkit versions against the platform',
    'os_tuning': 'sysctl, limits, kernel command line, blacklist and paths',
    'dcgm_exporter': 'values that reach its unit, files and commands',
    'gpu_validate': 'thresholds, paths and commands',
}


def _dcgm(inputs, platform):
    del platform
    return ['%s: %s' % pair for pair in dcgm_inputs.problems(inputs)]


CHECKS = {
    'nvidia_driver': lambda inputs, platform: nvidia_repo.input_problems(inputs),
    'nvidia_container_toolkit': lambda inputs, platform: container_toolkit.input_problems(inputs),
    'cuda_toolkit': toolkit.input_problems,
    'os_tuning': lambda inputs, platform: os_tuning_inputs.problems(inputs),
    'dcgm_exporter': _dcgm,
    'gpu_validate': lambda inputs, platform: validate_inputs.input_problems(inputs),
}


def role_settings(role, inputs, platform=None):
    """``{checked, problems, reason}`` of one role's typed ``inputs``: ``checked`` False when the
    collection has no controller-side check of the role's settings (its settings are unknown)."""
    check = CHECKS.get(role)
    if check is None:
        return {'checked': False, 'problems': [],
                'reason': 'no settings check of %s runs without the host' % role}
    try:
        problems = [str(p) for p in check(inputs or {}, platform or {}) or []]
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        return {'checked': True, 'problems': ['the settings check of %s could not read its inputs: %s: %s'
                                              % (role, type(exc).__name__, exc)],
                'reason': COVERS[role]}
    return {'checked': True, 'problems': problems, 'reason': COVERS[role]}


def settings_report(inputs, platform=None):
    """``{role: role_settings(...)}`` for every role of ``inputs`` (``{role: typed inputs}``)."""
    if not isinstance(inputs, dict):
        raise ValueError('settings checks: inputs must be a dict of role -> typed inputs, got %s'
                         % type(inputs).__name__)
    return dict((role, role_settings(role, inputs[role], platform)) for role in sorted(inputs))
