# -*- coding: utf-8 -*-
# Copyright (c) gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: preload
type: aggregate
short_description: Load the plugins a gpuops.dlserver run uses once, before the first worker forks
version_added: 0.2.0
description:
  - Ansible runs every task of every host in a worker process forked from C(ansible-playbook),
    and a worker imports each action, filter and test plugin its task uses anew, then exits
    with what it imported. On a no-op C(site.yml) run that is most of the controller's CPU per
    host after the templating (the collection's action plugins import the role libraries, its
    filters the decision code).
  - This callback imports them once in C(ansible-playbook) itself when the playbook starts, so
    every forked worker inherits them - the collection's action, filter, test and lookup
    plugins, Ansible's own action plugins and filter and test files (the first lookup of any
    filter also scans every plugin path once), and the connection and shell plugins of the
    configuration - and prints nothing (with C(-vvv), how many it loaded).
    Measured on the lab (README, "ansible.cfg for fleets") - 0.3 s once per run, 0.6-0.8 s of
    controller CPU less per host (a no-op C(site.yml) on 4 lab GPU nodes used 19 % more controller
    CPU without it).
  - A plugin that cannot be loaded is left to the task that uses it (which then reports the
    error as it would without this callback); the run goes on.
  - Enable it with C(callbacks_enabled = gpuops.dlserver.preload) in C(ansible.cfg) or
    C(ANSIBLE_CALLBACKS_ENABLED), as the collection's recommended C(ansible.cfg) does.
requirements:
  - enable in configuration
"""

import os

from ansible import constants as C
from ansible.plugins.callback import CallbackBase
from ansible.plugins.loader import (action_loader, connection_loader, filter_loader, lookup_loader, shell_loader,
                                    test_loader)

COLLECTION = "gpuops.dlserver"
PRIVATE_DIR = "__private"
PLUGINS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# one filter or test name of each of Ansible's own plugin files (a file loads whole)
BUILTIN_FILTERS = ("ansible.builtin.bool", "ansible.builtin.unique", "ansible.builtin.urlsplit",
                   "ansible.builtin.urldecode", "ansible.builtin.vault")
BUILTIN_TESTS = ("ansible.builtin.match", "ansible.builtin.is_abs", "ansible.builtin.subset", "ansible.builtin.uri")
LOADERS = {"action": action_loader, "filter": filter_loader, "test": test_loader, "lookup": lookup_loader,
           "connection": connection_loader, "shell": shell_loader}


def plugin_names(directory, prefix):
    """``prefix.<name>`` of every plugin file in ``directory`` (none when it is missing).

    The collection's private plugins live in its ``__private`` subdirectory of each plugin type
    (docs/public-surface.md) and are named ``prefix.__private.<name>``: an action's name is its
    file's, a private filter file's filter is ``<name>`` too (each file declares the filter it is
    named for). Files starting with ``_`` (``__init__.py``, Ansible's own) are not plugins.
    """
    try:
        files = sorted(os.listdir(directory))
    except OSError:
        return []
    names = []
    for name in files:
        if name == PRIVATE_DIR and prefix == COLLECTION:
            names.extend(plugin_names(os.path.join(directory, name), "%s.%s" % (prefix, PRIVATE_DIR)))
        elif name.endswith(".py") and not name.startswith("_"):
            names.append("%s.%s" % (prefix, name[:-3]))
    return names


def wanted(plugins_dir=PLUGINS_DIR):
    """(kind, name) of every plugin to load, in order."""
    import ansible.plugins.action as builtin_actions
    found = []
    for kind in ("action", "filter", "test", "lookup"):
        found.extend((kind, name) for name in plugin_names(os.path.join(plugins_dir, kind), COLLECTION))
    found.extend(("action", name) for name in plugin_names(os.path.dirname(builtin_actions.__file__), "ansible.builtin"))
    found.extend(("filter", name) for name in BUILTIN_FILTERS)
    found.extend(("test", name) for name in BUILTIN_TESTS)
    found.append(("connection", C.DEFAULT_TRANSPORT if C.DEFAULT_TRANSPORT not in (None, "smart") else "ssh"))
    found.append(("shell", "sh"))
    return found


def preload(names):
    """Load each (kind, name) into this process; returns how many loaded and the names that did not."""
    loaded, missed = 0, []
    for kind, name in names:
        try:
            plugin = LOADERS[kind].get(name, class_only=True)
        except Exception:  # pylint: disable=broad-except  # the task that uses it reports it
            plugin = None
        if plugin is None:
            missed.append("%s %s" % (kind, name))
        else:
            loaded += 1
    return loaded, missed


class CallbackModule(CallbackBase):
    """Imports the run's plugins in ansible-playbook before the first worker forks."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpuops.dlserver.preload"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.loaded = 0
        self.missed = []

    def v2_playbook_on_start(self, playbook):
        self.loaded, self.missed = preload(wanted())
        self._display.vvv("gpuops.dlserver.preload: %d plugins loaded before the first fork; not loaded: %s"
                          % (self.loaded, ", ".join(self.missed) or "none"))
