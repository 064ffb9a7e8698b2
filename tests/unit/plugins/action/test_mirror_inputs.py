"""gpuops_mirror_url through real ansible-playbook runs: the role_inputs and host_plan actions repoint
every URL variable at its vendor default, keep one the inventory set, and refuse a bad mirror URL."""
import json
import os
import subprocess
import sys

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
DATA = os.path.join(REPO, "tests", "unit", "plugins", "module_utils", "data")
MIRROR = "http://mirror.example.internal/gpuops"

PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - gpuops.dlserver.role_inputs:
        role: python_stack
    - gpuops.dlserver.role_inputs:
        role: common
        entry_point: cuda_repo
        fact: cuda_inputs
    - gpuops.dlserver.host_plan:
        gpu: "{{ facts }}"
        in_container: true
      register: result
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'python_stack': __python_stack, 'cuda': cuda_inputs} | to_json }}"
"""


def run(tmp_path, *extra):
    with open(os.path.join(DATA, "plan_cpu_only.yml")) as handle:
        facts = yaml.safe_load(handle)["facts"]
    (tmp_path / "pb.yml").write_text(PLAY)
    (tmp_path / "facts.json").write_text(json.dumps({"facts": facts}))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1")
    args = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(tmp_path / "pb.yml"),
            "-e", "ansible_python_interpreter=%s" % sys.executable, "-e", "out=%s" % (tmp_path / "out.json"),
            "-e", "@%s" % (tmp_path / "facts.json")]
    for item in extra:
        args += ["-e", item]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path), check=False)


def test_the_mirror_repoints_defaults_and_keeps_what_was_set(tmp_path):
    res = run(tmp_path, "gpuops_mirror_url=%s" % MIRROR,
              "python_stack_nvidia_index_url=https://pypi.site.internal/nvidia")
    assert res.returncode == 0, res.stdout + res.stderr
    values = json.loads((tmp_path / "out.json").read_text())
    assert values["python_stack"]["pytorch_index_url"] == MIRROR + "/pytorch/whl"
    assert values["python_stack"]["pip_index_url"] == ""  # pip's own configuration decides
    assert values["python_stack"]["nvidia_index_url"] == "https://pypi.site.internal/nvidia"
    assert values["cuda"]["gpuops_cuda_repo_base_url"] == MIRROR + "/apt/cuda"


def test_without_a_mirror_the_vendor_urls_stay(tmp_path):
    res = run(tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    values = json.loads((tmp_path / "out.json").read_text())
    assert values["python_stack"]["pytorch_index_url"] == "https://download.pytorch.org/whl"
    assert values["python_stack"]["pip_index_url"] == ""
    assert values["cuda"]["gpuops_cuda_repo_base_url"] == "https://developer.download.nvidia.com/compute/cuda/repos"


def test_a_bad_mirror_url_fails_before_anything(tmp_path):
    res = run(tmp_path, json.dumps({"gpuops_mirror_url": "http://mirror.example.internal/gpuops\nX"}))
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "gpuops_mirror_url must be an http(s):// or file:/// URL" in out
    assert not (tmp_path / "out.json").exists()
