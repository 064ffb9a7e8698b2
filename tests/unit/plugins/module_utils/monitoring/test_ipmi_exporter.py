"""The ipmi_exporter role's decisions (module_utils/monitoring/ipmi_exporter.py), from
data/ipmi_exporter_cases.yml, and the BMC targets of the prometheus role."""
import copy
import os

from collections.abc import Mapping

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks, systemd
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import ipmi_exporter as ipmi
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import prometheus_config as pc
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan.host_plan import published_bmc

HERE = os.path.dirname(os.path.dirname(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
with open(os.path.join(HERE, "data", "ipmi_exporter_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
with open(os.path.join(REPO, "roles", "ipmi_exporter", "defaults", "main.yml")) as _fh:
    DEFAULTS = dict((k[len("ipmi_exporter_"):], v) for k, v in yaml.safe_load(_fh).items())
PLATFORM = {"name": "Debian 12", "package": "prometheus-ipmi-exporter", "package_binary": "/usr/bin/prometheus-ipmi-exporter",
            "package_service": "prometheus-ipmi-exporter"}


def _inputs(case):
    return dict(copy.deepcopy(DEFAULTS), **copy.deepcopy(case.get("inputs") or {}))


def _passwords(inputs):
    return [m.get("password") for m in (inputs.get("modules") or {}).values() if isinstance(m, dict) and m.get("password")]


def _bmc(inputs, device):
    """The host plan's bmc for a host whose probe found /dev/ipmi0 (``device``) or nothing."""
    return published_bmc({}, inputs, {"inband_device": "/dev/ipmi0" if device else None})


@pytest.mark.parametrize("case", CASES["decide"], ids=[c["name"] for c in CASES["decide"]])
def test_decide(case):
    inputs = _inputs(case)
    platform = case.get("platform", PLATFORM)
    if "error" in case:
        if platform is PLATFORM:
            # the values alone: refused on every host before any change by the registry (host_plan and
            # role_inputs run it), which decide() does not repeat
            found = input_checks.problems("ipmi_exporter", inputs, "main", {"groups": {}, "allow": {}})
            assert any(case["error"] in p for p in found), found
            assert not any(pw in p for p in found for pw in _passwords(inputs)), "a refusal shows the password"
            return
        with pytest.raises(ValueError) as err:
            ipmi.decide(inputs, platform, _bmc(inputs, case.get("device", False)))
        assert case["error"] in str(err.value)
        for password in _passwords(inputs):
            assert password not in str(err.value), "a refusal shows the password"
        return
    result = ipmi.decide(inputs, platform, _bmc(inputs, case.get("device", False)))
    for key, value in (case.get("expect") or {}).items():
        assert result[key] == value, key
    for key, parts in (case.get("contains") or {}).items():
        for part in parts:
            assert part in result[key], (key, part, result[key])
    assert input_checks.problems("ipmi_exporter", inputs, "main", {"groups": {}, "allow": {}}) == []


def test_no_secret_leaves_the_configuration_file():
    inputs = _inputs({"inputs": {"remote": True, "local": "never",
                                 "modules": {"default": {"user": "mon", "password": "Very.Secret1"}}}})
    result = ipmi.decide(inputs, PLATFORM, _bmc(inputs, False))
    text = repr(dict((k, v) for k, v in result.items() if k != "config_content"))
    assert "Very.Secret1" not in text
    assert "Very.Secret1" in result["config_content"]


def test_the_sandbox_is_node_exporters_one_place():
    """One source of the sandbox lines: node_exporter's unit and ipmi_exporter's drop-in both carry
    sandbox_lines() (in-band: the BMC device instead of PrivateDevices)."""
    assert systemd.sandbox_lines() in node_exporter.UNIT_SERVICE
    remote = ipmi.decide(_inputs({"inputs": {"remote": True, "local": "never",
                                             "modules": {"default": {"user": "mon", "password": "pw"}}}}), PLATFORM,
                         {"local": False, "local_reason": "ipmi_exporter_local: never"})
    assert systemd.sandbox_lines(writable=[ipmi.STATE_DIR]) in remote["unit_content"]
    local = systemd.sandbox_lines(devices=["/dev/ipmi0"])
    assert "PrivateDevices" not in local and "DeviceAllow=/dev/ipmi0 rw" in local


@pytest.mark.parametrize("case", CASES["verdicts"], ids=[c["name"] for c in CASES["verdicts"]])
def test_remote_verdict(case):
    verdict = ipmi.remote_verdict("10.0.1.1", "default", case["content"], case["status"])
    for key, value in case["expect"].items():
        assert verdict[key] == value, key


def _plan(bmc):
    return {"ansible_host": "10.0.0.9", "gpuops_plan": {"bmc": bmc}}


def test_bmc_targets_from_the_plans():
    exporter = pc.ipmi_exporter_address("mon", _plan(published_bmc(
        {}, {"remote": True, "modules": {"default": {}, "hgx": {}}, "listen_address": ":9291"})))
    assert exporter == ("10.0.0.9:9291", ["default", "hgx"])
    node = _plan(published_bmc({"bmc_address": "10.0.1.7"}, {"module": "hgx"}))
    target = pc.bmc_target("gpu7", node, exporter)
    assert target["scrape"] and target["target"] == "10.0.1.7" and target["module"] == "hgx"
    no_bmc = pc.bmc_target("gpu8", _plan(published_bmc({}, {})), exporter)
    assert not no_bmc["scrape"] and "no bmc_address" in no_bmc["reason"]
    assert not pc.bmc_target("gpu7", node, None)["scrape"]
    sd = pc.file_sd([{"name": "gpu7", "node_exporter": {"scrape": False}, "dcgm_exporter": {"scrape": False},
                      "ipmi_exporter": target}])
    assert sd["ipmi_exporter"] == [{"targets": ["10.0.1.7"], "labels": {
        "node": "gpu7", "__param_module": "hgx", "__exporter_address": "10.0.0.9:9291"}}]


class _HostVarsVars(Mapping):
    """What a play hands the filter for hostvars[host]: a Mapping that is no dict (Ansible's HostVarsVars)."""

    def __init__(self, data):
        self._data = data

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


def test_hostvars_of_a_play_are_read_as_the_mapping_they_are():
    # the lab scenario ipmi_exporter found it: a dict check read every plan as missing
    exporter = pc.ipmi_exporter_address("mon", _HostVarsVars(_plan(published_bmc({}, {"remote": True, "modules": {"default": {}}}))))
    assert exporter == ("10.0.0.9:9290", ["default"])
    node = _HostVarsVars(_plan(published_bmc({"bmc_address": "10.0.1.7"}, {})))
    assert pc.bmc_target("gpu7", node, exporter)["target"] == "10.0.1.7"


def test_bmc_target_refusals_name_the_variable():
    exporter = ("10.0.0.9:9290", ["default"])
    with pytest.raises(ValueError, match="ipmi_exporter_module \\(host gpu7\\): module 'hgx'"):
        pc.bmc_target("gpu7", _plan({"address": "10.0.1.7", "module": "hgx"}), exporter)
    with pytest.raises(ValueError, match="prometheus_ipmi_exporter_host: host mon serves no BMC"):
        pc.ipmi_exporter_address("mon", _plan(published_bmc({}, {"remote": False, "modules": {"default": {}}})))
    with pytest.raises(ValueError, match="prometheus_ipmi_exporter_host: host mon has no plan"):
        pc.ipmi_exporter_address("mon", {"ansible_host": "10.0.0.9"})


def test_the_plan_publishes_no_credential():
    bmc = published_bmc({"bmc_address": "10.0.1.7", "gpuops_bmc_user": "u", "gpuops_bmc_password": "Secret.1"},
                        {"remote": True, "modules": {"default": {"user": "u", "password": "Secret.2"}}})
    assert "Secret" not in repr(bmc) and "'u'" not in repr(bmc)


def test_the_bmc_job_is_relabelled_to_target_and_module():
    inputs = {"scrape_interval": "30s", "evaluation_interval": "30s", "file_sd_dir": "/etc/prometheus/file_sd",
              "rules_dir": "/etc/prometheus/rules", "ipmi_exporter_host": "mon", "node_exporter_scheme": "http"}
    jobs = dict((j["job_name"], j) for j in pc.scrape_config(inputs)["scrape_configs"])
    job = jobs["ipmi_exporter"]
    assert job["metrics_path"] == "/ipmi"
    assert {"source_labels": ["__address__"], "target_label": "__param_target"} in job["relabel_configs"]
    assert {"source_labels": ["__exporter_address"], "target_label": "__address__"} in job["relabel_configs"]
    assert "ipmi_exporter" not in dict((j["job_name"], j) for j in pc.scrape_config(
        dict(inputs, ipmi_exporter_host=""))["scrape_configs"])


@pytest.mark.parametrize("setting, device, local", [
    ("auto", "/dev/ipmi0", True), ("auto", None, False), ("auto", "/dev/ipmi/0", False),
    ("always", None, True), ("never", "/dev/ipmi0", False)])
def test_the_plan_decides_the_in_band_mode(setting, device, local):
    """One decision (local_mode): the plan publishes it from the probe's device, the role configures by it,
    and the prometheus role's in-band job scrapes the host exactly where it is true."""
    bmc = published_bmc({}, {"local": setting, "listen_address": ":9290"}, {"inband_device": device})
    assert bmc["local"] is local and bmc["inband_device"] == device
    inputs = _inputs({"inputs": {"local": setting, "remote": False}})
    if local or inputs["remote"]:
        assert ipmi.decide(inputs, PLATFORM, bmc)["local"] is local
    plan = {"bmc": bmc, "host": {"scrape_address": "10.0.0.9"}}
    target = pc.inband_target("gpu7", plan, ["ipmi_exporter"], "10.0.0.9")
    assert target["scrape"] is local and (target["target"] == "10.0.0.9:9290" if local else target["target"] is None)
    assert not pc.inband_target("gpu7", plan, ["gpu_nodes"], "10.0.0.9")["scrape"]


def test_the_in_band_job_in_prometheus_yml():
    sd = pc.file_sd([{"name": "gpu7", "node_exporter": {"scrape": False}, "dcgm_exporter": {"scrape": False},
                      "ipmi_inband": {"scrape": True, "target": "10.0.0.9:9290"}}])
    assert sd["ipmi_inband"] == [{"targets": ["10.0.0.9:9290"], "labels": {"node": "gpu7"}}]
    assert pc.inband_job("/etc/prometheus/file_sd") == {
        "job_name": "ipmi_inband", "scrape_interval": "1m", "scrape_timeout": "50s",
        "file_sd_configs": [{"files": ["/etc/prometheus/file_sd/ipmi_inband.yml"]}]}
