"""Issue 34 item 7: every URL the roles fetch under the mirror switch (``gpuops_mirror_url``, the table of
plugins/module_utils/packages/mirror_urls.py, at the roles' default versions) exists in the lab
mirror that the collection's builders make (tests/doubles/build_repo.py,
build_node_exporter_release.py, build_wheel_mirror.py). The builders run into a scratch mirror;
node_exporter's .deb is a stand-in built here (the builder downloads Debian's in the lab)."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import urllib.parse

import pytest

from ansible_collections.gpuops.dlserver.plugins.filter.mirror_urls import role_defaults
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import cuda_repos
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.mirror_urls import MIRRORED, mirror_table

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DOUBLES = os.path.join(REPO, "tests", "doubles")
MIRROR_URL = "http://172.30.99.1:8099"
# The lab's nodes (lab/gpuops_lab: Debian 12 and 13 images, x86_64).
LAB_HOSTS = [{"distribution": "Debian", "major": "12", "version": "12.11", "architecture": "x86_64"},
             {"distribution": "Debian", "major": "13", "version": "13.1", "architecture": "x86_64"}]
# What the lab mirror does not serve, and why: every other mirrored path must be there. A new row
# in MIRRORED fails test_every_mirrored_variable_is_walked until it is served or listed here.
NOT_IN_LAB = {
    "python_stack_nvidia_index_url": "NVIDIA's Python index serves DALI only (python_stack_dali, off by default); no double",
    "python_stack_conda_installer_url": "the conda backend (python_stack_backend: conda, not the default) is not "
                                        "run against the lab mirror; no Miniforge double",
    "volcano_chart_repo_url": "the volcano scenario applies rendered manifests against a fake API server; no chart double",
}

needs_tools = pytest.mark.skipif(not (shutil.which("gpg") and shutil.which("dpkg-deb")), reason="needs gpg and dpkg-deb")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(DOUBLES, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    saved, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = saved
    return module


def role_urls():
    """{variable: [URL, ...]}: what the roles fetch under gpuops_mirror_url at their defaults."""
    defaults = role_defaults()
    rows = dict((row["variable"], row["url"]) for row in mirror_table(defaults, MIRROR_URL))
    version = defaults["node_exporter_version"]
    urls = {}
    for host in LAB_HOSTS:
        repo = cuda_repos.from_inputs({"gpuops_cuda_repo_base_url": rows["gpuops_cuda_repo_base_url"],
                                       "gpuops_cuda_repo_key_checksum": "sha256:" + "0" * 64}, host)
        urls.setdefault("gpuops_cuda_repo_base_url", []).extend([repo["url"] + "InRelease", repo["key_url"]])
    urls["nvidia_container_toolkit_repo_url"] = [rows["nvidia_container_toolkit_repo_url"].replace("$(ARCH)", "amd64")
                                                 + "/InRelease"]
    urls["nvidia_container_toolkit_keyring_url"] = [rows["nvidia_container_toolkit_keyring_url"]]
    for name in ("node_exporter_binary_url", "node_exporter_checksums_url"):
        urls[name] = [rows[name].replace("{version}", version).replace("{arch}", "amd64")]
    urls["python_stack_pytorch_index_url"] = [rows["python_stack_pytorch_index_url"] + "/cpu/torch/"]
    return urls


def test_every_mirrored_variable_is_walked():
    assert sorted(set(role_urls()) | set(NOT_IN_LAB)) == sorted(MIRRORED)


def fake_node_exporter_deb(cache):
    """A .deb shaped like Debian's prometheus-node-exporter (the builder only unpacks two files)."""
    root = os.path.join(cache, "root")
    for rel, text in (("usr/bin/prometheus-node-exporter", "#!/bin/sh\necho stand-in\n"),
                      ("usr/share/doc/prometheus-node-exporter/copyright", "stand-in\n"),
                      ("DEBIAN/control", "Package: prometheus-node-exporter\nVersion: 1.5.0-1+b6\nArchitecture: amd64\n"
                                         "Maintainer: lab <lab@gpuops.invalid>\nDescription: stand-in\n")):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w") as handle:
            handle.write(text)
    subprocess.run(["dpkg-deb", "--build", root, os.path.join(cache, "prometheus-node-exporter_1.5.0-1+b6_amd64.deb")],
                   check=True, capture_output=True)
    shutil.rmtree(root)


@pytest.fixture(name="lab_mirror", scope="module")
def fixture_lab_mirror(tmp_path_factory):
    mirror = str(tmp_path_factory.mktemp("mirror"))
    state = str(tmp_path_factory.mktemp("state"))
    builder = _load("build_repo")
    for name in sorted(builder.SPECS):
        builder.build(mirror, state, name=name)
    cache = os.path.join(state, "debs")
    os.makedirs(cache)
    fake_node_exporter_deb(cache)
    exporter = _load("build_node_exporter_release")
    exporter.build(mirror, cache)
    exporter.build(mirror, cache, exporter.role_default_version())
    # the wheel mirror's layout (build_wheel_mirror.py needs pip and the wheels): torch's own index
    os.makedirs(os.path.join(mirror, "pytorch", "whl", "cpu", "torch"))
    return mirror


def served(mirror, url):
    path = urllib.parse.urlsplit(url).path.lstrip("/")
    full = os.path.join(mirror, *path.split("/"))
    return os.path.isdir(full) if url.endswith("/") else os.path.isfile(full)


@needs_tools
def test_the_lab_mirror_serves_every_default_path(lab_mirror):
    missing = ["%s: %s" % (name, url) for name, urls in sorted(role_urls().items()) for url in urls
               if not served(lab_mirror, url)]
    assert missing == []


@needs_tools
def test_the_cuda_key_files_are_where_the_table_says_and_listed_with_their_sha256(lab_mirror):
    with open(os.path.join(lab_mirror, "apt", "cuda", "testdouble.json")) as handle:
        manifest = json.load(handle)
    expected = sorted("%s/x86_64/%s" % (row["directory"], row["key_file"])
                      for key, row in cuda_repos.REPOSITORIES.items() if key[0] == "debian")
    assert sorted(manifest["key_files"]) == expected
    with open(os.path.join(lab_mirror, "SHA256SUMS")) as handle:
        sums = handle.read()
    for rel, sha in manifest["key_files"].items():
        assert "%s  apt/cuda/%s\n" % (sha, rel) in sums


@needs_tools
def test_the_role_default_node_exporter_release_says_it_is_a_double(lab_mirror):
    exporter = _load("build_node_exporter_release")
    version = exporter.role_default_version()
    with open(os.path.join(lab_mirror, "files", "node_exporter", version, "testdouble.json")) as handle:
        manifest = json.load(handle)
    assert manifest["testdouble"] is True and manifest["version"] == version
    assert manifest["binary_version"] == "1.5.0" and "the binary inside reports 1.5.0" in manifest["what"]
