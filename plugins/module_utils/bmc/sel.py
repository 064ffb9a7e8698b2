# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The BMC's System Event Log (SEL) as gpuops.dlserver.gpu_validate judges it (group ``sel``).

Reads what FreeIPMI's ``ipmi-sel`` prints (``--output-event-state --comma-separated-output``, or its
default ``|`` table, header line included) and what ipmitool prints (``sel elist``/``sel list`` lines,
and the verbose records of ``sel get``/``-v sel list`` with their raw event data). Each entry is
decoded to the IPMI 2.0 sensor type code and event offset (``OFFSETS``, the specification's table
42-3 "Sensor Type Codes", and table 42-2 for the threshold and redundancy offsets): from the raw event
data where the tool printed it (offset = event data 1, bits 3:0), else from the offset's name as
either tool prints it (the names of both tools' tables, compared without case, spaces or
punctuation).

Verdicts (``OFFSETS``): uncorrectable memory errors, PCI/PCIe fatal errors (PERR, SERR, bus
uncorrectable/fatal, fatal NMI) and processor IERR, thermal trip and uncorrectable machine checks
fail the node; correctable memory, bus and machine-check errors, power supply and cooling events
and a full or disabled SEL warn, with counts; the rest is not judged. Only asserted events count.

Events at or before the position recorded by the last validation (``position``: the last entry's
record id, date and time, kept in validate.json) are not counted again (``since``). Where that entry
is no longer in the SEL (cleared, or overwritten by a circular log) every entry counts and the
check says so. Pure functions, standard library only; tested from
``tests/unit/plugins/module_utils/data/bmc_sel_cases.yml`` (published output, each with its SOURCE).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc.devices import BMC_DEVICES  # noqa: F401 (read here)

SPEC = 'IPMI v2.0 rev 1.1, table 42-3 (sensor type codes) and table 42-2 (generic event offsets)'

TEMPERATURE, FAN, PROCESSOR, POWER_SUPPLY, MEMORY, EVENT_LOGGING, CRITICAL_INTERRUPT = (
    0x01, 0x04, 0x07, 0x08, 0x0C, 0x10, 0x13)

# Sensor type names as FreeIPMI and ipmitool print them -> the specification's code.
TYPE_NAMES = {
    'Temperature': TEMPERATURE, 'Fan': FAN, 'Processor': PROCESSOR, 'Power Supply': POWER_SUPPLY,
    'Memory': MEMORY, 'Event Logging Disabled': EVENT_LOGGING, 'Critical Interrupt': CRITICAL_INTERRUPT,
}

# The category each judged sensor type reports under (one check per category).
CATEGORY = {
    TEMPERATURE: 'sel_cooling', FAN: 'sel_cooling', PROCESSOR: 'sel_processor', POWER_SUPPLY: 'sel_power_supply',
    MEMORY: 'sel_memory', EVENT_LOGGING: 'sel_log', CRITICAL_INTERRUPT: 'sel_pcie',
}

# (sensor type, event offset) of a sensor-specific event (event/reading type 6Fh) ->
# (status, the specification's name, other names the tools print). status None: not judged.
OFFSETS = {
    (PROCESSOR, 0x00): ('fail', 'IERR', []),
    (PROCESSOR, 0x01): ('fail', 'Thermal Trip', []),
    (PROCESSOR, 0x02): ('warn', 'FRB1/BIST failure', []),
    (PROCESSOR, 0x03): ('warn', 'FRB2/Hang in POST failure', []),
    (PROCESSOR, 0x04): ('warn', 'FRB3/Processor Startup/Initialization failure',
                        ['FRB3/Processor startup/init failure']),
    (PROCESSOR, 0x05): ('warn', 'Configuration Error', []),
    (PROCESSOR, 0x06): ('fail', "SM BIOS 'Uncorrectable CPU-complex Error'",
                        ["SM BIOS `Uncorrectable CPU-complex Error'", 'SM BIOS Uncorrectable CPU-complex Error']),
    (PROCESSOR, 0x07): (None, 'Processor Presence detected', ['Presence detected']),
    (PROCESSOR, 0x08): ('warn', 'Processor disabled', ['Disabled']),
    (PROCESSOR, 0x09): (None, 'Terminator Presence Detected', []),
    (PROCESSOR, 0x0A): ('warn', 'Processor Automatically Throttled', ['Throttled']),
    (PROCESSOR, 0x0B): ('fail', 'Machine Check Exception (Uncorrectable)',
                        ['Machine Check Exception', 'Uncorrectable machine check exception']),
    (PROCESSOR, 0x0C): ('warn', 'Correctable Machine Check Error', []),
    (POWER_SUPPLY, 0x00): (None, 'Presence detected', []),
    (POWER_SUPPLY, 0x01): ('warn', 'Power Supply Failure detected', ['Failure detected']),
    (POWER_SUPPLY, 0x02): ('warn', 'Predictive Failure', []),
    (POWER_SUPPLY, 0x03): ('warn', 'Power Supply input lost (AC/DC)', ['Power Supply AC lost']),
    (POWER_SUPPLY, 0x04): ('warn', 'Power Supply input lost or out-of-range', ['AC lost or out-of-range']),
    (POWER_SUPPLY, 0x05): ('warn', 'Power Supply input out-of-range, but present', ['AC out-of-range, but present']),
    (POWER_SUPPLY, 0x06): ('warn', 'Configuration error', ['Config Error']),
    (POWER_SUPPLY, 0x07): (None, 'Power Supply Inactive (in standby state)', ['Power Supply Inactive']),
    (MEMORY, 0x00): ('warn', 'Correctable ECC / other correctable memory error',
                     ['Correctable ECC', 'Correctable memory error']),
    (MEMORY, 0x01): ('fail', 'Uncorrectable ECC / other uncorrectable memory error',
                     ['Uncorrectable ECC', 'Uncorrectable memory error']),
    (MEMORY, 0x02): ('fail', 'Parity', []),
    (MEMORY, 0x03): ('warn', 'Memory Scrub Failed (stuck bit)', ['Memory Scrub Failed']),
    (MEMORY, 0x04): ('warn', 'Memory Device Disabled', []),
    (MEMORY, 0x05): ('warn', 'Correctable ECC / other correctable memory error logging limit reached',
                     ['Correctable ECC logging limit reached', 'Correctable memory error logging limit reached']),
    (MEMORY, 0x06): (None, 'Presence detected', []),
    (MEMORY, 0x07): ('warn', 'Configuration error', []),
    (MEMORY, 0x08): (None, 'Spare', []),
    (MEMORY, 0x09): ('warn', 'Memory Automatically Throttled', ['Throttled']),
    (MEMORY, 0x0A): ('warn', 'Critical Overtemperature', []),
    (EVENT_LOGGING, 0x00): ('warn', 'Correctable Memory Error Logging Disabled', []),
    (EVENT_LOGGING, 0x01): ('warn', 'Event Type Logging Disabled', ['Event logging disabled']),
    (EVENT_LOGGING, 0x02): (None, 'Log Area Reset/Cleared', []),
    (EVENT_LOGGING, 0x03): ('warn', 'All Event Logging Disabled', []),
    (EVENT_LOGGING, 0x04): ('warn', 'SEL Full', ['Log full']),
    (EVENT_LOGGING, 0x05): ('warn', 'SEL Almost Full', ['Log almost full']),
    (EVENT_LOGGING, 0x06): ('warn', 'Correctable Machine Check Error Logging Disabled', []),
    (CRITICAL_INTERRUPT, 0x00): (None, 'Front Panel NMI / Diagnostic Interrupt', ['NMI/Diag Interrupt']),
    (CRITICAL_INTERRUPT, 0x01): ('warn', 'Bus Timeout', []),
    (CRITICAL_INTERRUPT, 0x02): ('warn', 'I/O channel check NMI', []),
    (CRITICAL_INTERRUPT, 0x03): (None, 'Software NMI', []),
    (CRITICAL_INTERRUPT, 0x04): ('fail', 'PCI PERR', []),
    (CRITICAL_INTERRUPT, 0x05): ('fail', 'PCI SERR', []),
    (CRITICAL_INTERRUPT, 0x06): (None, 'EISA Fail Safe Timeout', ['EISA failsafe timeout']),
    (CRITICAL_INTERRUPT, 0x07): ('warn', 'Bus Correctable Error', []),
    (CRITICAL_INTERRUPT, 0x08): ('fail', 'Bus Uncorrectable Error', []),
    (CRITICAL_INTERRUPT, 0x09): ('fail', 'Fatal NMI (port 61h, bit 7)', ['Fatal NMI']),
    (CRITICAL_INTERRUPT, 0x0A): ('fail', 'Bus Fatal Error', []),
    (CRITICAL_INTERRUPT, 0x0B): ('warn', 'Bus Degraded (bus operating in a degraded performance state)',
                                 ['Bus Degraded']),
}

# Threshold offsets (event/reading type 01h, table 42-2), judged for temperature and fan sensors:
# a temperature crossing its upper critical/non-recoverable threshold, a fan its lower one.
THRESHOLDS = {
    0x00: 'Lower Non-critical going low', 0x01: 'Lower Non-critical going high',
    0x02: 'Lower Critical going low', 0x03: 'Lower Critical going high',
    0x04: 'Lower Non-recoverable going low', 0x05: 'Lower Non-recoverable going high',
    0x06: 'Upper Non-critical going low', 0x07: 'Upper Non-critical going high',
    0x08: 'Upper Critical going low', 0x09: 'Upper Critical going high',
    0x0A: 'Upper Non-recoverable going low', 0x0B: 'Upper Non-recoverable going high',
}
THRESHOLD_WARN = {TEMPERATURE: (0x09, 0x0B), FAN: (0x02, 0x04)}

# Redundancy offsets (event/reading type 0Bh, table 42-2), judged for power supplies and fans.
REDUNDANCY = {
    0x01: 'Redundancy Lost', 0x02: 'Redundancy Degraded',
    0x05: 'Non-redundant: Insufficient Resources',
    0x06: 'Redundancy Degraded from Fully Redundant', 0x07: 'Redundancy Degraded from Non-redundant',
}

ADVICE = {
    'sel_memory': 'replace the memory module the BMC names before the node takes work',
    'sel_pcie': 'a PCI/PCIe device or link failed: check the kernel log for AER errors, reseat or replace the '
                'device (a GPU, NIC or riser) before the node takes work',
    'sel_processor': 'the CPU faulted: check the BMC\'s event details and the kernel log (MCE), and the cooling',
    'sel_power_supply': 'check the power supplies and their feeds (an 8-GPU node needs every one)',
    'sel_cooling': 'check the fans and the inlet temperature',
    'sel_log': 'save the SEL and clear it (ipmi-sel --clear): events after it were not logged',
}

_SEP_RE = re.compile(r'\s*\|\s*')
_VERBOSE_RE = re.compile(r'\s*([A-Za-z][A-Za-z0-9 ()/-]*?)\s*:\s?(.*)\Z')
_HEX_RE = re.compile(r'[0-9A-Fa-f]{2,}')


def _norm(text):
    return re.sub(r'[^a-z0-9]', '', str(text or '').lower())


def _names():
    """normalised name -> (type, offset, kind) for every name in the tables."""
    out = {}
    for (stype, offset), (dummy, name, others) in OFFSETS.items():
        for each in [name] + others:
            out.setdefault(stype, []).append((_norm(each), offset, 'specific'))
    for stype in THRESHOLD_WARN:
        for offset, name in THRESHOLDS.items():
            out.setdefault(stype, []).append((_norm(name), offset, 'threshold'))
    for stype in (POWER_SUPPLY, FAN):
        for offset, name in REDUNDANCY.items():
            out.setdefault(stype, []).append((_norm(name), offset, 'redundancy'))
    for stype in out:
        out[stype].sort(key=lambda item: -len(item[0]))
    return out


_BY_TYPE = _names()
_TYPE_BY_NAME = sorted(((_norm(name), code) for name, code in TYPE_NAMES.items()), key=lambda item: -len(item[0]))


def sensor_type(text, prefix=False):
    """The code of a sensor type name (``prefix``: the longest name that begins ``text``, as in
    ipmitool's ``Memory #0x88`` or ``Power Supply PS2 Status``); None for one not judged."""
    key = _norm(text)
    for name, code in _TYPE_BY_NAME:
        if key == name or (prefix and key.startswith(name)):
            return code
    return None


def offset_of(stype, event_text):
    """``(offset, kind)`` of an event's printed name for sensor type ``stype``, or ``(None, None)``.
    Matches the longest known name the text begins with (tools append details: ``(CPU0_G1)``,
    ``; OEM Event Data2 code = 02h``, a reading)."""
    text = _norm(str(event_text or '').split(' ; ', maxsplit=1)[0])
    if not text:
        return None, None
    for name, offset, kind in _BY_TYPE.get(stype, []):
        if text.startswith(name):
            return offset, kind
    return None, None


def _entry(record_id, date, time_, stype_name, name, event, direction, prefix=False, raw=None, event_type=None):
    stype = sensor_type(stype_name, prefix)
    offset, kind = None, None
    if stype is not None and raw and event_type in ('specific', 'threshold'):
        offset, kind = int(raw[:2], 16) & 0x0F, event_type
    elif stype is not None:
        offset, kind = offset_of(stype, event)
    return {'id': str(record_id).strip(), 'date': str(date).strip(), 'time': str(time_).strip(),
            'sensor_type': stype, 'type_name': str(stype_name).strip(), 'name': str(name).strip(),
            'event': str(event).strip(), 'asserted': direction is None or not _norm(direction).startswith('deassert'),
            'offset': offset, 'kind': kind}


def _parse_freeipmi(lines, sep):
    header = [_norm(h) for h in (lines[0].split(sep) if sep == ',' else _SEP_RE.split(lines[0].strip()))]
    need = ('id', 'date', 'time', 'name', 'type', 'event')
    if not all(h in header for h in need) or header[-1] != 'event':
        return None
    at = dict((h, i) for i, h in enumerate(header))
    entries, unparsed = [], []
    for line in lines[1:]:
        # the event is the last column and may itself hold the separator ("out-of-range, but present")
        cols = [c.strip() for c in (line.split(sep, len(header) - 1) if sep == ',' else
                                    _SEP_RE.split(line.strip(), len(header) - 1))]
        if len(cols) != len(header) or not cols[at['id']].isdigit():
            unparsed.append(line)
            continue
        direction = cols[at['eventdirection']] if 'eventdirection' in at else None
        entries.append(_entry(cols[at['id']], cols[at['date']], cols[at['time']], cols[at['type']],
                              cols[at['name']], cols[at['event']], direction))
    return {'format': 'ipmi-sel', 'entries': entries, 'unparsed': unparsed}


def _parse_ipmitool_list(lines):
    entries, unparsed = [], []
    for line in lines:
        cols = _SEP_RE.split(line.strip())
        if len(cols) < 5 or not re.fullmatch(r'[0-9A-Fa-f]{1,4}', cols[0]):
            unparsed.append(line)
            continue
        entries.append(_entry(cols[0], cols[1], cols[2], cols[3], cols[3], cols[4], cols[5] if len(cols) > 5 else None,
                              prefix=True))
    return {'format': 'ipmitool-list', 'entries': entries, 'unparsed': unparsed}


def _parse_ipmitool_verbose(lines):
    records, current = [], None
    for line in lines:
        match = _VERBOSE_RE.match(line)
        if not match:
            continue
        key, value = _norm(match.group(1)), match.group(2).strip()
        if key == 'selrecordid':
            current = {'selrecordid': value}
            records.append(current)
        elif current is not None:
            current[key] = value
    entries, unparsed = [], []
    for rec in records:
        if rec.get('recordtype', '02').split()[0] != '02' or 'sensortype' not in rec:
            unparsed.append('SEL Record ID : %s (record type %s)' % (rec['selrecordid'], rec.get('recordtype')))
            continue
        stamp = rec.get('timestamp', '').split(None, 1)
        raw = rec.get('eventdataraw') or rec.get('eventdata') or ''
        raw = raw if _HEX_RE.fullmatch(raw) else None
        etype = _norm(rec.get('eventtype'))
        kind = 'specific' if etype.startswith('sensorspecific') else ('threshold' if etype == 'threshold' else None)
        stype_name = re.sub(r'\s*\(.*\)$', '', rec['sensortype'])
        entries.append(_entry(rec['selrecordid'], stamp[0] if stamp else '', stamp[1] if len(stamp) > 1 else '',
                              stype_name, rec.get('sensornumber', ''), rec.get('description', ''),
                              rec.get('eventdirection'), raw=raw, event_type=kind))
    return {'format': 'ipmitool-verbose', 'entries': entries, 'unparsed': unparsed}


def parse(text):
    """The SEL entries in ``text`` (any of the forms above), in the order printed:
    ``{'format', 'entries': [{'id', 'date', 'time', 'sensor_type' (code or None), 'type_name', 'name',
    'event', 'asserted', 'offset', 'kind' ('specific', 'threshold', 'redundancy' or None)}],
    'unparsed': [lines]}``. An empty SEL is no entries; text in no known form is every line unparsed."""
    lines = [line for line in str(text or '').splitlines() if line.strip()]
    if not lines:
        return {'format': 'empty', 'entries': [], 'unparsed': []}
    if any(line.strip().startswith('SEL Record ID') for line in lines):
        return _parse_ipmitool_verbose(lines)
    first = lines[0].strip()
    for sep in ('|', ','):
        if first.startswith('ID') and sep in first:
            parsed = _parse_freeipmi(lines, sep)
            if parsed is not None:
                return parsed
    if first.startswith('ID') or ' | ' not in first:
        return {'format': 'unknown', 'entries': [], 'unparsed': lines}
    return _parse_ipmitool_list(lines)


def judge(entry):
    """``(status, category, label)`` of one entry: status ``fail``, ``warn`` or None (not judged)."""
    stype, offset, kind = entry['sensor_type'], entry['offset'], entry['kind']
    if stype is None or offset is None or not entry['asserted']:
        return None, None, None
    category = CATEGORY[stype]
    if kind == 'specific' and (stype, offset) in OFFSETS:
        status, label, dummy = OFFSETS[(stype, offset)]
        return status, category, label
    if kind == 'threshold' and stype in THRESHOLD_WARN and offset in THRESHOLDS:
        return ('warn' if offset in THRESHOLD_WARN[stype] else None), category, THRESHOLDS[offset]
    if kind == 'redundancy' and offset in REDUNDANCY:
        return 'warn', category, REDUNDANCY[offset]
    return None, None, None


def position(parsed, tool):
    """Where the SEL ends now (its last entry), to record with the verdict; None for an empty SEL."""
    entries = parsed['entries']
    if not entries:
        return None
    last = entries[-1]
    return {'tool': tool, 'id': last['id'], 'date': last['date'], 'time': last['time'], 'entries': len(entries)}


def since(parsed, recorded):
    """``(entries, reason)``: the entries after the recorded position (the last validation's), in order.
    No record, or a record whose entry is gone from the SEL (cleared or wrapped): every entry."""
    entries = parsed['entries']
    if not isinstance(recorded, dict) or not recorded.get('id'):
        return entries, 'no earlier validation recorded a SEL position: every entry counted'
    for index in range(len(entries) - 1, -1, -1):
        e = entries[index]
        if (e['id'], e['date'], e['time']) == (recorded.get('id'), recorded.get('date'), recorded.get('time')):
            return entries[index + 1:], 'since the last validation (SEL record %s, %s %s)' % (
                e['id'], e['date'], e['time'])
    return entries, ('the last validation\'s SEL record %s (%s %s) is no longer in the SEL (cleared or overwritten): '
                     'every entry counted' % (recorded.get('id'), recorded.get('date'), recorded.get('time')))


def _check(name, status, value, expected, reason):
    return {'check': name, 'status': status, 'value': value, 'expected': expected, 'reason': reason,
            'subject': 'bmc'}


def checks(parsed, recorded, tool):
    """The checks of group ``sel``: one per category with judged events since the recorded position
    (fail or warn, with counts and record ids), else one ``sel`` check that passes."""
    if parsed['format'] == 'unknown':
        why = 'unknown: %s printed nothing gpu_validate can read as a SEL (first line: %r)' % (
            tool, parsed['unparsed'][0][:120])
        return [_check('sel', 'skip', 'unknown', None, why)]
    new, why = since(parsed, recorded)
    found = {}
    for entry in new:
        status, category, label = judge(entry)
        if status is None:
            continue
        slot = found.setdefault(category, {'status': 'warn', 'counts': {}, 'ids': [], 'names': []})
        if status == 'fail':
            slot['status'] = 'fail'
        slot['counts'][label] = slot['counts'].get(label, 0) + 1
        slot['ids'].append(entry['id'])
        if entry['name'] and entry['name'] not in slot['names']:
            slot['names'].append(entry['name'])
    if not found:
        return [_check('sel', 'pass', len(new), 'no error event',
                       '%d SEL entr%s %s (%s), none of them an error gpu_validate judges' % (
                           len(new), 'y' if len(new) == 1 else 'ies', why, tool))]
    out = []
    for category in sorted(found):
        slot = found[category]
        counts = ', '.join('%d x %s' % (n, label) for label, n in sorted(slot['counts'].items()))
        ids = slot['ids'] if len(slot['ids']) <= 6 else slot['ids'][:3] + ['...'] + slot['ids'][-2:]
        out.append(_check(category, slot['status'], sum(slot['counts'].values()), 0,
                          '%s in the BMC\'s SEL, %s (records %s; sensors %s): %s' % (
                              counts, why, ', '.join(ids), ', '.join(slot['names'][:6]), ADVICE[category])))
    return out


def can_read(devices, tools):
    """``(tool, reason)``: which tool reads the SEL (``ipmi-sel`` first, then ``ipmitool``), from the
    in-band BMC device nodes that exist and the tools found (name -> path or None); tool None with
    the reason where the SEL cannot be read - never a pass."""
    if not devices:
        return None, ('unknown: no BMC access (no in-band BMC device %s: no BMC, or the ipmi_si/ipmi_devintf '
                      'kernel modules are not loaded)' % ', '.join(BMC_DEVICES))
    for name in ('ipmi-sel', 'ipmitool'):
        if (tools or {}).get(name):
            return name, 'the in-band BMC (%s) through %s' % (devices[0], name)
    return None, ('unknown: no BMC access (the BMC is at %s, but neither ipmi-sel (FreeIPMI, package freeipmi-tools) '
                  'nor ipmitool is installed)' % devices[0])


def argv(tool, path):
    """The command that prints the SEL: FreeIPMI's machine-readable form, or ipmitool's extended list."""
    if tool == 'ipmi-sel':
        return [path, '--output-event-state', '--comma-separated-output', '--non-abbreviated-units']
    return [path, 'sel', 'elist']


def unreadable(tool, rc, err):
    """The check where the tool ran and failed (or timed out)."""
    return [_check('sel', 'skip', 'unknown', None, 'unknown: %s could not read the SEL (rc %s): %s' % (
        tool, rc, (err or 'no message').strip()[-300:]))]
