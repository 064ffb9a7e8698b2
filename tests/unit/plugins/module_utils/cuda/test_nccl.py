"""The NCCL version the cuda_toolkit role installs (plugins/module_utils/cuda/nccl.py) and the filter
gpuops.dlserver.__private.cuda_toolkit_nccl, from data/cuda_nccl_cases.yml and the published apt policy
outputs in tests/fixtures/apt-policy/."""
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.__private.cuda_toolkit_nccl import cuda_toolkit_nccl
from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import nccl

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(HERE, "..", "..", "..", "fixtures", "apt-policy")
with open(os.path.join(HERE, "data", "cuda_nccl_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)["cases"]


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        lines = handle.read().splitlines(True)
    assert lines[0].startswith("# SOURCE: https://"), name
    return "".join(lines[1:])


def policy_of(case):
    if "fixture" in case:
        # NVIDIA's repository publishes libnccl2 and libnccl-dev with the same versions.
        text = fixture(case["fixture"])
        return text + text.replace("libnccl-dev:", "libnccl2:", 1)
    return case["policy"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_cases(case):
    text = policy_of(case)
    if "raises" in case:
        with pytest.raises(nccl.NcclError) as info:
            nccl.pick(text, case["wanted"])
        for word in case["raises"]:
            assert word in str(info.value), (word, str(info.value))
        with pytest.raises(AnsibleFilterError):
            cuda_toolkit_nccl(text, case["wanted"])
        return
    result = nccl.pick(text, case["wanted"])
    assert cuda_toolkit_nccl(text, case["wanted"]) == result
    for key, value in case["expect"].items():
        assert result[key] == value, key


def test_published_table_is_read_whole():
    table = nccl.parse_policy(fixture("libnccl-dev-ubuntu2204-rapidsai644.txt"))
    assert table == {"libnccl-dev": {"installed": None, "versions": [
        "2.28.9-1+cuda13.0", "2.28.9-1+cuda12.9", "2.28.7-1+cuda13.0", "2.28.7-1+cuda12.9", "2.28.3-1+cuda13.0"]}}


@pytest.mark.parametrize("row", [
    "     2.21.5-1+cuda12.4\n 500",
    "     2.21.5-1+cuda12.4;reboot 500",
    "     2.21.5-1+cuda12.4* 500",
    "     $(id)+cuda12.4 500",
])
def test_versions_that_may_not_reach_apt_are_dropped(row):
    text = "libnccl2:\n  Installed: (none)\n  Version table:\n%s\n" % row
    assert all("cuda12.4" not in v for v in nccl.parse_policy(text)["libnccl2"]["versions"])


@pytest.mark.parametrize("cuda", ["12.4\n", "12", "12.4.1", 12.4, "*"])
def test_the_cuda_to_match_is_matched_whole(cuda):
    with pytest.raises(nccl.NcclError) as info:
        nccl.pick("", {"packages": ["libnccl2"], "cuda": cuda})
    assert "cuda_toolkit_nccl" in str(info.value)


@pytest.mark.parametrize("version,cuda", [
    ("2.21.5-1+cuda12.4", "12.4"), ("2.21.5-1+cuda12.4+gpuops.testdouble", "12.4"), ("2.30.7-1+cuda12.10", "12.10"),
    ("2.22.3-1-1", None), ("2.21.5-1+cuda12.100", None),
])
def test_cuda_of(version, cuda):
    assert nccl.cuda_of(version) == cuda
