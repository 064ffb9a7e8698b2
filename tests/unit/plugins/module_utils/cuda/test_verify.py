"""What the cuda_toolkit role's verify step reads (plugins/module_utils/cuda/verify.py), on real
nvcc --version outputs."""
from ansible_collections.gpuops.dlserver.plugins.filter.__private.cuda_toolkit_verify import cuda_toolkit_verify
from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import verify

# SOURCE: nvcc -V of CUDA 12.4 Update 1 as printed in published install notes (Ubuntu 22.04,
# /usr/local/cuda-12.4), verbatim.
NVCC_12_4 = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2024 NVIDIA Corporation
Built on Thu_Mar_28_02:18:24_PDT_2024
Cuda compilation tools, release 12.4, V12.4.131
Build cuda_12.4.r12.4/compiler.34097967_0
"""
# SOURCE: nvcc -V of CUDA 11.8 (the toolkit Debian 12 ships), as printed in published notes, verbatim.
NVCC_11_8 = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2022 NVIDIA Corporation
Built on Wed_Sep_21_10:33:58_PDT_2022
Cuda compilation tools, release 11.8, V11.8.89
Build cuda_11.8.r11.8/compiler.31833905_0
"""


def _plan(run=False):
    return {"verify": [{"version": "12.4", "nvcc": "/usr/local/cuda-12.4/bin/nvcc", "run": run,
                        "reason": "no GPU on this host: compiled only" if not run else "1 GPU(s) and a loaded driver",
                        "object": "gpuops-cuda-check-12.4"}]}


def _item(version="12.4"):
    return {"version": version}


def test_release_of_real_outputs():
    assert verify.nvcc_release(NVCC_12_4) == ("12.4", "12.4.131")
    assert verify.nvcc_release(NVCC_11_8) == ("11.8", "11.8.89")
    assert verify.nvcc_release("TEST DOUBLE\n") == (None, None)


def test_compiled_only_on_a_cpu_host():
    result = cuda_toolkit_verify({"nvcc": [{"item": _item(), "stdout": NVCC_12_4, "rc": 0}],
                                  "compiled": [{"item": _item(), "rc": 0}], "ran": []}, _plan())
    assert result["ok"], result
    assert result["toolkits"][0]["linked_and_ran"] is None
    assert "compiled only" in result["toolkits"][0]["reason"]


def test_ran_on_a_gpu_host():
    result = cuda_toolkit_verify({"nvcc": [{"item": _item(), "stdout": NVCC_12_4, "rc": 0}],
                                  "compiled": [{"item": _item(), "rc": 0}],
                                  "ran": [{"item": _item(), "rc": 0, "stdout": "gpuops-cuda-ok 42"}]}, _plan(True))
    assert result["ok"] and result["toolkits"][0]["linked_and_ran"] is True


def test_wrong_release_failed_compile_and_failed_run_are_problems():
    result = cuda_toolkit_verify({"nvcc": [{"item": _item(), "stdout": NVCC_11_8, "rc": 0}],
                                  "compiled": [{"item": _item(), "rc": 1, "stderr": "nvcc fatal"}],
                                  "ran": [{"item": _item(), "rc": 1, "stdout": "gpuops-cuda-fail no device"}]},
                                 _plan(True))
    assert not result["ok"]
    text = " ".join(result["problems"])
    assert "release 11.8, expected 12.4" in text and "nvcc fatal" in text and "no device" in text
