# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The driver's companions with versions of their own (Debian's nvidia-persistenced) are pinned
beside the driver, at the installed version, so another repository cannot replace them."""

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
