"""The plan is never stale (issue 35): each run plans from its own probe.

Real ansible-playbook runs against localhost with fact injection off (ANSIBLE_INJECT_FACT_VARS=False,
as ansible-core 2.24 will have it) and a jsonfile fact cache, as AWX fact storage keeps facts
between runs: common's gpu.yml probes a sysfs fixture tree (tests/fixtures/build_sysfs.py) and
plans. Read-only on the host (the probe and host_plan change nothing).
"""
import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))
import build_sysfs  # noqa: E402  pylint: disable=wrong-import-position

PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuops.dlserver.common
        tasks_from: gpu.yml
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'plan': gpuops_plan, 'gpu': ansible_facts.gpuops_gpu, 'computed': __common_host_plan.computed,
                      'made_from': __common_plan_made_from} | to_json }}"
"""


def _tree(tmp_path, name, drop=0):
    """A sysfs tree of the HGX H100 fixture, with the last ``drop`` GPUs taken out."""
    spec = build_sysfs.load_spec(build_sysfs.host_dir("hgx-h100-8gpu"))
    gpus = [d for d in spec["devices"] if d.get("id", "").startswith("10de:") and d.get("class", "").startswith("0x03")]
    for device in gpus[len(gpus) - drop:] if drop else []:
        spec["devices"].remove(device)
    root = tmp_path / name
    build_sysfs.build(spec, str(root))
    return str(root)


def _run(tmp_path, sysfs, *extra, play=PLAY):
    """ansible-playbook with ``play`` on localhost (injection off, a jsonfile fact cache under tmp_path),
    the probe pointed at ``sysfs``: (result, what the play wrote to {{ out }} or None)."""
    (tmp_path / "pb.yml").write_text(play)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_INJECT_FACT_VARS="False", ANSIBLE_CACHE_PLUGIN="jsonfile",
               ANSIBLE_CACHE_PLUGIN_CONNECTION=str(tmp_path / "facts"), ANSIBLE_CACHE_PLUGIN_TIMEOUT="86400",
               ANSIBLE_GATHERING="smart")
    out = tmp_path / "out.json"
    if out.exists():
        out.unlink()
    args = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(tmp_path / "pb.yml"),
            "-e", "ansible_python_interpreter=%s" % sys.executable, "-e", "out=%s" % out,
            "-e", json.dumps({"gpuops_sysfs_root": sysfs, "gpuops_nvml": "disabled"})]
    for item in extra:
        args += ["-e", item]
    res = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=str(tmp_path), check=False)
    return res, (json.loads(out.read_text()) if out.exists() else None)


def _cache(tmp_path):
    """The jsonfile cache's file of localhost (ansible-core 2.19 names it s1_localhost)."""
    found = sorted((tmp_path / "facts").glob("*localhost"))
    assert len(found) == 1, found
    return found[0]


def _read_cache(tmp_path):
    """The cached facts (ansible-core 2.19 wraps them as a JSON text under __payload__)."""
    data = json.loads(_cache(tmp_path).read_text())
    return json.loads(data["__payload__"]) if "__payload__" in data else data


def _write_cache(tmp_path, facts):
    data = json.loads(_cache(tmp_path).read_text())
    text = json.dumps(facts)
    _cache(tmp_path).write_text(json.dumps({"__payload__": text} if "__payload__" in data else facts))


def test_a_doctored_plan_and_probe_in_the_fact_cache_are_not_acted_upon(tmp_path):
    sysfs = _tree(tmp_path, "sys8")
    res, first = _run(tmp_path, sysfs)
    assert res.returncode == 0, res.stdout + res.stderr
    assert first["gpu"]["gpu_count"] == 8 and first["computed"] is True
    assert "DEPRECATION" not in res.stdout + res.stderr
    # what the cache holds: real facts only (the probe's, the setup module's), never the plan
    cached = _read_cache(tmp_path)
    assert "gpuops_gpu" in cached
    for run_only in ("gpuops_plan", "__common_plan_made_from", "__common", "gpuops_in_container", "__common_probe"):
        assert run_only not in cached, run_only
    # doctor the cache as a stale run, an older release of the collection or a hand would
    doctored = dict(first["plan"], driver=dict(first["plan"]["driver"], reason="DOCTORED reason"))
    cached.update(gpuops_plan=doctored, __common_plan_made_from=first["made_from"],
                  __common={"gpuops_sysfs_root": "/nonexistent", "gpuops_nvml": "disabled"},
                  gpuops_in_container=True, gpuops_gpu=dict(cached["gpuops_gpu"], gpu_count=3))
    _write_cache(tmp_path, cached)
    res, second = _run(tmp_path, sysfs)
    assert res.returncode == 0, res.stdout + res.stderr
    assert second["computed"] is True                                   # planned afresh
    assert second["gpu"]["gpu_count"] == 8                              # from this run's probe
    assert second["plan"] == first["plan"]                              # the same hardware, the same plan
    assert "DOCTORED" not in json.dumps(second)
    assert second["made_from"]["run"] != first["made_from"]["run"]


def test_a_gpu_removed_between_two_runs_is_planned_from_the_new_probe(tmp_path):
    res, first = _run(tmp_path, _tree(tmp_path, "sys8"))
    assert res.returncode == 0, res.stdout + res.stderr
    res, second = _run(tmp_path, _tree(tmp_path, "sys7", drop=1))
    assert res.returncode == 0, res.stdout + res.stderr
    assert (first["gpu"]["gpu_count"], second["gpu"]["gpu_count"]) == (8, 7)
    assert second["computed"] is True
    assert second["made_from"]["probe"] != first["made_from"]["probe"]
    assert json.dumps(second["plan"]) != json.dumps(first["plan"])


@pytest.mark.parametrize("name", ["gpuops_plan", "__common_probe", "__nvidia_driver", "gpuops_cuda_repo"])
def test_a_computed_name_given_with_extra_vars_is_refused(tmp_path, name):
    res, out = _run(tmp_path, _tree(tmp_path, "sys8"), json.dumps({name: {"driver": {"required": False}}}))
    text = res.stdout + res.stderr
    assert res.returncode != 0 and out is None
    assert "%s given as extra variables (-e)" % name in text, text[-3000:]


ROLE_PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuops.dlserver.common
        tasks_from: gpu.yml
    - name: A role's preflight after the plan of the run (as every role of site.yml starts)
      ansible.builtin.include_role:
        name: gpuops.dlserver.common
        tasks_from: preflight.yml
      vars:
        __common_role: node_exporter
%s    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'current': __common_preflight.plan_current, 'reason': __common_preflight.plan_reason} | to_json }}"
"""
PARAMETER = """    - name: The same role with a parameter of its own (a role parameter the plan was not made from)
      ansible.builtin.include_role:
        name: gpuops.dlserver.common
        tasks_from: preflight.yml
      vars:
        __common_role: node_exporter
        node_exporter_listen_address: "127.0.0.1:9101"
"""


@pytest.mark.parametrize("extra,want", [("", True), (PARAMETER, False)], ids=["same-inputs", "role-parameter"])
def test_the_plan_stands_for_a_role_with_the_same_inputs_not_for_other_inputs(tmp_path, extra, want):
    res, got = _run(tmp_path, _tree(tmp_path, "sys8"), play=ROLE_PLAY % extra)
    assert res.returncode == 0, res.stdout + res.stderr
    assert got["current"] is want, got
    if not want:
        assert got["reason"] == "the plan was made from other inputs of node_exporter than this role sees"


CLEARED = """- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.include_role:
        name: gpuops.dlserver.common
        tasks_from: gpu.yml
    - name: Take a GPU out of the tree, and forget the facts (as a user or a scenario does)
      ansible.builtin.file:
        path: "{{ gpuops_sysfs_root }}/bus/pci/devices/{{ gpu }}"
        state: absent
    - ansible.builtin.meta: clear_facts
    - name: A role's preflight after the facts were cleared
      ansible.builtin.include_role:
        name: gpuops.dlserver.common
        tasks_from: preflight.yml
      vars:
        __common_role: node_exporter
    - ansible.builtin.include_role:
        name: gpuops.dlserver.common
        tasks_from: gpu.yml
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'gpu': ansible_facts.gpuops_gpu, 'plan': gpuops_plan} | to_json }}"
"""


def test_facts_cleared_in_a_run_are_probed_again_and_the_plan_follows(tmp_path):
    """meta: clear_facts drops ansible_facts.gpuops_gpu: the next role probes again (the run-only probe
    alone would keep a plan the facts no longer back)."""
    sysfs = _tree(tmp_path, "sys8")
    gpu = sorted(os.listdir(os.path.join(sysfs, "bus", "pci", "devices")))
    spec = build_sysfs.load_spec(build_sysfs.host_dir("hgx-h100-8gpu"))
    last = [d["addr"] for d in spec["devices"] if d.get("id", "").startswith("10de:")
            and d.get("class", "").startswith("0x03")][-1]
    assert last in gpu
    res, got = _run(tmp_path, sysfs, "gpu=%s" % last, play=CLEARED)
    assert res.returncode == 0, res.stdout + res.stderr
    assert got["gpu"]["gpu_count"] == 7
    assert got["plan"]["host"]["gpu_count"] == 7
