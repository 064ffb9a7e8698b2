# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who installed the driver (plugins/module_utils/probe/packages.py), on real published output.

Every fixture under data/packages/ has its SOURCE in data/packages/SOURCES.md.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import packages

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data', 'packages')


def _fixture(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def test_every_fixture_has_a_source():
    listed = _fixture('SOURCES.md')
    for name in os.listdir(DATA):
        if name != 'SOURCES.md':
            assert '| %s |' % name in listed


# SOURCE: data/packages/SOURCES.md (apt-policy-sudo-debian.txt)
def test_policy_installed_from_the_debian_archive():
    found = packages.parse_apt_policy(_fixture('apt-policy-sudo-debian.txt'))
    assert found == {'sudo': [{'url': 'http://ftp.se.debian.org/debian/', 'dist': 'wheezy/main'}]}


# SOURCE: data/packages/SOURCES.md (apt-policy-drbd-pinned.txt): the installed version is not the newest
def test_policy_takes_the_installed_versions_source_only():
    found = packages.parse_apt_policy(_fixture('apt-policy-drbd-pinned.txt'))
    assert found == {'drbd8-utils': [{'url': 'http://ubuntu.ethz.ch/ubuntu/', 'dist': 'precise/main'}]}


# SOURCE: data/packages/SOURCES.md (apt-policy-fabricmanager-cuda.txt): nothing installed
def test_policy_of_a_package_not_installed_is_left_out():
    assert packages.parse_apt_policy(_fixture('apt-policy-fabricmanager-cuda.txt')) == {}


def test_policy_installed_from_the_cuda_repository_flat_layout():
    # the fabricmanager fixture's source lines under an installed version (*** marks it)
    text = _fixture('apt-policy-fabricmanager-cuda.txt').replace('     550.54.14-1 -1', ' *** 550.54.14-1 -1')
    found = packages.parse_apt_policy(text)
    assert [s['dist'] for s in found['cuda-drivers-fabricmanager']] == ['', '']
    assert packages.origin_of(found['cuda-drivers-fabricmanager'], {}) == 'cuda_repo'


# SOURCE: data/packages/SOURCES.md (apt-package-files-esm.txt)
def test_package_files_give_each_sources_origin():
    releases = packages.parse_apt_package_files(_fixture('apt-package-files-esm.txt'))
    assert releases[('https://esm.ubuntu.com/infra/ubuntu', 'jammy-infra-updates/main')] == 'UbuntuESM'
    assert releases[('https://ppa.launchpadcontent.net/maxmind/ppa/ubuntu', 'jammy/main')] == 'LP-PPA-maxmind'
    assert ('/var/lib/dpkg/status', '') not in releases
    esm = [{'url': 'https://esm.ubuntu.com/infra/ubuntu', 'dist': 'jammy-infra-security/main'}]
    ppa = [{'url': 'https://ppa.launchpadcontent.net/maxmind/ppa/ubuntu', 'dist': 'jammy/main'}]
    assert packages.origin_of(esm, releases) == 'distro'
    assert packages.origin_of(ppa, releases) == 'other'
    # no configured repository carries the installed version: a .deb installed by hand
    assert packages.origin_of([], releases) == 'other'


# SOURCE: data/packages/SOURCES.md (dpkg-ubuntu-server-driver.txt)
def test_dpkg_query_installed_packages():
    found = packages.parse_dpkg_query(_fixture('dpkg-ubuntu-server-driver.txt'))
    assert found['libnvidia-compute-450-server'] == '450.80.02-0ubuntu0.18.04.3'
    assert len(found) == 3


def test_dpkg_query_skips_removed_packages_and_keeps_half_installed_ones():
    text = 'rc \tnvidia-kernel-dkms\t535.216.03-1\niU \tnvidia-kernel-open-dkms\t580.95.05-1\n'
    assert packages.parse_dpkg_query(text) == {'nvidia-kernel-open-dkms': '580.95.05-1'}


@pytest.mark.parametrize('text', ['ii \tnvidia-kernel-dkms\n', 'ii \tnvidia-kernel-dkms\t580.95.05-1\nbad\tline\n',
                                  'ii \tnvidia-kernel-dkms\t580.95.05-1 ; reboot\n'])
def test_dpkg_query_refuses_what_it_does_not_know(text):
    with pytest.raises(packages.PackageReadError):
        packages.parse_dpkg_query(text)


def test_rpm_query_with_vendor():
    text = 'kmod-nvidia-open-dkms\t3:580.95.05-1.el9\tNVIDIA Corporation\nbash\t0:5.1.8-9.el9\tRocky Enterprise Software Foundation\n'
    assert packages.parse_rpm_query(text) == {
        'kmod-nvidia-open-dkms': ('3:580.95.05-1.el9', 'NVIDIA Corporation'),
        'bash': ('5.1.8-9.el9', 'Rocky Enterprise Software Foundation')}


@pytest.mark.parametrize('name,driver', [
    ('nvidia-kernel-open-dkms', True), ('nvidia-open-kernel-dkms', True), ('nvidia-tesla-535-kernel-dkms', True),
    ('nvidia-dkms-535-server-open', True), ('nvidia-headless-580-server', True), ('kmod-nvidia-latest-dkms', True),
    ('nvidia-driver-cuda', True), ('nvidia-utils-580', False), ('libnvidia-compute-450-server', False),
    ('nvidia-kernel-dkms\n', False), ('linux-modules-nvidia-535-server-generic', False)])
def test_driver_packages(name, driver):
    assert packages.is_driver_package(name) is driver


def _host(commands, files=()):
    def run(args):
        key = ' '.join(args[1:]) if args[0].endswith('apt-cache') else args[0]
        return commands[key]
    return run, (lambda name: '/usr/bin/' + name if name in ('dpkg-query', 'apt-cache') else None), \
        (lambda path: path in files)


def test_read_a_cuda_repo_driver_on_debian():
    policy = ('nvidia-kernel-open-dkms:\n  Installed: 580.95.05-1\n  Candidate: 580.95.05-1\n  Version table:\n'
              ' *** 580.95.05-1 600\n        600 https://mirror.example/compute/cuda/repos/debian12/x86_64  Packages\n'
              '        100 /var/lib/dpkg/status\n')
    run, which, exists = _host({
        '/usr/bin/dpkg-query': (0, 'ii \tnvidia-kernel-open-dkms\t580.95.05-1\nii \tbash\t5.2.15-2+b2\n', ''),
        'policy nvidia-kernel-open-dkms': (0, policy, ''),
        'policy': (0, 'Package files:\n 100 /var/lib/dpkg/status\n     release a=now\n', ''),
    }, files=(packages.MARKER_PATHS[0],))
    assert packages.read(run, which, exists) == {
        'installed_packages': {'nvidia-kernel-open-dkms': '580.95.05-1'},
        'package_origins': {'nvidia-kernel-open-dkms': 'cuda_repo'},
        'runfile': False, 'marker': True, 'packages_read': {'answered': True, 'reason': None},
        'components': {'nvidia_container_toolkit': {'version': None, 'origin': None, 'marker': False,
                                                    'packages': {}},
                       'dcgm_exporter': {'version': None, 'origin': None, 'marker': False, 'units': [],
                                         'packages': {}}}}


def test_read_a_toolkit_from_another_repository():
    policy = ('nvidia-container-toolkit:\n  Installed: 1.17.8-1\n  Candidate: 1.17.8-1\n  Version table:\n'
              ' *** 1.17.8-1 500\n        500 https://ppa.launchpadcontent.net/maxmind/ppa/ubuntu jammy/main amd64 Packages\n'
              '        100 /var/lib/dpkg/status\n')
    run, which, exists = _host({
        '/usr/bin/dpkg-query': (0, 'ii \tnvidia-container-toolkit\t1.17.8-1\n', ''),
        'policy nvidia-container-toolkit': (0, policy, ''),
        'policy': (0, _fixture('apt-package-files-esm.txt'), ''),
    })
    found = packages.read(run, which, exists)
    assert found['installed_packages'] == {} and found['runfile'] is False
    assert found['components']['nvidia_container_toolkit'] == {'version': '1.17.8-1', 'origin': 'other',
                                                               'marker': False,
                                                               'packages': {'nvidia-container-toolkit': '1.17.8-1'}}
    assert packages.origin_of([{'url': 'https://mirror.example/libnvidia-container/stable/deb/amd64', 'dist': ''}],
                              {}) == 'toolkit_repo'


def test_read_a_runfile_install():
    run, which, exists = _host({'/usr/bin/dpkg-query': (0, 'ii \tbash\t5.2.15-2+b2\n', '')},
                               files=('/usr/bin/nvidia-smi',))
    found = packages.read(run, which, exists)
    assert found['runfile'] is True and found['installed_packages'] == {}


def test_the_installers_log_counts_only_without_a_driver_package():
    policy = ('nvidia-kernel-dkms:\n  Installed: 535.216.03-1~deb12u1\n  Candidate: 535.216.03-1~deb12u1\n'
              '  Version table:\n *** 535.216.03-1~deb12u1 100\n        100 /var/lib/dpkg/status\n')
    run, which, exists = _host({
        '/usr/bin/dpkg-query': (0, 'ii \tnvidia-kernel-dkms\t535.216.03-1~deb12u1\n', ''),
        'policy nvidia-kernel-dkms': (0, policy, ''), 'policy': (0, '', '')},
        files=(packages.RUNFILE_LOG, packages.NVIDIA_SMI))
    assert packages.read(run, which, exists)['runfile'] is False
    run, which, exists = _host({'/usr/bin/dpkg-query': (0, '', '')}, files=(packages.RUNFILE_LOG,))
    assert packages.read(run, which, exists)['runfile'] is True


def test_read_without_a_package_manager_says_so():
    found = packages.read(lambda args: (0, '', ''), lambda name: None, lambda path: False)
    assert found['packages_read'] == {'answered': False, 'reason': 'neither dpkg-query nor rpm found'}


def test_read_never_raises_on_odd_output():
    run, which, exists = _host({'/usr/bin/dpkg-query': (0, 'garbage\n', '')})
    found = packages.read(run, which, exists)
    assert found['packages_read']['answered'] is False and 'unexpected line' in found['packages_read']['reason']


def test_read_dcgm_from_cuda_repo_and_a_foreign_exporter_unit():
    # DCGM's packages share the datacenter-gpu-manager prefix; all from NVIDIA's CUDA repository layout
    policy = ''.join('%s:\n  Installed: 1:4.4.1-1\n  Candidate: 1:4.4.1-1\n  Version table:\n'
                     ' *** 1:4.4.1-1 500\n        500 https://mirror.example/compute/cuda/repos/ubuntu2204/x86_64  '
                     'Packages\n        100 /var/lib/dpkg/status\n' % name
                     for name in ('datacenter-gpu-manager-4-core', 'datacenter-gpu-manager-4-cuda12'))
    run, which, exists = _host({
        '/usr/bin/dpkg-query': (0, 'ii \tdatacenter-gpu-manager-4-core\t1:4.4.1-1\n'
                                   'ii \tdatacenter-gpu-manager-4-cuda12\t1:4.4.1-1\nii \tbash\t5.1-6\n', ''),
        'policy datacenter-gpu-manager-4-core datacenter-gpu-manager-4-cuda12': (0, policy, ''),
        'policy': (0, '', ''),
    }, files=('/etc/systemd/system/multi-user.target.wants/nvidia-dcgm-exporter.service',))
    found = packages.read(run, which, exists)
    assert found['components']['dcgm_exporter'] == {
        'version': '1:4.4.1-1', 'origin': 'cuda_repo', 'marker': False,
        'units': ['/etc/systemd/system/multi-user.target.wants/nvidia-dcgm-exporter.service'],
        'packages': {'datacenter-gpu-manager-4-core': '1:4.4.1-1', 'datacenter-gpu-manager-4-cuda12': '1:4.4.1-1'}}
    assert found['installed_packages'] == {}


@pytest.mark.parametrize('origins,expect', [
    ([], None), (['cuda_repo', 'cuda_repo'], 'cuda_repo'), (['cuda_repo', 'distro'], 'distro'),
    (['cuda_repo', None], 'other'), (['distro', 'other'], 'other')])
def test_combined_origin(origins, expect):
    assert packages.combined_origin(origins) == expect


@pytest.mark.parametrize('pattern,name,expect', [
    ('datacenter-gpu-manager*', 'datacenter-gpu-manager-4-core', True),
    ('datacenter-gpu-manager*', 'datacenter-gpu-manager', True),
    ('datacenter-gpu-manager*', 'dcgm', False),
    ('nvidia-container-toolkit', 'nvidia-container-toolkit-base', False)])
def test_component_package(pattern, name, expect):
    assert packages.component_package(pattern, name) is expect
