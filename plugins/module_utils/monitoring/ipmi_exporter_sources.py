# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vendor rows ipmi_exporter.py checks a module of the exporter's configuration by, each with its
``source`` and the date it was ``read``: the collectors ipmi_exporter 1.6.1 (Debian 12's
prometheus-ipmi-exporter) accepts in a module, the FreeIPMI driver types of a remote module and the
privilege levels. tools/vendor_facts.py lists them in docs/vendor-facts.md.

Pure data, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

READ = '2026-12-07'
_REMOTE_EXAMPLE = 'https://github.com/prometheus-community/ipmi_exporter/blob/v1.6.1/ipmi_remote.yml'
_METRICS = 'https://github.com/prometheus-community/ipmi_exporter/blob/v1.6.1/docs/metrics.md'
_FREEIPMI = 'https://www.gnu.org/software/freeipmi/manpages/man8/ipmi-config.8.html'

# The comment of the example configuration ("Available collectors are bmc, ipmi, chassis, dcmi, sel, and
# sm-lan-mode") and the collector list of docs/metrics.md, both at v1.6.1 (read in the copies Debian's
# prometheus-ipmi-exporter 1.6.1-2 installs: /etc/prometheus/ipmi_remote.yml, metrics.md).
COLLECTOR_ROWS = [
    {'collector': name, 'what': what, 'source': '%s; %s' % (_REMOTE_EXAMPLE, _METRICS), 'read': READ}
    for name, what in (
        ('bmc', 'BMC firmware and manufacturer (ipmi_bmc_info)'),
        ('ipmi', 'sensor values and states (ipmi_fan_speed_*, ipmi_temperature_*, ipmi_sensor_*)'),
        ('chassis', 'chassis power state (ipmi_chassis_power_state)'),
        ('dcmi', 'DCMI power consumption (ipmi_dcmi_power_consumption_current_watts)'),
        ('sel', 'SEL entries and free space (ipmi_sel_logs_count, ipmi_sel_free_space_bytes)'),
        ('sm-lan-mode', 'Supermicro LAN mode (ipmi_config_lan_mode; admin privilege)'),
    )
]

# driver: the example configuration's "driver" values of a remote module, passed to FreeIPMI's
# --driver-type (LAN: IPMI 1.5, LAN_2_0: IPMI 2.0 RMCP+).
DRIVER_ROWS = [
    {'driver': 'LAN_2_0', 'what': 'IPMI 2.0 RMCP+ (the example\'s default module)', 'source': _REMOTE_EXAMPLE, 'read': READ},
    {'driver': 'LAN', 'what': 'IPMI 1.5 LAN (the example\'s thatspecialhost module)', 'source': _REMOTE_EXAMPLE, 'read': READ},
]

# privilege: FreeIPMI's --privilege-level (USER, OPERATOR, ADMIN), written in lower case as the
# example configuration writes "user" and "admin".
PRIVILEGE_ROWS = [
    {'privilege': name, 'what': what, 'source': '%s; %s' % (_FREEIPMI, _REMOTE_EXAMPLE), 'read': READ}
    for name, what in (
        ('user', 'reads sensors, SEL, chassis state: enough for every collector but sm-lan-mode'),
        ('operator', 'user plus chassis control'),
        ('admin', 'every command (sm-lan-mode reads the BMC configuration)'),
    )
]
