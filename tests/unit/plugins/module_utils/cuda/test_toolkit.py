"""The cuda_toolkit role's decisions (plugins/module_utils/cuda/toolkit.py) and the filter
gpuops.dlserver.cuda_toolkit_plan, from data/cuda_toolkit_cases.yml."""
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.cuda_toolkit_plan import cuda_toolkit_plan
from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import toolkit

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "data", "cuda_toolkit_cases.yml")) as _fh:
    DATA = yaml.safe_load(_fh)
CASES = DATA["cases"]


def _dig(value, dotted):
    keys = dotted.split(".")
    # version keys of the compatibility dict hold a dot (compatibility.12.4.reason)
    if keys[0] == "compatibility":
        keys = [keys[0], keys[1] + "." + keys[2]] + keys[3:]
    for key in keys:
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def _args(case):
    inputs = dict(DATA["defaults"], **case["inputs"])
    return inputs, case["platform"], case["driver"], case.get("installed", []), case.get("gpu_count", 0)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_cases(case):
    inputs, platform, driver, installed, gpus = _args(case)
    if "raises" in case:
        with pytest.raises(toolkit.ToolkitError) as info:
            toolkit.plan(inputs, platform, driver, installed, gpus)
        for word in case["raises"]:
            assert word in str(info.value), (word, str(info.value))
        with pytest.raises(AnsibleFilterError):
            cuda_toolkit_plan(inputs, platform, driver, installed, gpus)
        return
    result = toolkit.plan(inputs, platform, driver, installed, gpus)
    assert cuda_toolkit_plan(inputs, platform, driver, installed, gpus) == result
    for key, value in case.get("expect", {}).items():
        assert _dig(result, key) == value, key
    for key, word in case.get("reason_contains", {}).items():
        assert word in _dig(result, key), (key, _dig(result, key))


@pytest.mark.parametrize("value", ["12.4\n", "12.4\nx", " 12.4", "12", "v12.4", "12.4; rm -rf /", "", None, 12.4])
def test_versions_are_matched_whole(value):
    with pytest.raises(toolkit.ToolkitError) as info:
        toolkit.parse_version(value, "cuda_toolkit_versions")
    assert "cuda_toolkit_versions" in str(info.value)


@pytest.mark.parametrize("path", ["/etc/gpuops/x.json\n", "relative.json", "/etc/../x", "/etc/gpu ops.json", ""])
def test_status_file_is_refused(path):
    inputs = dict(DATA["defaults"], status_file=path)
    assert any("cuda_toolkit_status_file" in p for p in toolkit.input_problems(inputs))


def test_every_known_toolkit_has_a_minor_compat_floor_at_or_below_its_release_driver():
    for pair, release in toolkit.RELEASE_DRIVER.items():
        floor = toolkit.MINOR_COMPAT_DRIVER[pair[0]]
        assert floor <= release, pair


def test_profile_puts_the_default_link_on_path_once():
    profile, ldconf = toolkit.environment("cuda_repo", (12, 4))
    assert "export CUDA_HOME=/usr/local/cuda\n" in profile
    assert '/usr/local/cuda/bin:${PATH}' in profile
    assert ldconf.endswith("/usr/local/cuda/lib64\n")
    assert "LD_LIBRARY_PATH" not in profile
