"""Verify gpuops.dlserver.cuda_toolkit (cuda_repo source) after the last step of the scenario:
CUDA 12.6 alone from the repository TEST DOUBLE, the default, NCCL's 12.6 build. Expectations are
written here from the double's published packages (tests/doubles/repo_specs.py: CUDA_TOOLKITS,
NCCL_BUILDS, suffix +gpuops.testdouble), never read from the role's own decisions."""

import json

STATUS = "/etc/gpuops/cuda_toolkit.json"
PROFILE = "/etc/profile.d/gpuops-cuda.sh"
LDCONF = "/etc/ld.so.conf.d/gpuops-cuda.conf"
OBJECT = "/var/lib/gpuops/cuda_toolkit/gpuops-cuda-check-12.6"
NCCL = "2.23.4-1+cuda12.6+gpuops.testdouble"


def test_default_link_and_alternative(host):
    assert host.file("/usr/local/cuda").linked_to == "/usr/local/cuda-12.6"
    query = host.check_output("update-alternatives --query cuda")
    assert "Value: /usr/local/cuda-12.6" in query
    assert "/usr/local/cuda-12.4" not in query


def test_packages(host):
    assert host.package("cuda-toolkit-12-6").version == "12.6.85-1+gpuops.testdouble"
    assert not host.package("cuda-toolkit-12-4").is_installed
    for name in ("libnccl2", "libnccl-dev"):
        assert host.package(name).version == NCCL


def test_profile_for_every_user(host):
    profile = host.file(PROFILE)
    assert profile.user == "root" and profile.mode == 0o644
    assert profile.content_string.startswith("# Managed by Ansible (gpuops.dlserver.cuda_toolkit)")
    assert "export CUDA_HOME=/usr/local/cuda\n" in profile.content_string
    assert "LD_LIBRARY_PATH" not in profile.content_string
    out = host.check_output("bash -lc 'echo $CUDA_HOME; echo $PATH; command -v nvcc'").splitlines()
    assert out[0] == "/usr/local/cuda"
    assert out[1].split(":").count("/usr/local/cuda/bin") == 1
    assert out[2] == "/usr/local/cuda/bin/nvcc"


def test_linker_configuration(host):
    ldconf = host.file(LDCONF)
    assert ldconf.user == "root" and ldconf.mode == 0o644
    lines = [line for line in ldconf.content_string.splitlines() if not line.startswith("#")]
    assert lines == ["/usr/local/cuda/lib64"]


def test_nvcc_double_compiled_the_check_program(host):
    # The nvcc TEST DOUBLE writes a marker object for a compile (-c) of a source with a kernel.
    assert host.file(OBJECT).content_string == (
        "TEST DOUBLE object of /var/lib/gpuops/cuda_toolkit/gpuops_cuda_check.cu, CUDA 12.6\n")
    assert "release 12.6, V12.6.85" in host.check_output("/usr/local/cuda/bin/nvcc --version")


def test_status_records_compiled_not_run(host):
    record = json.loads(host.file(STATUS).content_string)
    assert record["run"] is True and record["source"] == "cuda_repo"
    assert record["default"]["value"] == "12.6"
    assert record["nccl"]["version"] == NCCL
    assert record["nccl"]["install"] == ["libnccl2=" + NCCL, "libnccl-dev=" + NCCL]
    assert record["verify"]["ok"] is True
    toolkit, = record["verify"]["toolkits"]
    assert toolkit["version"] == "12.6" and toolkit["release"] == "12.6.85"
    assert toolkit["compiled"] is True
    # The RTX 4090 fixture has GPUs, the container has no loaded driver: compiled, not run.
    assert toolkit["linked_and_ran"] is None
    assert toolkit["reason"] == "GPU(s) present but no loaded driver (container): compiled only"
