# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which URL a failed download failed on, and which variable sets it.

``ansible.builtin.get_url`` with ``checksum: sha256:<checksums URL>`` fetches two URLs: the
checksums file first, then the file. Its failure result names the URL whose request failed in
``url`` (``Request failed``/``status_code`` or ``Failure downloading <url>, ...``), or the checksums
URL in its message when that file has no line for the download (``Unable to find a checksum for
file ... in '<url>'``). ``failed_url`` reads that back, so that the role's message names exactly the
URL that failed (a 404 on ``sha256sums.txt`` is not reported as the tarball's) and the variable
that sets it. Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NO_CHECKSUM = re.compile(r"Unable to find a checksum for file '[^']*' in '([^']+)'")
_FAILURE = re.compile(r'Failure downloading (\S+), ')


def failed_url(result, urls):
    """``{url, variable, status, what}`` of a failed get_url ``result``.

    ``urls`` maps each variable to the URL the task derived from it (``{'node_exporter_binary_url':
    <tarball URL>, 'node_exporter_checksums_url': <checksums URL or ''>}``). ``url``: the URL that
    failed (None when the result names none); ``variable``: the variable whose URL it is (None when
    no variable's); ``status``: the HTTP status (None when there was no answer); ``what``: one
    sentence for the message.
    """
    if not isinstance(result, dict):
        raise ValueError('the failed result must be a dict (ansible_failed_result), got %r' % (result,))
    if not isinstance(urls, dict) or not all(isinstance(v, str) for v in urls.values()):
        raise ValueError('urls must map each variable to the URL derived from it, got %r' % (urls,))
    msg = str(result.get('msg') or '')
    status = result.get('status_code')
    match = _NO_CHECKSUM.search(msg)
    if match:
        url = match.group(1)
        what = '%s has no line for the file' % url
    else:
        match = _FAILURE.search(msg)
        url = match.group(1) if match else result.get('url')
        if status and int(status) >= 400:
            what = '%s answered HTTP %s (%s)' % (url, status, result.get('response') or msg)
        elif 'did not match' in msg:
            what = 'the sha256 of %s does not match: %s' % (url, msg)
        else:
            what = '%s failed: %s' % (url, msg or 'no message')
    variable = None
    for name, value in sorted((urls or {}).items()):
        if url and value and value == url:
            variable = name
            break
    return {'url': url, 'variable': variable, 'status': int(status) if status else None, 'what': what}


def message(result, urls, role_text):
    """The whole failure message: the URL and its variable first, then ``role_text``."""
    found = failed_url(result, urls)
    head = ('%s: ' % found['variable']) if found['variable'] else ''
    return '%s%s; %s' % (head, found['what'], role_text)
