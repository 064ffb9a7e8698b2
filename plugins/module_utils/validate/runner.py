# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How gpuops.dlserver.gpu_validate runs its measurements: with a time limit each, and the ranks
of an all-reduce side by side (they must run at the same time, which AnsibleModule.run_command
cannot do). Every call returns ``(rc, stdout, stderr)`` and never raises: 124 is a timeout, 127 a
program that could not start.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import socket
import subprocess


def environment(extra=None):
    """The measurement's environment: C locale, CUDA devices in PCI order (like the probe), ``extra``."""
    env = dict(os.environ, LC_ALL='C', CUDA_DEVICE_ORDER='PCI_BUS_ID')
    env.update(extra or {})
    return env


def run(argv, timeout, env=None):
    return run_parallel([argv], timeout, env)[0]


def run_parallel(argvs, timeout, env=None):
    """Start every command, then wait for each within ``timeout`` seconds (killed after)."""
    procs = []
    for argv in argvs:
        try:
            procs.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                          universal_newlines=True))
        except OSError as exc:
            procs.append((127, '', str(exc)))
    return [proc if isinstance(proc, tuple) else _wait(proc, timeout) for proc in procs]


def _wait(proc, timeout):
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return 124, out, (err or '') + '\ntimed out after %d s' % timeout


def free_port():
    """A TCP port free on 127.0.0.1 now (the node all-reduce's rendezvous)."""
    sock = socket.socket()
    try:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]
    finally:
        sock.close()
