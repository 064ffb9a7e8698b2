# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver's companions with versions of their own (Debian's nvidia-persistenced) are pinned
beside the driver, at the installed version, so another repository cannot replace them."""

import fnmatch

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_resolve

PK = {'persistenced': ['nvidia-persistenced']}

CASES = [
    # installed from Debian; NVIDIA's CUDA repository (added for DCGM) carries a newer one
    ({'nvidia-persistenced': ['580.105.08-1', '535.171.04-1~deb12u1']},
     {'nvidia-persistenced': {'version': '535.171.04-1~deb12u1', 'held': False}}, 'apt',
     {'nvidia-persistenced': '535.171.04-1~deb12u1'}),
    # not installed yet: the newest the source carries
    ({'nvidia-persistenced': ['535.171.04-1~deb12u1']}, {}, 'apt', {'nvidia-persistenced': '535.171.04-1~deb12u1'}),
    # the source does not carry it: nothing to pin
    ({}, {}, 'apt', {}),
    # dnf: no apt preferences
    ({'nvidia-persistenced': ['3:580.95.05-1.el9']}, {}, 'dnf', {}),
]


@pytest.mark.parametrize('versions,have,backend,expected', CASES)
def test_companion_pins(versions, have, backend, expected):
    assert driver_resolve.companion_pins(PK, versions, have, backend) == expected


def test_the_companion_pin_is_a_stanza_of_its_own_in_the_driver_preferences():
    plat = {'backend': 'apt', 'branch': '535', 'header': '# managed', 'components': ['main'],
            'keyring_path': '/etc/apt/keyrings/x.gpg', 'preferences_file': '/etc/apt/preferences.d/gpuops-nvidia-driver.pref'}
    pk = {'persistenced': ['nvidia-persistenced'], 'fm_from_cuda': False, 'cuda_needed': False,
          'fabric_manager': [], 'nvlsm': [], 'modules_load': ['nvidia']}
    result = {'pinned': {'nvidia-kernel-dkms': '535.216.01-1'}, 'target': '535.216.01', 'problems': []}
    files, _dummy = driver_resolve.render_files(plat, pk, result, {}, None, '', None, "the host's own apt repositories",
                                                'proprietary', {'nvidia-persistenced': '535.171.04-1~deb12u1'})
    text = files['driver_preferences']
    assert 'Pin: version 535.216.01-*\n' in text
    assert 'Package: nvidia-persistenced\nPin: version 535.171.04-1~deb12u1\nPin-Priority: 1001\n' in text


# The family the driver pin covers: every name that starts with nvidia-, libnvidia-, libnv,
# libcuda or firmware-nvidia-gsp (and nothing else), as the regular expressions of 0.1.0 said.
FAMILY_CASES = [
    ('nvidia-kernel-dkms', True), ('nvidia-driver-580', True), ('libnvidia-compute-580', True),
    ('libnvidia-ml1', True), ('libnvcuvid1', True), ('libnvoptix1', True), ('libcuda1', True),
    ('libcudart12', True), ('firmware-nvidia-gsp', True), ('firmware-nvidia-gsp-580', True),
    ('nvidia', False), ('xserver-xorg-video-nvidia', False), ('cuda-drivers', False), ('libc6', False),
    ('firmware-nvidia', False), ('python3-nvidia-ml', False), ('libnv', True), ('glx-alternative-nvidia', False),
]


@pytest.mark.parametrize('name,member', FAMILY_CASES)
def test_the_driver_family_patterns(name, member):
    assert any(fnmatch.fnmatchcase(name, pattern) for pattern in driver_resolve.DRIVER_FAMILY) is member


def test_the_driver_pin_names_its_family_with_globs_not_regular_expressions():
    """apt tests a /regex/ Package: entry against every package name each time it computes a
    policy: 1.8 s of CPU for every apt-get, apt-cache or apt-mark run on a pinned host (63,721
    names, Debian 12 with the CUDA repository, measured on a lab node); four globs take 0.18 s."""
    plat = {'backend': 'apt', 'branch': '580', 'header': '# managed', 'components': ['main'],
            'keyring_path': '/etc/apt/keyrings/x.gpg', 'preferences_file': '/etc/apt/preferences.d/gpuops-nvidia-driver.pref'}
    pk = {'persistenced': [], 'fm_from_cuda': False, 'cuda_needed': False,
          'fabric_manager': [], 'nvlsm': [], 'modules_load': ['nvidia']}
    result = {'pinned': {'nvidia-kernel-open-dkms': '580.95.05-1', 'nvidia-driver-cuda': '580.95.05-1'},
              'target': '580.95.05', 'problems': []}
    files, _dummy = driver_resolve.render_files(plat, pk, result, {}, None, '', None, 'the CUDA repository', 'open')
    package_line = [line for line in files['driver_preferences'].splitlines() if line.startswith('Package: ')]
    assert package_line == ['Package: nvidia-driver-cuda nvidia-kernel-open-dkms nvidia-* libnv* libcuda* firmware-nvidia-gsp*']
    assert '/' not in package_line[0]
