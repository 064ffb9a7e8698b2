# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Decisions of the dcgm_exporter role (plugins/module_utils/monitoring/dcgm.py).

The case table data/dcgm_cases.yml plans real fixture hosts with gpu_plan and decides with the
role's defaults; the functions below check the rendered files against the dcgm-exporter test
double's own parser (tests/doubles/dcgm/dcgm_exporter.py), so that the command line and the
counters file the role writes are ones the exporter's option set and file format accept.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import InputError, convert_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm, dcgm_verify
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import gpu_probe
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.gpu_plan import build_plan

HERE = os.path.dirname(os.path.dirname(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
ROLE = os.path.join(REPO, "roles", "dcgm_exporter")
PLATFORM = {"config_dir": "/etc/dcgm-exporter"}

with open(os.path.join(HERE, "data", "dcgm_cases.yml")) as _handle:
    CASES = yaml.safe_load(_handle)


def defaults():
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        data = yaml.safe_load(handle)
    return dict((k[len("dcgm_exporter_"):], v) for k, v in data.items())


def refused(values):
    """What the role's route refuses of ``values`` (short names) before decide() is reached: the
    argument spec's conversion (role_inputs), then the registry of input checks."""
    with open(os.path.join(ROLE, "meta", "argument_specs.yml")) as handle:
        spec = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    try:
        inputs = convert_inputs(spec, dict(("dcgm_exporter_" + k, v) for k, v in values.items()), "dcgm_exporter_")
    except InputError as exc:
        return exc.problems
    return input_checks.problems("dcgm_exporter", inputs, "main", {})


_FACTS = {}


def facts(fixture):
    """What gpu_facts reports for the fixture host at the PCI depth, as in the lab: the sysfs
    tree built from tests/fixtures/hosts/<fixture>/spec.json, NVML and nvidia-smi off."""
    if fixture not in _FACTS:
        root = tempfile.mkdtemp(prefix="dcgm-sysfs-")
        try:
            subprocess.run([sys.executable, os.path.join(REPO, "tests", "fixtures", "build_sysfs.py"),
                            os.path.join(REPO, "tests", "fixtures", "hosts", fixture), root],
                           check=True, stdout=subprocess.DEVNULL)
            _FACTS[fixture] = gpu_probe.probe(sysfs_root=root, nvml="disabled", nvidia_smi="disabled")
        finally:
            shutil.rmtree(root, ignore_errors=True)
    return copy.deepcopy(_FACTS[fixture])


def _get(data, dotted):
    for part in dotted.split("."):
        if isinstance(data, list):
            data = data[int(part)]
        else:
            data = data[part]
    return data


def _decide(case, strict_inputs=None):
    host = facts(case["fixture"])
    for key, value in (case.get("facts_update") or {}).items():
        if isinstance(value, dict) and isinstance(host.get(key), dict):
            host[key] = dict(host[key], **value)
        else:
            host[key] = value
    options = dict({"dcgm_profiling": "auto"}, **(case.get("plan_options") or {}))
    plan = build_plan(host, options)
    inputs = defaults()
    inputs.update(copy.deepcopy(case.get("set") or {}))
    if strict_inputs:
        inputs.update(strict_inputs)
    return dcgm.decide(inputs, plan, host, PLATFORM)


def _as_list(value):
    return value if isinstance(value, list) else [value]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_cases(case):
    if case.get("registry"):
        # the values alone: refused by the registry of input checks, which decide() does not repeat
        problems = refused(copy.deepcopy(case.get("set") or {}))
        for needle in case["errors"]:
            assert any(needle in m for m in problems), (needle, problems)
        if "error_count" in case:
            assert len(problems) == case["error_count"], problems
        return
    result = _decide(case)
    messages = [e["message"] for e in result["errors"]]
    if case.get("errors"):
        for needle in case["errors"]:
            assert any(needle in m for m in messages), (needle, messages)
        assert not result["ok"] and result["csv"] == ""
        if "error_count" in case:
            assert len(messages) == case["error_count"], messages
        return
    assert not messages, messages
    for path, value in (case.get("expect") or {}).items():
        assert _get(result, path) == value, (path, _get(result, path))
    for path, values in (case.get("contains") or {}).items():
        have = _get(result, path)
        for value in _as_list(values):
            assert value in have, (path, value, have)
    for path, values in (case.get("absent") or {}).items():
        have = _get(result, path)
        for value in _as_list(values):
            if isinstance(have, str):
                assert value not in have, (path, value)
            else:
                assert value not in have, (path, value, have)


def _exporter_double():
    path = os.path.join(REPO, "tests", "doubles", "dcgm", "dcgm_exporter.py")
    loader = importlib.machinery.SourceFileLoader("dcgm_exporter_double", path)
    spec = importlib.util.spec_from_loader("dcgm_exporter_double", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_every_default_field_is_known_and_typed():
    inputs = defaults()
    for name in inputs["counters"] + inputs["profiling_counters"]:
        assert name in dcgm.FIELDS, name
        assert dcgm.FIELDS[name][0] in dcgm.TYPES
    assert all(n.startswith("DCGM_FI_PROF_") for n in inputs["profiling_counters"])
    for name, (kind, text) in dcgm.FIELDS.items():
        assert "," not in text and kind in dcgm.TYPES, name


@pytest.mark.parametrize("fixture", ["hgx-h100-8gpu", "rtx4090-8gpu", "dgx-a100-8gpu"])
def test_command_line_and_counters_file_are_what_the_exporter_accepts(fixture, tmp_path):
    """The double takes exactly the real exporter's options; the file round-trips its parser."""
    double = _exporter_double()
    result = _decide({"fixture": fixture})
    args = double.parse_args(result["exec_start"][1:])
    assert args.remote_hostengine_info == "localhost:5555" and args.address == ":9400"
    csv = tmp_path / "counters.csv"
    csv.write_text(result["csv"])
    parsed = double.read_collectors(str(csv))
    assert [f[0] for f in parsed] == result["metric_names"]
    assert [f[1] for f in parsed] == [c["type"] for c in result["counters"]]


def test_container_command_passes_exporter_options_after_the_image():
    result = _decide({"fixture": "hgx-h100-8gpu", "set": {"mode": "container"}})
    argv = result["exec_start"]
    image = argv.index(result["container"]["image"])
    _exporter_double().parse_args(argv[image + 1:])
    assert "--cap-add" not in argv[image:] and argv.count("--cap-add") == 1


def test_unit_host_mode_exact_exec_start():
    result = _decide({"fixture": "hgx-h100-8gpu"})
    lines = result["unit"].splitlines()
    assert ("ExecStart=/usr/bin/dcgm-exporter -f /etc/dcgm-exporter/gpuops-counters.csv -a :9400 -c 30000 -d f "
            "-r localhost:5555") in lines
    assert lines[0].startswith("# Managed by Ansible")
    assert "[Install]" in lines and "WantedBy=multi-user.target" in lines


@pytest.mark.parametrize("address,url", [
    (":9400", "http://127.0.0.1:9400/metrics"), ("0.0.0.0:9500", "http://127.0.0.1:9500/metrics"),
    ("10.1.2.3:9400", "http://10.1.2.3:9400/metrics"), ("[::]:9400", "http://[::1]:9400/metrics"),
    ("nope", None),
])
def test_verify_url(address, url):
    assert dcgm.verify_url(address) == url


PAGE = """# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1"} 41
DCGM_FI_DEV_GPU_TEMP{gpu="1",UUID="GPU-2"} 40
DCGM_FI_DEV_XID_ERRORS{gpu="0"} 0
"""


@pytest.mark.parametrize("page,expected,ok,needle", [
    (PAGE, ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS"], True, "2 of 2 fields served"),
    (PAGE, ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"], True,
     "not served (not supported by these GPUs or not yet sampled): DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"),
    (PAGE, ["DCGM_FI_DEV_GPU_TEMP"], False, "not in the counters file: DCGM_FI_DEV_XID_ERRORS"),
    ("# HELP only\n", ["DCGM_FI_DEV_GPU_TEMP"], False, "served no DCGM_FI_* metric"),
])
def test_verify_metrics(page, expected, ok, needle):
    result = dcgm_verify.verify_metrics(page, expected)
    assert result["ok"] is ok and needle in result["reason"], result


def test_status_record_is_json_and_stable():
    first = _decide({"fixture": "hgx-h100-8gpu"})["status"]
    second = _decide({"fixture": "hgx-h100-8gpu"})["status"]
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)
    assert first["metrics"][-1] == "DCGM_FI_DEV_MIG_MODE" and "exec_start" in first


WANTED = ["datacenter-gpu-manager-4-core", "datacenter-gpu-manager-4-cuda12", "datacenter-gpu-manager-exporter"]


@pytest.mark.parametrize("gpu,expect", [
    # the probe read the packages: a converged host lacks none, so the role skips apt
    ({"components": {"dcgm_exporter": {"packages": dict((n, "1:4.4.1-1") for n in WANTED)}}}, []),
    # a CUDA major change: the other -cuda package is missing
    ({"components": {"dcgm_exporter": {"packages": {"datacenter-gpu-manager-4-core": "1:4.4.1-1",
                                                    "datacenter-gpu-manager-4-cuda13": "1:4.4.1-1",
                                                    "datacenter-gpu-manager-exporter": "4.4.1-4.5.0-1"}}}},
     ["datacenter-gpu-manager-4-cuda12"]),
    # fresh host
    ({"components": {"dcgm_exporter": {"packages": {}}}}, WANTED),
    # the probe did not read the package state (older facts, no dpkg-query): apt decides
    ({"components": {}}, WANTED), ({}, WANTED), (None, WANTED),
], ids=["converged", "cuda-major-change", "fresh", "not-read", "no-components", "no-gpu"])
def test_packages_missing_from_the_probes_read(gpu, expect):
    assert dcgm.packages_missing(WANTED, gpu) == expect


def test_cuda_min_branch_is_cudas_minor_version_minimum_of_each_major():
    """The DCGM CUDA-major rule and python_stack's minor-version table say the same (one source)."""
    from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm as dcgm_module
    from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import cuda_match
    assert dict((int(major), branch) for major, branch in dcgm_module.CUDA_MIN_BRANCH) == dict(
        (major, driver[0]) for major, driver in cuda_match.MINOR_COMPAT_DRIVER.items())
    assert all(row["source"] and row["read"] for row in dcgm_module.CUDA_MIN_BRANCH_ROWS)
