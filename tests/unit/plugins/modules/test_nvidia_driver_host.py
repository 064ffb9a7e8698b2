# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.dlserver.__private.nvidia_driver_host: the module's failure (its host reads are tested in
tests/unit/plugins/module_utils/packages/test_driver_host.py, the key trust in test_repo_trust.py).

The role's inputs are not checked here: the registry of input checks (core/input_checks.py) refuses
them on the controller before the role calls the module (data/nvidia_repo_cases.yml and the test
below), so the module has no ``inputs`` action."""

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_resolve
from ansible_collections.gpuops.dlserver.plugins.modules.__private import nvidia_driver_host as mod


def test_module_fails_with_problems_and_names_the_variable(monkeypatch):
    def fail_json(self, **kwargs):
        raise SystemExit(kwargs)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    monkeypatch.setattr(driver_resolve, "verify", lambda params, host: {
        "problems": ["nvidia_driver_version: 580.95.05 is pinned, the loaded module is 535.261.03"]})
    with patch_module_args({"action": "verify", "platform": {"distro_branch": "535"}}):
        with pytest.raises(SystemExit) as err:
            mod.main()
    assert "nvidia_driver_version: 580.95.05 is pinned" in err.value.args[0]["msg"]


def test_the_module_has_no_inputs_action_the_registry_refuses_a_bad_version(monkeypatch):
    def fail_json(self, **kwargs):
        raise SystemExit(kwargs)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    with patch_module_args({"action": "inputs", "inputs": {"version": "latest"}}):
        with pytest.raises(SystemExit) as err:
            mod.main()
    assert "value of action must be one of" in err.value.args[0]["msg"]
    found = input_checks.problems("nvidia_driver", {"version": "latest", "source": "distro", "reboot_timeout": 1800,
                                                    "status_file": "/etc/gpuops/x.json"}, "main", {})
    assert any("nvidia_driver_version must be a driver version" in p for p in found), found
