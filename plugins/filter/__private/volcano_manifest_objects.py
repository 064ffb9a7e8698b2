# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpuops.dlserver.__private.volcano_manifest_objects.

One filter per file, so that the file name is the filter name (what Galaxy and ansible-doc list);
the documentation is below, the rules and their sources are in
``plugins/module_utils/kubernetes/volcano.py``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: volcano_manifest_objects
author: gpuops.dlserver contributors
version_added: 0.1.0
short_description: The Volcano release manifest's objects the volcano role applies
description:
  - Takes the documents of Volcano's release manifest and returns the objects to apply. Once the
    scheduler ConfigMap C(volcano-scheduler-configmap) exists in the release's namespace, the
    manifest's copy is left out - the volcano role writes that ConfigMap from its own variables, and
    re-applying the release default on every run would undo it and roll the scheduler twice.
  - Empty documents are dropped.
positional: _input, namespace, scheduler_config_exists
options:
  _input:
    description: The manifest's documents (for example C(from_yaml_all) of the file).
    type: list
    elements: raw
    required: true
  namespace:
    description: Namespace of the release.
    type: str
    required: true
  scheduler_config_exists:
    description: Whether the scheduler ConfigMap exists in the cluster already.
    type: bool
    required: true
"""

EXAMPLES = r"""
- name: Apply the release manifest
  kubernetes.core.k8s:
    state: present
    definition: "{{ text | from_yaml_all | gpuops.dlserver.__private.volcano_manifest_objects('volcano-system', true) }}"
"""

RETURN = r"""
_value:
  description: The objects to apply.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.plain import plain
from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano import (
    VolcanoError,
    manifest_objects,
)


def volcano_manifest_objects(documents, namespace, scheduler_config_exists):
    """The release manifest's objects, without the scheduler ConfigMap once it exists."""
    if isinstance(documents, (str, bytes, dict)) or (documents is not None and not hasattr(documents, '__iter__')):
        raise AnsibleFilterError('gpuops.dlserver.__private.volcano_manifest_objects: the manifest must be a list of documents '
                                 '(from_yaml_all of the release file), got %r' % type(documents).__name__)
    documents = plain(list(documents or []))
    if not all(d is None or isinstance(d, dict) for d in documents):
        raise AnsibleFilterError('gpuops.dlserver.__private.volcano_manifest_objects: every document of the manifest must be a '
                                 'mapping (a Kubernetes object) or empty')
    try:
        return manifest_objects(documents, str(namespace), bool(scheduler_config_exists))
    except VolcanoError as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.volcano_manifest_objects: nothing was applied from the manifest; %s'
                                 % '; '.join(exc.errors))
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError('gpuops.dlserver.__private.volcano_manifest_objects: %s' % exc)


class FilterModule(object):
    """gpuops.dlserver.__private.volcano_manifest_objects."""

    def filters(self):
        return {'volcano_manifest_objects': volcano_manifest_objects}
