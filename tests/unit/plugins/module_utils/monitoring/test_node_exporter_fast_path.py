"""The converged fast path of the node_exporter role: the unit and web configuration rendered in
Python (byte for byte what the template / to_nice_yaml wrote), the decision
node_exporter.fast_path (data/node_exporter_fast_path_cases.yml, drift cases included) and the
host read node_exporter_host.state on real files (edited, re-owned, re-moded: not current)."""
import collections
import os

import bcrypt
import pytest
import yaml
from ansible.plugins.filter.core import to_nice_yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_host as host
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_storage

HERE = os.path.dirname(os.path.dirname(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
with open(os.path.join(HERE, "data", "node_exporter_fast_path_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
with open(os.path.join(REPO, "roles", "node_exporter", "defaults", "main.yml")) as _fh:
    DEFAULTS = dict((k[len("node_exporter_"):], v) for k, v in yaml.safe_load(_fh).items())
DEBIAN = {"name": "Debian 12", "package": "prometheus-node-exporter",
          "package_binary": "/usr/bin/prometheus-node-exporter", "package_service": "prometheus-node-exporter"}
GR = collections.namedtuple("Gr", "gr_gid")


def _files(inputs):
    path = {"exists": True, "pem": None}
    return {inputs.get("tls_cert_file"): dict(path, pem="certificate"),
            inputs.get("tls_key_file"): dict(path, pem="private key")}


def converged_node(decision, inputs):
    """A read of a host the role converged: what node_exporter_host returns there."""
    gid = 998
    return {
        "account": {"uid": 998, "gid": gid, "gecos": node_exporter.ACCOUNT_COMMENT, "home": "/nonexistent",
                    "shell": "/usr/sbin/nologin"},
        "hashes": dict((decision["web_config"] or {}).get("basic_auth_users") or {}),
        "status": None, "files": _files(inputs),
        "package": {"name": "prometheus-node-exporter", "version": "1.5.0-1+b6"},
        "state": {
            "gid": gid,
            "directories": {inputs["config_dir"]: True, inputs["textfile_dir"]: True},
            "web_config": {"exists": decision["web_config"] is not None, "attributes": decision["web_config"] is not None,
                           "content": decision["web_config_content"]},
            "dropin_dir": True if decision["source"] == "package" else None,
            "unit_file": True,
            "release": {"binary": True, "link": True, "checksum": decision["release"]["checksum"]}
            if decision["source"] == "release" else None,
            "textfile": {"current": True, "gpus_on_pci": 2 if inputs["gpu_textfile"] else None},
            "service": {"UnitFileState": "enabled", "ActiveState": "active", "NeedDaemonReload": "no"},
            "storage": {"program": True, "service_file": True, "timer_file": True, "textfile": True,
                        "timer": {"UnitFileState": "enabled", "ActiveState": "active", "NeedDaemonReload": "no"}}
            if inputs["storage_health"] else {"absent": True},
            "scrape": {"status": 200, "build_info": True, "gpus_on_pci": 2 if inputs["gpu_textfile"] else None,
                       "anonymous_status": 401 if inputs.get("basic_auth_users") else None},
        },
    }


def _set(data, dotted, value):
    keys = dotted.split(".")
    for key in keys[:-1]:
        data = data[key]
    data[keys[-1]] = value


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_fast_path(case):
    inputs = dict(DEFAULTS, source=case["source"], **case.get("inputs", {}))
    decision = node_exporter.decide(inputs, DEBIAN, "gpu-01", "x86_64", {"files": _files(inputs)})
    node = converged_node(decision, inputs)
    for key, value in (case.get("node") or {}).items():
        _set(node, key, value)
    # The decision reads the same hashes back: the web configuration is rendered the same.
    result = node_exporter.decide(inputs, DEBIAN, "gpu-01", "x86_64", node)
    assert result["converged"] is case.get("converged", False)
    assert result["drift"] == case.get("drift", [])


@pytest.mark.parametrize("source", ["release", "package"])
def test_unit_text_is_what_the_template_wrote(source):
    """data/node_exporter_units/<source>.service: the output of the role's former template
    (node_exporter.service.j2, rendered by ansible.builtin.template) for the same values."""
    with open(os.path.join(HERE, "data", "node_exporter_units", source + ".service")) as fh:
        expected = fh.read()
    line = "/usr/local/bin/node_exporter --web.listen-address=0.0.0.0:9100 '--x=a b'"
    assert node_exporter.unit_text(source, "1.9.1", line, "node-exp", "node-exp") == expected


def test_layout_is_what_decide_writes():
    inputs = dict(DEFAULTS, source="release", enabled_collectors=["systemd"])
    decision = node_exporter.decide(inputs, DEBIAN, "gpu-01", "x86_64")
    lay = node_exporter.layout(inputs, DEBIAN, "x86_64")
    for key in ("binary", "link", "service", "unit_file", "unit_content", "exec_start_line", "verify", "listen"):
        assert lay[key] == decision[key]
    assert "--collector.systemd" in lay["unit_content"]
    with pytest.raises(ValueError):
        node_exporter.layout(dict(inputs, listen_address="9100"), DEBIAN, "x86_64")


def test_web_config_text_is_to_nice_yaml():
    config = {"tls_server_config": {"cert_file": "/etc/x.crt", "key_file": "/etc/x.key"},
              "basic_auth_users": {"zed": bcrypt.hashpw(b"a", bcrypt.gensalt(4)).decode(), "prom": "$2b$10$x"}}
    assert node_exporter.web_config_text(config) == to_nice_yaml(config, indent=2)


class _Tagged(str):
    """What the controller passes: a subclass of str (ansible-core's tagged strings)."""


def test_web_config_text_takes_the_controllers_strings():
    config = {_Tagged("basic_auth_users"): {_Tagged("prometheus"): _Tagged("$2b$10$x")}}
    assert node_exporter.web_config_text(config) == "basic_auth_users:\n  prometheus: $2b$10$x\n"


# --- the host read, on real files -------------------------------------------------------------

def _layout(tmp_path, source="package", **inputs):
    inputs = dict(DEFAULTS, source=source, config_dir=str(tmp_path / "etc"), textfile_dir=str(tmp_path / "tf"),
                  install_dir=str(tmp_path / "opt"), **inputs)
    lay = node_exporter.layout(inputs, DEBIAN, "x86_64")
    lay["unit_file"] = str(tmp_path / "unit" / "gpuops.conf")
    if source == "release":
        lay["link"] = str(tmp_path / "node_exporter")
    storage = lay["storage"]
    for key in ("program", "service_file", "timer_file"):
        storage[key] = str(tmp_path / "storage" / os.path.basename(storage[key]))
    return lay


GPU = {"gpu_count": 1, "gpus": [{"pci_bus_id": "0000:01:00.0", "name": "H100"}], "driver": {"loaded": False}}
PLAN = {"roles": {"node_exporter": {"run": True}}}


def _converge(tmp_path, lay):
    from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import gpu_textfile
    for d in lay["directories"]:
        os.makedirs(d)
        os.chmod(d, 0o755)
    os.makedirs(os.path.dirname(lay["unit_file"]))
    os.chmod(os.path.dirname(lay["unit_file"]), 0o755)
    with open(lay["unit_file"], "w") as fh:
        fh.write(lay["unit_content"])
    os.chmod(lay["unit_file"], 0o644)
    with open(lay["textfile"], "w") as fh:
        fh.write(gpu_textfile.render(GPU, PLAN, None, None))
    os.chmod(lay["textfile"], 0o644)
    storage = lay["storage"]
    os.makedirs(os.path.dirname(storage["program"]))
    for key, content, mode in (("program", node_exporter_storage.program_source(), 0o755),
                               ("service_file", storage["service_content"], 0o644),
                               ("timer_file", storage["timer_content"], 0o644),
                               ("textfile", "gpuops_nvme_devices 0\n", 0o644)):
        with open(storage[key], "w") as fh:
            fh.write(content)
        os.chmod(storage[key], mode)


ROOT = (os.getuid(), os.getgid())
SERVED = "node_exporter_build_info{version=\"1.5.0\"} 1\ngpuops_gpus_on_pci 1\n"


def _state(tmp_path, lay, scrape=None, show=None, getgrnam=None):
    """The read, with the test's user standing for root and the test's group for node-exp."""
    return host.state(lay, GPU, PLAN, True, str(tmp_path / "none"), str(tmp_path / "none.json"),
                      show=show or (lambda s: "UnitFileState=enabled\nActiveState=active\nNeedDaemonReload=no\n"),
                      scrape=scrape or (lambda url, auth: (200, SERVED)),
                      getgrnam=getgrnam or (lambda name: GR(ROOT[1])), root=ROOT)


def _decide(lay_inputs, node, lay):
    return node_exporter.fast_path({"storage": lay["storage"], "source": "package", "binary": "/usr/bin/prometheus-node-exporter",
                                    "link": None, "web_config": None, "web_config_content": None,
                                    "unit_file": "u", "service": "prometheus-node-exporter",
                                    "verify": {"url": "http://127.0.0.1:9100/metrics", "basic_auth": False}},
                                   lay_inputs, node)


def _node(state):
    return {"account": {"gid": ROOT[1], "gecos": node_exporter.ACCOUNT_COMMENT, "home": "/nonexistent",
                        "shell": "/usr/sbin/nologin"}, "package": {"version": "1.5.0"}, "state": state}


INPUTS = dict(DEFAULTS, source="package")


def test_state_of_a_converged_host(tmp_path):
    lay = _layout(tmp_path)
    _converge(tmp_path, lay)
    state = _state(tmp_path, lay)
    assert all(state["directories"].values()) and state["unit_file"] and state["dropin_dir"]
    assert state["textfile"] == {"current": True, "gpus_on_pci": 1}
    assert state["web_config"] == {"exists": False, "attributes": False, "content": None}
    assert state["scrape"] == {"status": 200, "build_info": True, "gpus_on_pci": 1, "anonymous_status": None}
    inputs = dict(INPUTS, config_dir=lay["directories"][0], textfile_dir=lay["directories"][1])
    assert _decide(inputs, _node(state), lay) == {"converged": True, "drift": []}


def _edit(path):
    with open(path, "a") as fh:
        fh.write("# edited\n")


@pytest.mark.parametrize("drift, what", [
    (lambda lay: _edit(lay["unit_file"]), "unit"),
    (lambda lay: os.chmod(lay["unit_file"], 0o666), "unit"),
    (lambda lay: os.chmod(lay["directories"][1], 0o777), "directory"),
    (lambda lay: _edit(lay["textfile"]), "textfile"),
    (lambda lay: os.chmod(lay["textfile"], 0o600), "textfile"),
    (lambda lay: os.unlink(lay["textfile"]), "textfile"),
    (lambda lay: open(lay["web_config_file"], "w").close(), "web configuration (to remove)"),
    (lambda lay: _edit(lay["storage"]["program"]), "storage health program"),
    (lambda lay: os.chmod(lay["storage"]["program"], 0o644), "storage health program"),
    (lambda lay: _edit(lay["storage"]["service_file"]), "storage health service_file"),
    (lambda lay: os.unlink(lay["storage"]["textfile"]), "storage health textfile"),
])
def test_state_sees_drift(tmp_path, drift, what):
    lay = _layout(tmp_path)
    _converge(tmp_path, lay)
    drift(lay)
    inputs = dict(INPUTS, config_dir=lay["directories"][0], textfile_dir=lay["directories"][1])
    result = _decide(inputs, _node(_state(tmp_path, lay)), lay)
    assert not result["converged"] and any(d.startswith(what) for d in result["drift"])


def test_state_sees_another_owner(tmp_path):
    """The role's group resolves to another gid than the directories carry: not current."""
    lay = _layout(tmp_path)
    _converge(tmp_path, lay)
    state = _state(tmp_path, lay, getgrnam=lambda name: GR(ROOT[1] + 1))
    assert not any(state["directories"].values())

    def no_group(name):
        raise KeyError(name)

    missing = _state(tmp_path, lay, getgrnam=no_group)
    assert missing["gid"] is None and not any(missing["directories"].values())


def test_state_of_a_release(tmp_path):
    lay = _layout(tmp_path, source="release")
    _converge(tmp_path, lay)
    assert _state(tmp_path, lay)["release"] == {"binary": False, "link": False, "checksum": None}
    os.makedirs(os.path.dirname(lay["binary"]))
    with open(lay["binary"], "w") as fh:
        fh.write("#!/bin/sh\n")
    os.chmod(lay["binary"], 0o755)
    os.symlink("/elsewhere/node_exporter", lay["link"])
    assert _state(tmp_path, lay)["release"] == {"binary": True, "link": False, "checksum": None}
    os.unlink(lay["link"])
    os.symlink(lay["binary"], lay["link"])
    with open(lay["release"]["checksum_file"], "w") as fh:
        fh.write("sha256:abc\n")
    assert _state(tmp_path, lay)["release"] == {"binary": True, "link": True, "checksum": "sha256:abc"}


def test_state_scrapes_only_a_running_service_and_checks_anonymous_access(tmp_path):
    calls = []
    lay = _layout(tmp_path, tls_cert_file="/c", tls_key_file="/k", basic_auth_users={"prometheus": "s"})
    _converge(tmp_path, lay)

    def scrape(url, auth):
        calls.append((url, auth))
        return (200, SERVED) if auth else (401, "")
    state = _state(tmp_path, lay, scrape=scrape)
    assert calls == [("https://127.0.0.1:9100/metrics", True), ("https://127.0.0.1:9100/metrics", False)]
    assert state["scrape"]["anonymous_status"] == 401
    calls[:] = []
    stopped = _state(tmp_path, lay, scrape=scrape,
                     show=lambda s: "UnitFileState=enabled\nActiveState=failed\nNeedDaemonReload=no\n")
    assert calls == [] and stopped["scrape"]["status"] is None


@pytest.mark.parametrize("body, expected", [
    (SERVED, (True, 1)),
    ("node_exporter_build_info 1\ngpuops_gpus_on_pci 8\n", (True, 8)),
    ("go_goroutines 8\n", (False, None)),
    ("", (False, None)),
])
def test_parse_scrape(body, expected):
    assert host.parse_scrape(body) == expected


def test_parse_show():
    assert host.parse_show("UnitFileState=enabled\nActiveState=active\nNeedDaemonReload=no\nX=1\n") == {
        "UnitFileState": "enabled", "ActiveState": "active", "NeedDaemonReload": "no"}
