# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The distribution package names host/os_tuning.py decides by, each row with its ``source`` and the date it
was ``read`` (``unconfirmed`` where the name itself was not found in a distribution's own index):
RELEASE_PACKAGE_ROWS (the kernel packages of the running release) and KERNEL_SAMPLE_ROWS (the names a kernel
glob of the blacklist is recognised by). os_tuning.py builds RELEASE_PACKAGES and KERNEL_SAMPLES from them;
tools/vendor_facts.py lists them in docs/vendor-facts.md.

Pure data, standard library only, Python 3.8+ (imported by os_tuning on targets).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

READ = '2026-12-07'
_BOOKWORM = ('Debian bookworm main amd64 Packages (deb.debian.org, as apt fetched it on the build host, InRelease of '
             '2026-12-05) lists "Package: %s"')
_UBUNTU = 'Ubuntu package page %s: "Package: %s"'
_JAMMY_MODULES = 'https://packages.ubuntu.com/jammy-updates/linux-modules-6.8.0-45-generic'
_JAMMY_EXTRA = 'https://packages.ubuntu.com/jammy-updates/linux-modules-extra-6.8.0-45-generic'
_NOBLE_GENERIC = ('Ubuntu package page https://packages.ubuntu.com/noble/all/kernel-testing--linux--full--generic: '
                  '"linux-generic Complete Generic Linux kernel and headers"')
_RHEL9 = ('Red Hat Enterprise Linux 10, "The Linux kernel RPM package overview" (https://docs.redhat.com/ja/'
          'documentation/red_hat_enterprise_linux/10/administer-the_linux_kernel_rpm_package_overview, English '
          'text): %s; the RHEL 9 page (https://docs.redhat.com/fr/documentation/red_hat_enterprise_linux/9/html/'
          'managing_monitoring_and_updating_the_kernel/the-linux-kernel-rpm-package-overview_assembly_the-linux-'
          'kernel) lists the same sub-packages')
_NOT_LOOKED_UP = 'this name was not found in a published Ubuntu index here (only the form is the collection\'s)'

# Kernel packages of the running release (%s: uname -r), besides the platform's metapackages.
RELEASE_PACKAGE_ROWS = (
    {'pattern': 'linux-image-%s', 'read': READ,
     'source': _BOOKWORM % 'linux-image-6.1.0-47-amd64' + ' (uname -r 6.1.0-47-amd64)'},
    {'pattern': 'linux-headers-%s', 'read': READ,
     'source': _BOOKWORM % 'linux-headers-6.1.0-47-amd64' + ' (uname -r 6.1.0-47-amd64)'},
    {'pattern': 'linux-modules-%s', 'read': READ,
     'source': (_UBUNTU % (_JAMMY_MODULES, 'linux-modules-6.8.0-45-generic (6.8.0-45.45~22.04.1)')
                + ' (uname -r 6.8.0-45-generic; Debian has no such package: the name matches nothing there)')},
)

# Package names a kernel glob of the blacklist is recognised by (Debian, Ubuntu, EL).
KERNEL_SAMPLE_ROWS = (
    {'name': 'linux-image-6.1.0-18-amd64', 'read': READ,
     'source': _BOOKWORM % 'linux-image-6.1.0-47-amd64' + ' (the same form, ABI 47)',
     'unconfirmed': 'ABI 18 (6.1.76-1) was superseded and is not in today\'s bookworm index'},
    {'name': 'linux-image-amd64', 'read': READ, 'source': _BOOKWORM % 'linux-image-amd64'},
    {'name': 'linux-image-generic', 'read': READ, 'source': _NOBLE_GENERIC + ' (the metapackage family)',
     'unconfirmed': _NOT_LOOKED_UP},
    {'name': 'linux-image-6.8.0-45-generic', 'read': READ,
     'source': _UBUNTU % (_JAMMY_MODULES, 'linux-modules-6.8.0-45-generic') + ' (the same release)',
     'unconfirmed': _NOT_LOOKED_UP},
    {'name': 'linux-headers-6.1.0-18-amd64', 'read': READ,
     'source': _BOOKWORM % 'linux-headers-6.1.0-47-amd64' + ' (the same form, ABI 47)',
     'unconfirmed': 'ABI 18 was superseded and is not in today\'s bookworm index'},
    {'name': 'linux-headers-amd64', 'read': READ, 'source': _BOOKWORM % 'linux-headers-amd64'},
    {'name': 'linux-headers-generic', 'read': READ, 'source': _NOBLE_GENERIC + ' (the metapackage family)',
     'unconfirmed': _NOT_LOOKED_UP},
    {'name': 'linux-modules-6.8.0-45-generic', 'read': READ,
     'source': _UBUNTU % (_JAMMY_MODULES, 'linux-modules-6.8.0-45-generic (6.8.0-45.45~22.04.1)')},
    {'name': 'linux-modules-extra-6.8.0-45-generic', 'read': READ,
     'source': _UBUNTU % (_JAMMY_EXTRA, 'linux-modules-extra-6.8.0-45-generic (6.8.0-45.45~22.04.1)')},
    {'name': 'linux-generic', 'read': READ, 'source': _NOBLE_GENERIC},
    {'name': 'linux-virtual', 'read': READ, 'source': _NOBLE_GENERIC + ' (the metapackage family)',
     'unconfirmed': _NOT_LOOKED_UP},
    {'name': 'kernel', 'read': READ,
     'source': _RHEL9 % '"The kernel RPM is a meta package that does not contain any files"'},
    {'name': 'kernel-core', 'read': READ, 'source': _RHEL9 % '"kernel-core - Provides the binary image of the Linux '
                                                             'kernel (vmlinuz)"'},
    {'name': 'kernel-modules', 'read': READ, 'source': _RHEL9 % '"kernel-modules - Provides the remaining kernel '
                                                                'modules"'},
    {'name': 'kernel-modules-core', 'read': READ, 'source': _RHEL9 % '"kernel-modules-core - Provides the basic '
                                                                     'kernel modules"'},
    {'name': 'kernel-devel', 'read': READ, 'source': _RHEL9 % '"kernel-devel - Provides the kernel headers and '
                                                              'makefiles"'},
)
