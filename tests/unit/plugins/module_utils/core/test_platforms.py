"""core/platforms.py: the collection's platform check (common's preflight, through role_inputs)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core.platforms import (
    describe_platforms, in_container, missing_facts, platform_error, platform_version)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
with open(os.path.join(REPO, "roles", "common", "vars", "main.yml")) as handle:
    TABLE = yaml.safe_load(handle)["__common_supported_platforms"]
CONTAINER_TYPES = yaml.safe_load(open(os.path.join(REPO, "roles", "common", "vars", "main.yml")))["__common_container_types"]
LISTED = "Supported platforms: Debian 12/13, Ubuntu 22.04/24.04, Rocky 9, RedHat 9."


def facts(distribution, major, version):
    return {"distribution": distribution, "distribution_major_version": major, "distribution_version": version}


@pytest.mark.parametrize("distribution,major,version", [
    ("Debian", "12", "12.8"), ("Debian", "13", "13.1"), ("Ubuntu", "24", "24.04"), ("Ubuntu", "22", "22.04"),
    ("Rocky", "9", "9.5"), ("RedHat", "9", "9.4"),
])
def test_supported(distribution, major, version):
    assert platform_error("os_tuning", facts(distribution, major, version), TABLE) is None


@pytest.mark.parametrize("distribution,major,version,said", [
    ("Fedora", "40", "40", "Fedora 40"),
    ("Debian", "11", "11.9", "Debian 11"),
    ("Ubuntu", "20", "20.04", "Ubuntu 20.04"),
    ("Ubuntu", "24", "24.10", "Ubuntu 24.10"),   # Ubuntu by its full version: an interim release is not 24.04
    ("Rocky", "8", "8.10", "Rocky 8"),
    ("debian", "12", "12.8", "debian 12"),     # distribution names are exact
    ("", "", "", "(unknown) (unknown)"),
])
def test_unsupported_names_the_platform_and_lists_the_supported(distribution, major, version, said):
    error = platform_error("nvidia_driver", facts(distribution, major, version), TABLE)
    assert error == "nvidia_driver does not support %s. %s" % (said, LISTED)


def test_missing_facts_are_unsupported():
    assert "does not support (unknown) (unknown)" in platform_error("os_tuning", None, TABLE)


def test_versions_compare_as_strings():
    assert platform_error("r", {"distribution": "Debian", "distribution_major_version": 12}, {"Debian": [12]}) is None
    assert platform_version({"distribution": "Ubuntu", "distribution_version": "22.04",
                             "distribution_major_version": "22"}) == "22.04"


@pytest.mark.parametrize("table", [None, {}, ["Debian"]])
def test_a_bad_table_is_refused(table):
    with pytest.raises(ValueError):
        platform_error("r", facts("Debian", "12", "12.8"), table)


def test_describe_keeps_the_table_order():
    assert describe_platforms({"B": ["2", "1"], "A": ["3"]}) == "B 2/1, A 3"


@pytest.mark.parametrize("role,vtype,expected", [
    ("guest", "docker", True), ("guest", "podman", True), ("guest", "lxc", True), ("guest", "systemd-nspawn", True),
    ("guest", "kvm", False),          # a VM has its own kernel
    ("host", "docker", False),        # a Docker host is not a container
    ("guest", "", False), ("", "", False),
])
def test_in_container(role, vtype, expected):
    assert in_container({"virtualization_role": role, "virtualization_type": vtype}, CONTAINER_TYPES) is expected


def test_in_container_without_the_facts_is_false():
    assert in_container({}, CONTAINER_TYPES) is False and in_container(None, CONTAINER_TYPES) is False


@pytest.mark.parametrize("facts,missing", [
    ({}, ["virtualization_type", "distribution", "kernel", "python"]),
    ({"distribution": "Debian", "kernel": "6.1", "python": {}}, ["virtualization_type"]),
    ({"virtualization_type": "docker", "distribution": "Debian", "kernel": "6.1", "python": {}}, []),
])
def test_missing_facts(facts, missing):
    assert missing_facts(facts) == missing
