"""NVIDIA's CUDA repository per distribution (plugins/module_utils/packages/cuda_repos.py) and the
filter gpuops.dlserver.__private.cuda_repository, from data/cuda_repos_cases.yml. The key every role that
installs from the CUDA repository trusts (nvidia_driver, dcgm_exporter) is this table's."""
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.__private.cuda_repository import cuda_repository
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import cuda_repos

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "data", "cuda_repos_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
DEBIAN12 = {"distribution": "Debian", "major": "12", "version": "12.11", "architecture": "x86_64"}


def ids(cases):
    return [c["id"] for c in cases]


@pytest.mark.parametrize("case", CASES["hosts"], ids=ids(CASES["hosts"]))
def test_table(case):
    result = cuda_repos.repository(case["facts"])
    for key, value in case["expect"].items():
        assert result[key] == value, key
    assert result["key_url"] == result["url"] + result["key_file"]
    assert result["reason"]


@pytest.mark.parametrize("case", CASES["inputs"], ids=ids(CASES["inputs"]))
def test_overrides(case):
    result = cuda_repos.from_inputs(case["inputs"], case["facts"])
    for key, value in case["expect"].items():
        assert result[key] == value, key


@pytest.mark.parametrize("case", CASES["errors"], ids=ids(CASES["errors"]))
def test_each_wrong_value_is_named(case):
    with pytest.raises(ValueError) as err:
        cuda_repos.from_inputs(case["inputs"], case.get("facts", DEBIAN12))
    for part in case["expect"]:
        assert part in str(err.value), (part, str(err.value))


def test_every_debian_family_row_has_a_fingerprint():
    # apt installs only what the keyring trusts: a row without a fingerprint would make every
    # Debian-family user name one. EL (rpm_key) is the documented exception.
    for (family, version), row in cuda_repos.REPOSITORIES.items():
        assert bool(row["fingerprint"]) is (family != "rhel"), (family, version)


def test_filter_reads_ansible_facts_and_names_the_variable():
    facts = {"distribution": "Debian", "distribution_major_version": "13", "distribution_version": "13.1",
             "architecture": "x86_64"}
    assert cuda_repository({}, facts)["directory"] == "debian13"
    with pytest.raises(AnsibleFilterError, match="gpuops_cuda_repo_key_fingerprint"):
        cuda_repository({"gpuops_cuda_repo_key_fingerprint": "x"}, facts)


def test_lookup_returns_the_repository_without_the_rows_source_and_read_date():
    row = cuda_repos.lookup("Debian", "12", "12.8", "x86_64")
    assert "source" not in row and "read" not in row and "unconfirmed" not in row
    assert cuda_repos.REPOSITORIES[("debian", "12")]["source"].startswith("NVIDIA cuda-repo-management README")
    assert "unconfirmed" not in cuda_repos.lookup("Rocky", "9", "9.4", "x86_64")
