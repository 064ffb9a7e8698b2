# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Adopt, don't disturb: who installed what a role would manage, and whether the role may touch it.

A driver, container toolkit, DCGM or Python environment that the collection did not install is
reported and left alone unless the user consents (``<role>_adopt: true``); what the collection
installed (or what came from the very source the role uses, installed by hand) is managed, and
an installed driver keeps its version unless the inventory asks for another (the plan's branch
rule, ``plan/driver_branch.py``).

The readers (the probe, a role's facts module) hand in what they saw; these functions decide.
Pure functions, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.options import branch_of_version

# Who installed the driver.
NONE = 'none'
COLLECTION = 'collection'
SAME_SOURCE = 'same_source'
RUNFILE = 'runfile'
OTHER_REPOSITORY = 'other_repository'
DISTRIBUTION = 'distribution'
UNKNOWN = 'unknown'

SOURCES = ('cuda_repo', 'distro')
ORIGINS = ('cuda_repo', 'distro', 'other')
ACTIONS = ('install', 'manage', 'adopt', 'leave')


class AdoptError(ValueError):
    """What a reader handed in is of the wrong shape."""


def _bool(value, name):
    if not isinstance(value, bool):
        raise AdoptError('adopt: %s must be true or false, got %r' % (name, value))
    return value


def installed_driver(packages, loaded_version=None):
    """``{version, branch, loaded}`` of the driver on the host: the loaded one, else the installed package's.

    ``packages``: ``{name: version}`` of the driver's kernel-module packages installed (dpkg/rpm state:
    installed counts even when the module is not loaded yet, e.g. pending a reboot). Epochs and
    package revisions are dropped (``1:580.95.05-1`` is 580.95.05).
    """
    if packages is None:
        packages = {}
    if not isinstance(packages, dict):
        raise AdoptError('adopt: the installed driver packages must be a dict of name: version, got %r' % (packages,))
    if loaded_version:
        return {'version': str(loaded_version), 'branch': branch_of_version(loaded_version), 'loaded': True}
    found = []
    for name in sorted(packages):
        version = packages[name]
        # a driver package's version: [epoch:]upstream[-revision] (dpkg) or upstream[-release] (rpm)
        parsed = versions.driver_version_or_none(version)
        if parsed is None:
            raise AdoptError('adopt: package %s has no driver version (%r)' % (name, version))
        found.append(parsed)
    if not found:
        return {'version': None, 'branch': None, 'loaded': False}
    newest = sorted(found, key=lambda parsed: parsed['numbers'])[-1]
    return {'version': newest['upstream'], 'branch': newest['branch'], 'loaded': False}


def driver_owner(evidence, source):
    """``{owner, reason}``: who installed the driver on the host.

    ``evidence``: ``runfile`` (bool: /usr/bin/nvidia-installer present, or nvidia-smi or the
    installer's log without any driver package: probe/packages.py), ``origins`` (the repositories the installed driver packages come from: ``cuda_repo``,
    ``distro`` or ``other``), ``marker`` (bool: the collection's record of its driver install),
    ``loaded`` (bool: a driver is loaded). ``source``: nvidia_driver_source.
    """
    if not isinstance(evidence, dict):
        raise AdoptError('adopt: the driver evidence must be a dict, got %r' % (evidence,))
    if source not in SOURCES:
        raise AdoptError('adopt: nvidia_driver_source must be one of %s, got %r' % (', '.join(SOURCES), source))
    runfile = _bool(evidence.get('runfile', False), 'runfile')
    marker = _bool(evidence.get('marker', False), 'marker')
    loaded = _bool(evidence.get('loaded', False), 'loaded')
    origins = evidence.get('origins') or []
    if not isinstance(origins, list) or any(o not in ORIGINS for o in origins):
        raise AdoptError('adopt: origins must be a list of %s, got %r' % (', '.join(ORIGINS), origins))
    # The collection's packages with its version pin win over a .run installer's leftovers (a host
    # whose runfile install was replaced by the collection's packages keeps its log).
    if origins and marker:
        return {'owner': COLLECTION, 'reason': 'installed by this collection'}
    if runfile:
        return {'owner': RUNFILE, 'reason': "NVIDIA's .run installer put the driver here (nvidia-installer)"}
    if origins and set(origins) == {source}:
        return {'owner': SAME_SOURCE, 'reason': 'installed from %s, the source the role uses' % _source_text(source)}
    if 'other' in origins:
        return {'owner': OTHER_REPOSITORY, 'reason': 'installed from a repository the role does not use'}
    if origins:
        return {'owner': DISTRIBUTION if 'distro' in origins else OTHER_REPOSITORY,
                'reason': 'installed from %s, while nvidia_driver_source is %s'
                          % (_source_text(origins[0]), source)}
    if loaded:
        return {'owner': UNKNOWN, 'reason': 'a driver is loaded that no package of the host carries (built by hand?)'}
    return {'owner': NONE, 'reason': 'no NVIDIA driver is installed'}


def _source_text(origin):
    return {'cuda_repo': "NVIDIA's CUDA repository", 'distro': "the distribution's packages"}.get(
        origin, 'another repository')


def decide(role, what, owner, owner_reason, adopt):
    """``{action, owner, reason}``: what ``role`` does with ``what`` that ``owner`` installed.

    ``install`` (nothing there), ``manage`` (the collection's, or from the role's own source: its
    version is kept unless the inventory asks), ``adopt`` (someone else's, the user consented with
    ``<role>_adopt``), ``leave`` (someone else's, no consent: reported, not touched).
    """
    adopt = _bool(adopt, '%s_adopt' % role)
    if owner == NONE:
        return {'action': 'install', 'owner': owner, 'reason': '%s: %s is not installed' % (owner_reason, what)}
    if owner in (COLLECTION, SAME_SOURCE):
        return {'action': 'manage', 'owner': owner,
                'reason': '%s %s; its version is kept unless the inventory asks for another' % (what, owner_reason)}
    if adopt:
        return {'action': 'adopt', 'owner': owner,
                'reason': '%s %s; %s_adopt is true: the role takes it over' % (what, owner_reason, role)}
    return {'action': 'leave', 'owner': owner,
            'reason': '%s %s: left alone (set %s_adopt: true to let the role take it over)' % (what, owner_reason, role)}


def driver(evidence, source, adopt):
    """The driver role's adoption decision from the reader's evidence (``driver_owner``)."""
    found = driver_owner(evidence, source)
    return decide('nvidia_driver', 'the NVIDIA driver', found['owner'], found['reason'], adopt)


NOT_READ = 'not_read'


def driver_evidence(driver_facts):
    """The evidence of ``driver_owner`` from the probe's ``driver`` facts (gpu_facts, probe/packages.py),
    or None when the probe did not read the package state (``packages: disabled``, older facts)."""
    if not isinstance(driver_facts, dict) or 'packages_read' not in driver_facts:
        return None
    installed = driver_facts.get('installed_packages') or {}
    origins = driver_facts.get('package_origins') or {}
    if not isinstance(installed, dict) or not isinstance(origins, dict):
        raise AdoptError('adopt: installed_packages and package_origins must be dicts, got %r and %r'
                         % (installed, origins))
    return {
        'runfile': driver_facts.get('runfile', False),
        'marker': driver_facts.get('marker', False),
        'loaded': driver_facts.get('loaded') is True,
        'origins': sorted(set(origins.get(name, 'other') if origins.get(name) in ORIGINS else 'other'
                              for name in installed)),
    }


def plan_driver(driver_facts, source, adopt):
    """The plan's ``adopt.nvidia_driver``: ``driver(...)`` from the probe's facts; when the probe did
    not read the package state, ``manage`` (owner ``not_read``) as before the collection read it."""
    evidence = driver_evidence(driver_facts)
    if evidence is None:
        _bool(adopt, 'nvidia_driver_adopt')
        return {'action': 'manage', 'owner': NOT_READ,
                'reason': 'the probe did not read who installed the driver (gpu_facts packages: disabled): '
                          'the role manages it'}
    return driver(evidence, source, adopt)


def component(role, what, installed, marker, adopt):
    """A component the collection marks when it installs it (container toolkit, DCGM, a Python
    environment at the role's prefix): ``installed`` without the ``marker`` is someone else's."""
    installed = _bool(installed, 'installed')
    marker = _bool(marker, 'marker')
    if not installed:
        return decide(role, what, NONE, 'nothing found', adopt)
    if marker:
        return decide(role, what, COLLECTION, 'installed by this collection', adopt)
    return decide(role, what, UNKNOWN, 'is installed, not by this collection (no marker)', adopt)


# role -> (what, the origin of the role's own repository as probe/packages.py names it)
COMPONENTS = {
    'nvidia_container_toolkit': ('the NVIDIA Container Toolkit', 'toolkit_repo'),
    'dcgm_exporter': ('DCGM (datacenter-gpu-manager) or dcgm-exporter', 'cuda_repo'),
}
_UNIT_PATH = re.compile(r'/etc/systemd/system/(?:[a-z.-]+\.wants/)?([a-z-]+\.service)')


def plan_component(role, components, adopt):
    """The plan's ``adopt.<role>`` for a component the probe reads (probe/packages.py COMPONENTS).

    ``components``: the probe's ``components`` facts (None, or without the role: not read, then
    ``manage`` as before). Not installed, or installed with the role's marker: the collection's (one
    record for both, as the plan must not change once the role installed it); from the role's own
    repository: the same source; from anywhere else, or an exporter unit (``units``: paths under
    /etc/systemd/system the probe found) without the role's marker: someone else's, left alone
    unless ``adopt`` (the decision then names the ``units`` the role stops when it takes over).
    """
    what, own = COMPONENTS[role]
    _bool(adopt, '%s_adopt' % role)
    if components is None or (isinstance(components, dict) and role not in components):
        # not read at all, or not by this probe (the package state was unreadable, older facts)
        return {'action': 'manage', 'owner': NOT_READ,
                'reason': 'the probe did not read who installed %s: the role manages it' % what}
    found = components.get(role) if isinstance(components, dict) else None
    if not isinstance(found, dict):
        raise AdoptError('adopt: components.%s must be a dict of version, origin, marker, got %r' % (role, found))
    units = found.get('units') or []
    if not isinstance(units, list) or any(not isinstance(u, str) or not _UNIT_PATH.fullmatch(u) for u in units):
        raise AdoptError('adopt: components.%s.units must be a list of unit paths under /etc/systemd/system, got %r'
                         % (role, units))
    marker = _bool(found.get('marker', False), 'marker')
    if units and not marker:
        # an exporter someone else runs: its unit, enabled or written by hand, without the role's marker
        decision = decide(role, what, UNKNOWN, 'runs from a unit the role did not write (%s)' % ', '.join(units), adopt)
        decision['units'] = sorted(set(_UNIT_PATH.fullmatch(u).group(1) for u in units))
        return decision
    if not found.get('version') or marker:
        # one record for both, so that the plan (and /etc/gpuops/plan.json) is the same before and
        # after the role installs it: the role's either way
        return {'action': 'manage', 'owner': COLLECTION,
                'reason': "%s is the role's: not installed yet, or installed by this collection" % what}
    origin = found.get('origin')
    if origin not in ORIGINS + ('toolkit_repo',):
        raise AdoptError('adopt: components.%s.origin must be one of %s, got %r'
                         % (role, ', '.join(ORIGINS + ('toolkit_repo',)), origin))
    if origin == own:
        return decide(role, what, SAME_SOURCE, 'installed from the repository the role uses', adopt)
    owner = DISTRIBUTION if origin == 'distro' else OTHER_REPOSITORY
    return decide(role, what, owner, 'installed from %s (%s)' % (
        "the distribution's packages" if origin == 'distro' else 'another repository', found.get('version')), adopt)
