"""The ResNet-50 yardstick of gpu_validate: the model measure.py builds (with PyTorch, where a CPU
torch is at hand) and its verdicts (perf.resnet50_perf, from data/validate_resnet50_cases.yml)."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import health, measure, perf

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
with open(os.path.join(DATA, "validate_resnet50_cases.yml")) as _handle:
    CASES = yaml.safe_load(_handle)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_resnet50_verdicts(case):
    merged = perf.validate_thresholds(case.get("thresholds"), case.get("by_model"))
    checks = perf.resnet50_perf(case["result"], case["gpus"], merged)
    for want in case["expect"]:
        found = [c for c in checks if c["check"] == want["check"] and c["status"] == want["status"]
                 and c["subject"] == want.get("subject", c["subject"]) and want.get("reason", "") in c["reason"]]
        assert found, "no %r among:\n%s" % (want, "\n".join(json.dumps(c) for c in checks))
        if "fraction" in want:
            assert found[0]["fraction"] == pytest.approx(want["fraction"], abs=0.001)
    for c in checks:
        assert c["status"] in health.STATUSES and (c["status"] == "pass" or c["reason"])


def test_resnet50_threshold_is_validated_like_the_others():
    assert perf.validate_thresholds({}, {})["default"]["resnet50"] == 0.5
    with pytest.raises(ValueError, match=r"thresholds\.resnet50 must be a fraction of peak in \(0, 1\]"):
        perf.validate_thresholds({"resnet50": 1.5}, {})


def test_resnet50_argv():
    cmd = measure.argv("/env/bin/python", "resnet50", gpu=2, batch=64)
    assert cmd[3:] == ["--mode", "resnet50", "--batch", "64", "--gpu", "2"]


# The model itself needs PyTorch: in this interpreter if it has torch, else the python that
# GPUOPS_TEST_TORCH_PYTHON names (a CPU torch, as the other measurement tests use).
if importlib.util.find_spec("torch") is not None:
    TORCH_PYTHON = sys.executable
else:
    TORCH_PYTHON = os.environ.get("GPUOPS_TEST_TORCH_PYTHON")

_SHAPE = """
import runpy, sys
import torch
ns = runpy.run_path(sys.argv[1], run_name="gpuops_measure")
model = ns["resnet50"](torch)
model.eval()
with torch.no_grad():
    out = model(torch.randn(1, 3, 32, 32))
print(sum(p.numel() for p in model.parameters()), tuple(out.shape), ns["RESNET50_PARAMETERS"])
"""


@pytest.mark.skipif(not TORCH_PYTHON, reason="no torch here and GPUOPS_TEST_TORCH_PYTHON (a python with CPU torch) "
                                             "not set")
def test_resnet50_model_has_the_published_shape():
    # ResNet-50 has 25,557,032 trainable parameters and 1000 outputs (torchvision's resnet50, He et al.)
    out = subprocess.run([TORCH_PYTHON, "-c", _SHAPE, measure.__file__], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, timeout=120, check=True).stdout
    assert out.split()[-4:] == ["25557032", "(1,", "1000)", "25557032"], out
