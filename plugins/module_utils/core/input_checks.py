# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one registry of the value checks of every role's converted inputs (issue 38).

An argument spec settles each variable's type; what it cannot check (a URL, a version against a
table, a path by what it may be, a value that reaches a file) is checked by the functions this
module registers. ``REGISTRY`` says, for each role and for each entry point of ``common`` that
the hosts are given (``common.cuda_repo``, ``common.gpu``, ``common.bmc``), which checks run and
in which order; the functions themselves stay with their concern (``packages/nvidia_repo.py``,
``host/os_tuning_inputs.py`` ...). Two callers run it, and nothing else:

- the action ``gpuops.dlserver.host_plan`` (site.yml's first play, common's gpu.yml): every
  role's inputs on every host, before any change (``problems`` per role, then ``host_problems``
  across the roles of one host);
- the action ``gpuops.dlserver.__private.role_inputs`` (each role's preflight): that role's.

Each check is ``check(inputs, context) -> [problem]``: ``inputs`` the converted values (short
names without ``<role>_`` for a role, full names for common's entry points), ``context`` a dict
with ``role``, ``groups``, ``allow``, ``insecure_hosts``, and where known ``facts`` (the probe's
gpuops_gpu) and ``platform`` (``distribution``, ``major``). Every problem names its variable
first; a later check's problem for a variable an earlier one named is left out (one message per
variable), so the order of an entry decides whose words the user reads.

Pure; the collection's module_utils only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import credentials as bmc_credentials
from ansible_collections.gpuops.dlserver.plugins.module_utils.core import value_kinds, value_posture
from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes import volcano
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm as dcgm_decision, dcgm_inputs, ipmi_exporter, node_exporter
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import prometheus_config
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo, url_trust
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import python_stack
from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import inputs as storage_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import inputs as validate_inputs


# ---------------------------------------------------------------------------------------------
# The checks every role and entry point gets: by what a value is (URL, path, number, posture)
# ---------------------------------------------------------------------------------------------
def urls(inputs, context):
    """URL and key variables by what they fetch and what pins it (packages/url_trust.py)."""
    return url_trust.problems(context['role'], inputs, context.get('insecure_hosts') or ())


def kinds(inputs, context):
    """Paths, numbers and values that reach a file, by their kind (core/value_kinds.py)."""
    return value_kinds.problems(context['role'], inputs, context)


def posture(inputs, context):
    """Lists and the security posture (core/value_posture.py)."""
    return value_posture.problems(context['role'], inputs, context)


# ---------------------------------------------------------------------------------------------
# Each role's own checks, where they live (each problem names its variable)
# ---------------------------------------------------------------------------------------------
def own(check):
    """A role's own check of its inputs alone (``check(inputs)``), as a registry check."""
    def run(inputs, context):
        del context
        return check(inputs)
    run.__name__ = getattr(check, '__name__', 'own')
    return run


def dcgm(inputs, context):
    """dcgm_exporter: what reaches its unit, files and commands (monitoring/dcgm_inputs.py), then
    the device selection's form and every counters entry (monitoring/dcgm.py input_problems):
    pairs of variable and message."""
    del context
    return ['%s: %s' % (variable, message)
            for variable, message in dcgm_inputs.problems(inputs) + dcgm_decision.input_problems(inputs)]


def ctk(inputs, context):
    """nvidia_container_toolkit: version, repository, key, engines, runtime settings
    (engines/container_toolkit.py), then the known-vulnerable version refusal (VULNERABILITIES)."""
    del context
    return container_toolkit.input_problems(inputs) + container_toolkit.version_problems(inputs)


def cuda(inputs, context):
    """cuda_toolkit: the versions against the host's platform (cuda/toolkit.py; Debian 12's where
    the facts do not say)."""
    platform = context.get('platform') or {}
    return toolkit.input_problems(inputs, platform if platform.get('distribution') else None)


# nvidia_driver: versions, branches, repository and key settings (packages/nvidia_repo.py)
driver = own(nvidia_repo.input_problems)
# os_tuning: sysctl, limits, command line, blacklist, paths (host/os_tuning_inputs.py)
os_tuning = own(os_tuning_inputs.problems)
# python_stack: the environment entries, the role-wide options, the environment defaults
python_env = own(python_stack.input_problems)
# gpu_validate: bounds, paths, thresholds, peers (validate/inputs.py)
gpu_validate = own(validate_inputs.input_problems)
# prometheus: paths, targets, scrape jobs, the address it publishes (monitoring/prometheus_config.py)
prometheus = own(prometheus_config.check_inputs)
# node_exporter: names, paths, listen address, collectors, users, URLs (monitoring/node_exporter.py)
exporter = own(node_exporter.input_problems)
# volcano: what reaches Helm, the manifest, the device plugin and the smoke job (kubernetes/volcano.py)
volcano_inputs = own(volcano.input_errors)
# common's entry point bmc: the BMC address, user, password and port (bmc/credentials.py)
bmc = own(bmc_credentials.problems)
# ipmi_exporter: listen address, modules and their credentials (monitoring/ipmi_exporter.py, through
# bmc/credentials.py), never showing a password
ipmi = own(ipmi_exporter.problems)
# storage: the declared volumes - drives, RAID levels, filesystems, mount points and options
# (storage/inputs.py); what is on each drive is the host's, checked by the role's plan on the host
storage = own(storage_inputs.input_problems)


def playbook_posture(inputs, context):
    """The playbooks' variables of value_posture.py (the rolling upgrade's inventory group)."""
    return value_posture.problems('playbook', _only(inputs, value_posture.PLAYBOOK_VARIABLES), context)


def playbook_kinds(inputs, context):
    """The playbooks' own variables of value_kinds.py (batches, the rolling upgrade's hooks, the
    probe's report)."""
    return value_kinds.problems('gpuops', _only(inputs, value_kinds.PLAYBOOK_VARIABLES), context)


def _only(inputs, names):
    return dict((name, inputs[name]) for name in names if name in inputs)


EVERY = (urls, kinds, posture)

# role (or common.<entry point>) -> the checks of its converted inputs, in order. The role's own
# checks that ran before issue 38 keep their place (nvidia_driver's first; os_tuning's,
# dcgm_exporter's, python_stack's and the BMC's after the URL checks), the others come last, so a
# message the user saw before for a variable is the one they see now.
REGISTRY = {
    'common.bmc': (urls, bmc, kinds, posture),
    'common.cuda_repo': EVERY,
    'common.gpu': EVERY,
    'cuda_toolkit': EVERY + (cuda,),
    'dcgm_exporter': (urls, dcgm, kinds, posture),
    'gpu_validate': EVERY + (gpu_validate,),
    'ipmi_exporter': (urls, ipmi, kinds, posture),
    'node_exporter': EVERY + (exporter,),
    'nvidia_container_toolkit': EVERY + (ctk,),
    'nvidia_driver': (driver, urls, kinds, posture),
    'os_tuning': (urls, os_tuning, kinds, posture),
    # the playbooks' own variables where the play gives them (full names; host_plan only)
    'playbooks': (playbook_posture, playbook_kinds),
    'prometheus': EVERY + (prometheus,),
    'python_stack': (urls, python_env, kinds, posture),
    'storage': (storage, urls, kinds, posture),
    'volcano': EVERY + (volcano_inputs,),
}


def key(role, entry_point='main'):
    """The registry's key of a role's entry point: the role for ``main``, ``<role>.<entry>`` else."""
    return role if entry_point in (None, 'main') else '%s.%s' % (role, entry_point)


def problems(role, inputs, entry_point='main', context=None):
    """Every problem the registered checks find in ``role``'s converted ``inputs`` at
    ``entry_point``, each naming its variable, one message per variable. A role or entry point
    without an entry is an error of the collection (tests/unit/test_role_route.py keeps them
    registered), never a silent pass."""
    name = key(role, entry_point)
    if name not in REGISTRY:
        raise KeyError('input_checks: no registered checks for %s (core/input_checks.py REGISTRY)' % name)
    context = dict(context or {}, role=role)
    found = []
    for check in REGISTRY[name]:
        found += url_trust.not_yet_named(check(inputs or {}, context), found)
    return found


def notices(role, inputs, context=None):
    """What the checks accepted but could not check, or that configures nothing, each naming the
    variable: a GPU clock whose maximum the probe did not read (value_kinds), an inventory group
    that matches no host (value_posture; for ``playbooks``, its rolling upgrade's group)."""
    if role == 'playbooks':
        return value_posture.notices('playbook', _only(inputs, value_posture.PLAYBOOK_VARIABLES), context)
    return value_kinds.notices(role, inputs, context) + value_posture.notices(role, inputs, context)


# Checks across the roles of one host (``{role: converted inputs}``), run by host_plan after every
# role's: two services on one port. (The address the host publishes for Prometheus's targets is
# prometheus's own check above, run on every host with every role's inputs.)
HOST_CHECKS = (value_kinds.host_problems,)


def host_problems(inputs_by_role):
    """The problems of HOST_CHECKS across the roles of one host, one message per variable."""
    found = []
    for check in HOST_CHECKS:
        found += url_trust.not_yet_named(check(inputs_by_role or {}), found)
    return found
