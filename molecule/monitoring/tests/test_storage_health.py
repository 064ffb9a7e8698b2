"""Storage health on the lab nodes (node_exporter_storage_health, on by default): the NVMe health
timer and service the node_exporter role installs, what the service wrote (containers have no
NVMe controller: gpuops_nvme_devices 0, no invented per-device values), the program being the
collection's own nvme_health.py, node_exporter's mdadm collector on, and Prometheus holding
the storage rules. No real NVMe drive or md array exists here: those paths are unit- and
promtool-tested only (docs/support-matrix.md)."""

import os
import time

from test_default import PASSWORD, fetch, name, prom  # pylint: disable=import-error

testinfra_hosts = ["mon-gpu", "mon-pkg", "mon-prom"]

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PROGRAM = "/usr/local/libexec/gpuops/nvme_health.py"
TEXTFILE = "/var/lib/node_exporter/textfile/gpuops_nvme.prom"


def test_timer_enabled_and_service_ran(host):
    timer = host.service("gpuops-nvme-health.timer")
    assert timer.is_enabled and timer.is_running
    show = host.check_output("systemctl show gpuops-nvme-health.service -p Result -p ExecMainStatus -p User "
                             "-p ProtectSystem -p ReadWritePaths -p NoNewPrivileges")
    if "Result=success" not in show:
        print(host.run("journalctl -u gpuops-nvme-health --no-pager -n 50").stdout)
    for line in ("Result=success", "ExecMainStatus=0", "ProtectSystem=strict", "NoNewPrivileges=yes",
                 "ReadWritePaths=/var/lib/node_exporter/textfile"):
        assert line in show.splitlines(), show


def test_the_textfile_says_no_nvme_device(host):
    text = host.file(TEXTFILE)
    assert text.exists and text.user == "root" and text.mode == 0o644
    body = text.content_string
    assert "gpuops_nvme_devices 0\n" in body
    assert "gpuops_nvme_cli_available " in body
    assert "device=" not in body and "gpuops_nvme_percentage_used_percent" not in body


def test_the_program_is_the_collections_nvme_health(host):
    with open(os.path.join(REPO, "plugins", "module_utils", "monitoring", "nvme_health.py")) as fh:
        assert host.file(PROGRAM).content_string == fh.read()
    assert host.file(PROGRAM).mode == 0o755 and host.file(PROGRAM).user == "root"


def test_node_exporter_serves_the_nvme_textfile_and_the_mdadm_collector(host):
    status, body = fetch(host, "https://127.0.0.1:9100/metrics", "prometheus", PASSWORD)
    assert status == 200
    assert "\ngpuops_nvme_devices 0\n" in body
    assert 'node_scrape_collector_success{collector="mdadm"}' in body


def test_prometheus_holds_the_storage_rules_and_the_nvme_facts(host):
    if name(host) != "mon-prom":
        return
    rules = [r["name"] for g in prom(host, "/api/v1/rules")["groups"] for r in g["rules"]]
    for alert in ("StorageMdArrayDegraded", "StorageNVMeWearHigh", "StorageNVMeMediaErrors",
                  "StorageNVMeCriticalWarning", "StorageNVMeSpareLow", "StorageNVMeHealthUnreadable"):
        assert alert in rules
    nodes = set()
    for dummy in range(30):
        nodes = set(r["metric"]["node"] for r in prom(host, "/api/v1/query?query=gpuops_nvme_devices")["result"])
        if len(nodes) == 3:
            break
        time.sleep(2)
    assert nodes == {"mon-gpu", "mon-pkg", "mon-prom"}
