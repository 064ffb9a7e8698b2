# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``ib_write_bw`` (perftest) between the nodes of a cross-node group, for
gpuops.dlserver.gpu_validate: the host's InfiniBand ports (``/sys/class/infiniband``), the
server and client command lines (bounded duration, ``--report_gbits``), the parser of perftest's
report and the verdict - measured Gb/s against the port's link rate. The ports are read by
``observe.ib_ports`` (``/sys/class/infiniband``) into ``port_entry`` here.

A host without an active InfiniBand port skips the test, with the reason. Pure functions; tested from
``tests/unit/plugins/module_utils/data/validate_ib_perf_cases.yml`` on published reports.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate.health import check

# perftest's report: a header line, then one line of figures per message size.
_HEADER_RE = re.compile(r'^\s*#bytes\s+#iterations\s+BW peak\[([A-Za-z/]+)\]\s+BW average\[([A-Za-z/]+)\]', re.M)
_ROW_RE = re.compile(r'\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)(?:\s+([0-9.]+))?\s*')
# /sys/class/infiniband/<dev>/ports/<n>/rate: "<rate> Gb/sec (<width>X <speed>)", e.g. "200 Gb/sec (4X HDR)"
_RATE_RE = re.compile(r'([0-9]+(?:\.[0-9]+)?) Gb/sec(?: \(.*\))?')
DEVICE_RE = re.compile(r'[A-Za-z0-9_.-]{1,64}')
_MAX_MESSAGE = 300


def port_entry(device, port, state, rate, link_layer):
    """One port as read from sysfs: ``{device, port, active, rate_gbps, link_layer}``."""
    match = _RATE_RE.fullmatch(rate or '')
    return {'device': device, 'port': port,
            'active': bool(state) and state.split(':')[-1].strip().upper() == 'ACTIVE',
            'rate_gbps': float(match.group(1)) if match else None,
            'link_layer': (link_layer or 'InfiniBand').strip()}


def choose_port(found):
    """``(port, reason)``: the fastest active InfiniBand port, or None and why the test is skipped."""
    if not found:
        return None, 'no InfiniBand device on this host: ib_write_bw not run'
    if all(p['port'] is None for p in found):
        return None, ('InfiniBand device(s) %s on PCI, but no port under /sys/class/infiniband (is the RDMA '
                      'driver loaded?): ib_write_bw not run' % ', '.join(sorted(p['device'] for p in found)))
    active = [p for p in found if p['active']]
    if not active:
        return None, 'no active InfiniBand port (%s): ib_write_bw not run' % ', '.join(
            '%s/%s' % (p['device'], p['port']) for p in found if p['port'] is not None)
    ib = [p for p in active if (p['link_layer'] or '').lower() == 'infiniband']
    if not ib:
        named = ', '.join('%s/%s (%s)' % (p['device'], p['port'], p['link_layer']) for p in active)
        return None, ('the active RDMA ports are %s, not InfiniBand: ib_write_bw not run (iperf3 measures '
                      'the Ethernet path)' % named)
    return max(ib, key=lambda p: p['rate_gbps'] or 0), ''


def server_argv(port, tcp_port, seconds):
    """The server side (the group's first host), one client, then it exits."""
    return ['ib_write_bw', '-d', port['device'], '-i', str(port['port']), '-p', str(tcp_port),
            '-D', str(seconds), '-F', '--report_gbits']


def client_argv(port, tcp_port, seconds, server_address):
    return server_argv(port, tcp_port, seconds) + [server_address]


def parse(text):
    """``{gbps, peak_gbps, bytes, iterations}`` from the last report row, or ``{error}``."""
    text = text or ''
    headers = list(_HEADER_RE.finditer(text))
    header = headers[-1] if headers else None
    if header is None:
        lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith('-')]
        return {'error': 'ib_write_bw printed no report: %s' % ((lines[-1] if lines else 'no output')[:_MAX_MESSAGE])}
    if header.group(2) != 'Gb/sec':
        return {'error': 'ib_write_bw reported %s, not Gb/sec (run it with --report_gbits)' % header.group(2)}
    rows = [m for m in (_ROW_RE.fullmatch(line) for line in text[header.end():].splitlines()) if m]
    row = rows[-1] if rows else None
    if row is None:
        return {'error': 'ib_write_bw printed its header but no figures'}
    return {'bytes': int(row.group(1)), 'iterations': int(row.group(2)), 'peak_gbps': float(row.group(3)),
            'gbps': float(row.group(4))}


def verdict(peer, tcp_port, result, port, fraction):
    """The measured average against the port's link rate; a failure names the peer and the port."""
    if result is None or result.get('error'):
        return check('ib_write_bw', 'fail', None, None, 'ib_write_bw to %s port %s failed: %s' % (
            peer, tcp_port, (result or {}).get('error') or 'no result'), peer)
    gbps, rate = result['gbps'], port.get('rate_gbps')
    value = '%s Gb/s' % gbps
    subject = '%s/%s' % (port['device'], port['port'])
    if not rate:
        entry = check('ib_write_bw', 'pass', value, None, 'measured; %s reports no link rate' % subject, peer)
        entry.update({'measured': gbps, 'peak': None, 'fraction': None})
        return entry
    share = round(gbps / rate, 3)
    ok = share >= fraction
    why = '' if ok else (
        'ib_write_bw %s -> %s: %s is %.0f%% of the %s Gb/s link rate, below %.0f%%: check the cable, the switch '
        'port and the HCA\'s PCIe link' % (subject, peer, value, share * 100, rate, fraction * 100))
    entry = check('ib_write_bw', 'pass' if ok else 'fail', value, '>= %.0f%% of %s Gb/s' % (fraction * 100, rate),
                  why, peer)
    entry.update({'measured': gbps, 'peak': rate, 'fraction': share, 'threshold': fraction})
    return entry
