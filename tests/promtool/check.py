# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The promtool stage of `make test` (make promtool), with Debian's real promtool.

1. `promtool check config` on prometheus.yml and the file_sd files the prometheus role's
   Python generates (plain, and with https + basic auth + Alertmanager + a user rules file).
2. `promtool check rules` on the collection's rules, and `promtool test rules` on
   tests/promtool/gpu.rules.test.yml, storage.rules.test.yml and bmc.rules.test.yml (the NVMe textfile of
   nvme_health.py through `promtool check metrics` too); every alert must have a test where it fires and one
   where it stays silent, and a summary and description.
3. `promtool check metrics` on the GPU textfile rendered for every fixture host
   (tests/fixtures/hosts: sysfs tree -> probe -> plan -> render), and on gpu_validate's textfile.
4. Every PromQL query of the Grafana dashboard, as a recording rule, through `promtool check rules`
   (a typo in a panel query fails here), and every metric it reads is one the rules, DCGM's
   counters, node_exporter or the textfile provides.

Usage: check.py PROMTOOL
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, ".cache", "collections"))
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))

from ansible_collections.gpuops.dlserver.plugins.module_utils.plan import gpu_plan  # noqa: E402
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import gpu_probe  # noqa: E402
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import gpu_textfile  # noqa: E402
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import nvme_health  # noqa: E402
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import prometheus_config  # noqa: E402
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import health as validate_health  # noqa: E402
from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import report as validate_report  # noqa: E402
import build_sysfs  # noqa: E402

RULES = os.path.join(REPO, "roles", "prometheus", "files", "rules", "gpu.rules.yml")
TESTS = os.path.join(REPO, "tests", "promtool", "gpu.rules.test.yml")
STORAGE_RULES = os.path.join(REPO, "roles", "prometheus", "files", "rules", "storage.rules.yml")
STORAGE_TESTS = os.path.join(REPO, "tests", "promtool", "storage.rules.test.yml")
BMC_RULES = os.path.join(REPO, "roles", "prometheus", "files", "rules", "bmc.rules.yml")
BMC_TESTS = os.path.join(REPO, "tests", "promtool", "bmc.rules.test.yml")
BMC_ALERTS = ["IPMIExporterDown", "BMCUnreachable", "BMCFanFailed", "BMCPowerSupplyFailure", "BMCTemperatureCritical",
              "BMCSELFilling"]
DASHBOARD = os.path.join(REPO, "roles", "prometheus", "files", "dashboards", "gpuops-gpu-fleet.json")
FAILED = []


def run(promtool, *args, **kwargs):
    proc = subprocess.run([promtool] + list(args), capture_output=True, text=True, check=False, **kwargs)
    label = "promtool " + " ".join(a if len(a) < 60 else "..." + a[-40:] for a in args)
    ok = proc.returncode == 0
    print("%s %s" % ("ok  " if ok else "FAIL", label))
    if not ok:
        print(proc.stdout + proc.stderr)
        FAILED.append(label)
    return proc


def check(cond, message):
    print("%s %s" % ("ok  " if cond else "FAIL", message))
    if not cond:
        FAILED.append(message)


def defaults():
    with open(os.path.join(REPO, "roles", "prometheus", "defaults", "main.yml")) as fh:
        return dict((k[len("prometheus_"):], v) for k, v in yaml.safe_load(fh).items())


def check_config(promtool, work):
    hosts = []
    # the BMC job: mon-01's ipmi_exporter serves the modules default and hgx; gpu-01's BMC is scraped through it
    exporter = prometheus_config.ipmi_exporter_address("mon-01", {"ansible_host": "10.0.0.2", "gpuops_plan": {"bmc": {
        "serves": ["default", "hgx"], "listen_address": ":9290"}}})
    gpu_01 = {"ansible_host": "10.0.0.11", "gpuops_plan": {"roles": {"dcgm_exporter": {"run": True}},
                                                           "bmc": {"address": "10.0.1.11", "module": "hgx"}}}
    for name, hv, groups in (("gpu-01", gpu_01, ["gpu_nodes"]),
                             ("gpu-02", {"ansible_host": "10.0.0.12", "gpuops_plan": {}}, ["gpu_nodes"]),
                             ("cpu-01", {"ansible_host": "10.0.0.21", "gpuops_plan": {"exporters": {"node_exporter": {
                                 "listen_address": "10.0.0.21:9101"}}}}, [])):
        entry = prometheus_config.host_targets(name, hv, groups, "gpu_nodes")
        entry["name"] = name
        entry["ipmi_exporter"] = prometheus_config.bmc_target(name, hv, exporter)
        hosts.append(entry)
    sd = prometheus_config.file_sd(hosts)
    for variant, extra in (("plain", {}),
                           ("tls-auth", {"node_exporter_scheme": "https", "node_exporter_basic_auth_username": "prometheus",
                                         "node_exporter_basic_auth_password": "pw", "node_exporter_tls_insecure_skip_verify": True,
                                         "alertmanager_targets": ["am:9093"], "external_labels": {"cluster": "ci"},
                                         "rules_files": ["/controller/site.rules.yml"], "ipmi_exporter_host": "mon-01"})):
        root = os.path.join(work, variant)
        inputs = dict(defaults(), file_sd_dir=os.path.join(root, "file_sd"), rules_dir=os.path.join(root, "rules"),
                      config_file=os.path.join(root, "prometheus.yml"), **extra)
        assert not prometheus_config.check_inputs(inputs)
        os.makedirs(inputs["file_sd_dir"])
        os.makedirs(inputs["rules_dir"])
        for job, targets in sd.items():
            with open(os.path.join(inputs["file_sd_dir"], job + ".yml"), "w") as fh:
                yaml.safe_dump(targets, fh)
        for path in prometheus_config.rule_files(inputs):
            source = {"gpuops-bmc.rules.yml": BMC_RULES, "gpuops-storage.rules.yml": STORAGE_RULES}.get(
                os.path.basename(path), RULES)
            with open(source) as src, open(path, "w") as dst:
                dst.write(src.read())
        with open(inputs["config_file"], "w") as fh:
            yaml.safe_dump(prometheus_config.scrape_config(inputs), fh)
        run(promtool, "check", "config", inputs["config_file"])


def alerts_tested(rules_file=RULES, tests_file=TESTS, required=None):
    with open(rules_file) as fh:
        rules = yaml.safe_load(fh)
    with open(tests_file) as fh:
        tests = yaml.safe_load(fh)
    fire, silent = set(), set()
    for test in tests["tests"]:
        for item in test.get("alert_rule_test", []):
            (fire if item.get("exp_alerts") else silent).add(item["alertname"])
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "alert" not in rule:
                continue
            name = rule["alert"]
            check(name in fire and name in silent, "alert %s has a test where it fires and one where it does not" % name)
            ann = rule.get("annotations") or {}
            check(ann.get("summary") and len(ann.get("description", "")) > 80,
                  "alert %s has a summary and a description that says what to do" % name)
    required = required or ["GPUXidErrors", "GPUXidApplication", "GPUXidOther", "GPUTemperatureHigh", "GPUEccUncorrectable",
                            "GPURowRemapFailure", "GPUMissing", "GPUThermalThrottling", "NodeExporterDown", "DCGMExporterDown"]
    names = [r.get("alert") for g in rules["groups"] for r in g["rules"]]
    check(all(n in names for n in required), "the rules carry every alert the issue names")


def textfiles(promtool, work):
    hosts_dir = os.path.join(REPO, "tests", "fixtures", "hosts")
    for host in sorted(os.listdir(hosts_dir)):
        spec = os.path.join(hosts_dir, host, "spec.json")
        if not os.path.isfile(spec) or host.startswith("bench"):
            continue
        dest = os.path.join(work, "sys-" + host)
        with open(spec) as fh:
            build_sysfs.build(json.load(fh), dest)
        facts = gpu_probe.probe(sysfs_root=dest, procfs_root=os.path.join(work, "noproc"), nvml="disabled",
                                nvidia_smi="disabled")
        plan = gpu_plan.build_plan(facts, {"in_container": False})
        text = gpu_textfile.render(facts, plan, "os_tuning: iommu=pt is not active\n", None)
        proc = run(promtool, "check", "metrics", input=text)
        check("gpuops_gpus_on_pci %d\n" % facts["gpu_count"] in text,
              "%s: textfile carries gpuops_gpus_on_pci %d" % (host, facts["gpu_count"]))
        del proc


def nvme_textfiles(promtool):
    """The NVMe health textfile (module_utils/monitoring/nvme_health.py) for a host without NVMe
    drives, one without nvme-cli, and one with a read and a failed drive passes promtool check metrics."""
    good = {"percentage_used": 91, "media_errors": 2, "critical_warning": 0, "available_spare": 100,
            "available_spare_threshold": 10}
    for cli, results in ((True, []), (False, [{"device": "nvme0", "ok": False, "error": "nvme-cli is not installed"}]),
                         (True, [{"device": "nvme0", "ok": True, "values": good},
                                 {"device": "nvme1", "ok": False, "error": "rc 1"}])):
        text = nvme_health.render(cli, results)
        run(promtool, "check", "metrics", input=text)
        check("gpuops_nvme_devices %d\n" % len(results) in text, "NVMe textfile says %d device(s)" % len(results))


def validation_textfile(promtool):
    """gpu_validate's textfile (module_utils/validate/report.py) for the degraded A100 fixture's health
    at PCI depth (driver not loaded: a failing node) passes promtool check metrics."""
    spec = os.path.join(REPO, "tests", "fixtures", "hosts", "a100-pcie-4gpu-degraded", "spec.json")
    with tempfile.TemporaryDirectory() as work:
        with open(spec) as fh:
            build_sysfs.build(json.load(fh), work)
        facts = gpu_probe.probe(sysfs_root=work, procfs_root=os.path.join(work, "noproc"), nvml="disabled",
                                nvidia_smi="disabled")
    checks = [dict(c, group="health") for c in validate_health.health(facts, {}, {})]
    name, dummy = validate_report.verdict(checks)
    text = validate_report.textfile(checks, name, 1700000000, "none")
    run(promtool, "check", "metrics", input=text)
    check('gpuops_validate_ok{device="none"} 0' in text, "validation textfile of a failing node carries ok 0")


def dashboard(promtool, work):
    with open(DASHBOARD) as fh:
        dash = json.load(fh)
    exprs = []
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            exprs.append(target["expr"])
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            exprs.append(re.sub(r"^label_values\((.*), *\w+\)$", r"\1", var["query"]["query"]))
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": "dashboard:query_%d" % i, "expr": e.replace("$node", ".*")} for i, e in enumerate(exprs)]}]}
    path = os.path.join(work, "dashboard.rules.yml")
    with open(path, "w") as fh:
        yaml.safe_dump(rules, fh)
    run(promtool, "check", "rules", path)
    with open(RULES) as fh:
        recorded = set(r["record"] for g in yaml.safe_load(fh)["groups"] for r in g["rules"] if "record" in r)
    known = recorded | set(gpu_textfile.HELP) | {"up", "ALERTS"}
    for expr in exprs:
        for metric in re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{", expr) + re.findall(r"\b(\w+:\w+:\w+)\b", expr):
            ok = (metric in known or metric.startswith("DCGM_FI_") or metric.startswith("node_") or metric in IPMI_METRICS)
            check(ok, "dashboard metric %s is provided by the rules, dcgm-exporter, node_exporter, ipmi_exporter or the "
                      "textfile" % metric)
    check(len(exprs) >= 20, "dashboard has its %d queries checked" % len(exprs))


# ipmi_exporter 1.6.1's series the dashboard may read (its docs/metrics.md; the SEL count under the name the
# 1.6.1 binary registers, ipmi_sel_logs_count)
IPMI_METRICS = {"ipmi_up", "ipmi_fan_speed_rpm", "ipmi_fan_speed_state", "ipmi_temperature_celsius", "ipmi_temperature_state",
                "ipmi_sensor_state", "ipmi_sensor_value", "ipmi_power_watts", "ipmi_dcmi_power_consumption_current_watts",
                "ipmi_sel_logs_count", "ipmi_sel_free_space_bytes", "ipmi_chassis_power_state"}


def main():
    promtool = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        check_config(promtool, work)
        run(promtool, "check", "rules", RULES)
        run(promtool, "test", "rules", TESTS)
        alerts_tested()
        run(promtool, "check", "rules", STORAGE_RULES)
        run(promtool, "test", "rules", STORAGE_TESTS)
        alerts_tested(STORAGE_RULES, STORAGE_TESTS, ["StorageMdArrayDegraded", "StorageNVMeWearHigh", "StorageNVMeMediaErrors",
                                                     "StorageNVMeCriticalWarning", "StorageNVMeSpareLow"])
        nvme_textfiles(promtool)
        run(promtool, "check", "rules", BMC_RULES)
        run(promtool, "test", "rules", BMC_TESTS)
        alerts_tested(BMC_RULES, BMC_TESTS, BMC_ALERTS)
        textfiles(promtool, work)
        validation_textfile(promtool)
        dashboard(promtool, work)
    if FAILED:
        print("promtool stage: %d check(s) FAILED" % len(FAILED))
        return 1
    print("promtool stage: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
