# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a host's platform is one the collection's roles support (common's preflight, through
the gpuops.dlserver.__private.role_inputs action; the list is roles/common/vars/main.yml's
__common_supported_platforms)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def platform_version(facts):
    """The version the table is keyed by: Ubuntu's full version (22.04), else the major (12)."""
    facts = facts or {}
    if facts.get('distribution') == 'Ubuntu':
        return str(facts.get('distribution_version', ''))
    return str(facts.get('distribution_major_version', ''))


def describe_platforms(platforms):
    """'Debian 12/13, Ubuntu 22.04/24.04, ...' in the table's order."""
    return ', '.join('%s %s' % (name, '/'.join(str(v) for v in versions)) for name, versions in platforms.items())


def platform_error(role, facts, platforms):
    """None where ``facts`` (ansible_facts: distribution, distribution_major_version,
    distribution_version) name a platform of ``platforms`` ({distribution: [versions]}), else the
    message that says which platform is not supported and lists those that are."""
    if not isinstance(platforms, dict) or not platforms:
        raise ValueError('the table of supported platforms must be a non-empty mapping')
    facts = facts or {}
    distribution = str(facts.get('distribution', ''))
    version = platform_version(facts)
    if distribution in platforms and version in [str(v) for v in platforms[distribution]]:
        return None
    return '%s does not support %s %s. Supported platforms: %s.' % (
        role, distribution or '(unknown)', version or '(unknown)', describe_platforms(platforms))


# The facts every role decides on; the `virtual` subset of the setup module brings them all
# (with distribution, kernel and python).
ROLE_FACTS = ('virtualization_type', 'distribution', 'kernel', 'python')


def missing_facts(facts):
    """The names of ROLE_FACTS that ``facts`` (ansible_facts) lacks, in ROLE_FACTS' order."""
    facts = facts or {}
    return [name for name in ROLE_FACTS if name not in facts]


def in_container(facts, container_types):
    """Whether ``facts`` (with the `virtual` subset) say the host is a container guest, one of
    ``container_types`` (docker, podman, lxc, ...), whose kernel, boot loader and modules are the
    host's: roles persist settings there but apply nothing live."""
    facts = facts or {}
    return facts.get('virtualization_role', '') == 'guest' and facts.get('virtualization_type', '') in list(container_types or [])
