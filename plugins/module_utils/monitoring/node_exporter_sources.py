# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vendor rows node_exporter.py decides by, each with its ``source`` and the date it was ``read``
(``unconfirmed`` where the published file itself was not read): the collector names node_exporter
accepts on Linux, the sha256 of the pinned release tarballs and the architecture word of the release
file names. node_exporter.py builds KNOWN_COLLECTORS, PINNED_SHA256 and GOARCH from them;
tools/vendor_facts.py lists them in docs/vendor-facts.md.

Pure data, standard library only, Python 3.8+ (imported by node_exporter on targets).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

READ = '2026-12-07'
_NE = 'prometheus/node_exporter'
_TAGS_READ = 'v1.5.0, v1.6.0, v1.7.0, v1.8.0, v1.9.0 and v1.9.1'

# Collector -> (its file at v1.9.1, the first tag read that registers it). Read at every tag of _TAGS_READ:
# the names collector/*.go registers (registerCollector, constants resolved) in files a Linux build compiles
# (a _linux suffix, or no other OS suffix and a build constraint Linux meets). devstat registers only in
# devstat_freebsd.go and devstat_dragonfly.go: --collector.devstat is an unknown flag on Linux.
_COLLECTORS = {
    'arp': ('arp_linux.go', '1.5.0'), 'bcache': ('bcache_linux.go', '1.5.0'),
    'bonding': ('bonding_linux.go', '1.5.0'), 'btrfs': ('btrfs_linux.go', '1.5.0'),
    'buddyinfo': ('buddyinfo.go', '1.5.0'), 'cgroups': ('cgroups_linux.go', '1.5.0'),
    'conntrack': ('conntrack_linux.go', '1.5.0'), 'cpu': ('cpu_linux.go', '1.5.0'),
    'cpu_vulnerabilities': ('cpu_vulnerabilities_linux.go', '1.7.0'), 'cpufreq': ('cpufreq_linux.go', '1.5.0'),
    'diskstats': ('diskstats_linux.go', '1.5.0'), 'dmi': ('dmi.go', '1.5.0'), 'drbd': ('drbd_linux.go', '1.5.0'),
    'drm': ('drm_linux.go', '1.5.0'), 'edac': ('edac_linux.go', '1.5.0'), 'entropy': ('entropy_linux.go', '1.5.0'),
    'ethtool': ('ethtool_linux.go', '1.5.0'), 'fibrechannel': ('fibrechannel_linux.go', '1.5.0'),
    'filefd': ('filefd_linux.go', '1.5.0'), 'filesystem': ('filesystem_common.go', '1.5.0'),
    'hwmon': ('hwmon_linux.go', '1.5.0'), 'infiniband': ('infiniband_linux.go', '1.5.0'),
    'interrupts': ('interrupts_common.go', '1.5.0'), 'ipvs': ('ipvs_linux.go', '1.5.0'),
    'ksmd': ('ksmd_linux.go', '1.5.0'), 'lnstat': ('lnstat_linux.go', '1.5.0'), 'loadavg': ('loadavg.go', '1.5.0'),
    'logind': ('logind_linux.go', '1.5.0'), 'mdadm': ('mdadm_linux.go', '1.5.0'), 'meminfo': ('meminfo.go', '1.5.0'),
    'meminfo_numa': ('meminfo_numa_linux.go', '1.5.0'), 'mountstats': ('mountstats_linux.go', '1.5.0'),
    'netclass': ('netclass_linux.go', '1.5.0'), 'netdev': ('netdev_common.go', '1.5.0'),
    'netstat': ('netstat_linux.go', '1.5.0'), 'network_route': ('network_route_linux.go', '1.5.0'),
    'nfs': ('nfs_linux.go', '1.5.0'), 'nfsd': ('nfsd_linux.go', '1.5.0'), 'ntp': ('ntp.go', '1.5.0'),
    'nvme': ('nvme_linux.go', '1.5.0'), 'os': ('os_release.go', '1.5.0'), 'perf': ('perf_linux.go', '1.5.0'),
    'powersupplyclass': ('powersupplyclass.go', '1.5.0'), 'pressure': ('pressure_linux.go', '1.5.0'),
    'processes': ('processes_linux.go', '1.5.0'), 'qdisc': ('qdisc_linux.go', '1.5.0'),
    'rapl': ('rapl_linux.go', '1.5.0'), 'runit': ('runit.go', '1.5.0'), 'schedstat': ('schedstat_linux.go', '1.5.0'),
    'selinux': ('selinux_linux.go', '1.5.0'), 'slabinfo': ('slabinfo_linux.go', '1.5.0'),
    'sockstat': ('sockstat_linux.go', '1.5.0'), 'softirqs': ('softirqs_common.go', '1.6.0'),
    'softnet': ('softnet_linux.go', '1.5.0'), 'stat': ('stat_linux.go', '1.5.0'),
    'supervisord': ('supervisord.go', '1.5.0'), 'sysctl': ('sysctl_linux.go', '1.5.0'),
    'systemd': ('systemd_linux.go', '1.5.0'), 'tapestats': ('tapestats_linux.go', '1.5.0'),
    'tcpstat': ('tcpstat_linux.go', '1.5.0'), 'textfile': ('textfile.go', '1.5.0'),
    'thermal_zone': ('thermal_zone_linux.go', '1.5.0'), 'time': ('time.go', '1.5.0'), 'timex': ('timex.go', '1.5.0'),
    'udp_queues': ('udp_queues_linux.go', '1.5.0'), 'uname': ('uname.go', '1.5.0'),
    'vmstat': ('vmstat_linux.go', '1.5.0'), 'watchdog': ('watchdog.go', '1.8.0'), 'wifi': ('wifi_linux.go', '1.5.0'),
    'xfrm': ('xfrm.go', '1.8.0'), 'xfs': ('xfs_linux.go', '1.5.0'), 'zfs': ('zfs_common.go', '1.5.0'),
    'zoneinfo': ('zoneinfo_linux.go', '1.5.0'),
}
COLLECTOR_ROWS = tuple(
    {'collector': name, 'from': since, 'read': READ,
     'source': '%s v1.9.1:collector/%s registers "%s" (a Linux build file); registered on Linux at every tag read '
               'from v%s to v1.9.1 (%s read)' % (_NE, path, name, since, _TAGS_READ)}
    for name, (path, since) in sorted(_COLLECTORS.items()))

# sha256 of the release tarballs of the pinned version, as the release's sha256sums.txt should give them.
_SUMS = 'https://github.com/prometheus/node_exporter/releases/download/v1.9.1/sha256sums.txt'
_COPIES = ('independent public copies, not the published file: boxcutter/oci node-exporter bake file '
           '(NODE_EXPORTER_SHA256_%s = "%s") and nine other public files found by exact search quote the same digest')
PINNED_SHA256_ROWS = tuple(
    {'version': '1.9.1', 'goarch': goarch, 'sha256': digest, 'read': READ,
     'source': _COPIES % (goarch.upper(), digest),
     'unconfirmed': 'the release\'s own sha256sums.txt (%s) was not read here (no access to the release files)'
                    % _SUMS}
    for goarch, digest in (('amd64', 'becb950ee80daa8ae7331d77966d94a611af79ad0d3307380907e0ec08f5b4e8'),
                           ('arm64', '848f139986f63232ced83babe3cad1679efdbb26c694737edc1f4fbd27b96203')))

# ansible_facts.architecture (uname -m) -> the GOARCH word of node_exporter's release file names
# (node_exporter-<version>.linux-<goarch>.tar.gz).
_GOARCH = ('golang/go src/internal/syslist/syslist.go KnownArch names "%s"; %s v1.9.1:.promu.yml crossbuild '
           'platforms: "linux" (every Linux GOARCH)')
GOARCH_ROWS = (
    {'machine': 'x86_64', 'goarch': 'amd64', 'read': READ,
     'source': _GOARCH % ('amd64', _NE) + '; the v1.9.1 file name node_exporter-1.9.1.linux-amd64.tar.gz as public '
                                          'copies quote it with its digest'},
    {'machine': 'aarch64', 'goarch': 'arm64', 'read': READ,
     'source': _GOARCH % ('arm64', _NE) + '; the v1.9.1 file name node_exporter-1.9.1.linux-arm64.tar.gz as public '
                                          'copies quote it with its digest'},
    {'machine': 'ppc64le', 'goarch': 'ppc64le', 'read': READ, 'source': _GOARCH % ('ppc64le', _NE),
     'unconfirmed': 'the release\'s list of files was not read: that v1.9.1 publishes a linux-ppc64le tarball rests '
                    'on the crossbuild platform "linux"'},
)
