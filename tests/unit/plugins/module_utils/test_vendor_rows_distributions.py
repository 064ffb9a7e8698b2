# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36: the distribution and containerd words row by row - repository codenames and the EL family
(packages/cuda_repos.py), the security archive labels (packages/held_updates.py), the distribution's own apt
origins (probe/packages.py), the kernel package names (host/os_tuning_sources.py) and containerd's CRI plugin
ids (engines/container_engines.py). Each row has a source and a read date, the shapes the code reads are built
from the rows, and what a row's source contradicted is decided the source's way."""
import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_engines
from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning, os_tuning_sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import cuda_repos, held_updates
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import packages

DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
ALL = [
    ("CODENAME_ROWS", cuda_repos.CODENAME_ROWS, "codename"), ("EL_LIKE_ROWS", cuda_repos.EL_LIKE_ROWS, "distribution"),
    ("SECURITY_LABEL_ROWS", held_updates.SECURITY_LABEL_ROWS, "label"),
    ("DISTRO_ORIGIN_ROWS", packages.DISTRO_ORIGIN_ROWS, "origin"),
    ("RELEASE_PACKAGE_ROWS", os_tuning_sources.RELEASE_PACKAGE_ROWS, "pattern"),
    ("KERNEL_SAMPLE_ROWS", os_tuning_sources.KERNEL_SAMPLE_ROWS, "name"),
    ("CONTAINERD_CRI_ROWS", container_engines.CONTAINERD_CRI_ROWS, "plugin"),
]


@pytest.mark.parametrize("name, rows, key", ALL, ids=[a[0] for a in ALL])
def test_every_row_has_a_source_a_read_date_and_a_word_without_a_newline(name, rows, key):
    assert rows
    for row in rows:
        assert DATE.fullmatch(row["read"]) and row["source"].strip(), (name, row)
        assert row.get("unconfirmed") is None or row["unconfirmed"].strip(), (name, row)
        assert "\n" not in row[key], (name, row)


def test_the_shapes_the_code_reads_are_built_from_the_rows():
    assert cuda_repos.CODENAMES == {"debian12": "bookworm", "debian13": "trixie", "ubuntu2204": "jammy",
                                    "ubuntu2404": "noble"}
    assert cuda_repos.EL_LIKE == ("redhat", "rocky", "almalinux", "centos", "oraclelinux")
    assert held_updates.SECURITY_LABELS == ("Debian-Security",)
    assert packages.DISTRO_ORIGINS == tuple(r["origin"] for r in packages.DISTRO_ORIGIN_ROWS)
    assert os_tuning.RELEASE_PACKAGES == ("linux-image-%s", "linux-headers-%s", "linux-modules-%s")
    assert os_tuning.KERNEL_SAMPLES == tuple(r["name"] for r in os_tuning_sources.KERNEL_SAMPLE_ROWS)
    assert container_engines.CONTAINERD_CRI == {2: "io.containerd.grpc.v1.cri", 3: "io.containerd.cri.v1.runtime"}


@pytest.mark.parametrize("row", cuda_repos.CODENAME_ROWS, ids=lambda row: row["directory"])
def test_each_codename_is_the_distro_info_line_of_its_release(row):
    """SOURCE (distro-info-data 0.58+deb12u6 debian.csv / ubuntu.csv): the quoted line holds the codename in its
    third column and the release the directory names in its first."""
    line = re.search(r'"([^"]+)"', row["source"]).group(1).split(",")
    assert line[2] == row["codename"]
    assert row["directory"] in ("debian" + line[0], "ubuntu" + line[0].split()[0].replace(".", ""))


@pytest.mark.parametrize("row", container_engines.CONTAINERD_CRI_ROWS, ids=lambda row: str(row["version"]))
def test_each_cri_plugin_id_is_quoted_under_its_config_version(row):
    assert "version = %d [plugins." % row["version"] in row["source"] and row["plugin"] in row["source"]


# SOURCE (mvo5/unattended-upgrades 2.13 data/50unattended-upgrades.Ubuntu):
# "${distro_id}ESMApps:${distro_codename}-apps-security": Ubuntu Pro's esm-apps archive has the origin
# UbuntuESMApps, not UbuntuESM. A package installed from it is the distribution's, like one from esm-infra.
def test_a_package_from_ubuntu_esm_apps_counts_as_the_distributions():
    url = "https://esm.ubuntu.com/apps/ubuntu"
    releases = {(url, "jammy-apps-security/main"): "UbuntuESMApps", ("https://ppa.example/ubuntu", "jammy/main"): "X"}
    assert packages.origin_of([{"url": url, "dist": "jammy-apps-security/main"}], releases) == "distro"
    assert packages.origin_of([{"url": "https://ppa.example/ubuntu", "dist": "jammy/main"}], releases) == "other"
    assert "UbuntuESMApps\n" not in packages.DISTRO_ORIGINS


@pytest.mark.parametrize("glob, kernel", [("linux-image-*", True), ("linux-modules-extra-*", True), ("kernel*", True),
                                          ("linux-firmware", False), ("nvidia-*", False)])
def test_kernel_globs_are_recognised_by_the_sample_names(glob, kernel):
    assert os_tuning.is_kernel_glob(glob) is kernel
