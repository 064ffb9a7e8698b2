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
    # the route of a run: the registry's check of the inputs (core/input_checks.py) before any
    # change, then the decision, which checks only what needs the host's platform and state
    problems = node_exporter.input_problems(inputs)
    result = {"errors": problems} if problems else \
        node_exporter.decide(inputs, case.get("platform", DEBIAN), "gpu-01", case.get("arch", "x86_64"))
    if "errors" in case:
        assert len(result["errors"]) == len(case["errors"]), result["errors"]
        for want, got in zip(case["errors"], result["errors"]):
            assert want in got
        return
    assert result["errors"] == []
    for path, want in case["expect"].items():
        assert dig(result, path) == want, path


HTTPS_AUTH = {"listen_address": ":9100", "tls_cert_file": "/etc/node_exporter/tls.crt",
              "tls_key_file": "/etc/node_exporter/tls.key", "basic_auth_users": {"prometheus": "s3cret"}}
PEM_OK = {"/etc/node_exporter/tls.crt": {"exists": True, "pem": "certificate"},
          "/etc/node_exporter/tls.key": {"exists": True, "pem": "private key"}}


def _hash(node=None, host="gpu-01", users=None):
    inputs = dict(DEFAULTS, **HTTPS_AUTH)
    if users:
        inputs["basic_auth_users"] = users
    result = node_exporter.decide(inputs, DEBIAN, host, "x86_64", dict({"files": PEM_OK}, **(node or {})))
    assert result["errors"] == []
    return result["web_config"]["basic_auth_users"]["prometheus"]


def test_basic_auth_hashes_have_a_random_salt():
    """Issue 19: the salt was sha256(host|user|password), so one SHA-256 tested a guess."""
    first, again, other = _hash(), _hash(), _hash(host="gpu-02")
    assert first.startswith("$2b$")
    assert bcrypt.checkpw(b"s3cret", first.encode())
    assert not bcrypt.checkpw(b"wrong", first.encode())
    assert first != again, "the salt must be random, not derived from host, user and password"
    assert first != other
    assert "s3cret" not in first
    assert not hasattr(node_exporter, "bcrypt_salt"), "no salt may be derived from known values"


def test_the_hash_on_the_host_is_kept_while_it_verifies():
    on_host = bcrypt.hashpw(b"s3cret", bcrypt.gensalt(4)).decode()
    assert _hash({"hashes": {"prometheus": on_host}}) == on_host, "idempotence: a hash that verifies is kept"
    changed = _hash({"hashes": {"prometheus": on_host}}, users={"prometheus": "n3w"})
    assert changed != on_host and bcrypt.checkpw(b"n3w", changed.encode())


@pytest.mark.parametrize("current", [{}, {"prometheus": "plain-text"}, {"prometheus": 42}, {"other": "$2b$04$x"},
                                     {"prometheus": "$2b$04$" + "." * 53}, "not a dict", None])
def test_an_unusable_hash_on_the_host_gets_a_new_one(current):
    got = _hash({"hashes": current})
    assert bcrypt.checkpw(b"s3cret", got.encode())


ROLE_SHAPE = {"uid": 998, "gecos": "", "home": "/nonexistent", "shell": "/usr/sbin/nologin"}
ACCOUNTS = [
    # (name, account on the host, previous status, error expected)
    ("absent: the role creates it", None, None, None),
    ("created by the role (comment)", dict(ROLE_SHAPE, gecos=node_exporter.ACCOUNT_COMMENT), None, None),
    ("created by an earlier version of the role", ROLE_SHAPE, {"run": True}, None),
    ("root", {"uid": 0, "gecos": "root", "home": "/root", "shell": "/bin/bash"}, None, "not created by this role"),
    ("www-data", {"uid": 33, "gecos": "www-data", "home": "/var/www", "shell": "/usr/sbin/nologin"}, {"run": True},
     "not created by this role"),
    ("nobody", {"uid": 65534, "gecos": "nobody", "home": "/nonexistent", "shell": "/usr/sbin/nologin"}, None,
     "not created by this role"),
    ("same shape, but the role never ran here", ROLE_SHAPE, None, "not created by this role"),
    ("uid 0 with the role's shape", dict(ROLE_SHAPE, uid=0), {"run": True}, "not created by this role"),
]


@pytest.mark.parametrize("name,account,status,error", ACCOUNTS, ids=[a[0] for a in ACCOUNTS])
def test_an_existing_account_is_not_taken_over(name, account, status, error):
    node = {"account": account, "status": status}
    result = node_exporter.decide(dict(DEFAULTS), DEBIAN, "gpu-01", "x86_64", node)
    if error is None:
        assert result["errors"] == [], name
        assert result["account"]["comment"] == node_exporter.ACCOUNT_COMMENT
    else:
        assert len(result["errors"]) == 1 and result["errors"][0].startswith("node_exporter_user: ")
        assert error in result["errors"][0]


@pytest.mark.parametrize("files,error", [
    ({}, None),
    ({"/etc/node_exporter/tls.crt": {"exists": False, "pem": None}}, "node_exporter_tls_cert_file: "),
    ({"/etc/node_exporter/tls.key": {"exists": True, "pem": None}}, "node_exporter_tls_key_file: "),
    ({"/etc/node_exporter/tls.crt": {"exists": True, "pem": "private key"}}, "node_exporter_tls_cert_file: "),
    ({"/etc/node_exporter/tls.key": {"exists": True, "pem": "unreadable"}}, None),
], ids=["both-parse", "cert-missing", "key-not-pem", "cert-is-a-key", "not-readable-by-this-user"])
def test_tls_files_are_checked_before_the_restart(files, error):
    inputs = dict(DEFAULTS, listen_address=":9100", tls_cert_file="/etc/node_exporter/tls.crt",
                  tls_key_file="/etc/node_exporter/tls.key")
    result = node_exporter.decide(inputs, DEBIAN, "gpu-01", "x86_64", {"files": dict(PEM_OK, **files)})
    if error is None:
        assert result["errors"] == []
    else:
        assert len(result["errors"]) == 1 and result["errors"][0].startswith(error)


def test_every_default_collector_is_known():
    for name in ("cpu", "diskstats", "filesystem", "meminfo", "netdev", "textfile", "hwmon", "nvme", "systemd"):
        assert name in node_exporter.KNOWN_COLLECTORS
