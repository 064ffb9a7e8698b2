# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PCI facts the probe and gpu_validate decide by, one row each with its ``source`` and the date
it was ``read`` (``unconfirmed`` where a row could not be confirmed), as plain data that
tools/vendor_facts.py lists in docs/vendor-facts.md:

- ``PCI_CLASS_ROWS``: the class codes (base class and subclass, ``class >> 8``) of the functions
  ``probe/pci.py`` keeps: GPUs, NVSwitches, a GPU's companion functions, network adapters. The
  class names are the PCI ID database's; which functions NVIDIA and Mellanox hardware exposes with
  each class is what published ``lspci`` output shows.
- ``PCIE_RATE_ROWS``: the transfer rate per lane of each PCIe generation and the share of it that
  carries data after line encoding (8b/10b, 128b/130b; Flit mode from 64 GT/s on has none), as the
  Linux kernel computes link bandwidth; ``x16_gbps`` is the per-direction peak of an x16 link.

probe/pci.py and hardware/gpu_peaks.py build their tables from these rows.
Pure data, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

READ = '2026-12-07'
PCI_IDS = 'PCI ID database, device classes (https://github.com/pciutils/pciids pci.ids, commit c1c1254 of 2026-08-22)'
# lspci output as published (public GitHub files found by code search; the index id names the file).
_LSPCI_HGX = ('lspci of an HGX H100 host (public GitHub file, index id 49048227853): "ca:00.0 3D controller: NVIDIA '
              'Corporation GH100 [H100 SXM5 80GB] (rev a1)", "cf:00.0 Bridge: NVIDIA Corporation GH100 [H100 NVSwitch] '
              '(rev a1)"')
_LSPCI_GA104 = ('lspci of a GeForce host (public GitHub file, index id 13383767247): "01:00.0 VGA compatible controller: '
                'NVIDIA Corporation GA104 [GeForce RTX 3070 Ti] (rev a1)", "01:00.1 Audio device: NVIDIA Corporation GA104 '
                'High Definition Audio Controller (rev a1)"')
_LSPCI_TU104 = ('lspci of a Turing host (public GitHub file, index id 52739981246): "0b:00.1 Audio device: NVIDIA '
                'Corporation TU104 HD Audio Controller (rev a1)", "0b:00.2 USB controller: NVIDIA Corporation TU104 USB '
                '3.1 Host Controller (rev a1)", "0b:00.3 Serial bus controller: NVIDIA Corporation TU104 USB Type-C UCSI '
                'Controller (rev a1)"')
_LSPCI_CX7 = ('lspci -nn (public GitHub file, index id 13140127158): "1a:00.0 Infiniband controller [0207]: Mellanox '
              'Technologies MT2910 Family [ConnectX-7] [15b3:1021]", "5d:00.0 Ethernet controller [0200]: Mellanox ..."')


def _class_row(code, role, kind, quoted, seen):
    return {'class': '0x%04x' % code, 'role': role, 'kind': kind, 'read': READ,
            'source': '%s: "%s"; %s' % (PCI_IDS, quoted, seen)}


# role: gpu, nvswitch, companion (kind: the probe's word for it) or nic (kind: the link layer).
PCI_CLASS_ROWS = (
    _class_row(0x0300, 'gpu', None, 'C 03  Display controller / 00  VGA compatible controller', _LSPCI_GA104),
    _class_row(0x0302, 'gpu', None, 'C 03  Display controller / 02  3D controller', _LSPCI_HGX),
    _class_row(0x0680, 'nvswitch', None, 'C 06  Bridge / 80  Bridge', _LSPCI_HGX),
    _class_row(0x0403, 'companion', 'audio', 'C 04  Multimedia controller / 03  Audio device', _LSPCI_TU104),
    _class_row(0x0C03, 'companion', 'usb', 'C 0c  Serial bus controller / 03  USB controller', _LSPCI_TU104),
    _class_row(0x0C80, 'companion', 'serial_bus', 'C 0c  Serial bus controller / 80  Serial bus controller',
               _LSPCI_TU104),
    _class_row(0x0200, 'nic', 'ethernet', 'C 02  Network controller / 00  Ethernet controller', _LSPCI_CX7),
    _class_row(0x0207, 'nic', 'infiniband', 'C 02  Network controller / 07  Infiniband controller', _LSPCI_CX7),
)

# Linux kernel drivers/pci/pci.h, PCIE_SPEED2MBS_ENC ("PCIe speed to Mb/s reduced by encoding overhead"), mainline
# as code search found it (index id 59343284403); lspci names the same rates (pciutils ls-caps.c link_speed()).
_KERNEL = ('Linux kernel drivers/pci/pci.h, PCIE_SPEED2MBS_ENC ("PCIe speed to Mb/s reduced by encoding overhead"; '
           'mainline, found by code search, index id 59343284403): "%s"')


def x16_gbps_from_rate(gt_s, encoding):
    """Per-direction GB/s of an x16 link at ``gt_s`` per lane after ``encoding`` ('8b/10b', '128b/130b' or
    '1b/1b': data bits per line bits, the kernel's arithmetic)."""
    data, line = (int(part[:-1]) for part in encoding.split('/'))
    return gt_s * 16 / 8.0 * data / line


def _rate_row(gen, gt_s, encoding, x16_gbps, quoted, unconfirmed=None):
    row = {'gen': gen, 'gt_s': gt_s, 'encoding': encoding, 'x16_gbps': x16_gbps, 'read': READ,
           'source': _KERNEL % quoted}
    if unconfirmed:
        row['unconfirmed'] = unconfirmed
    return row


# x16_gbps: the figure gpu_validate judges a link by: the kernel's arithmetic, rounded (a unit test keeps each within
# 0.05 GB/s of it); None for Gen1 and Gen2, which gpu_validate does not judge.
PCIE_RATE_ROWS = (
    _rate_row(1, 2.5, '8b/10b', None, '(speed) == PCIE_SPEED_2_5GT  ?  2500*8/10'),
    _rate_row(2, 5.0, '8b/10b', None, '(speed) == PCIE_SPEED_5_0GT  ?  5000*8/10'),
    _rate_row(3, 8.0, '128b/130b', 15.75, '(speed) == PCIE_SPEED_8_0GT  ?  8000*128/130'),
    _rate_row(4, 16.0, '128b/130b', 31.5, '(speed) == PCIE_SPEED_16_0GT ? 16000*128/130'),
    _rate_row(5, 32.0, '128b/130b', 63.0, '(speed) == PCIE_SPEED_32_0GT ? 32000*128/130'),
    _rate_row(6, 64.0, '1b/1b', 128.0, '(speed) == PCIE_SPEED_64_0GT ? 64000*1/1',
              unconfirmed='the PCIe 6.0 Base Specification (Flit mode at 64 GT/s) is not public and was not read; the '
                          'kernel itself computed 64000*128/130 here until a patch (found by code search, index id '
                          '12597332211) changed it to 64000*1/1, as this row '
                          'was (it said 126.0 GB/s until 2026-12-07). x16_gbps is the raw rate: the Flit overhead '
                          '(CRC, FEC) is not taken off, as no encoding overhead is taken off any other row'),
)
