"""Scrape targets and prometheus.yml (module_utils/prometheus_config.py), from data/prometheus_config_cases.yml."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import prometheus_config as pc

HERE = os.path.dirname(os.path.dirname(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
with open(os.path.join(HERE, "data", "prometheus_config_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
with open(os.path.join(REPO, "roles", "prometheus", "defaults", "main.yml")) as _fh:
    DEFAULTS = dict((k[len("prometheus_"):], v) for k, v in yaml.safe_load(_fh).items())


@pytest.mark.parametrize("case", CASES["targets"], ids=[c["name"] for c in CASES["targets"]])
def test_host_targets(case):
    if "error" in case:
        with pytest.raises(ValueError) as err:
            pc.host_targets(case["host"], case["hostvars"], case["groups"], "gpu_nodes")
        assert case["error"] in str(err.value)
        return
    result = pc.host_targets(case["host"], case["hostvars"], case["groups"], "gpu_nodes")
    for job, want in case["expect"].items():
        for key, value in want.items():
            assert result[job][key] == value, (job, key)


def test_the_targets_of_a_host_do_not_depend_on_its_plan_agreeing_with_the_group():
    """Issue 34: /etc/gpuops/prometheus.json said "hardware plan: NVIDIA GPU(s) present..." with the
    host in the run and another reason with --limit leaving it out: the group decides, and the
    record is the same whatever the plan says where the plan agrees. Issue 35: a host without a
    plan in this run fails, naming it (never default ports silently)."""
    for in_group, run in ((True, True), (False, False)):
        groups = ["gpu_nodes"] if in_group else []
        plan = {"roles": {"dcgm_exporter": {"run": run, "reason": "NVIDIA GPU(s) present"}}}
        with_plan = pc.host_targets("h", {"ansible_host": "10.0.0.5", "gpuops_plan": plan}, groups, "gpu_nodes")
        bare = pc.host_targets("h", {"ansible_host": "10.0.0.5", "gpuops_plan": {}}, groups, "gpu_nodes")
        assert with_plan == bare
        with pytest.raises(ValueError, match="host h has no plan in this run"):
            pc.host_targets("h", {"ansible_host": "10.0.0.5"}, groups, "gpu_nodes")
    # where the plan disagrees with the group the plan wins and says the decision depends on the run
    scrape, reason = pc.dcgm_scrape({"roles": {"dcgm_exporter": {"run": True, "reason": "2 GPU(s)"}}}, False,
                                    "gpu_nodes")
    assert scrape is True and reason.endswith("a run that leaves this host out follows the group (add the host to "
                                              "gpu_nodes)")


def test_file_sd_labels_every_target_with_its_node_and_sorts():
    hosts = []
    for case in [c for c in CASES["targets"] if "error" not in c][:4]:
        entry = pc.host_targets(case["host"], case["hostvars"], case["groups"], "gpu_nodes")
        entry["name"] = case["host"]
        hosts.append(entry)
    sd = pc.file_sd(hosts)
    assert sd["node_exporter"] == [
        {"targets": ["10.1.1.1:9101"], "labels": {"node": "cpu1"}},
        {"targets": ["10.0.0.11:9100"], "labels": {"node": "gpu1"}},
        {"targets": ["gpu2:9100"], "labels": {"node": "gpu2"}},
        {"targets": ["gpu3.mgmt:9100"], "labels": {"node": "gpu3"}},
    ]
    assert sd["dcgm_exporter"] == [
        {"targets": ["10.0.0.11:9400"], "labels": {"node": "gpu1"}},
        {"targets": ["gpu3.mgmt:9400"], "labels": {"node": "gpu3"}},
    ]


def test_scrape_config_defaults():
    config = pc.scrape_config(DEFAULTS)
    assert config["rule_files"] == ["/etc/prometheus/rules/gpuops-gpu.rules.yml",
                                    "/etc/prometheus/rules/gpuops-storage.rules.yml",
                                    "/etc/prometheus/rules/gpuops-bmc.rules.yml"]
    jobs = dict((j["job_name"], j) for j in config["scrape_configs"])
    assert sorted(jobs) == ["dcgm_exporter", "ipmi_inband", "node_exporter", "prometheus"]
    assert jobs["node_exporter"] == {"job_name": "node_exporter", "scheme": "http",
                                     "file_sd_configs": [{"files": ["/etc/prometheus/file_sd/node_exporter.yml"]}]}
    assert jobs["dcgm_exporter"]["file_sd_configs"] == [{"files": ["/etc/prometheus/file_sd/dcgm_exporter.yml"]}]
    assert "alerting" not in config and "external_labels" not in config["global"]


def test_scrape_config_tls_auth_alertmanager_extra():
    inputs = dict(DEFAULTS, node_exporter_scheme="https", node_exporter_basic_auth_username="prometheus",
                  node_exporter_basic_auth_password="pw", node_exporter_tls_ca_file="/etc/ssl/ca.pem",
                  alertmanager_targets=["am:9093"], external_labels={"cluster": "dc1"},
                  rules_files=["/home/ops/rules/site.rules.yml"],
                  extra_scrape_configs=[{"job_name": "ipmi", "static_configs": [{"targets": ["x:9290"]}]}])
    assert pc.check_inputs(inputs) == []
    config = pc.scrape_config(inputs)
    job = [j for j in config["scrape_configs"] if j["job_name"] == "node_exporter"][0]
    assert job["scheme"] == "https"
    assert job["basic_auth"] == {"username": "prometheus", "password": "pw"}
    assert job["tls_config"] == {"ca_file": "/etc/ssl/ca.pem"}
    assert config["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] == ["am:9093"]
    assert config["global"]["external_labels"] == {"cluster": "dc1"}
    assert config["rule_files"][-1] == "/etc/prometheus/rules/site.rules.yml"
    assert config["scrape_configs"][-1]["job_name"] == "ipmi"


@pytest.mark.parametrize("change,error", [
    ({"node_exporter_basic_auth_username": "p"}, "prometheus_node_exporter_basic_auth_username and"),
    ({"rules_dir": "rules"}, "prometheus_rules_dir must be an absolute path"),
    ({"extra_scrape_configs": [{"static_configs": []}]}, "prometheus_extra_scrape_configs[0] must be a scrape config"),
    ({"extra_scrape_configs": [{"job_name": "dcgm_exporter"}]}, "job_name dcgm_exporter is the role's own job"),
])
def test_check_inputs(change, error):
    errors = pc.check_inputs(dict(DEFAULTS, **change))
    assert len(errors) == 1 and error in errors[0]
