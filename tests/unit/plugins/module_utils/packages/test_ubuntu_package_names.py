"""Every package name the roles would install on Ubuntu 22.04 and 24.04 has published evidence.

No Ubuntu node runs here. The names are computed the way the roles compute them (the platform vars
files and the Python that picks names: nvidia_repo.choose_packages, driver_branches, cuda/toolkit,
monitoring/dcgm_packages, engines/container_toolkit) and looked up in tests/fixtures/ubuntu-index/:
<release>.txt for the names taken from Ubuntu's archive, each with the quoted listing that shows it
(or an explicit "none" naming where it was looked for), nvidia-repo.txt for the names taken from
NVIDIA's repositories. The format and the evidence levels: tests/fixtures/ubuntu-index/README.md.
"""
import fnmatch
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm, dcgm_packages
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_branches, nvidia_repo

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "ubuntu-index")
RELEASES = {"22": "jammy", "24": "noble"}
LINE = re.compile(r'(?P<name>[a-z0-9][a-z0-9.+*-]*) \| (?P<evidence>listed|related|none|nvidia) \| '
                  r'SOURCE: (?P<source>.+?), read (?P<read>[0-9]{4}-[0-9]{2}-[0-9]{2}): "(?P<quote>[^"]*)"(?P<note>.*)')

# The names no published evidence was found for: they are the names to check first on a real node.
# A new name without evidence must be added here on purpose (and said in the report).
NO_EVIDENCE = {
    "jammy": {"nvlsm", "infiniband-diags", "nvidia-cuda-toolkit-gcc"},
    "noble": {"nvidia-headless-580-server", "nvidia-headless-580-server-open", "nvidia-utils-580-server", "nvlsm",
              "infiniband-diags", "nvidia-cuda-toolkit", "nvidia-cuda-toolkit-gcc"},
}


def parse(text):
    """{name: entry} of a fixture; ValueError naming the line that is not an entry."""
    entries = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = LINE.fullmatch(line)
        if not match:
            raise ValueError("line %d is not '<name> | <evidence> | SOURCE: <where>, read <date>: \"<quote>\"': %r"
                             % (number, line))
        entry = match.groupdict()
        if entry["evidence"] in ("listed", "related") and not entry["quote"].strip():
            raise ValueError("line %d: %s evidence without the quoted text" % (number, entry["evidence"]))
        entries[entry["name"]] = entry
    return entries


def _fixture(name):
    with open(os.path.join(FIXTURES, name)) as handle:
        return parse(handle.read())


def _vars(role, name):
    with open(os.path.join(REPO, "roles", role, "vars", name)) as handle:
        return yaml.safe_load(handle)


_PLAN = {"fabric_manager": {"required": True, "reason": "NVSwitch present"},
         "nvlink_subnet_manager": {"required": True, "reason": "NVLink 5 switch functions"},
         "persistence": {"enabled": True}}


def driver_names(major, source):
    """The driver packages of nvidia_driver on Ubuntu <major>, every flavour, Fabric Manager and NVLSM required."""
    pkgsets = _vars("nvidia_driver", "Ubuntu.yml")["__nvidia_driver_packages"]
    branches = driver_branches.source_branches("Ubuntu", major, source)["value"]
    assert branches, (major, source)
    archive, nvidia = set(), set()
    for branch in branches:
        for flavour in ("open", "proprietary"):
            facts = {"distribution": "Ubuntu", "branch": str(branch), "flavour": flavour, "distro_branch": None}
            chosen = nvidia_repo.choose_packages(pkgsets, {"source": source}, _PLAN, facts)
            assert not chosen["problems"], chosen["problems"]
            from_source = set(chosen["versioned"]) | set(chosen["fabric_manager"]) | set(chosen["nvlsm"])
            (archive if source == "distro" and not chosen["fm_from_cuda"] else nvidia).update(from_source)
            archive.update(chosen["nvlsm_deps"])
            archive.update(chosen["persistenced"])
    return archive, nvidia


def ubuntu_names(major):
    """(names from Ubuntu's archive, names from NVIDIA's repositories) the roles would install on Ubuntu <major>."""
    archive, nvidia = driver_names(major, "distro")
    cuda_archive, cuda_nvidia = driver_names(major, "cuda_repo")
    archive |= cuda_archive
    nvidia |= cuda_nvidia
    archive.add(_vars("node_exporter", "Debian.yml")["__node_exporter_platform"]["package"])
    archive.add(_vars("prometheus", "Debian.yml")["__prometheus_platform"]["package"])
    archive.update(_vars("python_stack", "Debian.yml")["__python_stack_os_packages"])
    archive.update(toolkit.packages("distro", toolkit.DISTRO_TOOLKIT[("Ubuntu", major)], {}))
    for pair in toolkit.RELEASE_DRIVER:
        nvidia.update(toolkit.packages("cuda_repo", pair, {"nsight": True, "cudnn": True}))
    nvidia.update(toolkit.NCCL_PACKAGES)
    for major_cuda in dcgm.CUDA_MAJORS:
        nvidia.update(dcgm_packages.packages({"exporter_package": "datacenter-gpu-manager-exporter"},
                                             {"value": major_cuda}, {"value": True}))
    nvidia.update(container_toolkit.PACKAGES)
    return archive, nvidia


def missing(names, entries):
    """The names without an entry (patterns allowed in entries)."""
    return sorted(n for n in names if not any(fnmatch.fnmatchcase(n, pattern) for pattern in entries))


@pytest.mark.parametrize("major", sorted(RELEASES))
def test_every_name_from_ubuntus_archive_has_an_entry(major):
    release = RELEASES[major]
    archive, _nvidia = ubuntu_names(major)
    entries = _fixture("%s.txt" % release)
    assert missing(archive, entries) == [], "names the roles install on %s without evidence in %s.txt" % (
        release, release)
    assert sorted(set(entries) - archive) == [], "entries of %s.txt no role installs any more" % release
    assert set(n for n, e in entries.items() if e["evidence"] == "none") == NO_EVIDENCE[release]


@pytest.mark.parametrize("major", sorted(RELEASES))
def test_every_name_from_nvidias_repositories_is_declared_as_such(major):
    _archive, nvidia = ubuntu_names(major)
    entries = _fixture("nvidia-repo.txt")
    assert all(e["evidence"] == "nvidia" for e in entries.values())
    assert missing(nvidia, entries) == []


def test_the_names_match_what_the_roles_install_on_ubuntu():
    # the -server flavour of Ubuntu's archive, the branch-suffixed Fabric Manager, the headless set
    archive, nvidia = ubuntu_names("24")
    assert {"nvidia-headless-580-server-open", "nvidia-headless-580-server", "nvidia-utils-580-server",
            "nvidia-fabricmanager-580", "prometheus-node-exporter", "python3-venv"} <= archive
    assert {"nvidia-headless-580-open", "nvidia-fabricmanager", "datacenter-gpu-manager-4-cuda12",
            "datacenter-gpu-manager-4-proprietary-cuda13"} <= nvidia
    assert not any(n.startswith("nvidia-driver-") for n in archive | nvidia), "servers are headless"


def test_a_misspelt_or_unlisted_name_is_reported():
    entries = _fixture("noble.txt")
    assert missing({"nvidia-headless-580-server-opne", "python3-venv"}, entries) == ["nvidia-headless-580-server-opne"]
    assert missing({"nvidia-fabricmanager-580"}, _fixture("nvidia-repo.txt")) == ["nvidia-fabricmanager-580"]


@pytest.mark.parametrize("line", [
    'python3-venv | listed | read 2026-12-07: "python3-venv/noble-updates"',
    'python3-venv | listed | SOURCE: somewhere, read 2026-12-07: ""',
    'python3-venv | seen | SOURCE: somewhere, read 2026-12-07: "x"',
    'python3-venv | listed | SOURCE: somewhere, read 7 Dec: "x"',
    'python3-venv | listed | SOURCE: somewhere, read 2026-12-07: "x"\n',
], ids=["no-source", "listed-without-quote", "unknown-evidence", "no-date", "newline"])
def test_an_entry_without_source_date_or_quote_is_refused(line):
    with pytest.raises(ValueError):
        parse(line.replace("\n", "\nstray text") if line.endswith("\n") else line)
