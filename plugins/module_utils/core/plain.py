# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plain Python values from what Jinja hands a filter (Ansible's tagged/lazy containers).

Filters call it before passing their inputs to the pure decision functions of module_utils.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def plain(value):
    """Deep-copy Ansible's tagged/lazy containers into plain Python types.

    A registered result of a skipped task carries ``skipped_reason`` beside ``skip_reason``;
    ansible-core 2.20 deprecates the former and warns on every read of it, so it is not read where
    ``skip_reason`` holds the same text (never the collection's own deprecation warning).
    """
    if isinstance(value, dict):
        return dict((str(k), plain(value[k])) for k in value
                    if not (k == 'skipped_reason' and 'skip_reason' in value))
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value
