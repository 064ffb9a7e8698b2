"""What the node_exporter role reads on the host (module_utils/monitoring/node_exporter_host.py)."""
import collections
import json
import os

import bcrypt
import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_host as host

Pw = collections.namedtuple("Pw", "pw_uid pw_gid pw_gecos pw_dir pw_shell")
# The reader checks the PEM framing and that the body is base64 (what node_exporter fails on
# first); these bodies are short base64, not real keys.
CERT = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUb2s=\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgE=\n-----END PRIVATE KEY-----\n"
EC_KEY = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIA==\n-----END EC PRIVATE KEY-----\n"


def getpwnam(name):
    if name == "node-exp":
        return Pw(998, 998, "gpuops.dlserver node_exporter", "/nonexistent", "/usr/sbin/nologin")
    raise KeyError(name)


def test_hashes_of_what_the_role_writes():
    h1 = bcrypt.hashpw(b"a", bcrypt.gensalt(4)).decode()
    h2 = bcrypt.hashpw(b"b", bcrypt.gensalt(4)).decode()
    text = yaml.safe_dump({"basic_auth_users": {"ops": h2, "prometheus": h1},
                           "tls_server_config": {"cert_file": "/c", "key_file": "/k"}}, indent=2)
    assert host.hashes(text) == {"ops": h2, "prometheus": h1}
    assert host.hashes("basic_auth_users:\n  prometheus: '%s'\n" % h1) == {"prometheus": h1}


@pytest.mark.parametrize("text", [None, "", "not: [yaml", "root:x:0:0:root:/root:/bin/bash\n",
                                  "basic_auth_users:\n  prometheus: plain\n"])
def test_no_hashes_in_other_text(text):
    assert host.hashes(text) == {}


@pytest.mark.parametrize("text,kind", [(CERT, "certificate"), (KEY, "private key"), (EC_KEY, "private key"),
                                       ("", None), ("garbage", None), (CERT.replace("MIIB", "M!IB"), None),
                                       (CERT.replace("END CERTIFICATE", "END KEY"), None)])
def test_pem_kind(text, kind):
    assert host.pem_kind(text) == kind


def test_read(tmp_path):
    h1 = bcrypt.hashpw(b"a", bcrypt.gensalt(4)).decode()
    web = tmp_path / "web-config.yml"
    web.write_text("basic_auth_users:\n  prometheus: %s\n" % h1)
    status = tmp_path / "status.json"
    status.write_text(json.dumps({"run": True, "user": "node-exp"}))
    (tmp_path / "c.pem").write_text(CERT)
    (tmp_path / "k.pem").write_text("not a key")
    (tmp_path / "locked.pem").write_text(KEY)
    (tmp_path / "locked.pem").chmod(0)
    tls = [str(tmp_path / "c.pem"), str(tmp_path / "k.pem"), str(tmp_path / "missing.pem")]
    if os.geteuid() != 0:
        tls.append(str(tmp_path / "locked.pem"))
    got = host.read("node-exp", str(web), str(status), tls, getpwnam=getpwnam)
    assert got["account"]["gecos"] == "gpuops.dlserver node_exporter" and got["account"]["uid"] == 998
    assert got["hashes"] == {"prometheus": h1}
    assert got["status"] == {"run": True, "user": "node-exp"}
    assert got["files"] == {tls[0]: {"exists": True, "pem": "certificate"}, tls[1]: {"exists": True, "pem": None},
                            tls[2]: {"exists": False, "pem": None},
                            **({tls[3]: {"exists": True, "pem": "unreadable"}} if len(tls) > 3 else {})}


def test_read_a_fresh_host(tmp_path):
    got = host.read("node-exp2", str(tmp_path / "none.yml"), str(tmp_path / "none.json"), [], getpwnam=getpwnam)
    assert got == {"account": None, "hashes": {}, "status": None, "files": {}}
    (tmp_path / "bad.json").write_text("[1, 2")
    assert host.read("x", "", str(tmp_path / "bad.json"), [], getpwnam=getpwnam)["status"] is None


@pytest.mark.parametrize("name,ok", [
    ("prometheus-node-exporter", True), ("libstdc++6", True), ("node-exporter\n", False),
    ("prometheus-node-exporter; rm -rf /", False), ("-x", False), ("", False), ("Node", False),
])
def test_package_name_is_checked_whole_before_dpkg_query_sees_it(name, ok):
    assert bool(host.PACKAGE_RE.fullmatch(name)) is ok
