# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters gpuops.dlserver.volcano_plan, volcano_smoke_result and volcano_manifest_objects.

The documentation is in the .yml files of the same names next to this file; the
rules and their sources are in plugins/module_utils/volcano.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.volcano import (
    VolcanoError,
    build_plan,
    daemonsets_from_resources,
    input_errors,
    manifest_objects,
    nodes_from_resources,
    smoke_result,
)


def _plain(value):
    """Deep-copy Ansible's tagged/lazy containers into plain Python types."""
    if isinstance(value, dict):
        return dict((str(k), _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def _hosts(hosts, hostvars):
    out = {}
    for host in hosts or []:
        hv = hostvars[host] if host in hostvars else {}
        facts = hv.get('ansible_facts') or {}
        out[str(host)] = {
            'gpu': _plain(hv.get('gpuops_gpu')) if hv.get('gpuops_gpu') is not None else None,
            'facts': {'hostname': facts.get('hostname'), 'fqdn': facts.get('fqdn'), 'nodename': facts.get('nodename')},
        }
    return out


def volcano_plan(inputs, cluster_info, nodes=None, crds=None, daemonsets=None, hosts=None, hostvars=None):
    """Every object the volcano role applies, or a failure naming each bad variable.

    Without ``cluster_info`` (null), only the inputs are checked - the role does that before it
    contacts the cluster - and ``{'inputs_ok': true}`` is returned.
    """
    try:
        if cluster_info is None:
            errors = input_errors(_plain(inputs))
            if errors:
                raise VolcanoError(errors)
            return {'inputs_ok': True}
        version = (((cluster_info or {}).get('version') or {}).get('server') or {}).get('kubernetes') or {}
        cluster = {
            'version': version.get('gitVersion') or '%s.%s' % (version.get('major'), version.get('minor')),
            'nodes': nodes_from_resources(_plain(nodes)),
            'crds': [((c or {}).get('metadata') or {}).get('name') for c in _plain(crds) or []],
            'device_plugin_daemonsets': daemonsets_from_resources(_plain(daemonsets)),
            'hosts': _hosts(hosts, hostvars or {}),
        }
        return build_plan(_plain(inputs), cluster)
    except VolcanoError as exc:
        raise AnsibleFilterError('gpuops.dlserver.volcano_plan: nothing was applied; fix these first: %s'
                                 % '; '.join(exc.errors))
    except (KeyError, ValueError, TypeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.volcano_plan: %s' % exc)


def volcano_smoke_result(job, workers, timeout):
    """The smoke job's outcome as facts: passed, phase, counts and a reason."""
    resources = (job or {}).get('resources') if isinstance(job, dict) and 'resources' in job else None
    obj = (resources[0] if resources else None) if resources is not None else job
    return smoke_result(_plain(obj), int(workers), int(timeout))


def volcano_manifest_objects(documents, namespace, scheduler_config_exists):
    """The release manifest's objects, without the scheduler ConfigMap once it exists."""
    return manifest_objects(_plain(list(documents or [])), str(namespace), bool(scheduler_config_exists))


class FilterModule(object):
    """gpuops.dlserver volcano filters."""

    def filters(self):
        return {'volcano_plan': volcano_plan, 'volcano_smoke_result': volcano_smoke_result,
                'volcano_manifest_objects': volcano_manifest_objects}
