"""Engine configuration merges of nvidia_container_toolkit (module_utils/container_engines.py),
from data/container_engines_cases.yml."""
import json
import os
import tomllib

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_engines as ce

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "container_engines_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
RUNTIME = "/usr/bin/nvidia-container-runtime"
DAEMON = "/etc/docker/daemon.json"
MAIN = "/etc/containerd/config.toml"
GLOB = "/etc/containerd/conf.d/*.toml"


@pytest.mark.parametrize("case", CASES["docker"], ids=[c["name"] for c in CASES["docker"]])
def test_docker(case):
    if "error" in case:
        with pytest.raises(ce.ConfigError) as err:
            ce.docker_daemon_json(case["text"], DAEMON, RUNTIME, case["default_runtime"], case["cdi"])
        for text in case["error"]:
            assert text in str(err.value)
        return
    result = ce.docker_daemon_json(case["text"], DAEMON, RUNTIME, case["default_runtime"], case["cdi"])
    if case.get("unchanged"):
        assert result["content"] is None and result["changed_keys"] == []
        return
    assert json.loads(result["content"]) == case["data"]
    if "changed_keys" in case:
        assert result["changed_keys"] == case["changed_keys"]
    # The user's keys keep their order; the role's come after them.
    if case["text"]:
        user = list(json.loads(case["text"]))
        assert [k for k in json.loads(result["content"]) if k in user] == [k for k in user if k in case["data"]]
    # Merging the result again changes nothing (idempotent).
    again = ce.docker_daemon_json(result["content"], DAEMON, RUNTIME, case["default_runtime"], case["cdi"])
    assert again["content"] is None


@pytest.mark.parametrize("case", CASES["containerd_version"], ids=[str(i) for i in range(len(CASES["containerd_version"]))])
def test_containerd_version(case):
    if "error" in case:
        with pytest.raises(ce.ConfigError) as err:
            ce.containerd_version(case["data"], MAIN, case["major"])
        for text in case["error"]:
            assert text in str(err.value)
    else:
        assert ce.containerd_version(case["data"], MAIN, case["major"])["value"] == case["value"]


@pytest.mark.parametrize("case", CASES["containerd_main"], ids=[c["name"] for c in CASES["containerd_main"]])
def test_containerd_main(case):
    if "error" in case:
        with pytest.raises(ce.ConfigError) as err:
            ce.containerd_main(case["text"], MAIN, GLOB, 2)
        for text in case["error"]:
            assert text in str(err.value)
        return
    result = ce.containerd_main(case["text"], MAIN, GLOB, 2)
    assert result["content"] == case["content"]
    if result["content"] is not None:
        assert ce.containerd_main(result["content"], MAIN, GLOB, 2)["content"] is None


@pytest.mark.parametrize("version,cri", [(2, "io.containerd.grpc.v1.cri"), (3, "io.containerd.cri.v1.runtime")])
@pytest.mark.parametrize("default_runtime", [True, False])
@pytest.mark.parametrize("cdi", [True, False])
def test_containerd_dropin_paths(version, cri, default_runtime, cdi):
    data = tomllib.loads(ce.containerd_dropin(version, RUNTIME, default_runtime, cdi))
    assert data["version"] == version
    plugin = data["plugins"][cri]
    assert list(data["plugins"]) == [cri]
    nvidia = plugin["containerd"]["runtimes"]["nvidia"]
    assert nvidia["runtime_type"] == "io.containerd.runc.v2" and nvidia["options"]["BinaryName"] == RUNTIME
    assert plugin["containerd"].get("default_runtime_name") == ("nvidia" if default_runtime else None)
    assert plugin.get("enable_cdi", False) is cdi
    dump = "[plugins.%s.containerd.runtimes.nvidia]\nruntime_type = 'x'\n" % json.dumps(cri)
    assert ce.containerd_dump_has_nvidia(dump, version)
    assert not ce.containerd_dump_has_nvidia("[plugins]\n", version)


def test_crio_dropin():
    data = tomllib.loads(ce.crio_dropin(RUNTIME, True))
    assert data["crio"]["runtime"]["default_runtime"] == "nvidia"
    assert data["crio"]["runtime"]["runtimes"]["nvidia"] == {"runtime_path": RUNTIME, "runtime_type": "oci"}
    assert "default_runtime" not in tomllib.loads(ce.crio_dropin(RUNTIME, False))["crio"]["runtime"]


PACKAGE_CONFIG = """disable-require = false
[nvidia-container-cli]
ldconfig = "@/sbin/ldconfig.real"
environment = []
[nvidia-container-runtime]
mode = "auto"
runtimes = ["runc", "crun"]
[nvidia-container-runtime.modes.cdi]
default-kind = "nvidia.com/gpu"
"""


def test_runtime_config_merges_and_is_idempotent():
    result = ce.runtime_config(PACKAGE_CONFIG, "/etc/nvidia-container-runtime/config.toml",
                               {"nvidia-container-cli": {"no-cgroups": True}}, "cdi")
    data = tomllib.loads(result["content"])
    assert data["nvidia-container-cli"] == {"ldconfig": "@/sbin/ldconfig.real", "environment": [], "no-cgroups": True}
    assert data["nvidia-container-runtime"]["mode"] == "cdi"
    assert data["nvidia-container-runtime"]["modes"]["cdi"]["default-kind"] == "nvidia.com/gpu"
    assert data["disable-require"] is False
    again = ce.runtime_config(result["content"], "x", {"nvidia-container-cli": {"no-cgroups": True}}, "cdi")
    assert again["content"] is None
    assert ce.runtime_config(PACKAGE_CONFIG, "x", {}, "")["content"] is None


def test_runtime_config_not_toml_names_the_file():
    with pytest.raises(ce.ConfigError) as err:
        ce.runtime_config("[x", "/etc/nvidia-container-runtime/config.toml", {}, "")
    assert "/etc/nvidia-container-runtime/config.toml" in str(err.value)


@pytest.mark.parametrize("data", [
    {"a": 1, "b": {"c": "x\"y", "d": [1, 2], "e": {"f": True}}, "g": 1.5},
    {"plugins": {"io.containerd.grpc.v1.cri": {"containerd": {"runtimes": {"nvidia": {"options": {"X": "y"}}}}}}},
    {"empty": {}},
])
def test_dump_toml_round_trips(data):
    assert tomllib.loads(ce.dump_toml(data)) == data


def test_containerd_dropin_carries_the_users_cri_section():
    """containerd replaces a plugin's whole section from an imported file: the drop-in must carry
    the user's CRI settings (seen in the lab: runc and sandbox_image vanished without this)."""
    user = {"sandbox_image": "registry.example/pause:3.9", "registry": {"config_path": "/etc/containerd/certs.d"},
            "containerd": {"default_runtime_name": "runc",
                           "runtimes": {"runc": {"runtime_type": "io.containerd.runc.v2",
                                                 "options": {"SystemdCgroup": True}}}}}
    for default_runtime in (True, False):
        text = ce.containerd_dropin(2, RUNTIME, default_runtime, True, user)
        plugin = tomllib.loads(text)["plugins"]["io.containerd.grpc.v1.cri"]
        assert plugin["sandbox_image"] == user["sandbox_image"] and plugin["registry"] == user["registry"]
        assert plugin["containerd"]["runtimes"]["runc"] == user["containerd"]["runtimes"]["runc"]
        assert "nvidia" in plugin["containerd"]["runtimes"]
        assert plugin["containerd"]["default_runtime_name"] == ("nvidia" if default_runtime else "runc")
        assert ce.missing_settings(plugin, plugin) == []
    effective = tomllib.loads(ce.containerd_dropin(2, RUNTIME, False, False, {}))["plugins"]["io.containerd.grpc.v1.cri"]
    assert sorted(ce.missing_settings(plugin, effective)) == sorted([
        "sandbox_image", "registry.config_path", "containerd.default_runtime_name",
        "containerd.runtimes.runc.runtime_type", "containerd.runtimes.runc.options.SystemdCgroup",
        # the nvidia runtime inherits runc's options (nvidia-ctk runtime configure does the same)
        "containerd.runtimes.nvidia.options.SystemdCgroup",
        "enable_cdi", "cdi_spec_dirs"])


@pytest.mark.parametrize("case", CASES["containerd_nvidia_runtime"], ids=[c["name"] for c in CASES["containerd_nvidia_runtime"]])
def test_containerd_nvidia_runtime_inherits_the_low_level_runtime(case):
    result = ce.containerd_nvidia_runtime(case["section"], RUNTIME)
    assert result["value"] == case["nvidia"]
    assert (case["from"] or "no ") in result["reason"]
    cri = ce.CONTAINERD_CRI[case["version"]]
    plugin = tomllib.loads(ce.containerd_dropin(case["version"], RUNTIME, False, False, case["section"]))["plugins"][cri]
    assert plugin["containerd"]["runtimes"]["nvidia"] == case["nvidia"]
    # The user's runtimes stay as they were in the copy of the section.
    for name, table in ((case["section"].get("containerd") or {}).get("runtimes") or {}).items():
        assert plugin["containerd"]["runtimes"][name] == table
    # The input is not changed.
    assert "nvidia" not in ((case["section"].get("containerd") or {}).get("runtimes") or {})


@pytest.mark.parametrize("case", CASES["containerd_bad_shapes"], ids=[c["name"] for c in CASES["containerd_bad_shapes"]])
def test_containerd_bad_shapes_are_the_roles_error(case):
    data = tomllib.loads(case["toml"])
    with pytest.raises(ce.ConfigError) as err:
        version = ce.containerd_version(data, MAIN, 2)
        ce.containerd_cri_section(data, MAIN, version["value"])
    for text in case["error"]:
        assert text in str(err.value)
    assert MAIN in str(err.value)


@pytest.mark.parametrize("text", ["[" * 100000 + "]" * 100000, '{"a":' * 100000 + "1" + "}" * 100000,
                                  '{"a":' * 40 + "1" + "}" * 40])
def test_docker_deep_daemon_json_is_the_roles_error(text):
    with pytest.raises(ce.ConfigError) as err:
        ce.docker_daemon_json(text, DAEMON, RUNTIME, False, False)
    assert DAEMON in str(err.value)


def test_dump_toml_quotes_a_key_with_a_newline():
    """A bare key is a full match: "a\\nb" is quoted, never written as two lines."""
    text = ce.dump_toml({"x": {"a\nb = 1\n[evil]": 1}})
    assert tomllib.loads(text) == {"x": {"a\nb = 1\n[evil]": 1}}
