"""Role status records (module_utils/core/status.py, filter role_status): case table."""
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.__private.role_status import role_status
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.status import StatusError, build, dig

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "role_status_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)

_NOTHING = object()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_status_table(case):
    record = build(case["role"], case["parts"])
    assert record == role_status(case["parts"], case["role"])
    for path, value in case["expect"].items():
        assert dig(record, *path.split("."), default=_NOTHING) == value, path
    if "keys" in case:
        assert sorted(record) == sorted(case["keys"])
    for key in case.get("absent", []):
        assert key not in record


@pytest.mark.parametrize("role, parts, word", [
    ("nvidia_driver", {"plan": {}}, "'inputs'"),
    ("nvidia_driver", {"plan": "gpuops_plan", "inputs": {}}, "'plan'"),
    ("nvidia_container_toolkit", {"plan": {}}, "'inputs'"),
    ("dcgm_exporter", {"inputs": {}}, "'config'"),
    ("volcano", {}, "no status record is defined for the role 'volcano'"),
])
def test_bad_parts_are_refused(role, parts, word):
    with pytest.raises(StatusError, match=word):
        build(role, parts)
    with pytest.raises(AnsibleFilterError, match="gpuops.dlserver.__private.role_status"):
        role_status(parts, role)


def test_parts_must_be_a_dict():
    with pytest.raises(AnsibleFilterError, match="must be a dict"):
        role_status(["plan"], "nvidia_driver")


def test_a_driver_left_alone_says_who_installed_it():
    plan = {'driver': {'required': True, 'installed': {'version': '570.195.03', 'branch': 570, 'loaded': True}},
            'adopt': {'nvidia_driver': {'action': 'leave', 'owner': 'runfile',
                                        'reason': 'the NVIDIA driver ... left alone (set nvidia_driver_adopt: true ...)'}}}
    record = build('nvidia_driver', {'plan': plan, 'inputs': {}})
    assert record['left_alone'] is True and record['owner'] == 'runfile'
    assert 'nvidia_driver_adopt: true' in record['reason']
