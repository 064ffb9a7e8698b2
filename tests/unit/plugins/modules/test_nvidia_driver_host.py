# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.dlserver.__private.nvidia_driver_host: the module's failure (its host reads are tested in
tests/unit/plugins/module_utils/packages/test_driver_host.py, the key trust in test_repo_trust.py)."""

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.modules.__private import nvidia_driver_host as mod


def test_module_fails_with_problems_and_names_the_variable(monkeypatch):
    def fail_json(self, **kwargs):
        raise SystemExit(kwargs)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    with patch_module_args({"action": "inputs", "inputs": {"version": "latest", "source": "distro",
                                                           "reboot_timeout": 1800,
                                                           "status_file": "/etc/gpuops/x.json"},
                            "platform": {"distro_branch": "535"}}):
        with pytest.raises(SystemExit) as err:
            mod.main()
    assert "nvidia_driver_version must be a driver version" in err.value.args[0]["msg"]
