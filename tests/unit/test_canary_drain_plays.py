"""The canary and the drain check of site.yml and rolling_driver_upgrade.yml (issue 34 items 2 and 3),
run for real: the first play's tasks as the playbook has them, the batched play's hosts and serial
as the playbook has them (its tasks replaced by one that prints the batch), on local hosts whose
plans come from the action host_plan over fixture facts (a CPU-only host listed first, GPU hosts
in nested groups)."""
import os
import re
import subprocess
import sys

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(REPO, "tests", "unit", "plugins", "module_utils", "data")
PLAYBOOKS = os.path.join(REPO, "playbooks")


def _facts(name):
    with open(os.path.join(DATA, name)) as handle:
        return yaml.safe_load(handle)["facts"]


def _inventory(gpu_canary=None, k8s_nodes=None, host_vars=None):
    """cpu-01 listed first; gpu-02 before gpu-01, in nested groups."""
    cpu, gpu = _facts("plan_cpu_only.yml"), _facts("plan_hgx_h100.yml")
    hosts = {"cpu-01": {"facts": cpu}, "gpu-02": {"facts": gpu}, "gpu-01": {"facts": gpu}}
    for host, values in (host_vars or {}).items():
        hosts[host].update(values)
    children = {"cpu_nodes": {"hosts": {"cpu-01": {}}},
                "gpu_nodes": {"children": {"rack2": {"hosts": {"gpu-02": {}}}, "rack1": {"hosts": {"gpu-01": {}}}}}}
    if gpu_canary:
        children["gpu_canary"] = {"hosts": dict((h, {}) for h in gpu_canary)}
    if k8s_nodes:
        children["k8s_nodes"] = {"hosts": dict((h, {}) for h in k8s_nodes)}
    return {"all": {"hosts": hosts, "children": children,
                    "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}


PLAN = {"name": "Plan the host from fixture facts", "gpuops.dlserver.host_plan": {"probe": {"ansible_facts": {"gpuops_gpu": "{{ facts }}"}},
                                                                                  "in_container": True},
        "register": "__plan"}
# as common/tasks/plan.yml does: the plan is a run-only host variable, set from the action's result
SET_PLAN = {"name": "Set the plan", "ansible.builtin.set_fact": {"gpuops_plan": "{{ __plan.plan }}"}}


def _play(playbook, first_names, hosts_default=None):
    """The playbook's first play with its tasks named ``first_names`` (after a plan from fixture
    facts) and its batched play with a task that prints each batch."""
    with open(os.path.join(PLAYBOOKS, playbook)) as handle:
        plays = yaml.safe_load(handle)
    first = [t for t in plays[0]["tasks"] if t.get("name") in first_names]
    assert [t["name"] for t in first] == first_names, "the playbook's first play lost a task"
    batched = next(p for p in plays if "serial" in p)
    return [{"hosts": plays[0]["hosts"], "gather_facts": False, "tasks": [PLAN, SET_PLAN] + first},
            {"name": "batched", "hosts": batched["hosts"], "gather_facts": False, "serial": batched["serial"],
             "max_fail_percentage": batched["max_fail_percentage"],
             "tasks": [{"name": "batch", "ansible.builtin.debug": {"msg": "BATCH {{ ansible_play_batch | join(',') }}"},
                        "run_once": True}]}]


def _run(tmp_path, play, inventory, *extra):
    (tmp_path / "pb.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    (tmp_path / "inv.yml").write_text(yaml.safe_dump(inventory))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_HOME=str(tmp_path / "ansible-home"), ANSIBLE_FORKS="3")
    args = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inv.yml"),
            str(tmp_path / "pb.yml")]
    for item in extra:
        args += ["-e", item]
    res = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300, check=False)
    return res, res.stdout + res.stderr


def _batches(out):
    return re.findall(r"msg\W+BATCH ([\w,-]+)", out)


SITE_TASKS = ["Name the canary (the first batch of the rebooting play, alone)",
              "Put the canary first (group gpuops_canary, in this run's inventory only)"]


def test_site_canary_is_a_gpu_host_with_driver_work_not_the_first_listed(tmp_path):
    # issue 34 item 3: the CPU-only host Ansible lists first was the canary
    res, out = _run(tmp_path, _play("site.yml", SITE_TASKS), _inventory())
    assert res.returncode == 0, out[-4000:]
    assert "canary (the first batch, alone): gpu-01 - the first GPU host by name that the plan gives driver work" \
        in " ".join(out.split()), out[-4000:]
    batches = _batches(out)
    assert batches[0] == "gpu-01", batches                  # the canary alone, first
    assert sorted(",".join(batches[1:]).split(",")) == ["cpu-01", "gpu-02"], batches
    assert "Could not match supplied host pattern" not in out


def test_site_gpu_canary_wins_and_a_cpu_host_in_it_is_passed_over_with_a_warning(tmp_path):
    res, out = _run(tmp_path, _play("site.yml", SITE_TASKS), _inventory(gpu_canary=["gpu-02"]))
    assert res.returncode == 0, out[-4000:]
    assert _batches(out)[0] == "gpu-02", out[-4000:]
    assert "the first by name of the group gpu_canary" in " ".join(out.split())
    res, out = _run(tmp_path, _play("site.yml", SITE_TASKS), _inventory(gpu_canary=["cpu-01"]))
    assert res.returncode == 0, out[-4000:]
    assert _batches(out)[0] == "gpu-01", out[-4000:]
    assert "[WARNING]: gpuops.dlserver.canary: the group gpu_canary holds no GPU host with driver work in this run " \
           "(cpu-01): the canary is gpu-01 instead" in " ".join(out.split()), out[-4000:]


ROLLING_TASKS = ["Map every host to its Kubernetes node, or refuse naming the hosts that are not (changes nothing)",
                 "Name the canary (the first batch, alone)",
                 "Put the canary first (group gpuops_canary, in this run's inventory only)"]


def test_rolling_upgrade_refuses_before_any_change_naming_unmapped_hosts(tmp_path):
    # issue 34 item 2: gpu-02 in the Kubernetes group, gpu-01 in none: gpu-01 was upgraded and
    # rebooted with its jobs on it, the only trace a skipped task
    res, out = _run(tmp_path, _play("rolling_driver_upgrade.yml", ROLLING_TASKS),
                    _inventory(host_vars={"gpu-02": {"gpuops_k8s_node_name": "gpu-02"}}),
                    "gpuops_rolling_version=580.105.08", "gpuops_rolling_hosts=gpu_nodes")
    assert res.returncode != 0
    text = " ".join(out.split())
    assert "rolling driver upgrade refused before any change: a Kubernetes cluster is configured " \
           "(gpuops_k8s_node_name is set for gpu-02), but these hosts have no Kubernetes node: gpu-01." in text, text
    assert "gpuops_k8s_drain: false" in text
    assert _batches(out) == [], out[-3000:]                   # no batch ran
    assert "PLAY [batched]" not in out


def test_rolling_upgrade_runs_when_every_host_is_mapped_or_opted_out(tmp_path):
    res, out = _run(tmp_path, _play("rolling_driver_upgrade.yml", ROLLING_TASKS),
                    _inventory(host_vars={"gpu-02": {"gpuops_k8s_node_name": "node-2"},
                                          "gpu-01": {"gpuops_k8s_drain": False}}),
                    "gpuops_rolling_version=580.105.08", "gpuops_rolling_hosts=gpu_nodes")
    assert res.returncode == 0, out[-4000:]
    text = " ".join(out.split())
    assert "Drained: gpu-02 -> node-2. Opted out (gpuops_k8s_drain: false): gpu-01" in text, text
    assert "canary (the first batch, alone): gpu-01" in text
    assert _batches(out) == ["gpu-01", "gpu-02"], out[-3000:]


def test_rolling_upgrade_without_a_cluster_says_nothing_is_drained(tmp_path):
    res, out = _run(tmp_path, _play("rolling_driver_upgrade.yml", ROLLING_TASKS), _inventory(),
                    "gpuops_rolling_version=580.105.08", "gpuops_rolling_hosts=gpu_nodes")
    assert res.returncode == 0, out[-4000:]
    text = " ".join(out.split())
    assert "no Kubernetes cluster is configured" in text and "no host is drained" in text, text


def test_rolling_upgrade_hosts_as_a_comma_list_keep_every_host_and_the_canary_first(tmp_path):
    # -e gpuops_rolling_hosts=a,b: the batched play's pattern once dropped the first host of the list
    # ('gpuops_canary:gpu-02' matched nothing), so gpu-02 was never upgraded and nothing said so
    res, out = _run(tmp_path, _play("rolling_driver_upgrade.yml", ROLLING_TASKS), _inventory(),
                    "gpuops_rolling_version=580.105.08", "gpuops_rolling_hosts=gpu-02,gpu-01")
    assert res.returncode == 0, out[-4000:]
    assert "canary (the first batch, alone): gpu-01" in " ".join(out.split())
    assert _batches(out) == ["gpu-01", "gpu-02"], out[-3000:]
    assert "Could not match supplied host pattern" not in out
