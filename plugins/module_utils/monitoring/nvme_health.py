# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVMe wear and media errors for node_exporter's textfile collector (target side, Python 3.8,
standard library only).

This file is both the parser the unit tests import and the program the node runs: the
node_exporter role installs THIS file (``copy: src:`` from the collection) as
``/usr/local/libexec/gpuops/nvme_health.py``, and a systemd timer runs it as a oneshot service
(``node_exporter_storage.py`` renders the units). One source: no role-local copy.

Per NVMe controller in ``/sys/class/nvme`` it runs ``nvme smart-log /dev/nvmeN -o json``
(Debian's nvme-cli) and writes, atomically, ``gpuops_nvme.prom`` into the textfile directory:

- ``gpuops_nvme_devices``: controllers found (0 in a container or on a host without NVMe -
  the file says so, it invents nothing); ``gpuops_nvme_cli_available``: whether ``nvme`` is there.
- per device (``device="nvme0"``): ``gpuops_nvme_smart_log_ok`` (0: the read or its parse failed,
  and then no other sample of that device), ``gpuops_nvme_percentage_used_percent`` (the
  vendor's estimate of the rated endurance used; may exceed 100), ``gpuops_nvme_media_errors_total``,
  ``gpuops_nvme_critical_warning`` (the SMART critical warning bits),
  ``gpuops_nvme_available_spare_percent`` and ``gpuops_nvme_available_spare_threshold_percent``.

nvme-cli versions differ (fixtures under tests/unit/plugins/module_utils/data/nvme_smart_log/):
1.x prints the 128-bit counters as numbers (some builds as floats, ``0.0``), 2.x as numbers or
strings with thousands separators (``"1,234"``), newer 2.x prints ``critical_warning`` as an
object with a ``value`` key, and some writers name the wear ``percentage_used`` and the spare
``available_spare``/``available_spare_threshold`` (smartctl's names). ``parse()`` takes all of them.

Usage: nvme_health.py --textfile-dir DIR [--sysfs-root /sys]
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TEXTFILE = 'gpuops_nvme.prom'
# A controller's name in /sys/class/nvme (nvme-subsys* and nvme-fabrics are not controllers).
CONTROLLER_RE = re.compile(r'nvme[0-9]{1,4}')
# Field -> the keys nvme-cli versions (and smartctl-style writers) use for it, in order.
FIELDS = (
    ('percentage_used', ('percent_used', 'percentage_used')),
    ('media_errors', ('media_errors',)),
    ('critical_warning', ('critical_warning',)),
    ('available_spare', ('avail_spare', 'available_spare')),
    ('available_spare_threshold', ('spare_thresh', 'available_spare_threshold')),
)
HELP = (
    ('gpuops_nvme_devices', 'gauge', 'NVMe controllers found in /sys/class/nvme (0: none on this host)'),
    ('gpuops_nvme_cli_available', 'gauge', 'Whether nvme-cli (nvme) is installed (1) or not (0)'),
    ('gpuops_nvme_smart_log_ok', 'gauge', 'Whether nvme smart-log of the device was read and parsed (1) or not (0)'),
    ('gpuops_nvme_percentage_used_percent', 'gauge', "Vendor's estimate of the rated endurance used, percent (may exceed 100)"),
    ('gpuops_nvme_media_errors_total', 'counter', 'Unrecovered data integrity errors the controller detected'),
    ('gpuops_nvme_critical_warning', 'gauge', 'SMART critical warning bits of the controller (0: none)'),
    ('gpuops_nvme_available_spare_percent', 'gauge', 'Remaining spare capacity, percent'),
    ('gpuops_nvme_available_spare_threshold_percent', 'gauge', 'Spare capacity below which the drive warns, percent'),
)
_METRIC = dict((field, 'gpuops_nvme_%s' % suffix) for field, suffix in (
    ('percentage_used', 'percentage_used_percent'), ('media_errors', 'media_errors_total'),
    ('critical_warning', 'critical_warning'), ('available_spare', 'available_spare_percent'),
    ('available_spare_threshold', 'available_spare_threshold_percent')))
_NUMBER = re.compile(r'[0-9]{1,3}(,[0-9]{3})*|[0-9]+')


def number(value, key):
    """A non-negative integer of one smart-log value: an int, a float with no fraction, a string
    of digits (thousands separators allowed), or critical_warning's ``{"value": N, ...}``."""
    if isinstance(value, dict) and 'value' in value:
        value = value['value']
    if isinstance(value, bool):
        raise ValueError('%s: %r is not a number' % (key, value))
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and value >= 0 and value == int(value):
        return int(value)
    if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
        return int(value.strip().replace(',', ''))
    raise ValueError('%s: %r is not a non-negative integer' % (key, value))


def parse(text):
    """``{percentage_used, media_errors, critical_warning, available_spare,
    available_spare_threshold}`` of one ``nvme smart-log -o json`` output; ValueError naming
    what is missing or malformed."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError('not JSON: %s' % exc)
    if not isinstance(data, dict):
        raise ValueError('not a JSON object')
    out = {}
    for field, keys in FIELDS:
        key = next((k for k in keys if k in data), None)
        if key is None:
            raise ValueError('no %s in the smart-log' % ' or '.join(keys))
        out[field] = number(data[key], key)
    return out


def controllers(sysfs_root='/sys'):
    """The NVMe controllers (``nvme0``, ``nvme1``, ...) in numeric order; [] when there is none."""
    try:
        names = os.listdir(os.path.join(sysfs_root, 'class', 'nvme'))
    except OSError:
        return []
    return sorted((n for n in names if CONTROLLER_RE.fullmatch(n)), key=lambda n: int(n[4:]))


def read(devices, nvme, run):
    """``[{device, ok, values | error}]``: ``run(argv)`` -> ``(rc, stdout, stderr)`` for each device's
    smart-log; ``nvme`` is the nvme-cli path or None (then every device is a failed read)."""
    results = []
    for device in devices:
        if not nvme:
            results.append({'device': device, 'ok': False, 'error': 'nvme-cli is not installed'})
            continue
        rc, out, err = run([nvme, 'smart-log', '/dev/%s' % device, '-o', 'json'])
        if rc != 0:
            results.append({'device': device, 'ok': False, 'error': 'rc %s: %s' % (rc, (err or out).strip()[:200])})
            continue
        try:
            results.append({'device': device, 'ok': True, 'values': parse(out)})
        except ValueError as exc:
            results.append({'device': device, 'ok': False, 'error': str(exc)})
    return results


def render(cli_available, results):
    """The textfile's text (Prometheus exposition format) for ``read()``'s results."""
    samples = {'gpuops_nvme_devices': ['gpuops_nvme_devices %d' % len(results)],
               'gpuops_nvme_cli_available': ['gpuops_nvme_cli_available %d' % (1 if cli_available else 0)]}
    for result in results:
        label = '{device="%s"}' % result['device']
        samples.setdefault('gpuops_nvme_smart_log_ok', []).append(
            'gpuops_nvme_smart_log_ok%s %d' % (label, 1 if result['ok'] else 0))
        for field, value in sorted((result.get('values') or {}).items()):
            samples.setdefault(_METRIC[field], []).append('%s%s %d' % (_METRIC[field], label, value))
    lines = []
    for name, kind, text in HELP:
        if name in samples:
            lines += ['# HELP %s %s' % (name, text), '# TYPE %s %s' % (name, kind)] + samples[name]
    return '\n'.join(lines) + '\n'


def write(directory, text):
    """Write ``text`` to ``directory``/gpuops_nvme.prom atomically (a temporary file and a rename,
    so that node_exporter never reads half a file), mode 0644."""
    handle, tmp = tempfile.mkstemp(prefix='.gpuops_nvme.', dir=directory)
    try:
        with os.fdopen(handle, 'w') as out:
            out.write(text)
        os.chmod(tmp, 0o644)
        os.rename(tmp, os.path.join(directory, TEXTFILE))
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def _run(argv):
    env = dict(os.environ, LC_ALL='C', LANG='C')
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                              timeout=60, env=env, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return 127, '', str(exc)
    return proc.returncode, proc.stdout, proc.stderr


def main(argv=None, run=_run, which=shutil.which):
    parser = argparse.ArgumentParser(description='NVMe wear and media errors into the textfile collector')
    parser.add_argument('--textfile-dir', required=True)
    parser.add_argument('--sysfs-root', default='/sys')
    args = parser.parse_args(argv)
    nvme = which('nvme')
    results = read(controllers(args.sysfs_root), nvme, run)
    for result in results:
        if not result['ok']:
            sys.stderr.write('%s: smart-log not read: %s\n' % (result['device'], result['error']))
    write(args.textfile_dir, render(bool(nvme), results))
    read_ok = sum(1 for r in results if r['ok'])
    sys.stdout.write('%s/%s: %d NVMe controller(s), %d read\n' % (args.textfile_dir, TEXTFILE, len(results), read_ok))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
