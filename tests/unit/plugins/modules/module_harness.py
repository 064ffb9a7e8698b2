"""What every module test needs: AnsibleModule's exit_json/fail_json turned into exceptions.

conftest.py in this directory applies it to every test here; tests catch ExitJson/FailJson
and read the module's result from ``exc.value.args[0]``.
"""
import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args


class ExitJson(Exception):
    """AnsibleModule.exit_json was called; args[0] is the result."""


class FailJson(Exception):
    """AnsibleModule.fail_json was called; args[0] is the result (with failed=True)."""


def patch_exit(monkeypatch):
    def exit_json(self, **kwargs):
        raise ExitJson(kwargs)

    def fail_json(self, **kwargs):
        kwargs["failed"] = True
        raise FailJson(kwargs)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)


def run_module(main, args, check_mode=False):
    """The result of a module's ``main()`` run with ``args`` (``check_mode``: as ``--check``): what it
    gave exit_json or fail_json (``failed`` set)."""
    args = dict(args)
    if check_mode:
        args["_ansible_check_mode"] = True
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as info:
            main()
    return info.value.args[0]
