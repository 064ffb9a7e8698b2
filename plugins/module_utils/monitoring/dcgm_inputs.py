# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of the dcgm_exporter inputs that reach a unit, a file, apt or the container engine.

``problems(inputs)`` returns ``[(variable, message)]``: every value is checked with a full match
(a trailing newline never passes) and refused when it holds a control character, before the
role changes anything. ``image_reference()`` builds ``registry/name:tag`` or, when the tag is a
digest (``sha256:<64 hex>``), ``registry/name@sha256:...`` so a site can pin the image.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import control_error, owned_path_error

# Registry host (with an optional port) and optional path; repository path components; tag or
# digest - the grammar of the OCI distribution reference, narrowed to what registries accept.
_REGISTRY = re.compile(r'[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*/?')
_IMAGE_NAME = re.compile(r'[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*')
_TAG = re.compile(r'[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}')
DIGEST = re.compile(r'sha256:[0-9a-f]{64}')
_DEB_VERSION = re.compile(r'([0-9]+:)?[0-9][A-Za-z0-9.+~-]*')
_DEB_PACKAGE = re.compile(r'[a-z0-9][a-z0-9.+-]+')
MAX_LENGTH = 1024


def image_reference(inputs):
    """``registry/name:tag``, or ``registry/name@sha256:...`` when the tag is a digest."""
    base = '%s/%s' % (inputs['image_registry'].rstrip('/'), inputs['image_name'])
    tag = inputs['image_tag']
    return '%s@%s' % (base, tag) if DIGEST.fullmatch(tag) else '%s:%s' % (base, tag)


def problems(inputs):
    """``[(variable, message)]`` for every input that would reach a unit, a file or a command badly."""
    found = []
    # The counters lists have their own parser (parse_counter), which refuses these too.
    for key in sorted(k for k in inputs if k not in ('counters', 'profiling_counters', 'counters_extra')):
        error = control_error(inputs[key], 'dcgm_exporter_' + key)
        if error:
            found.append(('dcgm_exporter_' + key, error.split(': ', 1)[1]))
    found.extend(('dcgm_exporter_' + key, 'is longer than %d characters' % MAX_LENGTH) for key in sorted(inputs)
                 if isinstance(inputs[key], str) and len(inputs[key]) > MAX_LENGTH)
    bad = set(variable for variable, _message in found)

    def check(key, ok, what):
        variable = 'dcgm_exporter_' + key
        if variable not in bad and not ok:
            found.append((variable, '%r is not %s' % (inputs.get(key), what)))

    def text(key):
        value = inputs.get(key)
        return value if isinstance(value, str) else ''

    check('status_file', not owned_path_error(inputs.get('status_file'), ''), 'an absolute file path')
    if inputs.get('mode') == 'host':
        check('binary', not owned_path_error(inputs.get('binary'), ''), 'an absolute path of the exporter binary')
        check('dcgm_version', not text('dcgm_version') or _DEB_VERSION.fullmatch(text('dcgm_version')),
              'a package version such as 1:4.2.3-1 (or "")')
        check('exporter_package', not text('exporter_package') or _DEB_PACKAGE.fullmatch(text('exporter_package')),
              'a package name (or "")')
    elif inputs.get('mode') == 'container':
        check('image_registry', _REGISTRY.fullmatch(text('image_registry')),
              'a registry host with an optional :port and path, e.g. nvcr.io or mirror.example:5000/nvcr')
        check('image_name', _IMAGE_NAME.fullmatch(text('image_name')),
              'an image repository such as nvidia/k8s/dcgm-exporter')
        check('image_tag', _TAG.fullmatch(text('image_tag')) or DIGEST.fullmatch(text('image_tag')),
              'an image tag (letters, digits, _ . -) or a digest sha256:<64 hex digits>')
    return found
