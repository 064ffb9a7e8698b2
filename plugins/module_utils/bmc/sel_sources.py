# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the SEL decoding of bmc/sel.py comes from, row by row (docs/vendor-facts.md lists them).

The IPMI 2.0 specification's tables 42-2 (generic event offsets) and 42-3 (sensor type codes and
their sensor-specific offsets) as FreeIPMI publishes them in its code: the strings below are
FreeIPMI's own, quoted from public copies of its sources (the collection's stored index of public
GitHub files names them by id). tests/unit/plugins/module_utils/bmc/test_sel_sources.py checks that
every offset, threshold, redundancy and sensor type name of bmc/sel.py is the string quoted here
(compared without case, spaces or punctuation; FreeIPMI's parenthesised explanations and the text
after a full stop are left out).

Pure data, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

READ = '2026-12-07'
FREEIPMI_TABLES = ('FreeIPMI, the source file that defines ipmi_sensor_type_*[] and the generic event strings (it '
                   'includes freeipmi/spec/ipmi-sensor-and-event-code-tables-spec.h; public GitHub file, index id '
                   '1394990591)')
FREEIPMI_TYPES = 'FreeIPMI ipmi_sensor_types[] (public GitHub file, index id 9884777805)'

# FreeIPMI's arrays, indexed by event offset (sensor-specific: by sensor type code).
SENSOR_SPECIFIC = {
    0x07: ('ipmi_sensor_type_processor', (
        'IERR', 'Thermal Trip', 'FRB1/BIST failure',
        'FRB2/Hang in POST failure (used hang is believed to be due or related to a processor failure. Use System '
        'Firmware Progress sensor for other BIOS hangs.)',
        "FRB3/Processor Startup/Initialization failure (CPU didn't start)", 'Configuration Error',
        "SM BIOS `Uncorrectable CPU-complex Error'", 'Processor Presence detected', 'Processor disabled',
        'Terminator Presence Detected',
        'Processor Automatically Throttled (processor throttling triggered by a hardware-based mechanism operating '
        'independent from system software, such as automatic thermal throttling or throttling to limit power '
        'consumption.)',
        'Machine Check Exception (Uncorrectable)', 'Correctable Machine Check Error')),
    0x08: ('ipmi_sensor_type_power_supply', (
        'Presence detected', 'Power Supply Failure detected', 'Predictive Failure', 'Power Supply input lost (AC/DC)',
        'Power Supply input lost or out-of-range', 'Power Supply input out-of-range, but present',
        'Configuration error', 'Power Supply Inactive (in standby state)')),
    0x0C: ('ipmi_sensor_type_memory', (
        'Correctable ECC/other correctable memory error', 'Uncorrectable ECC/other uncorrectable memory error',
        'Parity', 'Memory Scrub Failed (stuck bit)', 'Memory Device Disabled',
        'Correctable ECC/other correctable memory error logging limit reached', 'Presence detected',
        'Configuration error', 'Spare', 'Memory Automatically Throttled',
        'Critical Overtemperature.  Memory device has entered a critical overtemperature state, exceeding '
        'specified operating conditions.  Memory devices in this state may produce errors or become inaccessible')),
    0x10: ('ipmi_sensor_type_event_logging_disabled', (
        'Correctable Memory Error Logging Disabled', "Event `Type' Logging Disabled", 'Log Area Reset/Cleared',
        'All Event Logging Disabled', 'SEL Full', 'SEL Almost Full',
        'Correctable Machine Check Error Logging Disabled')),
    0x13: ('ipmi_sensor_type_critical_interrupt', (
        'Front Panel NMI/Diagnostic Interrupt', 'Bus Timeout', 'I/O channel check NMI', 'Software NMI', 'PCI PERR',
        'PCI SERR', 'EISA Fail Safe Timeout', 'Bus Correctable Error', 'Bus Uncorrectable Error',
        'Fatal NMI (port 61h, bit 7)', 'Bus Fatal Error',
        'Bus Degraded (bus operating in a degraded performance state)')),
}
THRESHOLD = ('ipmi_generic_event_reading_type_code_threshold', (
    'Lower Non-critical - going low', 'Lower Non-critical - going high', 'Lower Critical - going low',
    'Lower Critical - going high', 'Lower Non-recoverable - going low', 'Lower Non-recoverable - going high',
    'Upper Non-critical - going low', 'Upper Non-critical - going high', 'Upper Critical - going low',
    'Upper Critical - going high', 'Upper Non-recoverable - going low', 'Upper Non-recoverable - going high'))
REDUNDANCY = ('ipmi_generic_event_reading_type_code_redundancy', (
    'Fully Redundant (formerly "Redundancy Regained")', 'Redundancy Lost', 'Redundancy Degraded',
    'Non-redundant:Sufficient Resources from Redundant',
    'Non-redundant:Sufficient Resources from Insufficient Resources', 'Non-redundant:Insufficient Resources',
    'Redundancy Degraded from Fully Redundant', 'Redundancy Degraded from Non-redundant'))
SENSOR_TYPES = {0x01: 'Temperature', 0x04: 'Fan', 0x07: 'Processor', 0x08: 'Power Supply', 0x0C: 'Memory',
                0x10: 'Event Logging Disabled', 0x13: 'Critical Interrupt'}


def quote(kind, code, offset=None):
    """The source of one row: FreeIPMI's string for (sensor type, offset), a threshold or redundancy
    offset (kind 'threshold'/'redundancy', code the offset), or a sensor type name (kind 'type')."""
    if kind == 'type':
        return '%s: [0x%02X] = "%s"' % (FREEIPMI_TYPES, code, SENSOR_TYPES[code])
    if kind == 'threshold':
        name, strings = THRESHOLD
        return '%s: %s[0x%02X] = "%s"' % (FREEIPMI_TABLES, name, code, strings[code])
    if kind == 'redundancy':
        name, strings = REDUNDANCY
        return '%s: %s[0x%02X] = "%s"' % (FREEIPMI_TABLES, name, code, strings[code])
    name, strings = SENSOR_SPECIFIC[code]
    return '%s: %s[0x%02X] = "%s"' % (FREEIPMI_TABLES, name, offset, strings[offset])
