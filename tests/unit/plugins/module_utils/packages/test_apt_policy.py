"""The collection's one `apt-cache policy` parser (plugins/module_utils/packages/apt_policy.py), on
published output (tests/unit/plugins/module_utils/data/packages/SOURCES.md and the cuda fixtures'
SOURCE lines); its two readers (probe/packages.py, cuda/nccl.py) are tested in their own files."""
import os

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_policy

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "packages")


def fixture(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def test_a_pinned_package_with_an_older_installed_version():
    got = apt_policy.parse(fixture("apt-policy-drbd-pinned.txt"))["drbd8-utils"]
    assert got["installed"] == "2:8.3.11-0ubuntu1" and got["candidate"] == "2:8.3.11-0ubuntu1"
    assert [(r["version"], r["priority"], r["installed"]) for r in got["versions"]] == [
        ("2:8.4.3-0ubuntu0.12.04.1", 991, False), ("2:8.3.11-0ubuntu1", 991, True)]
    assert got["versions"][1]["sources"] == [
        {"priority": 500, "url": "http://ubuntu.ethz.ch/ubuntu/", "dist": "precise/main"},
        {"priority": 100, "url": apt_policy.DPKG_STATUS, "dist": ""}]


def test_a_flat_repository_has_no_dist():
    for entry in apt_policy.parse(fixture("apt-policy-fabricmanager-cuda.txt")).values():
        for row in entry["versions"]:
            for source in row["sources"]:
                assert source["dist"] == "" or "/" in source["dist"]


def test_architecture_qualifier_and_none():
    text = "libnccl2:amd64:\n  Installed: (none)\n  Candidate: 2.21.5-1+cuda12.4\n  Version table:\n" \
           "     2.21.5-1+cuda12.4 600\n        600 https://r.example/cuda/repos/debian12/x86_64  Packages\n"
    got = apt_policy.parse(text)
    assert got == {"libnccl2": {"installed": None, "candidate": "2.21.5-1+cuda12.4", "versions": [
        {"version": "2.21.5-1+cuda12.4", "priority": 600, "installed": False,
         "sources": [{"priority": 600, "url": "https://r.example/cuda/repos/debian12/x86_64", "dist": ""}]}]}}


@pytest.mark.parametrize("text", [
    "  Installed: 1.0\n",                                   # a line before any package
    "pkg:\n  Installed: 1.0\n some garbage here\n",         # a line that fits nowhere
    "pkg:\n  Version table:\n *** 1.0 100\n        100 /var/lib/dpkg/status\n$(reboot)\n",
])
def test_strict_refuses_what_fits_nowhere_and_lenient_skips_it(text):
    with pytest.raises(apt_policy.AptPolicyError):
        apt_policy.parse(text, strict=True)
    lenient = apt_policy.parse(text, strict=False)
    assert all("reboot" not in row["version"] for entry in lenient.values() for row in entry["versions"])


def test_a_version_with_a_newline_cannot_be_smuggled_into_one_row():
    text = "pkg:\n  Version table:\n     1.0\nrm -rf / 500\n"
    got = apt_policy.parse(text, strict=False)
    assert got["pkg"]["versions"] == []
