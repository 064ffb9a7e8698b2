# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Package indexes of python_stack: which ones pip may use, its arguments, the requirements
file, and the PEP 503 pages of a wheel mirror.

Plain-HTTP indexes are refused unless python_stack_insecure_index_hosts names their host (pip
runs as root and builds sdists: an index that anyone on the network can answer for is root on
the node); a named host is trusted with ``--trusted-host``, and the status says so.
Standard library only, Python 3.8+ (imported by the module python_stack_host on the nodes).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env.requirements import canonical

_HTTP = re.compile(r'http://(?:[^/@\s]+@)?([^/\s]+)(?:/\S*)?')
_HOST = re.compile(r'[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?')


def http_host(url):
    """The host[:port] of a plain-HTTP URL, else None."""
    match = _HTTP.fullmatch(url or '')
    return match.group(1) if match else None


def valid_host(host):
    """Whether ``host`` is a host name or address with an optional port (one line)."""
    return isinstance(host, str) and _HOST.fullmatch(host) is not None


def insecure_index_problems(urls, allowed, where):
    """Problems of plain-HTTP index URLs whose host python_stack_insecure_index_hosts does not name."""
    problems = []
    for url in urls:
        host = http_host(url)
        if host is not None and host not in (allowed or []):
            problems.append('%s: index %s is plain HTTP: anyone on the network path can serve pip (which runs as '
                            'root) packages; use https, or name %s in python_stack_insecure_index_hosts to trust '
                            'it anyway' % (where, url, host))
    return problems


def trusted_hosts(urls):
    """The hosts of plain-HTTP index URLs (each one python_stack_insecure_index_hosts named, or
    the plan refused it): pip ignores such an index unless the host is trusted."""
    hosts = []
    for url in urls:
        host = http_host(url)
        if host is not None and host not in hosts:
            hosts.append(host)
    return hosts


def index_args(index_url):
    """pip arguments for one index URL (with --trusted-host for plain HTTP); [] for none."""
    if not index_url:
        return []
    args = ['--index-url', index_url]
    for host in trusted_hosts([index_url]):
        args += ['--trusted-host', host]
    return args


def wheel_project(filename):
    """The canonical project name of a wheel or sdist file name, or None."""
    if filename.endswith('.whl'):
        return canonical(filename.split('-', 1)[0])
    for ext in ('.tar.gz', '.zip'):
        if filename.endswith(ext):
            return canonical(filename[:-len(ext)].rsplit('-', 1)[0])
    return None


def simple_project_page(project, files, href_prefix):
    """The PEP 503 page of one project: ``files`` is [(filename, sha256)], links are
    ``<href_prefix><filename>#sha256=<hex>``."""
    lines = ['<!DOCTYPE html>', '<html><head><meta name="pypi:repository-version" content="1.0">'
             '<title>Links for %s</title></head><body>' % project, '<h1>Links for %s</h1>' % project]
    for name, digest in sorted(files):
        lines.append('<a href="%s%s#sha256=%s">%s</a><br/>' % (href_prefix, name.replace('+', '%2B'), digest, name))
    lines.append('</body></html>')
    return '\n'.join(lines) + '\n'


def simple_root_page(projects):
    """The PEP 503 root page listing ``projects`` (canonical names)."""
    lines = ['<!DOCTYPE html>', '<html><head><meta name="pypi:repository-version" content="1.0">'
             '<title>Simple index</title></head><body>']
    for project in sorted(projects):
        lines.append('<a href="%s/">%s</a><br/>' % (project, project))
    lines.append('</body></html>')
    return '\n'.join(lines) + '\n'
