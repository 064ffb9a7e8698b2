"""The volcano role itself (ansible-playbook against localhost, no cluster): bad input fails in
preflight naming the variables before the cluster is even contacted; good input gets as far as
reading the cluster (kubernetes.core.k8s_cluster_info), which here has no API server to answer -
the order the role promises: inputs, read, plan, then changes."""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  roles:
    - role: gpuops.dlserver.volcano
"""

KUBECONFIG = """
apiVersion: v1
kind: Config
clusters:
  - name: nowhere
    cluster: {server: "https://127.0.0.1:9"}
contexts:
  - name: nowhere
    context: {cluster: nowhere, user: nobody}
current-context: nowhere
users:
  - name: nobody
    user: {token: not-a-token}
"""


def _run(tmp_path, extra):
    (tmp_path / "play.yml").write_text(PLAYBOOK)
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    variables = {"volcano_kubeconfig": str(tmp_path / "kubeconfig"), "volcano_status_file": ""}
    variables.update(extra)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    return subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=" + sys.executable, "-e", json.dumps(variables),
                           str(tmp_path / "play.yml")], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=300, check=False)


BAD = [
    ({"volcano_scheduler_actions": ["enqueue", "allocate", "schedule"]}, ["volcano_scheduler_actions[2]"]),
    ({"volcano_scheduler_tiers": [{"plugins": [{"name": "gang"}, {"name": "predicate"}]}]},
     ["volcano_scheduler_tiers[0].plugins[1].name: unknown plugin 'predicate'"]),
    ({"volcano_queues": [{"name": "a", "weight": -3}, {"name": "b", "capability": {"nvidia.com/gpus": 2}}]},
     ["volcano_queues[0].weight", "volcano_queues[1].capability: unknown resource name 'nvidia.com/gpus'"]),
    ({"volcano_node_label_prefix": "nvidia.com/"}, ["volcano_node_label_prefix"]),
    ({"volcano_version": "1.15.0"}, ["volcano_version 1.15.0"]),
    ({"volcano_install_method": "manifest", "volcano_manifest_src": "https://example.invalid/volcano.yaml"},
     ["volcano_manifest_checksum"]),
]


@pytest.mark.parametrize("extra,needles", BAD, ids=[sorted(b[0])[0] for b in BAD])
def test_bad_input_fails_before_the_cluster_is_contacted(tmp_path, extra, needles):
    proc = _run(tmp_path, extra)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    # refused by the preflight's registry of input checks (core/input_checks.py), before the cluster
    assert "bad input, nothing was changed" in out
    assert "Read the cluster's version" not in out
    for needle in needles:
        assert needle in out, out


def test_good_input_reads_the_cluster_first(tmp_path):
    proc = _run(tmp_path, {})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "Read the cluster's version" in out, out
    # volcano_kubeconfig reached the module: it called the server that file names.
    assert "127.0.0.1" in out and "port=9" in out, out
    assert "Install the Volcano chart" not in out
