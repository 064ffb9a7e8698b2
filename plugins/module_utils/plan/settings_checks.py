# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The settings report of the read-only probe (issue 34), from the registry of input checks (issue 38).

A role's settings can fail a run long after other roles changed the host: a repository key over
plain http without a checksum, a repository URL that is no URL, a bad path. The registry of input
checks (``core/input_checks.py``) refuses them on the controller before any change: the action
``host_plan`` runs it for every role on every host, and the probe (``playbooks/probe.yml``, option
``settings_checks``) reports what it found per role. This module runs no check of its own: it
reads the registry's results (one mechanism, one definition of each check). Checks that need the
network (does the mirror serve the release?) or the host are not among them, and the report says so.

``settings_report(found)`` -> ``{role: {checked, problems, reason}}`` where ``found`` is
``{role: [problem]}`` as the registry returned them; pure, standard library only (reached through
the action gpuops.dlserver.host_plan, option ``settings_checks``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

# What the report says a role's settings were checked by, next to its verdict.
REASON = 'the registry of input checks, core/input_checks.py'


def role_settings(problems):
    """``{checked, problems, reason}`` of one role from the problems the registry found in its
    converted inputs (none: its settings pass every registered check)."""
    if not isinstance(problems, (list, tuple)):
        raise ValueError('settings checks: a role\'s registry result must be a list of problems, got %s'
                         % type(problems).__name__)
    return {'checked': True, 'problems': [str(p) for p in problems], 'reason': REASON}


def settings_report(found):
    """``{role: role_settings(...)}`` for every role the registry checked (``{role: [problem]}``)."""
    if not isinstance(found, dict):
        raise ValueError('settings checks: the registry results must be a dict of role -> problems, got %s'
                         % type(found).__name__)
    return dict((role, role_settings(found[role])) for role in sorted(found))
