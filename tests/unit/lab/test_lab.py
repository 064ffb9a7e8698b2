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


def _load_lab(monkeypatch, tmp_path, name):
    monkeypatch.setenv("GPUOPS_LAB_SUBNET", "127.77.0.0/24")
    monkeypatch.setenv("GPUOPS_LAB_MIRROR_PORT", "18099")
    monkeypatch.setenv("GPUOPS_LAB_STATE", str(tmp_path / name / "state"))
    monkeypatch.setenv("GPUOPS_MIRROR_DIR", str(tmp_path / name / "mirror"))
    spec = importlib.util.spec_from_file_location("gpuops_lab_" + name, LAB)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mirror_of_another_checkout_is_replaced(monkeypatch, tmp_path):
    """A lab mirror left by another checkout serves other files: it is stopped, ours starts."""
    first = _load_lab(monkeypatch, tmp_path, "first")
    second = _load_lab(monkeypatch, tmp_path, "second")
    try:
        first.ensure_mirror()
        assert first.mirror_alive() and not second.mirror_alive()
        second.ensure_mirror()
        ident = second.mirror_identity()
        assert ident["dir"] == os.path.realpath(str(tmp_path / "second" / "mirror"))
        assert not first.mirror_alive()
        second.ensure_mirror()  # already ours: nothing restarts
        assert second.mirror_identity()["pid"] == ident["pid"]
    finally:
        second.stop_mirror()
        first.stop_mirror()
