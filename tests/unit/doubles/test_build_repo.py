"""tests/doubles/build_repo.py, the one builder of repository doubles (specs in
tests/doubles/repo_specs.py): the ``cuda`` spec builds an apt repository laid out like NVIDIA's CUDA
repository, signed by a lab key, holding the driver, Fabric Manager and DCGM packages, every one named
a TEST DOUBLE; the ``ctk`` spec the libnvidia-container repository."""

import gzip
import hashlib
import importlib.util
import json
import os
import sys
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUILDER = os.path.join(REPO, "tests", "doubles", "build_repo.py")

_spec = importlib.util.spec_from_file_location("build_repo", BUILDER)
builder = importlib.util.module_from_spec(_spec)
sys.dont_write_bytecode, _saved = True, sys.dont_write_bytecode
_spec.loader.exec_module(builder)
sys.dont_write_bytecode = _saved


def stanzas(text):
    out = []
    for block in text.strip().split("\n\n"):
        fields, key = {}, None
        for line in block.splitlines():
            if line.startswith(" ") and key:
                fields[key] += "\n" + line.strip()
            else:
                key, value = line.split(": ", 1)
                fields[key] = value
        out.append(fields)
    return out


@pytest.fixture(name="built", scope="module")
def fixture_built(tmp_path_factory):
    mirror = tmp_path_factory.mktemp("mirror")
    state = tmp_path_factory.mktemp("state")
    (mirror / "SHA256SUMS").write_text("%s  files/other/thing.tar.gz\n" % ("a" * 64))
    first = builder.build(str(mirror), str(state))
    second = builder.build(str(mirror), str(state))
    return mirror, state, first, second


def test_idempotent_and_key_outside_the_mirror(built):
    mirror, state, first, second = built
    assert first["changed"] is True and second["changed"] is False
    assert first["fingerprint"] == second["fingerprint"]
    assert os.path.isdir(os.path.join(str(state), "cuda-double-gnupg"))
    for root, dirs, dummy in os.walk(str(mirror)):
        assert "cuda-double-gnupg" not in dirs and "private-keys-v1.d" not in dirs


def test_layout_like_nvidias_flat_repositories(built):
    mirror = built[0]
    manifest = json.loads((mirror / "apt" / "cuda" / "testdouble.json").read_text())
    assert sorted(manifest["repos"]) == ["debian12/x86_64", "debian13/x86_64"]
    for path in manifest["repos"]:
        repo = mirror / "apt" / "cuda" / path
        for name in ("Packages", "Packages.gz", "Release", "InRelease", "Release.gpg", manifest["keyring"]):
            assert (repo / name).is_file(), name
        assert gzip.decompress((repo / "Packages.gz").read_bytes()).decode() == (repo / "Packages").read_text()


def test_every_package_is_named_as_a_double(built):
    mirror = built[0]
    for path in ("debian12/x86_64", "debian13/x86_64"):
        repo = mirror / "apt" / "cuda" / path
        packages = stanzas((repo / "Packages").read_text())
        assert packages
        for pkg in packages:
            assert pkg["Version"].endswith("+gpuops.testdouble"), pkg["Package"]
            assert pkg["Description"].startswith("TEST DOUBLE"), pkg["Package"]
            deb = repo / pkg["Filename"]
            assert hashlib.sha256(deb.read_bytes()).hexdigest() == pkg["SHA256"]
            assert int(pkg["Size"]) == deb.stat().st_size
            control = subprocess.run(["dpkg-deb", "-f", str(deb), "Version", "Description"], check=True,
                                     stdout=subprocess.PIPE).stdout.decode()
            assert "+gpuops.testdouble" in control and "TEST DOUBLE" in control
        versions = {(p["Package"], p["Version"].split("-")[0]) for p in packages}
        for version in ("580.95.05", "580.105.08"):
            for name in ("nvidia-driver-cuda", "nvidia-kernel-open-dkms", "nvidia-kernel-dkms",
                         "nvidia-fabricmanager", "nvidia-smi", "libcuda1"):
                assert (name, version) in versions
    deb12 = stanzas((mirror / "apt" / "cuda" / "debian12" / "x86_64" / "Packages").read_text())
    assert {p["Version"] for p in deb12 if p["Package"] == "nvidia-fabricmanager-535"} == {
        "535.261.03-1+gpuops.testdouble", "535.309.01-1+gpuops.testdouble"}


def test_release_is_signed_by_the_published_key(built, tmp_path):
    mirror = built[0]
    repo = mirror / "apt" / "cuda" / "debian12" / "x86_64"
    keyring = repo / builder.SPECS["cuda"]["keyring"]
    for args in (["gpgv", "--keyring", str(keyring), str(repo / "InRelease")],
                 ["gpgv", "--keyring", str(keyring), str(repo / "Release.gpg"), str(repo / "Release")]):
        res = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        assert res.returncode == 0, res.stderr.decode()
    release = (repo / "Release").read_text()
    digest = hashlib.sha256((repo / "Packages").read_bytes()).hexdigest()
    assert " %s %d Packages\n" % (digest, (repo / "Packages").stat().st_size) in release
    manifest = json.loads((mirror / "apt" / "cuda" / "testdouble.json").read_text())
    assert hashlib.sha256(keyring.read_bytes()).hexdigest() == manifest["repos"]["debian12/x86_64"]["keyring_sha256"]


def test_sha256sums_merged_not_replaced(built):
    mirror = built[0]
    lines = (mirror / "SHA256SUMS").read_text().splitlines()
    assert "%s  files/other/thing.tar.gz" % ("a" * 64) in lines
    ours = [line for line in lines if line.split()[1].startswith("apt/cuda/")]
    for line in ours:
        digest, path = line.split()
        assert hashlib.sha256((mirror / path).read_bytes()).hexdigest() == digest
    assert any(line.endswith("apt/cuda/debian13/x86_64/InRelease") for line in ours)


def test_tool_doubles_fail_like_the_real_tools_without_a_driver(built, tmp_path):
    repo = built[0] / "apt" / "cuda" / "debian12" / "x86_64"
    subprocess.run(["dpkg-deb", "-x", str(repo / "nvidia-smi_580.95.05-1+gpuops.testdouble_amd64.deb"),
                    str(tmp_path)], check=True)
    res = subprocess.run(["sh", str(tmp_path / "usr" / "bin" / "nvidia-smi")], stderr=subprocess.PIPE, check=False)
    assert res.returncode == 9
    assert b"TEST DOUBLE" in res.stderr and b"couldn't communicate with the NVIDIA driver" in res.stderr


@pytest.mark.parametrize("release, full", [("12.4", "12.4.131"), ("12.6", "12.6.85")])
def test_nvcc_double_reports_its_release_and_compiles_only_a_kernel(built, tmp_path, release, full):
    repo = built[0] / "apt" / "cuda" / "debian13" / "x86_64"
    deb = "cuda-toolkit-%s_%s-1+gpuops.testdouble_amd64.deb" % (release.replace(".", "-"), full)
    subprocess.run(["dpkg-deb", "-x", str(repo / deb), str(tmp_path)], check=True)
    nvcc = str(tmp_path / "usr" / "local" / ("cuda-" + release) / "bin" / "nvcc")
    out = subprocess.run(["sh", nvcc, "--version"], stdout=subprocess.PIPE, check=True).stdout.decode()
    assert "TEST DOUBLE" in out and "Cuda compilation tools, release %s, V%s" % (release, full) in out
    src = tmp_path / "check.cu"
    src.write_text("__global__ void k() {}\nint main() { return 0; }\n")
    subprocess.run(["sh", nvcc, str(src), "-c", "-o", str(tmp_path / "check.o")], check=True)
    assert "TEST DOUBLE object" in (tmp_path / "check.o").read_text()
    subprocess.run(["sh", nvcc, str(src), "-o", str(tmp_path / "check")], check=True)
    assert subprocess.run([str(tmp_path / "check")], stdout=subprocess.PIPE, check=True).stdout == b"gpuops-cuda-ok 42\n"
    (tmp_path / "plain.cu").write_text("int main() { return 0; }\n")
    assert subprocess.run(["sh", nvcc, str(tmp_path / "plain.cu"), "-c", "-o", str(tmp_path / "x.o")],
                          check=False).returncode != 0


def _flaky_tool(tmp_path, failures, message):
    """A stand-in command that fails ``failures`` times with ``message`` on stderr, then prints ok."""
    count = tmp_path / "count"
    count.write_text("0")
    tool = tmp_path / "tool"
    tool.write_text('#!/bin/sh\nn=$(cat "%s"); echo $((n + 1)) > "%s"\nif [ "$n" -lt %d ]; then echo "%s" >&2; exit 2; fi\n'
                    'echo ok\n' % (count, count, failures, message))
    tool.chmod(0o755)
    return str(tool), count


def test_a_refused_agent_connection_is_retried(tmp_path, monkeypatch):
    monkeypatch.setattr(builder.time, "sleep", lambda seconds: None)
    stopped = []
    monkeypatch.setattr(builder, "stop_agent", stopped.append)
    tool, count = _flaky_tool(tmp_path, 2, "gpg: can't connect to the agent: End of file")
    assert builder.run([tool], retry=builder.agent_retry("/h")) == "ok\n"
    assert count.read_text().strip() == "3" and stopped == ["/h", "/h"]


@pytest.mark.parametrize("failures, message", [
    (9, "gpg: can't connect to the agent: End of file"),   # never comes: AGENT_ATTEMPTS runs, then the error
    (1, "gpg: signing failed: No secret key"),             # another error: not retried
])
def test_other_failures_and_a_lasting_refusal_fail_naming_the_command(tmp_path, monkeypatch, failures, message):
    monkeypatch.setattr(builder.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(builder, "stop_agent", lambda home: None)
    tool, count = _flaky_tool(tmp_path, failures, message)
    with pytest.raises(SystemExit) as info:
        builder.run([tool], retry=builder.agent_retry("/h"))
    assert "build_repo: %s failed (rc=2): %s" % (tool, message) in str(info.value)
    assert count.read_text().strip() == str(builder.AGENT_ATTEMPTS if failures > 1 else 1)
