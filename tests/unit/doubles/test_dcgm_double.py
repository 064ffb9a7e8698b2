"""The DCGM packages of the CUDA repository double (tests/doubles/build_repo.py, spec ``cuda``;
every package named a TEST DOUBLE), and the nv-hostengine / dcgm-exporter
stand-ins it packages behave as the role's lab checks assume: the exporter refuses unknown
options, needs a host engine (-r) where no driver is loaded, and serves the fields of its -f file."""

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DOUBLES = os.path.join(REPO, "tests", "doubles")

_spec = importlib.util.spec_from_file_location("build_repo", os.path.join(DOUBLES, "build_repo.py"))
builder = importlib.util.module_from_spec(_spec)
sys.dont_write_bytecode, _saved = True, sys.dont_write_bytecode
_spec.loader.exec_module(builder)
sys.dont_write_bytecode = _saved


@pytest.fixture(name="built", scope="module")
def fixture_built(tmp_path_factory):
    mirror = tmp_path_factory.mktemp("mirror")
    state = tmp_path_factory.mktemp("state")
    first = builder.build(str(mirror), str(state))
    second = builder.build(str(mirror), str(state))
    return mirror, first, second


def test_idempotent_signed_and_named_as_doubles(built):
    mirror, first, second = built
    assert first["changed"] is True and second["changed"] is False
    manifest = json.loads((mirror / "apt" / "cuda" / "testdouble.json").read_text())
    assert sorted(manifest["repos"]) == ["debian12/x86_64", "debian13/x86_64"]
    repo = mirror / "apt" / "cuda" / "debian12" / "x86_64"
    packages = (repo / "Packages").read_text()
    for name in ("datacenter-gpu-manager-4-core", "datacenter-gpu-manager-4-cuda11", "datacenter-gpu-manager-4-cuda12",
                 "datacenter-gpu-manager-4-cuda13", "datacenter-gpu-manager-4-proprietary",
                 "datacenter-gpu-manager-exporter"):
        assert "Package: %s\n" % name in packages
    assert packages.count("Description: TEST DOUBLE of ") == packages.count("Package: ")
    assert all("+gpuops.testdouble" in line for line in packages.splitlines() if line.startswith("Version: "))
    assert "BEGIN PGP SIGNED MESSAGE" in (repo / "InRelease").read_text()
    assert "apt/cuda/debian12/x86_64/Packages" in (mirror / "SHA256SUMS").read_text()


def test_scripts_are_executable_python(built, tmp_path):
    repo = built[0] / "apt" / "cuda" / "debian12" / "x86_64"
    deb = [p for p in os.listdir(str(repo)) if p.startswith("datacenter-gpu-manager-exporter_")][0]
    subprocess.run(["dpkg-deb", "-x", str(repo / deb), str(tmp_path)], check=True)
    script = tmp_path / "usr" / "bin" / "dcgm-exporter"
    assert script.read_text().startswith("#!/usr/bin/python3\n# TEST DOUBLE")
    assert os.stat(str(script)).st_mode & 0o111


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _run(*args, **kw):
    return subprocess.run([sys.executable, os.path.join(DOUBLES, "dcgm", "dcgm_exporter.py")] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False,
                          timeout=60, **kw)


def test_exporter_refuses_an_unknown_option():
    res = _run("--collectors-file", "/x")
    assert res.returncode == 2 and "unrecognized arguments" in res.stderr


@pytest.mark.skipif(os.path.exists("/dev/nvidiactl"), reason="a driver is loaded here")
def test_exporter_without_host_engine_fails_where_no_driver_is_loaded(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text("DCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\n")
    res = _run("-f", str(csv), "-a", "127.0.0.1:%d" % _free_port())
    assert res.returncode == 1 and "embedded host engine" in res.stderr


def test_exporter_refuses_a_bad_type(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text("DCGM_FI_DEV_GPU_TEMP, histogram, GPU temperature (in C).\n")
    res = _run("-f", str(csv), "-r", "127.0.0.1:1")
    assert res.returncode == 1 and "metric type 'histogram'" in res.stderr


def test_exporter_serves_the_fields_through_the_host_engine(tmp_path):
    engine_port, http_port = _free_port(), _free_port()
    engine = subprocess.Popen([sys.executable, os.path.join(DOUBLES, "dcgm", "nv_hostengine.py"), "-n",
                               "-p", str(engine_port)], stdout=subprocess.PIPE)
    csv = tmp_path / "c.csv"
    csv.write_text("# comment\nDCGM_FI_DEV_GPU_TEMP, gauge, GPU temperature (in C).\n"
                   "DCGM_FI_DEV_XID_ERRORS, gauge, Value of the last XID error encountered.\n")
    exporter = subprocess.Popen([sys.executable, os.path.join(DOUBLES, "dcgm", "dcgm_exporter.py"), "-f", str(csv),
                                 "-a", "127.0.0.1:%d" % http_port, "-r", "localhost:%d" % engine_port],
                                stdout=subprocess.PIPE)
    try:
        page = None
        for _attempt in range(50):
            try:
                page = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % http_port, timeout=2).read().decode()
                break
            except OSError:
                time.sleep(0.2)
        assert page is not None
        assert "# TYPE DCGM_FI_DEV_GPU_TEMP gauge" in page and "# HELP DCGM_FI_DEV_XID_ERRORS" in page
    finally:
        exporter.terminate()
        engine.terminate()
        exporter.wait(10)
        engine.wait(10)
