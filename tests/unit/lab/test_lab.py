"""lab/lab.py: the pieces that do not need Docker."""
import importlib.util
import os

import pytest

LAB = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab", "lab.py"))


@pytest.fixture
def lab():
    spec = importlib.util.spec_from_file_location("gpuops_lab", LAB)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sources_follow_the_hosts_mirror(lab):
    text = lab.sources_deb822("http://mirror.example/debian", "trixie", True)
    assert "URIs: http://mirror.example/debian\nSuites: trixie trixie-updates\n" in text
    assert "URIs: http://mirror.example/debian-security\nSuites: trixie-security\n" in text
    assert text.count("Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg") == 2


def test_mirror_override(lab, monkeypatch):
    monkeypatch.setenv("GPUOPS_LAB_DEBIAN_MIRROR", "http://m.example/debian/")
    assert lab.host_debian_mirror() == "http://m.example/debian"


def test_recipe_hash_changes_with_the_recipe(lab, monkeypatch):
    before = lab.recipe_hash("12")
    assert before == lab.recipe_hash("12")
    monkeypatch.setattr(lab, "PACKAGES", lab.PACKAGES + ["vim"])
    assert lab.recipe_hash("12") != before
    assert lab.recipe_hash("13") != lab.recipe_hash("12")


def test_gateway_is_first_host_of_subnet(lab):
    assert lab.gateway() == "172.30.99.1"
    assert lab.mirror_url() == "http://172.30.99.1:8099"


def test_root_needed_message(lab, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(lab.LabError, match="needs root"):
        lab.need_root("starting dockerd")


def test_missing_tools_without_apt_say_what_to_install(lab, monkeypatch):
    monkeypatch.setattr(lab.shutil, "which", lambda name: None)
    monkeypatch.setattr(os.path, "exists", lambda path: False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(lab.LabError, match="docker.io, debootstrap, openssh-client"):
        lab.ensure_packages()
