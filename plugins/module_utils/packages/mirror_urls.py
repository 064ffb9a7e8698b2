# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The artifact mirror's URLs: which role variables ``gpuops_mirror_url`` repoints, and where to.

One table (``MIRRORED``) names every role variable that holds a vendor download or repository
URL and the path of the same thing under the mirror (the layout of docs/mirror.md). The vendor
URL itself is not repeated here: it is the variable's default in the role's argument spec (kept
in step with the role's ``defaults/main.yml`` by a unit test). When ``gpuops_mirror_url`` is set,
every such variable still at its default takes ``<gpuops_mirror_url>/<path>``; a variable the
inventory set to anything else keeps that value (the lab's per-role doubles, a site's own
repository). The ``role_inputs`` and ``host_plan`` actions apply it to every role's inputs; the
``mirror_urls`` filter returns the same table for ``playbooks/mirror.yml`` and users.

Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

# variable -> (path under the mirror, kind). ``{basename}`` is the last part of the vendor URL.
# ``{version}``/``{arch}``/``$(ARCH)`` are the roles' own placeholders and stay as they are.
MIRRORED = {
    'gpuops_cuda_repo_base_url': ('apt/cuda', 'apt repositories'),
    'nvidia_container_toolkit_repo_url': ('apt/libnvidia-container/stable/deb/$(ARCH)', 'apt repository'),
    'nvidia_container_toolkit_keyring_url': ('apt/libnvidia-container/gpgkey', 'file'),
    'node_exporter_binary_url': ('files/node_exporter/{version}/node_exporter-{version}.linux-{arch}.tar.gz', 'file'),
    'node_exporter_checksums_url': ('files/node_exporter/{version}/sha256sums.txt', 'file'),
    'python_stack_pytorch_index_url': ('pytorch/whl', 'python package index'),
    'python_stack_nvidia_index_url': ('pypi-nvidia', 'python package index'),
    'python_stack_conda_installer_url': ('files/miniforge/{basename}', 'file'),
    'volcano_chart_repo_url': ('helm/volcano', 'helm chart repository'),
}

# What the roles fetch that an HTTP mirror cannot carry: said in the table, never repointed.
NOT_MIRRORED = {
    'dcgm_exporter_image_registry': 'a container registry: point it at your registry mirror',
    'volcano_device_plugin_image': 'a container image: point it at your registry mirror',
    'volcano_smoke_image': 'a container image: point it at your registry mirror',
    'volcano_manifest_src': 'empty by default (the Helm chart is used); a manifest URL you set is yours',
    # empty means "pip's own configuration": a site's hosts point pip at its index mirror (pip.conf),
    # or the inventory sets these to <gpuops_mirror_url>/pypi/simple
    'gpuops_nvml_index_url': "empty by default: the host's pip configuration decides",
    'python_stack_pip_index_url': "empty by default: the host's pip configuration decides",
}

_MIRROR_URL = re.compile(r'(?:https?://[A-Za-z0-9.\-\[\]:]+(?:/[^\s?#]*)?|file:///[^\s?#]*)')


def check_mirror_url(value):
    """(url without trailing ``/`` or '', problem or None) for ``gpuops_mirror_url``."""
    if value is None or value == '':
        return '', None
    if not isinstance(value, str) or not _MIRROR_URL.fullmatch(value) or any(ord(ch) < 32 for ch in value):
        return '', ('gpuops_mirror_url must be an http(s):// or file:/// URL without spaces, query or '
                    'fragment (or empty for no mirror), got %r' % (value,))
    return value.rstrip('/'), None


def mirror_path(name, vendor_url):
    """The path of variable ``name``'s artifact under the mirror (None when the table has no row)."""
    row = MIRRORED.get(name)
    if row is None:
        return None
    basename = (vendor_url or '').rstrip('/').rsplit('/', 1)[-1]
    return row[0].replace('{basename}', basename)


def mirrored(name, value, default, mirror_url):
    """(value, reason): the value a URL variable takes, given ``gpuops_mirror_url``.

    ``default`` is the variable's default in its role's argument spec (the vendor URL). Only a
    value still at that default is repointed.
    """
    if name not in MIRRORED:
        return value, '%s is not a mirrored URL variable' % name
    if not mirror_url:
        return value, 'gpuops_mirror_url is not set'
    if value != default:
        return value, '%s was set (not its default): kept' % name
    url = '%s/%s' % (mirror_url, mirror_path(name, default))
    return url, '%s at its default: from the mirror (gpuops_mirror_url)' % name


def apply_mirror(options, values, mirror_value):
    """``values`` with every mirrored variable of ``options`` (an argument spec) repointed.

    ``values`` maps the variable names the play gave to their (templated) values; a variable
    missing there takes the spec's default, as ``convert_inputs`` does. Returns
    (new values, problems); a bad ``gpuops_mirror_url`` is a problem and changes nothing.
    """
    mirror_url, problem = check_mirror_url(mirror_value)
    if problem:
        return dict(values), [problem]
    out = dict(values)
    if not mirror_url:
        return out, []
    for name in options:
        if name not in MIRRORED:
            continue
        default = (options[name] or {}).get('default')
        if default is None:
            default = ''
        value = values.get(name, default)
        new, _reason = mirrored(name, value, default, mirror_url)
        if new != value:
            out[name] = new
    return out, []


def mirror_table(defaults, mirror_value=''):
    """What the roles read from the mirror: one row per table entry, sorted by variable.

    ``defaults`` maps variable names to their argument-spec defaults (every role's). Each row:
    ``variable``, ``vendor_url`` (the default), ``path``,
    ``kind`` and ``url`` (under ``gpuops_mirror_url``, or None when it is not set). Raises
    ValueError on a bad mirror URL or a table row whose variable no role declares.
    """
    mirror_url, problem = check_mirror_url(mirror_value)
    if problem:
        raise ValueError(problem)
    missing = sorted(name for name in MIRRORED if name not in defaults)
    if missing:
        raise ValueError('no role declares the mirrored variable(s) %s' % ', '.join(missing))
    rows = []
    for name in sorted(MIRRORED):
        vendor = defaults[name] or ''
        path = mirror_path(name, vendor)
        rows.append({'variable': name, 'vendor_url': vendor, 'path': path, 'kind': MIRRORED[name][1],
                     'url': ('%s/%s' % (mirror_url, path)) if mirror_url else None})
    return rows
