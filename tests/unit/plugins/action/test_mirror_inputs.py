"""gpuops_mirror_url through real ansible-playbook runs: the role_inputs and host_plan actions repoint
every URL variable at its vendor default, keep one the inventory set, and refuse a bad mirror URL."""
import json

import pytest


MIRROR = "http://mirror.example.internal/gpuops"

PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - gpuops.dlserver.__private.role_inputs:
        role: python_stack
      register: python_stack
    - gpuops.dlserver.__private.role_inputs:
        role: common
        entry_point: cuda_repo
      register: cuda_inputs
    - gpuops.dlserver.host_plan:
        probe: {ansible_facts: {gpuops_gpu: "{{ facts }}"}}
        in_container: true
      register: result
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'python_stack': python_stack.inputs, 'cuda': cuda_inputs.inputs} | to_json }}"
"""


@pytest.fixture
def run(tmp_path, run_play):
    return lambda *extra: run_play(tmp_path, PLAY, "plan_cpu_only.yml", *extra)


def test_the_mirror_repoints_defaults_and_keeps_what_was_set(run, tmp_path):
    # a plain-http mirror: its Python indexes and the downloads nothing pins (node_exporter's
    # release beside its checksum list, the Helm chart) are opted into by host (issue 37)
    res = run("gpuops_mirror_url=%s" % MIRROR,
              "python_stack_nvidia_index_url=https://pypi.site.internal/nvidia",
              json.dumps({"python_stack_insecure_index_hosts": ["mirror.example.internal"],
                          "gpuops_insecure_http_hosts": ["mirror.example.internal"]}))
    assert res.returncode == 0, res.stdout + res.stderr
    values = json.loads((tmp_path / "out.json").read_text())
    assert values["python_stack"]["pytorch_index_url"] == MIRROR + "/pytorch/whl"
    assert values["python_stack"]["pip_index_url"] == ""  # pip's own configuration decides
    assert values["python_stack"]["nvidia_index_url"] == "https://pypi.site.internal/nvidia"
    assert values["cuda"]["gpuops_cuda_repo_base_url"] == MIRROR + "/apt/cuda"


def test_a_plain_http_mirror_without_the_opt_ins_is_refused_naming_them(run, tmp_path):
    # issue 37: on every host, before any change
    res = run("gpuops_mirror_url=%s" % MIRROR)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "python_stack_pytorch_index_url" in out and "python_stack_insecure_index_hosts" in out
    assert not (tmp_path / "out.json").exists()


def test_without_a_mirror_the_vendor_urls_stay(run, tmp_path):
    res = run()
    assert res.returncode == 0, res.stdout + res.stderr
    values = json.loads((tmp_path / "out.json").read_text())
    assert values["python_stack"]["pytorch_index_url"] == "https://download.pytorch.org/whl"
    assert values["python_stack"]["pip_index_url"] == ""
    assert values["cuda"]["gpuops_cuda_repo_base_url"] == "https://developer.download.nvidia.com/compute/cuda/repos"


def test_a_bad_mirror_url_fails_before_anything(run, tmp_path):
    res = run(json.dumps({"gpuops_mirror_url": "http://mirror.example.internal/gpuops\nX"}))
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "gpuops_mirror_url must be an http(s):// or file:/// URL" in out
    assert not (tmp_path / "out.json").exists()
