# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver package names nvidia_driver pins, saves and installs, one row each with its ``source``
and the date it was ``read`` (``unconfirmed`` where no vendor text was found), as plain data that
tools/vendor_facts.py lists in docs/vendor-facts.md:

- ``DRIVER_FAMILY_ROWS``: the apt globs of the driver's pin (packages/driver_resolve.py
  DRIVER_FAMILY): each names packages the driver is made of, as Debian's and NVIDIA's package lists
  show them. Which globs make "the family" is the collection's choice; the rows say that a package
  of the driver carries each prefix.
- ``DRIVER_PATTERN_ROWS``: the dpkg globs whose state the driver transaction saves and restores
  (packages/driver_host.py DRIVER_PATTERNS).
- ``NVLSM_PACKAGE_ROWS`` and ``NVLSM_MODULE_ROWS``: what NVLSM (the NVLink subnet manager of NVLink 5
  systems) needs besides its own package (packages/nvidia_repo.py NVLSM_EXTRA_PACKAGES,
  NVLSM_MODULES).

Pure data, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

READ = '2026-12-07'
DEBIAN_DKMS = ('Debian package page of nvidia-kernel-dkms 550.163.01-2 (https://packages.debian.org/trixie/'
               'nvidia-kernel-dkms): "dep: firmware-nvidia-gsp (= 550.163.01)", "rec: nvidia-driver (>= 550.163.01)", '
               '"or libcuda1 (>= 550.163.01)"')
NVIDIA_UBUNTU = ('NVIDIA/ubuntu-packaging-nvidia-driver README (https://github.com/NVIDIA/ubuntu-packaging-nvidia-driver): '
                 '"libnvidia-cfg1-${flavor}", "libnvidia-compute-${flavor}", "nvidia-driver-${flavor}", '
                 '"nvidia-utils-${flavor}", "xserver-xorg-video-nvidia-${flavor}"')
NVIDIA_RDMA_DOCS = ('NVIDIA RHEL 9.5 driver documentation, Important Packages and Their Installation (https://docs.nvidia.'
                    'com/networking/display/rhel95/Important+Packages+and+Their+Installation): "infiniband-diags '
                    'OpenFabrics Alliance InfiniBand Diagnostic Tools"')
NVLSM_SCRIPTS = ('public install scripts of NVLink 5 hosts (public GitHub files, index ids 43543539761 and 54850677444): '
                 '"# install nvlsm for Gen5 nvlink systems", "apt-get install -y nvlsm"')
FM_GUIDE = ('NVIDIA Fabric Manager user guide, Release 2.3, "What is NVLink Subnet Manager?" (https://docs.nvidia.com/'
            'datacenter/tesla/fabric-manager-user-guide/)')


def _row(glob, source, unconfirmed=None):
    row = {'glob': glob, 'source': source, 'read': READ}
    if unconfirmed:
        row['unconfirmed'] = unconfirmed
    return row


# Globs, not /regular expressions/ (packages/driver_resolve.py says why).
DRIVER_FAMILY_ROWS = (
    _row('nvidia-*', '%s; %s' % (DEBIAN_DKMS, NVIDIA_UBUNTU)),
    _row('libnv*', NVIDIA_UBUNTU),
    _row('libcuda*', DEBIAN_DKMS),
    _row('firmware-nvidia-gsp*', DEBIAN_DKMS),
)

DRIVER_PATTERN_ROWS = (
    _row('*nvidia*', '%s; %s' % (DEBIAN_DKMS, NVIDIA_UBUNTU)),
    _row('libcuda*', DEBIAN_DKMS),
    _row('nvlsm', '%s; %s' % (FM_GUIDE, NVLSM_SCRIPTS),
         unconfirmed='the package name nvlsm was not read in an NVIDIA publication; public install scripts name it'),
    _row('infiniband-diags', NVIDIA_RDMA_DOCS),
)

NVLSM_PACKAGE_ROWS = (
    {'package': 'infiniband-diags', 'read': READ, 'source': '%s; %s' % (FM_GUIDE, NVIDIA_RDMA_DOCS),
     'unconfirmed': 'no NVIDIA text was found that names infiniband-diags as a requirement of NVLSM: the row rests on '
                    'NVLSM managing the NVLink fabric as an InfiniBand subnet manager does (the Fabric Manager guide)'},
)
NVLSM_MODULE_ROWS = (
    {'module': 'ib_umad', 'read': READ,
     'source': ('spectrocloud/CanvOS pull request 700 (https://github.com/spectrocloud/CanvOS/pull/700), describing '
                'nvidia-fabricmanager-start.sh of FM 570+: "On HGX B200 / GB200 the wrapper takes the \\"Detected NVL5+ '
                'system\\" branch, which requires ib_umad to be loaded before nv-fabricmanager can start"; infiniband-diags '
                'README (https://github.com/chu11/infiniband-diags-snapshot): "Dependencies: ... 4) ib_umad kernel '
                'module"'),
     'unconfirmed': 'read in a third party\'s account of NVIDIA\'s start script, not in an NVIDIA publication'},
)
