"""Verify gpuops.dlserver.cuda_toolkit against the CUDA repository TEST DOUBLE (spec cuda of
tests/doubles/build_repo.py) after side_effect: 12.4 installed and the default, 12.6 removed
with its alternative, cuDNN/NCCL/Nsight for 12.4, PATH and CUDA_HOME for every user, the linker
configuration, and the check program compiled by 12.4's nvcc (TEST DOUBLE) but not run: the
node's fixture has GPUs and no loaded driver, which the status file says."""

import json

STATUS = "/etc/gpuops/cuda_toolkit.json"


def status(host):
    return json.loads(host.file(STATUS).content_string)


def test_the_listed_toolkit_is_installed_and_the_unlisted_one_removed(host):
    assert host.package("cuda-toolkit-12-4").is_installed
    assert not host.package("cuda-toolkit-12-6").is_installed
    assert not host.file("/usr/local/cuda-12.6/bin/nvcc").exists
    for name in ("cuda-nsight-systems-12-6", "cuda-nsight-compute-12-6"):
        assert not host.package(name).is_installed, name
    for name in ("cuda-nsight-systems-12-4", "cuda-nsight-compute-12-4", "libcudnn9-dev-cuda-12", "libnccl-dev"):
        assert host.package(name).is_installed, name
    assert "+cuda12.4" in host.package("libnccl-dev").version


def test_the_default_is_selected_through_the_cuda_alternative(host):
    assert host.file("/usr/local/cuda").linked_to == "/usr/local/cuda-12.4"
    shown = host.run("update-alternatives --query cuda")
    assert shown.rc == 0, shown.stderr
    assert "Value: /usr/local/cuda-12.4" in shown.stdout
    assert "Alternative: /usr/local/cuda-12.6" not in shown.stdout


def test_environment_for_every_user_without_ld_library_path(host):
    profile = host.file("/etc/profile.d/gpuops-cuda.sh").content_string
    assert "export CUDA_HOME=/usr/local/cuda\n" in profile and "LD_LIBRARY_PATH" not in profile
    assert host.file("/etc/ld.so.conf.d/gpuops-cuda.conf").content_string.endswith("/usr/local/cuda/lib64\n")
    login = host.run("bash -lc 'command -v nvcc; echo $CUDA_HOME; nvcc --version'")
    assert login.rc == 0, login.stderr
    assert login.stdout.splitlines()[:2] == ["/usr/local/cuda/bin/nvcc", "/usr/local/cuda"]
    assert "TEST DOUBLE" in login.stdout and "release 12.4, V12.4.131" in login.stdout


def test_compiled_with_each_nvcc_and_not_run_without_a_driver(host):
    record = status(host)
    assert record["run"] is True and record["source"] == "cuda_repo"
    assert [t["version"] for t in record["toolkits"]] == ["12.4"]
    assert record["unlisted"] == {"kept": [], "reason": "cuda_toolkit_remove_unlisted is true: toolkits not in "
                                                        "cuda_toolkit_versions are removed"}
    verify = record["verify"]
    assert verify["ok"] is True and verify["problems"] == []
    [toolkit] = verify["toolkits"]
    assert toolkit["compiled"] is True and toolkit["linked_and_ran"] is None
    assert "no loaded driver" in toolkit["reason"]
    assert "TEST DOUBLE object" in host.file("/var/lib/gpuops/cuda_toolkit/gpuops-cuda-check-12.4").content_string
    assert record["driver_compatibility"]["12.4"]["ok"] is True


def test_repository_from_the_collections_cuda_repository_variables(host):
    record = status(host)
    assert "/apt/cuda/debian13/x86_64/" in record["repository"]["url"]
    sources = host.file("/etc/apt/sources.list.d/gpuops-cuda-toolkit.sources").content_string
    assert "Signed-By: /etc/apt/keyrings/gpuops-cuda-toolkit.gpg" in sources
