"""tests/doubles/build_repo.py --repo ctk builds a signed apt repository laid out like NVIDIA's
libnvidia-container repository, every package a named TEST DOUBLE whose tools never pretend
to need no driver; a second build with the same recipe changes nothing."""
import importlib.util
import json
import os
import shutil
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUILDER = os.path.join(REPO, "tests", "doubles", "build_repo.py")
_spec = importlib.util.spec_from_file_location("build_repo", BUILDER)
builder = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(builder)

pytestmark = pytest.mark.skipif(not shutil.which("gpg") or not shutil.which("dpkg-deb"),
                                reason="needs gpg and dpkg-deb")


def test_double_repository(tmp_path):
    mirror, state = tmp_path / "mirror", tmp_path / "state"
    first = builder.build(str(mirror), str(state), name="ctk")
    assert first["changed"] is True
    base = mirror / "apt" / "libnvidia-container"
    manifest = json.loads((base / "testdouble.json").read_text())
    packages = manifest["repos"]["amd64"]["packages"]
    assert sorted(packages) == sorted(["nvidia-container-toolkit", "nvidia-container-toolkit-base",
                                       "libnvidia-container-tools", "libnvidia-container1"])
    for versions in packages.values():
        assert versions == ["1.18.2-1+gpuops.testdouble", "1.19.1-1+gpuops.testdouble"]
    repo = base / "stable" / "deb" / "amd64"
    for name in ("InRelease", "Release.gpg", "Packages", "Packages.gz", "gpgkey"):
        assert (repo / name).exists()
    index = (repo / "Packages").read_text()
    assert index.count("Description: TEST DOUBLE of ") == 8 and "build_repo.py" in index
    assert "libnvidia-container" in (repo / "Release").read_text()
    # The tools say they are doubles; what needs a driver fails like the real tool without one.
    deb = next(repo.glob("nvidia-container-toolkit-base_1.19.1*.deb"))
    root = tmp_path / "x"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    ctk = str(root / "usr" / "bin" / "nvidia-ctk")
    version = subprocess.run([ctk, "--version"], capture_output=True, text=True, check=True).stdout
    assert "1.19.1" in version and "TEST DOUBLE" in version
    gen = subprocess.run([ctk, "cdi", "generate"], capture_output=True, text=True, check=False)
    assert gen.returncode != 0 and "TEST DOUBLE" in gen.stderr and "libnvidia-ml.so.1" in gen.stderr
    assert (root / "usr" / "lib" / "systemd" / "system" / "nvidia-cdi-refresh.path").exists()
    # The signature verifies with the published key.
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    subprocess.run(["gpg", "--homedir", str(home), "--batch", "--import", str(repo / "gpgkey")], check=True,
                   capture_output=True)
    subprocess.run(["gpg", "--homedir", str(home), "--batch", "--verify", str(repo / "InRelease")], check=True,
                   capture_output=True)
    builder.stop_agent(str(home))
    assert builder.build(str(mirror), str(state), name="ctk")["changed"] is False
