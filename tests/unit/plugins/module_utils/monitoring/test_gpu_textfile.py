"""GPU facts for node_exporter's textfile collector (module_utils/gpu_textfile.py), from data/gpu_textfile_cases.yml."""
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import gpu_textfile

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "gpu_textfile_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)

SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?\d+(\.\d+)?$')


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_render(case):
    text = gpu_textfile.render(case["gpu"], case["plan"], case["reboot_marker"], case["os_tuning_status"])
    lines = text.splitlines()
    for want in case["lines"]:
        assert want in lines, want
    for unwanted in case["absent"]:
        assert unwanted not in text
    assert text.endswith("\n")
    # Well-formed: each sample line parses, each metric has one HELP and one TYPE before its samples,
    # and the samples of a metric are consecutive (the text format requires it).
    order = []
    for line in lines:
        if line.startswith("#"):
            assert re.match(r"^# (HELP|TYPE) [a-z_]+ .+$", line), line
            continue
        assert SAMPLE.match(line), line
        name = re.match(r"^[a-z_]+", line).group(0)
        if not order or order[-1] != name:
            assert name not in order, "samples of %s are not consecutive" % name
            order.append(name)
    assert text.count("# TYPE ") == len(order)


def test_same_facts_same_bytes():
    case = CASES[0]
    args = (case["gpu"], case["plan"], case["reboot_marker"], case["os_tuning_status"])
    assert gpu_textfile.render(*args) == gpu_textfile.render(*args)
