# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The vendor rows the storage role decides by, each with its ``source`` and the date it was ``read``;
``measured`` says what was run to check the row (the tools of Debian 12's packages, on a file or with
files as members, never on a drive). storage/plan.py builds MIN_BYTES and PACKAGES from them,
storage/inputs.py RAID_MIN_MEMBERS; tools/vendor_facts.py lists them in docs/vendor-facts.md.

- ``FILESYSTEM_MIN_ROWS``: the smallest device the role formats with each filesystem.
- ``PACKAGE_ROWS``: the Debian package that carries each tool the plan may need.
- ``RAID_MIN_ROWS``: the fewest members ``mdadm --create`` takes for each level, as the plan runs it
  (without ``--force``).

Pure data, standard library only, Python 3.8+.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

READ = '2026-12-07'
_MDADM_42 = 'https://github.com/md-raid-utilities/mdadm/blob/e30ca260741d727e6f444e8f2ce25fe7a5a26567/'
_MDADM_RUN = ('mdadm 4.2-5 (Debian 12) run on this date as mdadm --create --run --metadata=1.2 --level=L '
              '--raid-devices=N with N files as members: a count below the floor is refused with the message '
              'quoted; at the floor mdadm goes on to the members (and stops there: "is not a block device")')

FILESYSTEM_MIN_ROWS = (
    {'filesystem': 'xfs', 'bytes': 300 * 1024 * 1024, 'read': READ,
     'source': 'mkfs.xfs(8) of xfsprogs 6.1.0-1 (Debian 12, the man page of the package read on this date): "The '
               'data section must be at least 300MB in size."; the floor came with xfsprogs 5.19.0 ("mkfs: stop '
               'allowing tiny filesystems", https://git.kernel.org/pub/scm/fs/xfs/xfsprogs-dev.git/commit/'
               '?id=6e0ed3d19c54603f0f7d628ea04b550151d8a262)',
     'measured': 'mkfs.xfs 6.1.0 on a sparse file: 314572800 bytes (300 MiB) formatted; 314572799 bytes refused '
                 '("Filesystem must be larger than 300MB.", exit 1)'},
    {'filesystem': 'ext4', 'bytes': 2 * 1024 * 1024, 'read': READ,
     'source': 'mke2fs(8) of e2fsprogs 1.47.0-2 (Debian 12, read on this date): below 3 megabytes mke2fs uses the '
               'floppy type (1 KiB blocks, mke2fs.conf of the package); a journal "must be at least 1024 file '
               'system blocks" and "no more than ... half the total file system size": 2048 blocks of 1 KiB, so '
               '2 MiB is the smallest ext4 with its journal',
     'measured': 'mkfs.ext4 1.47.0 on a sparse file: 2097152 bytes made ext4 with has_journal; 2097151 bytes down '
                 'to 104 KiB exit 0 but "Filesystem too small for a journal" (an ext4 without its journal); below '
                 '104 KiB refused. The collection had 16 MiB here, said to be where mke2fs\'s small type starts: '
                 'mke2fs(8) says small starts at 3 megabytes'},
)

PACKAGE_ROWS = (
    {'tool': 'mkfs.ext4', 'for': 'ext4', 'package': 'e2fsprogs', 'read': READ,
     'source': 'Debian 12: dpkg -S /sbin/mkfs.ext4 prints "e2fsprogs: /sbin/mkfs.ext4" (e2fsprogs 1.47.0-2 '
               'installed); apt-cache show e2fsprogs: "ext2/ext3/ext4 file system utilities"'},
    {'tool': 'mkfs.xfs', 'for': 'xfs', 'package': 'xfsprogs', 'read': READ,
     'source': 'Debian 12: apt-cache show xfsprogs (6.1.0-1); dpkg -c of that package lists ./sbin/mkfs.xfs'},
    {'tool': 'mdadm', 'for': 'md', 'package': 'mdadm', 'read': READ,
     'source': 'Debian 12: apt-cache show mdadm (4.2-5); dpkg -c of that package lists ./sbin/mdadm'},
)

_ONE_NEEDS_FORCE = (_MDADM_42 + 'mdadm.c (mdadm-4.2): "\'1\' is an unusual number of drives for an array ... you '
                    'will need to specify --force"; mdadm(8): with --force "a value of 1 will then be allowed for '
                    'linear, multipath, RAID0 and RAID1"; the plan does not pass --force')
RAID_MIN_ROWS = (
    {'level': 0, 'members': 2, 'read': READ, 'source': _ONE_NEEDS_FORCE,
     'measured': _MDADM_RUN + ': 1 refused (unusual number), 2 accepted'},
    {'level': 1, 'members': 2, 'read': READ, 'source': _ONE_NEEDS_FORCE,
     'measured': _MDADM_RUN + ': 1 refused (unusual number), 2 accepted'},
    {'level': 5, 'members': 2, 'read': READ,
     'source': _MDADM_42 + 'Create.c (mdadm-4.2): "at least 2 raid-devices needed for level %d" for every level '
                           'from 4; mdadm(8): a value of 1 "is never allowed for RAID4, RAID5 or RAID6". The '
                           'collection had 3 here: mdadm takes 2 (a two-member RAID 5 holds one member\'s data)',
     'measured': _MDADM_RUN + ': 2 accepted'},
    {'level': 6, 'members': 4, 'read': READ,
     'source': _MDADM_42 + 'Create.c (mdadm-4.2): "at least 4 raid-devices needed for level 6"',
     'measured': _MDADM_RUN + ': 3 refused ("at least 4 raid-devices needed for level 6"), 4 accepted'},
    {'level': 10, 'members': 2, 'read': READ,
     'source': _MDADM_42 + 'Create.c (mdadm-4.2): the default RAID 10 layout is 0x102 (near=2, far=1), and '
                           '"that layout requires at least %d devices" refuses fewer members than copies (2)',
     'measured': _MDADM_RUN + ': 1 refused (unusual number), 2 accepted'},
)
