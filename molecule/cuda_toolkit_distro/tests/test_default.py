"""Verify gpuops.dlserver.cuda_toolkit with Debian's REAL nvidia-cuda-toolkit (distro source) on a
Debian 12 node without a GPU (and, where the scenario lists it, a Debian 13 node). Expectations are written here (Debian's toolkit per
release), never read from the role's own decisions; the status file is checked against them."""

import json

import pytest

STATUS = "/etc/gpuops/cuda_toolkit.json"
PROFILE = "/etc/profile.d/gpuops-cuda.sh"
LDCONF = "/etc/ld.so.conf.d/gpuops-cuda.conf"
CHECK_DIR = "/var/lib/gpuops/cuda_toolkit"
# Debian's nvidia-cuda-toolkit per release (apt-cache policy on the lab images, 2026-12-01).
EXPECTED = {"cuda-distro12": "11.8", "cuda-distro13": "12.4"}


def release(host):
    return EXPECTED[host.backend.get_hostname()]


def test_debian_toolkit_installed_from_the_archive(host):
    package = host.package("nvidia-cuda-toolkit")
    assert package.is_installed
    # Debian's versions: 11.8.89~11.8.0-5~deb12u1, 12.4.131~12.4.1-2
    assert package.version.startswith(release(host) + "."), package.version
    policy = host.check_output("LC_ALL=C apt-cache policy nvidia-cuda-toolkit")
    assert "non-free" in policy, policy


def test_supported_host_compiler(host):
    # Debian's nvidia-cuda-toolkit-gcc: /usr/bin/cuda-g++, the g++ the toolkit supports (verify
    # compiles with -ccbin /usr/bin/cuda-g++; the default gcc of Debian 12 has no g++ here).
    assert host.package("nvidia-cuda-toolkit-gcc").is_installed
    assert host.file("/usr/bin/cuda-g++").is_symlink
    assert host.run("/usr/bin/cuda-g++ --version").rc == 0


def test_real_nvcc_reports_the_release(host):
    out = host.check_output("/usr/bin/nvcc --version")
    assert "Cuda compilation tools, release %s," % release(host) in out, out
    assert "TEST DOUBLE" not in out


def test_environment_for_every_user(host):
    profile = host.file(PROFILE)
    assert profile.is_file and profile.user == "root" and profile.mode == 0o644
    assert "export CUDA_HOME=/usr/lib/nvidia-cuda-toolkit\n" in profile.content_string
    assert "LD_LIBRARY_PATH" not in profile.content_string
    # Debian's toolkit is on the default PATH and the linker's paths already: no ld.so.conf.d file.
    assert not host.file(LDCONF).exists
    out = host.check_output("bash -lc 'echo $CUDA_HOME; command -v nvcc'")
    assert out.split() == ["/usr/lib/nvidia-cuda-toolkit", "/usr/bin/nvcc"], out


def test_check_program_compiled_with_device_code(host):
    obj = "%s/gpuops-cuda-check-%s" % (CHECK_DIR, release(host))
    assert host.file(obj).is_file
    # A relocatable ELF object (nvcc -c: compiled, not linked) that carries the kernel's fat binary.
    header = host.check_output("od -An -c -N4 %s" % obj).split()
    assert header == ["177", "E", "L", "F"], header
    sections = host.check_output("readelf -SW %s" % obj)
    assert ".nv_fatbin" in sections, sections
    assert "REL (Relocatable file)" in host.check_output("readelf -hW %s" % obj)


def test_status_records_compiled_not_run(host):
    record = json.loads(host.file(STATUS).content_string)
    assert record["run"] is True
    assert record["source"] == "distro"
    assert record["default"]["value"] == release(host)
    assert record["verify"]["ok"] is True
    toolkit, = record["verify"]["toolkits"]
    assert toolkit["version"] == release(host)
    assert toolkit["release"].startswith(release(host) + ".")
    assert toolkit["compiled"] is True
    assert toolkit["linked_and_ran"] is None
    assert toolkit["reason"] == "no GPU on this host: compiled only"


@pytest.mark.parametrize("path", ["/usr/local/cuda", "/etc/apt/sources.list.d/gpuops-cuda-toolkit.sources"])
def test_nothing_of_nvidia_repository(host, path):
    assert not host.file(path).exists
