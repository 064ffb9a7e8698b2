# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The decisions of playbooks/rolling_driver_upgrade.yml, value plus reason.

- :func:`k8s_node`: whether a host is a Kubernetes node to cordon and drain, and its node name
  (the inventory's ``gpuops_k8s_node_name``, else the host's name as the system reports it).
- :func:`decide`: after the upgrade, what happens to one host: ``uncordon`` (validation passed),
  ``rollback`` to the version recorded before the upgrade (validation failed and the repository
  still carries that version) or ``hold`` (the node stays cordoned as it is, with the reason).
  A host whose validation failed is never uncordoned, rolled back or not.

Pure functions, standard library only, Python 3.8+. Tested from
``tests/unit/plugins/module_utils/data/rollback_cases.yml``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.versions import numeric

# RFC 1123 subdomain: what Kubernetes accepts as a node name.
_NODE_NAME = re.compile(r'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')
VERDICTS = ('pass', 'warn', 'fail', 'not_run')


def _version(value, what):
    """A driver version as text ('' for none); ValueError naming ``what`` for anything else."""
    if value in (None, ''):
        return ''
    text = str(value)
    if text != text.strip():
        raise ValueError('%s %r has blanks or a line break around it' % (what, value))
    numeric(text, what)
    return text


def k8s_node(node_name, hostname, in_k8s_group):
    """{'drain': bool, 'name': str, 'reason': str}.

    A host is drained when the inventory names its Kubernetes node (``node_name``) or puts it in
    the Kubernetes group (``in_k8s_group``); the name is ``node_name``, else ``hostname``.
    """
    name = str(node_name or '')
    if not name and not in_k8s_group:
        return {'drain': False, 'name': '', 'reason': 'not a Kubernetes node (no gpuops_k8s_node_name and not in '
                                                      'the Kubernetes group): nothing to drain'}
    source = 'gpuops_k8s_node_name'
    if not name:
        name, source = str(hostname or ''), "the host's name"
    if len(name) > 253 or not _NODE_NAME.fullmatch(name):
        raise ValueError('gpuops_k8s_node_name: %r (%s) is not a Kubernetes node name (lower-case letters, '
                         'digits, "-" and "."; at most 253 characters)' % (name, source))
    return {'drain': True, 'name': name, 'reason': 'Kubernetes node %s (from %s)' % (name, source)}


def decide(previous, target, verdict, carried, summary=''):
    """What to do with a host after its upgrade and validation.

    ``previous``: the driver version recorded before the upgrade ('' when the role had not installed
    one); ``target``: the version the upgrade installed; ``verdict``: gpu_validate's verdict
    (``pass``, ``warn``, ``fail``) or ``not_run``; ``carried``: the driver versions the repository
    carries (the role's status file); ``summary``: gpu_validate's summary line, quoted in reasons.

    Returns {'action': 'uncordon'|'rollback'|'hold', 'version': str, 'uncordon': bool, 'reason': str}.
    """
    previous = _version(previous, 'previous driver version')
    target = _version(target, 'target driver version')
    if verdict not in VERDICTS:
        raise ValueError('verdict %r is not one of %s' % (verdict, ', '.join(VERDICTS)))
    if not isinstance(carried, (list, tuple)):
        raise ValueError('carried must be the list of versions the repository carries, not %r' % (carried,))
    carried = [_version(v, 'repository version') for v in carried]
    said = (': %s' % summary) if summary else ''
    if verdict in ('pass', 'warn'):
        return {'action': 'uncordon', 'version': target, 'uncordon': True,
                'reason': 'driver %s validated (%s)%s: the node goes back into service' % (target, verdict, said)}
    failed = ('validation failed on driver %s%s' % (target, said)) if verdict == 'fail' else \
        'validation did not run after the upgrade to driver %s' % target
    if not previous:
        return {'action': 'hold', 'version': target, 'uncordon': False,
                'reason': '%s; no previous version was recorded before the upgrade (the role had not installed a '
                          'driver), so there is nothing to roll back to: the node stays cordoned' % failed}
    if numeric(previous) == numeric(target):
        return {'action': 'hold', 'version': target, 'uncordon': False,
                'reason': '%s; it was already the version before the upgrade, so there is nothing to roll back '
                          'to: the node stays cordoned' % failed}
    if previous not in carried:
        return {'action': 'hold', 'version': target, 'uncordon': False,
                'reason': '%s; the previous version %s is no longer in the repository (it carries %s), so it '
                          'cannot be rolled back: the node stays cordoned on %s' % (
                              failed, previous, ', '.join(carried) or 'nothing', target)}
    return {'action': 'rollback', 'version': previous, 'uncordon': False,
            'reason': '%s; rolled back to the previous version %s, which the repository still carries: the node '
                      'stays cordoned until someone looks at it' % (failed, previous)}
