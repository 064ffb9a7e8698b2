"""The cuda_toolkit role's decisions (plugins/module_utils/cuda/toolkit.py) and the filter
gpuops.dlserver.__private.cuda_toolkit_plan, from data/cuda_toolkit_cases.yml. A case whose inputs
alone are refused is proved against input_problems, the check the registry of input checks runs
before the plan (which does not check them again); the others against the plan."""
import os
import re

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.__private.cuda_toolkit_plan import cuda_toolkit_plan
from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import cuda_match

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
    problems = toolkit.input_problems(inputs, platform)
    if "raises" in case and problems:
        # refused by the registered check (core/input_checks.py runs it before the role's plan)
        for word in case["raises"]:
            assert word in "; ".join(problems), (word, problems)
        return
    assert problems == [], problems
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


# NVIDIA CUDA Toolkit release notes, Table 3 "CUDA Toolkit and Corresponding Driver Versions"
# (data/cuda_table3.yml, with its SOURCE): every GA row quoted there is the toolkit's row here,
# the table's minimum and not the driver of the release's runfile.
with open(os.path.join(HERE, "data", "cuda_table3.yml")) as _fh:
    TABLE3 = yaml.safe_load(_fh)
GA_ROWS = dict((m.group(1), m.group(2)) for m in (
    re.fullmatch(r"CUDA (\d+\.\d+) GA \| >=(\d+(?:\.\d+){1,2})", line)
    for line in TABLE3["rows"].splitlines()) if m)


@pytest.mark.parametrize("version", sorted(GA_ROWS))
def test_release_driver_is_table3s_minimum(version):
    pair = toolkit.parse_version(version, "v")
    # 12.8: Table 3 "CUDA 12.8 GA | >=570.26"; the 12.8.0 runfile bundles 570.86.10
    assert toolkit.RELEASE_DRIVER_TEXT.get(pair) == GA_ROWS[version], version
    assert toolkit.RELEASE_DRIVER[pair] == toolkit._numbers(GA_ROWS[version])  # pylint: disable=protected-access


def test_every_row_carries_its_source_and_date():
    assert len(GA_ROWS) >= 6
    for row in toolkit.RELEASE_DRIVER_ROWS:
        assert row["source"].startswith("https://docs.nvidia.com/cuda/") and "Table 3" in row["source"], row
        assert row["read"] == "2026-12-07" and "CUDA %s GA" % row["toolkit"] in row["source"]


def test_the_newest_table3_release_and_pytorchs_newest_cuda_are_known():
    newest = max(GA_ROWS, key=lambda v: toolkit.parse_version(v, "v"))
    assert toolkit.parse_version(newest, "v") in toolkit.RELEASE_DRIVER
    # python_env/cuda_match.py already picks cu132 wheels (torch 2.12-2.14): CUDA 13.2 is a toolkit here too
    tags = [t for row in cuda_match.TORCH_CUDA_TAGS.values() for t in row]
    pairs = [(int(t[2:-1]), int(t[-1])) for t in tags]
    assert max(pairs) in toolkit.RELEASE_DRIVER, max(pairs)


def test_driver_text_is_the_tables():
    assert toolkit._driver_text((570, 26, 0)) == "570.26"  # pylint: disable=protected-access
    assert toolkit._driver_text((580, 0, 0)) == "580"  # pylint: disable=protected-access
    assert toolkit._driver_text((520, 61, 5)) == "520.61.05"  # pylint: disable=protected-access


@pytest.mark.parametrize("pair, mode, words", [
    # Ubuntu 22.04's nvidia-cuda-toolkit 11.5: no Table 3 row here, full mode cannot be planned
    ((11, 5), "full", ["cuda_toolkit_driver_compat: full", "11.5", "minor", "450.80.02"]),
    # a major with no minor-version compatibility row and no Table 3 row: refused in both modes
    ((14, 0), "minor", ["cuda_toolkit_versions", "14.0", "neither"]),
    ((14, 0), "full", ["cuda_toolkit_versions", "14.0", "neither"]),
])
@pytest.mark.parametrize("driver", [{"version": "595.45.04", "loaded": True}, {}])
def test_a_pair_the_table_does_not_know_is_refused(pair, mode, words, driver):
    results, errors = toolkit.compatibility([pair], driver, mode)
    assert results[toolkit.dotted(pair)]["ok"] is False
    assert "no driver requirement known" not in str(results)
    assert len(errors) == 1
    for word in words:
        assert word in errors[0], (word, errors[0])


def test_a_pair_the_table_does_not_know_is_planned_by_the_minor_rule():
    # 11.5 in minor mode: same major, driver at or above the major's minimum
    results, errors = toolkit.compatibility([(11, 5)], {"version": "450.80.02", "loaded": True}, "minor")
    assert errors == [] and results["11.5"]["ok"] and results["11.5"]["needs"] == "450.80.02"
    results, errors = toolkit.compatibility([(11, 5)], {"version": "450.36.06", "loaded": True}, "minor")
    assert results["11.5"]["ok"] is False and "450.80.02" in errors[0]


def test_12_8_runs_from_table3s_minimum_in_full_mode():
    results, errors = toolkit.compatibility([(12, 8)], {"version": "570.26", "loaded": True}, "full")
    assert errors == [] and results["12.8"]["needs"] == "570.26"
    results, errors = toolkit.compatibility([(12, 8)], {"version": "565.57.01", "loaded": True}, "full")
    assert results["12.8"]["ok"] is False and "570.26" in errors[0] and "12.8" in errors[0]


def test_a_release_without_a_table3_row_read_is_known_but_has_no_invented_driver():
    # 13.4 (GA 13.4.1, Update 1 13.4.2) and 13.5: their notes exist, their Table 3 rows were not read
    known = toolkit.known_pairs()
    assert {(13, 3), (13, 4), (13, 5)} <= set(known)
    assert (13, 3) in toolkit.RELEASE_DRIVER and (13, 4) not in toolkit.RELEASE_DRIVER
    assert (13, 5) not in toolkit.RELEASE_DRIVER
    for row in toolkit.RELEASE_DRIVER_ROWS:
        if row.get("driver"):
            continue
        assert "minor-version compatibility" in row["reason"] and "580" in row["reason"], row
        assert "full refuses it" in row["reason"] and row["unconfirmed"].strip(), row
        assert toolkit.MINOR_COMPAT_DRIVER[int(row["toolkit"].split(".")[0])] == (580, 0, 0)


def test_every_cuda_13_tag_pytorch_picks_is_a_toolkit_with_a_table3_row():
    tags = set(t for row in cuda_match.TORCH_CUDA_TAGS.values() for t in row)
    for tag in sorted(t for t in tags if t.startswith("cu13")):
        assert (13, int(tag[4:])) in toolkit.RELEASE_DRIVER, tag


@pytest.mark.parametrize("pair", [(13, 4), (13, 5)])
def test_a_release_without_a_table3_row_is_planned_by_the_rule_or_refused(pair):
    key = toolkit.dotted(pair)
    results, errors = toolkit.compatibility([pair], {"version": "580.65.06", "loaded": True}, "minor")
    assert errors == [] and results[key]["needs"] == "580"
    assert "no Table 3 minimum is known for CUDA %s" % key in results[key]["reason"]
    results, errors = toolkit.compatibility([pair], {"version": "579.99.99", "loaded": True}, "minor")
    assert results[key]["ok"] is False and "branch 580" in errors[0]
    results, errors = toolkit.compatibility([pair], {"version": "999.1", "loaded": True}, "full")
    assert results[key]["ok"] is False and "cuda_toolkit_driver_compat: full" in errors[0]
    assert "no driver requirement known" not in str(results)
    # the toolkits full mode can plan are those with a Table 3 row: the refused one is not offered back
    assert key not in errors[0].split("toolkit of the table: ")[1].split(", ")
