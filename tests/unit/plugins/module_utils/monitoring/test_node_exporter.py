"""node_exporter role decisions (module_utils/node_exporter.py), from data/node_exporter_cases.yml."""
import os

import bcrypt
import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter

HERE = os.path.dirname(os.path.dirname(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
with open(os.path.join(HERE, "data", "node_exporter_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
with open(os.path.join(REPO, "roles", "node_exporter", "defaults", "main.yml")) as _fh:
    DEFAULTS = dict((k[len("node_exporter_"):], v) for k, v in yaml.safe_load(_fh).items())
DEBIAN = {"name": "Debian 12", "package": "prometheus-node-exporter",
          "package_binary": "/usr/bin/prometheus-node-exporter", "package_service": "prometheus-node-exporter"}


def dig(data, path):
    for key in path.split("."):
        data = data[key] if data is not None else None
    return data


@pytest.mark.parametrize("case", CASES["listen_address"], ids=[c["value"] or "empty" for c in CASES["listen_address"]])
def test_listen_address(case):
    if "error" in case:
        with pytest.raises(ValueError) as err:
            node_exporter.parse_listen_address(case["value"])
        assert case["error"] in str(err.value)
        assert str(err.value).startswith("node_exporter_listen_address: ")
    else:
        assert node_exporter.parse_listen_address(case["value"]) == (case["host"], case["port"])


@pytest.mark.parametrize("case", CASES["decide"], ids=[c["name"] for c in CASES["decide"]])
def test_decide(case):
    inputs = dict(DEFAULTS, **case.get("inputs", {}))
    result = node_exporter.decide(inputs, case.get("platform", DEBIAN), "gpu-01", case.get("arch", "x86_64"))
    if "errors" in case:
        assert len(result["errors"]) == len(case["errors"]), result["errors"]
        for want, got in zip(case["errors"], result["errors"]):
            assert want in got
        return
    assert result["errors"] == []
    for path, want in case["expect"].items():
        assert dig(result, path) == want, path


def test_basic_auth_hashes_verify_and_are_stable_per_host():
    inputs = dict(DEFAULTS, basic_auth_users={"prometheus": "s3cret"})
    first = node_exporter.decide(inputs, DEBIAN, "gpu-01", "x86_64")["web_config"]["basic_auth_users"]["prometheus"]
    again = node_exporter.decide(inputs, DEBIAN, "gpu-01", "x86_64")["web_config"]["basic_auth_users"]["prometheus"]
    other = node_exporter.decide(inputs, DEBIAN, "gpu-02", "x86_64")["web_config"]["basic_auth_users"]["prometheus"]
    assert first.startswith("$2b$10$")
    assert bcrypt.checkpw(b"s3cret", first.encode())
    assert not bcrypt.checkpw(b"wrong", first.encode())
    assert first == again, "the same host must get the same hash (idempotence)"
    assert first != other, "another host gets another salt"
    assert "s3cret" not in first


def test_every_salt_is_valid_for_bcrypt():
    for seed in range(200):
        salt = node_exporter.bcrypt_salt(str(seed))
        assert len(salt) == 22
        node_exporter.hash_password("pw", str(seed), rounds=4)


@pytest.mark.parametrize("arg,quoted", [
    ("--a=b", "--a=b"), ("x y", '"x y"'), ('a"b', '"a\\"b"'), ("100%", "100%%"), ("$HOME", "$$HOME"),
    ("a\\b", '"a\\\\b"'), ("", '""')])
def test_systemd_quote(arg, quoted):
    assert node_exporter.systemd_quote(arg) == quoted


def test_every_default_collector_is_known():
    for name in ("cpu", "diskstats", "filesystem", "meminfo", "netdev", "textfile", "hwmon", "nvme", "systemd"):
        assert name in node_exporter.KNOWN_COLLECTORS
