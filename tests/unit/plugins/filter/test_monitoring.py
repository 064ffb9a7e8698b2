"""Filters node_exporter_plan, prometheus_targets, prometheus_config (plugins/filter/__private/<name>.py)."""
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks
from ansible_collections.gpuops.dlserver.plugins.filter.__private import node_exporter_plan, prometheus_config
from ansible_collections.gpuops.dlserver.plugins.filter.__private import prometheus_targets

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
FILTERS = dict(node_exporter_plan.FilterModule().filters(), **prometheus_targets.FilterModule().filters())
FILTERS.update(prometheus_config.FilterModule().filters())


def defaults(role):
    with open(os.path.join(REPO, "roles", role, "defaults", "main.yml")) as fh:
        return dict((k[len(role) + 1:], v) for k, v in yaml.safe_load(fh).items())


DEBIAN = {"name": "Debian 12", "package": "prometheus-node-exporter",
          "package_binary": "/usr/bin/prometheus-node-exporter", "package_service": "prometheus-node-exporter"}


def test_bad_node_exporter_input_is_refused_by_the_registry_naming_the_variable_without_secrets():
    """The route (issue 38): the preflight's registry of input checks refuses it; the plan filter
    checks only what needs the host's platform and state."""
    inputs = dict(defaults("node_exporter"), listen_address="9100", basic_auth_users={"p": "topsecret"})
    found = input_checks.problems("node_exporter", inputs, "main", {"groups": {}, "allow": {}})
    assert any(p.startswith("node_exporter_listen_address") for p in found), found
    assert "topsecret" not in " ".join(found)


def test_node_exporter_plan_ok():
    result = FILTERS["node_exporter_plan"](defaults("node_exporter"), DEBIAN, "gpu-01", "x86_64")
    assert result["errors"] == [] and result["service"] == "node_exporter"


def test_node_exporter_plan_takes_what_the_host_read():
    """The role passes node_exporter_host's read: an account the role did not create is refused."""
    root = {"account": {"uid": 0, "gid": 0, "gecos": "root", "home": "/root", "shell": "/bin/bash"},
            "hashes": {}, "status": None, "files": {}}
    with pytest.raises(AnsibleFilterError, match=r"node_exporter_user: the account root exists"):
        FILTERS["node_exporter_plan"](dict(defaults("node_exporter"), user="root"), DEBIAN, "gpu-01", "x86_64", root)


def test_prometheus_targets_from_hostvars():
    hostvars = {"gpu1": {"ansible_host": "10.0.0.1", "group_names": ["gpu_nodes"], "gpuops_plan": {}},
                "cpu1": {"ansible_host": "10.0.0.2", "group_names": ["cpu_nodes"],
                         "gpuops_plan": {"roles": {"dcgm_exporter": {"run": False, "reason": "no GPU"}}}}}
    result = FILTERS["prometheus_targets"](hostvars, ["gpu1", "cpu1"], "gpu_nodes")
    assert result["file_sd"]["node_exporter"] == [{"targets": ["10.0.0.2:9100"], "labels": {"node": "cpu1"}},
                                                  {"targets": ["10.0.0.1:9100"], "labels": {"node": "gpu1"}}]
    assert result["file_sd"]["dcgm_exporter"] == [{"targets": ["10.0.0.1:9400"], "labels": {"node": "gpu1"}}]
    assert result["hosts"]["cpu1"]["dcgm_exporter"]["reason"] == ("it is not in group gpu_nodes "
                                                                  "(prometheus_dcgm_exporter_group)")


def test_prometheus_targets_bad_listen_address_names_host():
    with pytest.raises(AnsibleFilterError, match=r"node_exporter_listen_address \(host gpu1\)"):
        FILTERS["prometheus_targets"](
            {"gpu1": {"gpuops_plan": {"exporters": {"node_exporter": {"listen_address": "x"}}}}}, ["gpu1"], "gpu_nodes")


def test_prometheus_config_input_is_refused_by_the_registry_naming_the_variable():
    found = input_checks.problems("prometheus", dict(defaults("prometheus"), rules_dir="rules"), "main",
                                  {"groups": {}, "allow": {}})
    assert any("prometheus_rules_dir" in p for p in found), found
    assert FILTERS["prometheus_config"](defaults("prometheus"))["rule_files"] == [
        "/etc/prometheus/rules/gpuops-gpu.rules.yml", "/etc/prometheus/rules/gpuops-storage.rules.yml",
        "/etc/prometheus/rules/gpuops-bmc.rules.yml"]
