"""bench/fleet_report.py: the fleet benchmark's pure parts (no Docker, no Ansible run)."""
import json
import os
import sys

import pytest

BENCH = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench"))
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import fleet_report  # noqa: E402  pylint: disable=wrong-import-position

REPO_CFG = os.path.join(os.path.dirname(BENCH), "ansible.cfg")


def counts(executed=80, skipped=40, changed=0, failed=0, unreachable=0):
    return {"executed": executed, "changed": changed, "failed": failed, "skipped": skipped,
            "unreachable": unreachable, "includes": 9, "controller_only": 20}


def run(config, nodes, wall, cpu, executed=80, noop=True):
    hosts = dict(("n%d" % i, counts(executed=executed, changed=0 if noop else 1)) for i in range(nodes))
    summary = fleet_report.run_summary(hosts, wall, cpu, 0)
    summary["config"] = config
    return summary


# ----------------------------------------------------------------- plan

@pytest.mark.parametrize("text, sizes", [("1,4,8", [1, 4, 8]), ("8,1,4,4", [1, 4, 8]), (" 2 ,", [2])])
def test_parse_sizes(text, sizes):
    assert fleet_report.parse_sizes(text) == sizes


@pytest.mark.parametrize("text", ["", "0,4", "-1", "a"])
def test_parse_sizes_rejects(text):
    with pytest.raises(ValueError):
        fleet_report.parse_sizes(text)


def test_node_plan_names_and_addresses():
    nodes = fleet_report.node_plan(8, "172.30.99.0/24", 101, "gpuops-bench-", 13, "rtx4090-8gpu")
    assert [n["name"] for n in nodes] == ["gpuops-bench-%d" % i for i in range(1, 9)]
    assert [n["ip"] for n in nodes] == ["172.30.99.%d" % i for i in range(101, 109)]
    assert nodes[0]["debian"] == "13" and nodes[0]["fixture"] == "rtx4090-8gpu"


def test_node_plan_stays_in_the_subnet():
    with pytest.raises(ValueError, match="outside"):
        fleet_report.node_plan(8, "172.30.99.0/24", 250, "b-", "13", None)


def test_inventory_puts_every_node_in_the_group():
    nodes = fleet_report.node_plan(2, "10.0.0.0/24", 5, "b-", "13", "f")
    doc = json.loads(fleet_report.inventory_text(nodes, "gpu_nodes"))
    assert "vars" not in doc["all"], "the lab's group_vars are the benchmark's settings, not its own"
    assert doc["all"]["children"]["gpu_nodes"]["hosts"] == {
        "b-1": {"ansible_host": "10.0.0.5", "gpuops_fixture": "f"},
        "b-2": {"ansible_host": "10.0.0.6", "gpuops_fixture": "f"}}


def _inventory_vars(sources, host):
    """The variables Ansible gives ``host`` from these inventory sources (group_vars included), untemplated."""
    from ansible.inventory.manager import InventoryManager  # pylint: disable=import-outside-toplevel
    from ansible.parsing.dataloader import DataLoader  # pylint: disable=import-outside-toplevel
    from ansible.vars.manager import VariableManager  # pylint: disable=import-outside-toplevel
    loader = DataLoader()
    inv = InventoryManager(loader=loader, sources=sources)
    found = inv.get_host(host)
    assert found is not None, (host, sources)
    return VariableManager(loader=loader, inventory=inv).get_vars(host=found, include_hostvars=False)


# A node's own variables (the lab's hosts.yml or the benchmark's hosts file) and Ansible's magic ones.
NODE_OWN = {"ansible_host", "gpuops_lab_node", "gpuops_fixture", "inventory_hostname", "inventory_hostname_short",
            "group_names", "groups", "inventory_dir", "inventory_file", "playbook_dir", "omit", "ansible_version",
            "ansible_play_hosts", "ansible_play_hosts_all", "ansible_play_batch", "play_hosts", "ansible_config_file",
            "ansible_playbook_python", "ansible_check_mode", "ansible_diff_mode", "ansible_forks",
            "ansible_inventory_sources", "ansible_skip_tags", "ansible_run_tags", "ansible_verbosity",
            "environment", "vars", "hostvars", "role_names", "ansible_collection_name", "ansible_facts"}


def _shared(found):
    """The variables that are not the node's own."""
    return dict((k, v) for k, v in found.items() if k not in NODE_OWN)


def test_bench_nodes_get_exactly_the_lab_settings(tmp_path):
    """A benchmark node (bench/fleet_bench.py: its hosts file plus inventories/lab/groups.yml)
    gets the same variables, with the same values, as a GPU node of `make lab` (inventories/lab):
    connection, key, mirror and repository doubles come from ONE place, the lab's group_vars.
    (bench-fleet once failed because its nodes lacked the mirror settings.)"""
    root = os.path.dirname(BENCH)
    nodes = fleet_report.node_plan(1, "172.30.99.0/24", 101, "gpuops-bench-", "13", "rtx4090-8gpu")
    hosts = tmp_path / "hosts.json"
    hosts.write_text(fleet_report.inventory_text(nodes, "gpu_nodes"))
    sys.path.insert(0, os.path.join(root, "bench"))
    import fleet_bench  # noqa: E402  pylint: disable=import-outside-toplevel
    bench = _inventory_vars([str(hosts), fleet_bench.LAB_INVENTORY], "gpuops-bench-1")
    lab = _inventory_vars([os.path.join(root, "inventories", "lab")], "lab-rtx")
    assert _shared(bench) == _shared(lab)
    for name in ("ansible_ssh_private_key_file", "gpuops_mirror_url", "gpuops_cuda_repo_key_url",
                 "nvidia_container_toolkit_keyring_url", "nvidia_container_toolkit_repo_url", "node_exporter_binary_url"):
        assert name in bench, name
    assert bench["gpuops_fixture"] == "rtx4090-8gpu"


def test_mitogen_cfg_is_the_recommended_one_with_the_strategy(tmp_path):
    with open(REPO_CFG) as handle:
        text = fleet_report.mitogen_cfg(handle.read(), os.path.dirname(REPO_CFG), "/m/plugins/strategy")
    settings = fleet_report.read_cfg(text)
    recommended = fleet_report.read_cfg(open(REPO_CFG).read())
    assert settings["strategy"] == {"value": "mitogen_linear", "source": "cfg"}
    assert recommended["strategy"]["value"] == "linear"
    assert dict((k, v) for k, v in settings.items() if k != "strategy") == dict(
        (k, v) for k, v in recommended.items() if k != "strategy")
    import configparser  # pylint: disable=import-outside-toplevel
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    assert parser.get("defaults", "strategy_plugins") == "/m/plugins/strategy"
    wanted = os.path.join(os.path.dirname(REPO_CFG), ".cache", "collections")
    assert parser.get("defaults", "collections_path") == wanted
    # no fact cache plugin in the recommended settings (README: it more than doubled the CPU)
    assert not parser.has_option("defaults", "fact_caching")


def test_limit_for():
    nodes = fleet_report.node_plan(4, "10.0.0.0/24", 5, "b-", "13", "f")
    assert fleet_report.limit_for(nodes, 1) == "b-1"
    assert fleet_report.limit_for(nodes, 3) == "b-1,b-2,b-3"
    with pytest.raises(ValueError):
        fleet_report.limit_for(nodes, 5)


# ----------------------------------------------------------------- configuration

def test_read_cfg_of_the_repository():
    with open(REPO_CFG) as handle:
        settings = fleet_report.read_cfg(handle.read())
    assert settings["pipelining"] == {"value": "true", "source": "cfg"}
    assert settings["forks"]["source"] == "cfg"
    assert "gpuops.dlserver.fleet_summary" in settings["callbacks_enabled"]["value"]


def test_read_cfg_fills_ansible_defaults():
    settings = fleet_report.read_cfg(fleet_report.defaults_cfg("/x/collections"))
    assert settings["forks"] == {"value": "5", "source": "default"}
    assert settings["pipelining"] == {"value": "False", "source": "default"}
    assert settings["gathering"]["value"] == "implicit"
    assert all(entry["source"] == "default" for entry in settings.values())


def test_read_cfg_ignores_percent_signs():
    text = "[ssh_connection]\nssh_args = -o ControlPath=%(directory)s/%%h\n"
    assert fleet_report.read_cfg(text)["ssh_args"]["value"] == "-o ControlPath=%(directory)s/%%h"


@pytest.mark.parametrize("configured, expected", [
    ("", "fleet_bench_tasks"),
    ("gpuops.dlserver.fleet_summary", "gpuops.dlserver.fleet_summary,fleet_bench_tasks"),
    ("a, b,", "a,b,fleet_bench_tasks"),
    ("fleet_bench_tasks", "fleet_bench_tasks"),
])
def test_callbacks_keep_the_configured_ones(configured, expected):
    settings = {"callbacks_enabled": {"value": configured, "source": "cfg"}}
    assert fleet_report.callbacks_with(settings, "fleet_bench_tasks") == expected


# ----------------------------------------------------------------- counts

def test_host_counts_needs_every_host():
    doc = {"hosts": {"a": counts(), "b": counts()}, "recap": {}}
    assert sorted(fleet_report.host_counts(doc, ["a"])) == ["a"]
    with pytest.raises(ValueError, match="c"):
        fleet_report.host_counts(doc, ["a", "c"])


def test_run_summary_of_a_clean_noop():
    summary = fleet_report.run_summary({"a": counts(81, 40), "b": counts(80, 41)}, 30.0, 12.5, 0)
    assert summary["nodes"] == 2
    assert summary["executed_per_host"] == 81 and summary["executed_per_host_min"] == 80
    assert summary["skipped_per_host"] == 41
    assert summary["cpu_s_per_host"] == 6.25
    assert summary["noop"] and summary["problems"] == []


@pytest.mark.parametrize("host, rc, problem", [
    (counts(changed=2), 0, "2 task(s) changed"),
    (counts(failed=1), 2, "ansible-playbook exited 2"),
    (counts(unreachable=1), 4, "1 task(s) unreachable"),
])
def test_run_summary_says_why_it_is_not_a_noop(host, rc, problem):
    summary = fleet_report.run_summary({"a": host}, 1.0, 1.0, rc)
    assert not summary["noop"]
    assert problem in summary["problems"]


# ----------------------------------------------------------------- statistics

def test_slope_of_a_line():
    assert fleet_report.slope([(1, 10.0), (4, 16.0), (8, 24.0)]) == pytest.approx(2.0)


def test_slope_needs_two_x_values():
    with pytest.raises(ValueError):
        fleet_report.slope([(1, 2.0)])
    with pytest.raises(ValueError):
        fleet_report.slope([(1, 2.0), (1, 3.0)])


@pytest.mark.parametrize("values, expected", [([3], 3), ([3, 1, 2], 2), ([4, 1, 2, 3], 2.5)])
def test_median(values, expected):
    assert fleet_report.median(values) == expected


def test_config_stats_uses_the_median_of_each_size():
    runs = [run("r", 1, 20.0, 10.0), run("r", 1, 22.0, 10.0), run("r", 1, 60.0, 10.0),
            run("r", 4, 26.0, 34.0), run("r", 8, 34.0, 66.0)]
    stats = fleet_report.config_stats(runs)
    assert stats["wall_s"] == {1: 22.0, 4: 26.0, 8: 34.0}
    assert stats["baseline_nodes"] == 1
    assert stats["marginal_cpu_s"] == pytest.approx(8.0)
    assert stats["marginal_wall_fraction"] == pytest.approx(stats["marginal_wall_s"] / 22.0, abs=1e-3)


def split_run(nodes, wall, main, workers, node_cpu=None):
    summary = run("r", nodes, wall, main + workers)
    summary["controller_split"] = {"main": main, "workers": workers}
    if node_cpu is not None:
        summary["node_cpu_s"] = dict(("n%d" % i, node_cpu) for i in range(nodes))
    return summary


@pytest.mark.parametrize("main_slope, workers_slope, cpus, wall", [
    # the workers spread over the CPUs: (1 + 2) / 2
    (1.0, 2.0, 2, 1.5),
    # ansible-playbook's own serial work is the floor
    (2.0, 1.0, 4, 2.0),
    (1.0, 2.0, 1, 3.0),
])
def test_separate_machines_estimate_from_the_controllers_split(main_slope, workers_slope, cpus, wall):
    runs = [split_run(n, 10.0 + 3 * (n - 1), 2.0 + main_slope * (n - 1), 3.0 + workers_slope * (n - 1), 3.5)
            for n in (1, 4, 8)]
    estimate = fleet_report.config_stats(runs, cpus)["separate_machines"]
    assert estimate["main_cpu_s"] == pytest.approx(main_slope) and estimate["workers_cpu_s"] == pytest.approx(workers_slope)
    assert estimate["wall_s"] == pytest.approx(wall) and estimate["fraction"] == pytest.approx(wall / 10.0, abs=1e-3)
    # every node costs its own 3.5 s of CPU: the slope of the nodes' sum
    assert estimate["node_cpu_s"] == pytest.approx(3.5) and estimate["cpus"] == cpus
    report = fleet_report.table({"runs": runs, "controller": {"cpus": cpus},
                                 "configs": {"r": {"stats": fleet_report.config_stats(runs, cpus), "budget": []}}})
    assert "against separate machines (an estimate from the controller's split): %.2f s" % wall in report


def test_separate_machines_estimate_needs_the_cpus_and_every_split():
    runs = [split_run(n, 10.0 + n, 2.0 + n, 3.0 + n) for n in (1, 4)]
    assert "separate_machines" not in fleet_report.config_stats(runs)
    assert "node_cpu_s" not in fleet_report.config_stats(runs, 2)["separate_machines"]
    del runs[1]["controller_split"]
    assert "separate_machines" not in fleet_report.config_stats(runs, 2)


def test_config_stats_of_one_size_has_no_marginal():
    stats = fleet_report.config_stats([run("r", 1, 20.0, 10.0)])
    assert "marginal_wall_s" not in stats


# ----------------------------------------------------------------- budget

def test_budget_passes_within_limits():
    runs = [run("r", 1, 20.0, 10.0, executed=60), run("r", 8, 55.0, 45.0, executed=60)]
    checks = fleet_report.budget_checks(runs, fleet_report.config_stats(runs))
    assert [c["passed"] for c in checks] == [True, True, True, True]
    assert checks[0]["value"] == 60 and checks[1]["value"] == 40
    assert checks[2]["value"] == pytest.approx(0.25)
    assert checks[3]["value"] == pytest.approx(5.0)


def test_budget_fails_on_tasks_and_on_marginal_cost():
    runs = [run("r", 1, 20.0, 10.0, executed=80), run("r", 8, 60.0, 70.0, executed=61)]
    checks = fleet_report.budget_checks(runs, fleet_report.config_stats(runs))
    assert [c["passed"] for c in checks] == [False, True, False, False]
    assert checks[0]["value"] == 80


def test_budget_fails_when_a_run_was_not_a_noop():
    runs = [run("r", 1, 20.0, 10.0, executed=10, noop=False), run("r", 4, 21.0, 10.0)]
    checks = fleet_report.budget_checks(runs, fleet_report.config_stats(runs))
    assert not checks[0]["passed"]
    assert "no-op" in checks[0]["detail"]


def test_budget_needs_two_sizes_for_the_marginal_check():
    runs = [run("r", 1, 20.0, 10.0)]
    checks = fleet_report.budget_checks(runs, fleet_report.config_stats(runs))
    assert checks[2]["value"] is None and not checks[2]["passed"]
    assert checks[3]["value"] is None and not checks[3]["passed"]


def test_budget_limits_are_the_issues():
    assert fleet_report.TASK_BUDGET == 60
    assert fleet_report.SKIPPED_BUDGET == 60
    assert fleet_report.CPU_BUDGET == 5.0
    assert fleet_report.MARGINAL_BUDGET == 0.25


# ----------------------------------------------------------------- table

def test_table_shows_runs_marginal_cost_and_verdicts():
    runs = [run("recommended", 1, 20.0, 10.0), run("recommended", 8, 41.0, 70.0),
            run("defaults", 1, 30.0, 20.0, noop=False)]
    result = {"runs": runs, "configs": {}}
    for config in ("recommended", "defaults"):
        mine = [r for r in runs if r["config"] == config]
        stats = fleet_report.config_stats(mine)
        result["configs"][config] = {"stats": stats, "budget": fleet_report.budget_checks(mine, stats)}
    text = fleet_report.table(result)
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["config", "nodes", "wall"]
    assert "recommended: an added node costs 3.00 s wall (15 % of the 1-node run)" in text
    assert "NO: 1 task(s) changed" in text
    verdicts = [line.split()[-1] for line in lines if line.strip().startswith("budget")]
    # recommended: 80 executed (over 60), 40 skipped, +15 % wall, 8.6 s CPU per node (over 5);
    # defaults: not a no-op, one size only
    assert verdicts == ["FAIL", "PASS", "PASS", "FAIL"] + ["FAIL"] * 4
    # no controller recorded: no controller line; recorded: the ansible-core end that ran it, last
    assert "controller:" not in text
    result["controller"] = {"ansible": "ansible-playbook [core 2.21.5]", "python": "3.12.1", "cpus": 2}
    assert fleet_report.table(result).splitlines()[-1] == "controller: ansible-playbook [core 2.21.5], Python 3.12.1, 2 CPUs"


# ----------------------------------------------------------------- recap and load

def test_counts_agree_with_the_recap():
    mine = {"a": counts(executed=73, skipped=77)}
    assert fleet_report.recap_disagreements(mine, {"a": {"ok": 82, "failures": 0, "skipped": 77}}) == []


@pytest.mark.parametrize("recap, needle", [
    ({}, "a: not in the recap"),
    ({"a": {"ok": 83, "failures": 0, "skipped": 77}}, "recap ok=83"),
    ({"a": {"ok": 82, "failures": 0, "skipped": 76}}, "skipped=76"),
])
def test_counts_that_disagree_with_the_recap_are_a_problem(recap, needle):
    mine = {"a": counts(executed=73, skipped=77)}
    assert needle in fleet_report.recap_disagreements(mine, recap)[0]
    summary = fleet_report.run_summary(mine, 1.0, 1.0, 0, recap)
    assert not summary["noop"]
    assert summary["problems"][0].startswith("counts disagree with the recap")


def test_busy_runs_and_the_warning():
    quiet, busy = run("r", 1, 20.0, 10.0), run("r", 4, 25.0, 30.0)
    quiet["load_1m"], busy["load_1m"] = [0.5, 1.9], [1.0, 2.5]
    result = {"controller": {"cpus": 2}, "runs": [quiet, busy], "configs": {}}
    assert fleet_report.busy_runs(result) == [busy]
    assert "exceeded its 2 CPUs during 1 run(s)" in fleet_report.table(result)


def test_budget_values_print_in_their_units():
    """The CPU budget is seconds, the added-node budget a share of the one-node wall."""
    assert fleet_report.format_budget_value({"name": "controller CPU s per added node", "value": 20.34,
                                             "limit": 5.0}) == ("20.34 s", "5.00 s")
    assert fleet_report.format_budget_value({"name": "added node / one-node run (wall)", "value": 0.5,
                                             "limit": 0.25}) == ("50 %", "25 %")
    assert fleet_report.format_budget_value({"name": "tasks per GPU host (no-op run)", "value": 92,
                                             "limit": 60}) == ("92", "60")
    assert fleet_report.format_budget_value({"name": "controller CPU s per added node", "value": None,
                                             "limit": 5.0}) == ("-", "5.00 s")


CID = "27cf432e45ca9976a689775cd0ba0f116211e09cd062a56290c9371aa35eb191"


@pytest.mark.parametrize("parts, text, seconds", [
    (("cpuacct", "docker", CID, "cpuacct.usage"), "53032525839\n", 53.032525839),
    (("system.slice", "docker-%s.scope" % CID, "cpu.stat"),
     "usage_usec 4200000\nuser_usec 3000000\nsystem_usec 1200000\n", 4.2),
    (("docker", CID, "cpu.stat"), "usage_usec 1500000\nuser_usec 1000000\n", 1.5),
])
def test_a_nodes_cpu_counter_under_either_cgroup_version(tmp_path, parts, text, seconds):
    path = tmp_path.joinpath(*parts)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    found = fleet_report.cgroup_cpu_counter(CID, str(tmp_path))
    assert found == str(path)
    assert fleet_report.read_cpu_counter(found) == pytest.approx(seconds)


def test_a_node_without_a_counter(tmp_path):
    assert fleet_report.cgroup_cpu_counter(CID, str(tmp_path)) is None
    assert fleet_report.read_cpu_counter(str(tmp_path / "missing")) == 0.0
    assert fleet_report.read_cpu_counter(None) == 0.0


@pytest.mark.parametrize("bad", ["", "27cf432e45ca", CID + "\n", "../" + CID[3:], CID.upper()])
def test_only_a_full_container_id_names_a_counter(tmp_path, bad):
    with pytest.raises(ValueError):
        fleet_report.cgroup_cpu_counter(bad, str(tmp_path))


# ----------------------------------------------------------------- one setting at a time

@pytest.mark.parametrize("name, section, key, value", [
    ("pipelining-off", "ssh_connection", "pipelining", "false"),
    ("forks-5", "defaults", "forks", "5"),
    ("forks-50", "defaults", "forks", "50"),
    ("jsonfile-cache", "defaults", "fact_caching", "jsonfile"),
    ("result-format-json", "defaults", "callback_result_format", "json"),
    ("no-preload", "defaults", "callbacks_enabled", "gpuops.dlserver.fleet_summary"),
    ("ssh-args-default", "ssh_connection", "ssh_args", "-C -o ControlMaster=auto -o ControlPersist=60s"),
    ("gathering-implicit", "defaults", "gathering", "implicit"),
])
def test_each_sweep_setting_changes_one_setting_of_the_recommended_cfg(tmp_path, name, section, key, value):
    import configparser  # pylint: disable=import-outside-toplevel
    with open(REPO_CFG) as handle:
        recommended_text = handle.read()
    text = fleet_report.sweep_cfg(recommended_text, os.path.dirname(REPO_CFG), name, str(tmp_path))
    changed, base = configparser.ConfigParser(interpolation=None), configparser.ConfigParser(interpolation=None)
    changed.read_string(text)
    base.read_string(recommended_text)
    assert changed.get(section, key) == value
    assert base.get(section, key, fallback=None) != value   # the recommended file says otherwise
    differ = set((s, k) for s in changed.sections() for k in changed[s]
                 if base.get(s, k, fallback=None) != changed.get(s, k))
    # collections_path is made absolute (the file is written elsewhere); the fact cache needs its directory
    assert differ - {("defaults", "collections_path"), ("defaults", "fact_caching_connection")} == {(section, key)}
    if name == "jsonfile-cache":
        assert changed.get("defaults", "fact_caching_connection") == "%s/facts" % tmp_path


def test_an_unknown_sweep_setting_is_named():
    with pytest.raises(ValueError, match="unknown sweep setting 'x'; known: pipelining-off"):
        fleet_report.sweep_cfg("[defaults]\n", "/", "x", "/tmp")


def test_cfg_with_removes_a_key_given_none():
    text = fleet_report.cfg_with("[defaults]\nforks = 25\ngathering = smart\n", "/", [("defaults", "forks", None)])
    assert fleet_report.read_cfg(text)["forks"] == {"value": "5", "source": "default"}


def test_sweep_rows_and_their_lines_in_the_table():
    reference = run("recommended", 4, 20.0, 10.0)
    slower, cheaper = run("forks-5", 4, 30.0, 10.5), run("no-preload", 4, 19.0, 12.0, noop=False)
    rows = fleet_report.sweep_table([slower, cheaper], reference)
    assert [(r["setting"], r["wall_change"], r["cpu_change"]) for r in rows] == [
        ("forks-5", 50.0, 5.0), ("no-preload", -5.0, 20.0)]
    text = fleet_report.table({"runs": [], "configs": {}, "sweep": {
        "size": 4, "reference": {"wall_s": 20.0, "cpu_s": 10.0, "load_1m": [1, 1]}, "rows": rows}})
    assert "one setting changed at a time, 4 nodes, against the recommended ansible.cfg (20.0 s wall, 10.0 s CPU)" in text
    assert "forks = 5 (Ansible's default)" in text and "(+50.0 %)" in text
    assert "callbacks_enabled without gpuops.dlserver.preload" in text and "NOT a clean no-op" in text
