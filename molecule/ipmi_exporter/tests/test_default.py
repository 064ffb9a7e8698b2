"""Verify gpuops.dlserver.ipmi_exporter against OpenIPMI's simulated BMCs (lab/lab.py bmc-sim).

ipmi-mon runs Debian's prometheus-ipmi-exporter in remote mode and Debian's prometheus. The BMCs
(molecule.yml): bmc-a (172.30.99.101, ipmi-node-a) has a failed fan, bmc-b (.102, ipmi-node-b) a hot
inlet, bmc-c (.103, ipmi-mon) refuses the module's password. Expected values are written here, not read
from the role's records.
"""

import json
import os
import shlex
import time

import pytest

testinfra_hosts = ["ipmi-mon", "ipmi-node-a", "ipmi-node-b"]

PASSWORDS = ("Lab.ipmi-pw7", "Other.pw-9")
BMC = {"ipmi-node-a": "172.30.99.101", "ipmi-node-b": "172.30.99.102", "ipmi-mon": "172.30.99.103"}
EXPORTER = "http://127.0.0.1:9290"


def test_no_password_in_the_scenario_output_diffs_or_fleet_summary():
    # side_effect's last play copied the log of every playbook so far: testinfra's own commands (the greps
    # below name the passwords) are logged to the same file once verify runs
    eph = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
    logs = [os.path.join(eph, "scenario-output.log"), os.path.join(eph, "fleet-summary.json")]
    assert os.path.getsize(logs[0]) > 0 and "GPUOPS FLEET SUMMARY" in open(logs[0]).read()
    assert "ipmi-node-a" in open(logs[1]).read()
    for path in logs:
        with open(path) as fh:
            text = fh.read()
        for secret in PASSWORDS:
            assert secret not in text, "%s holds a BMC password" % path


def on_mon(host):
    if host.backend.get_hostname() != "ipmi-mon":
        pytest.skip("the exporter and Prometheus run on ipmi-mon")


def get(host, url):
    """The body of a GET from ipmi-mon itself ('' where it did not answer 200)."""
    script = ("import sys,urllib.request\ntry: print(urllib.request.urlopen(sys.argv[1], timeout=60).read().decode())\n"
              "except Exception as exc: print('ERROR %s' % exc)")
    return host.check_output("python3 -c %s %s" % (shlex.quote(script), shlex.quote(url)))


def series(text, metric):
    """{labels: value} of one metric in an exposition text."""
    found = {}
    for line in text.splitlines():
        if line.startswith(metric + "{"):
            labels, value = line[len(metric):].rsplit(" ", 1)
            found[labels] = float(value)
    return found


def eventually(check, seconds=120):
    deadline = time.time() + seconds
    result = check()
    while not result and time.time() < deadline:
        time.sleep(3)
        result = check()
    return result


def test_the_exporter_runs_sandboxed_with_its_credentials_in_one_file(host):
    on_mon(host)
    svc = host.service("prometheus-ipmi-exporter")
    if not svc.is_running:
        print(host.run("journalctl -u prometheus-ipmi-exporter --no-pager -n 50").stdout)
    assert svc.is_running and svc.is_enabled
    config = host.file("/etc/ipmi_exporter/config.yml")
    assert (config.user, config.group, config.mode) == ("root", "ipmi-exporter", 0o640)
    assert host.file("/etc/ipmi_exporter").mode == 0o750
    assert config.contains("opensesspriv")
    unit = host.run("systemctl show -p ExecStart -p User prometheus-ipmi-exporter").stdout
    assert "--config.file=/etc/ipmi_exporter/config.yml" in unit and "User=ipmi-exporter" in unit
    assert not any(p in unit for p in PASSWORDS)


@pytest.mark.parametrize("node", ["ipmi-node-a", "ipmi-node-b"])
def test_a_good_bmc_answers_every_collector(host, node):
    on_mon(host)
    text = get(host, "%s/ipmi?target=%s&module=default" % (EXPORTER, BMC[node]))
    up = series(text, "ipmi_up")
    assert up and all(v == 1.0 for v in up.values()), text[:2000]
    sel = [float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith("ipmi_sel_logs_count")]
    assert sel == [2.0 if node == "ipmi-node-a" else 0.0], sel


def test_the_failed_fan_and_the_hot_inlet_are_critical_where_they_are(host):
    on_mon(host)
    a = get(host, "%s/ipmi?target=%s&module=default" % (EXPORTER, BMC["ipmi-node-a"]))
    b = get(host, "%s/ipmi?target=%s&module=default" % (EXPORTER, BMC["ipmi-node-b"]))
    assert list(series(a, "ipmi_fan_speed_state").values()) == [2.0]
    assert list(series(b, "ipmi_fan_speed_state").values()) == [0.0]
    assert list(series(a, "ipmi_temperature_state").values()) == [0.0]
    assert list(series(b, "ipmi_temperature_state").values()) == [2.0]
    for text in (a, b):   # the healthy PSU pair
        psu = {k: v for k, v in series(text, "ipmi_sensor_state").items() if 'type="Power Supply"' in k}
        assert len(psu) == 2 and set(psu.values()) == {0.0}, psu


def test_the_bmc_that_refuses_the_password_is_one_line(host):
    on_mon(host)
    text = get(host, "%s/ipmi?target=%s&module=default" % (EXPORTER, BMC["ipmi-mon"]))
    up = series(text, "ipmi_up")
    assert up and set(up.values()) == {0.0}, text[:2000]
    status = json.loads(host.file("/etc/gpuops/ipmi_exporter.json").content_string)
    lines = status["bmcs"]
    assert len(lines) == 3, lines
    refused = [line for line in lines if BMC["ipmi-mon"] in line]
    assert len(refused) == 1 and "ipmi_up 0" in refused[0], lines
    assert all("every collector answers" in line for line in lines if BMC["ipmi-mon"] not in line), lines


def _prom(host, path):
    body = get(host, "http://127.0.0.1:9090" + path)
    assert not body.startswith("ERROR"), body
    return json.loads(body)["data"]


def test_prometheus_alerts_on_the_failed_fan_of_that_node_only(host):
    on_mon(host)

    def targets():
        active = _prom(host, "/api/v1/targets")["activeTargets"]
        return sorted((t["labels"].get("node"), t["health"]) for t in active if t["labels"]["job"] == "ipmi_exporter")
    assert eventually(lambda: targets() == [("ipmi-mon", "up"), ("ipmi-node-a", "up"), ("ipmi-node-b", "up")]), targets()

    def firing(alert):
        return sorted((a["labels"]["node"], a["state"]) for a in _prom(host, "/api/v1/alerts")["alerts"]
                      if a["labels"]["alertname"] == alert)
    fan = eventually(lambda: firing("BMCFanFailed"))
    assert [node for node, _state in fan] == ["ipmi-node-a"], fan
    assert fan[0][1] in ("pending", "firing")
    assert [node for node, _s in eventually(lambda: firing("BMCTemperatureCritical"))] == ["ipmi-node-b"]
    assert firing("BMCPowerSupplyFailure") == []


def _sel(record):
    return [c for c in record["checks"] if c["group"] == "sel"]


def test_gpu_validate_reads_the_sel_over_the_lan_once(host):
    first = json.loads(host.file("/root/validate-first.json").content_string)
    second = json.loads(host.file("/etc/gpuops/validate.json").content_string)
    node = host.backend.get_hostname()
    if node == "ipmi-node-a":   # bmc-a: a correctable and an uncorrectable memory ECC entry
        check = _sel(first)[0]
        assert (check["check"], check["status"], check["value"]) == ("sel_memory", "fail", 2), check
        assert "1 x Uncorrectable ECC" in check["reason"] and "1 x Correctable ECC" in check["reason"], check
        assert first["verdict"] == "fail"
        assert second["sel"]["id"] == "2" and second["verdict"] == "pass", second
        again = _sel(second)[0]
        assert again["status"] == "pass" and again["reason"].startswith("0 SEL entries since the last validation")
    elif node == "ipmi-node-b":  # bmc-b: an empty SEL
        assert [(c["check"], c["status"]) for c in _sel(first)] == [("sel", "pass")]
        assert [(c["check"], c["status"]) for c in _sel(second)] == [("sel", "pass")]
    else:                        # bmc-c refuses the password: unknown, one line, never a pass
        check = _sel(second)[0]
        assert check["status"] == "skip" and check["value"] == "unknown", check
        assert "could not read the SEL" in check["reason"] and "password invalid" in check["reason"], check
    # the read leaves nothing behind: its config file and FreeIPMI's SDR cache lived in one removed directory
    assert not host.file("/root/.freeipmi").exists
    assert host.run("find /tmp /var/tmp -maxdepth 1 -name 'gpuops-sel-*'").stdout == ""


def test_no_password_in_any_file_or_journal_of_the_nodes(host):
    for secret in PASSWORDS:
        found = host.run("grep -rlF -- %s /etc/gpuops /var/log /etc/systemd /run/systemd/transient 2>/dev/null; "
                         "journalctl --no-pager -o cat | grep -cF -- %s" % (shlex.quote(secret), shlex.quote(secret)))
        assert found.stdout.split() == ["0"], found.stdout
    if host.backend.get_hostname() == "ipmi-mon":   # the one place it belongs
        assert host.file("/etc/ipmi_exporter/config.yml").contains(PASSWORDS[0])


def test_the_bmc_power_cycled_the_node_that_did_not_come_back():
    eph = os.environ["MOLECULE_EPHEMERAL_DIRECTORY"]
    with open(os.path.join(eph, "bmc-recovery.json")) as fh:
        text = fh.read()
    report = json.loads(text)
    assert report["power_cycled"] is True and report["back"] is True, report
    assert not any(secret in text for secret in PASSWORDS)
    state = os.environ.get("GPUOPS_LAB_STATE") or os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], ".cache", "lab")
    with open(os.path.join(state, "bmc-sim", "bmc-b", "power.log")) as fh:
        sets = [line.split(" ", 1)[1] for line in fh.read().splitlines() if " set " in " " + line.split(" ", 1)[1]]
    # the reboot stopped the container (not the BMC); the recovery powered it on (pyghmi may repeat the
    # request): no power off, no reset through the BMC
    assert sets and set(sets) == {"set power 1"}, sets
