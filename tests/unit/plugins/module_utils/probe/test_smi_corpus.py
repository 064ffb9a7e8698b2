# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Real nvidia-smi banners (tests/fixtures/nvidia-smi/) read by probe/nvidia_smi.py.

Each fixture's first line names its SOURCE (an issue, pull request or repository file that
published the text); the expectations in data/nvidia_smi_corpus.yml were written from reading it.
"""

import os
import re

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.nvidia_smi import parse_cuda_version

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", "tests", "fixtures", "nvidia-smi"))
with open(os.path.join(HERE, "data", "nvidia_smi_corpus.yml")) as handle:
    EXPECTED = yaml.safe_load(handle)


def _read(name):
    with open(os.path.join(CORPUS, name), "rb") as handle:
        return handle.read().decode("utf-8")


def test_every_file_has_an_entry():
    assert sorted(n for n in os.listdir(CORPUS) if n.endswith(".txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_source_line(name):
    first = _read(name).split("\n", 1)[0]
    assert re.match(r"# SOURCE: https://github\.com/\S+ \(", first), first


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_banner(name):
    want = EXPECTED[name]
    body = _read(name).split("\n", 1)[1]
    assert parse_cuda_version(body) == want["cuda"]
    banner = next(line for line in body.splitlines() if "NVIDIA-SMI " in line)
    assert ("NVIDIA-SMI %s " % want["driver"]) in banner
    assert ("%s: %s" % (want["label"], want["driver"])) in banner
