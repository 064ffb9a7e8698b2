# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.dlserver.__private.nvidia_container_toolkit_host through main(): refusals before anything is
written (a daemon.json that is not JSON, a containerd config of an unknown version: the user's
files byte for byte as they were), and a resolve with the real key trust code against the
repository double's key (real gpg). The inputs alone (a vulnerable version, an unknown engine, a
key over plain http) are refused by the registry of input checks (core/input_checks.py) before the
role calls the module: proved here against the registry."""

import hashlib
import json
import os

import pytest
import yaml
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import input_checks
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.role_inputs import InputError, convert_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import toolkit_host
from ansible_collections.gpuops.dlserver.plugins.modules.__private import nvidia_container_toolkit_host as mod
from module_harness import ExitJson, FailJson

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
USER_DAEMON = {"registry-mirrors": ["https://m.example"], "log-opts": {"max-size": "10m"}}


def inputs(**kw):
    base = {"version": "1.19.1", "accept_cves": [], "repo_url": "file:///nowhere", "keyring_url": "file:///nowhere",
            "keyring_checksum": "", "keyring_fingerprint": "C95B321B61E88C1809C4F759DDCAE044F796ECB0",
            "engines": [], "default_runtime": False, "cdi": True, "runtime_mode": "", "runtime_settings": {},
            "smoke_test": True, "smoke_test_image": "x", "status_file": "/etc/gpuops/nvidia_container_toolkit.json"}
    base.update(kw)
    return base


def refused(**kw):
    """What the role's route refuses of its variables ``kw`` (short names) before the role calls the
    module: the argument spec's conversion (role_inputs), then the registry of input checks."""
    with open(os.path.join(REPO, "roles", "nvidia_container_toolkit", "meta", "argument_specs.yml")) as handle:
        spec = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    values = dict(("nvidia_container_toolkit_" + key, value) for key, value in kw.items())
    try:
        converted = convert_inputs(spec, values, "nvidia_container_toolkit_")
    except InputError as exc:
        return exc.problems
    return input_checks.problems("nvidia_container_toolkit", converted, "main", {})


def platform(root):
    return {"runtime_path": "/usr/bin/nvidia-container-runtime",
            "runtime_config": str(root / "nvidia-container-runtime" / "config.toml"),
            "docker_daemon_json": str(root / "docker" / "daemon.json"),
            "containerd_config": str(root / "containerd" / "config.toml"),
            "containerd_dropin": str(root / "containerd" / "conf.d" / "99-gpuops-nvidia.toml"),
            "containerd_import": str(root / "containerd" / "conf.d" / "*.toml"),
            "crio_dropin": str(root / "crio" / "crio.conf.d" / "99-gpuops-nvidia.conf")}


def tree_hash(root):
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            digest.update(path.encode())
            with open(path, "rb") as handle:
                digest.update(handle.read())
    return digest.hexdigest()


def run(args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as exc:
            mod.main()
    return exc.type, exc.value.args[0]


@pytest.fixture
def etc(tmp_path):
    (tmp_path / "docker").mkdir()
    (tmp_path / "containerd").mkdir()
    (tmp_path / "docker" / "daemon.json").write_text(json.dumps(USER_DAEMON))
    (tmp_path / "containerd" / "config.toml").write_text("# mine\nversion = 2\nroot = \"/srv\"\n")
    return tmp_path


@pytest.mark.parametrize("inp,expect", [
    ({"version": "1.17.3"}, ["1.17.3 (nvidia_container_toolkit_version)", "CVE-2025-23359", "CVE-2025-23266",
                             "nvidia_container_toolkit_version to 1.19.1 or newer", "a_id/5616"]),
    ({"version": "1.18.2", "accept_cves": ["CVE-2025-23266"]}, ["CVE-2026-24260", "1.19.1"]),
    ({"engines": ["docker", "podman"]}, ["nvidia_container_toolkit_engines", "podman"]),
])
def test_bad_inputs_are_refused_by_the_registry_before_the_module(inp, expect):
    found = "; ".join(refused(**inp))
    for text in expect:
        assert text in found, found


@pytest.mark.parametrize("engine,path,content,expect", [
    ("docker", "docker/daemon.json", '{"log-driver": "journald",', ["daemon.json", "not valid JSON"]),
    ("containerd", "containerd/config.toml", "# mine\nversion = 1\n", ["config.toml", "version 1", "migrate"]),
    ("containerd", "containerd/config.toml", "version = 2\n[grpc\n", ["config.toml", "not valid TOML"]),
])
def test_user_files_the_role_cannot_merge_are_named_and_left_alone(etc, engine, path, content, expect):
    (etc / path).write_text(content)
    before = tree_hash(str(etc))
    kind, result = run({"action": "resolve", "inputs": inputs(engines=[engine]), "platform": platform(etc)})
    assert kind is FailJson
    for text in expect:
        assert text in result["msg"]
    assert tree_hash(str(etc)) == before


def test_resolve_plans_the_pinned_packages_and_the_crio_dropin(etc):
    # The key trust of the repository option is tests/unit/plugins/modules/test_package_repository.py's
    # (the same library and options as package_repository); here the resolve without it.
    args = {"action": "resolve", "platform": platform(etc), "inputs": inputs(engines=["crio"], default_runtime=True)}
    kind, result = run(args)
    assert kind is ExitJson, result.get("msg")
    assert "keyring" not in result and result["packages"] == [
        "nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools", "libnvidia-container1"]
    assert result["install"] == ["nvidia-container-toolkit=1.19.1-*", "nvidia-container-toolkit-base=1.19.1-*",
                                 "libnvidia-container-tools=1.19.1-*", "libnvidia-container1=1.19.1-*"]
    [dropin] = result["files"]
    assert dropin["dest"].endswith("crio.conf.d/99-gpuops-nvidia.conf") and 'default_runtime = "nvidia"' in dropin["content"]
    # A key that cannot be trusted (plain http, neither fingerprint nor checksum: issue 37) is
    # refused before any change, naming the variable, by the registry of input checks.
    found = "; ".join(refused(keyring_url="http://mirror.example/gpgkey", keyring_fingerprint=""))
    assert "nvidia_container_toolkit_keyring_checksum" in found and "plain http" in found, found


def repository(tmp_path, key_path, fingerprint, **extra):
    spec = {"url": "https://mirror.example/libnvidia-container/stable/deb/amd64/",
            "url_var": "nvidia_container_toolkit_repo_url",
            "key": {"url": "file://%s" % key_path, "fingerprint": fingerprint,
                    "url_var": "nvidia_container_toolkit_keyring_url",
                    "checksum_var": "nvidia_container_toolkit_keyring_checksum",
                    "fingerprint_var": "nvidia_container_toolkit_keyring_fingerprint"},
            "keyring_file": str(tmp_path / "keyrings" / "nvidia-container-toolkit.asc"),
            "sources_file": str(tmp_path / "sources" / "nvidia-container-toolkit.sources"),
            "preferences_file": str(tmp_path / "preferences" / "nvidia-container-toolkit.pref"),
            "pin": {"variable": "nvidia_container_toolkit_version", "why": "only this version"},
            "header": "# Managed by Ansible", "description": "NVIDIA Container Toolkit"}
    spec.update(extra)
    return spec


@pytest.mark.skipif(not __import__("shutil").which("gpg"), reason="needs gpg")
def test_resolve_checks_the_repository_in_the_same_round_trip_with_its_pin(etc, two_key_file, tmp_path):
    """What package_repository answers, from the resolve's module run: the pin holds the four packages
    at the resolve's version; each file says whether the host has it already."""
    path, fprs = two_key_file
    args = {"action": "resolve", "platform": platform(etc), "inputs": inputs(engines=["crio"]),
            "repository": repository(tmp_path, path, fprs[0])}
    kind, result = run(args)
    assert kind is ExitJson, result.get("msg")
    repo = result["repository"]
    assert repo["current"] is False and [f["current"] for f in repo["files"]] == [False, False, False]
    assert repo["keyring"]["fingerprints"] == [fprs[0]] and repo["keyring"]["dropped"] == [fprs[1]]
    pin = [f for f in repo["files"] if f["dest"].endswith(".pref")][0]["content"]
    for name in result["packages"]:
        assert name in pin
    assert "Pin: version 1.19.1-*" in pin and "Pin-Priority: 1001" in pin
    for f in repo["files"]:                   # what package_repo_write.yml leaves
        os.makedirs(os.path.dirname(f["dest"]), exist_ok=True)
        with open(f["dest"], "w") as handle:
            handle.write(f["content"])
        os.chmod(f["dest"], 0o644)
    kind, again = run(args)
    assert again["repository"]["current"] is True
    # another version moves the pin: only the preferences file is to be written
    args["inputs"] = inputs(engines=["crio"], version="1.19.2")
    kind, moved = run(args)
    assert [os.path.basename(f["dest"]) for f in moved["repository"]["files"] if not f["current"]] == [
        "nvidia-container-toolkit.pref"]


@pytest.mark.parametrize("bad, needle", [
    ({"keyring_file": "relative/keyring.asc"}, "keyring_file"),
    ({"url": "https://mirror.example/x\nTypes: deb"}, "nvidia_container_toolkit_repo_url"),
    ({"surprise": 1}, "repository: "),
])
def test_a_bad_repository_option_fails_the_resolve_naming_it(etc, tmp_path, bad, needle):
    args = {"action": "resolve", "platform": platform(etc), "inputs": inputs(engines=["crio"]),
            "repository": dict(repository(tmp_path, "/nowhere", "A" * 40), **bad)}
    kind, result = run(args)
    assert kind is FailJson and needle in result["msg"], result["msg"]
    assert not os.path.exists(str(tmp_path / "keyrings"))


class EngineHost(object):
    """docker/containerd answers from a table (the edge of live_engines)."""

    def __init__(self, answers):
        self.answers = answers

        class Module(object):
            @staticmethod
            def get_bin_path(name, opt_dirs=None):
                return "/usr/bin/" + name

        self.module = Module()

    def run(self, args, check=True, what=None, env=None):
        return self.answers[os.path.basename(args[0])]


@pytest.mark.parametrize("answer,expect", [
    ((0, '{"nvidia":{"path":"/usr/bin/nvidia-container-runtime"},"runc":{}}', ""), True),
    ((0, '{"runc":{}}', ""), False),
    ((1, "", "Cannot connect to the Docker daemon"), None),
])
def test_live_docker_view(tmp_path, answer, expect):
    seen = toolkit_host.live_engines(EngineHost({"docker": answer}), platform(tmp_path), ["docker"])
    assert seen["docker"]["nvidia_runtime"] is expect


def fake_installed(version):
    packages = dict((name, version) for name in toolkit_host.ctk.PACKAGES) if version else {}
    return lambda host, accept: {"packages": packages, "versions": [version] if version else [], "verdicts": {},
                                 "refused": []}


@pytest.mark.parametrize("check_mode", [False, True])
def test_verify_of_a_converged_host_reads_the_same_in_check_mode(tmp_path, monkeypatch, check_mode):
    # The role's status record is built from this result: a dry run of a converged host must
    # read what a run reads, or the status file "changes" under --check.
    monkeypatch.setattr(toolkit_host, "installed", fake_installed("1.19.1-1"))
    args = {"action": "verify", "inputs": inputs(), "platform": platform(tmp_path), "engines": [], "pin": "1.19.1-*",
            "_ansible_check_mode": check_mode}
    kind, result = run(args)
    assert kind is ExitJson, result.get("msg")
    assert result["problems"] == []
    assert result["installed"]["packages"] == dict((n, "1.19.1-1") for n in toolkit_host.ctk.PACKAGES)
    assert result["verify"]["installed"] == result["installed"]["packages"]


@pytest.mark.parametrize("check_mode,kind", [(False, FailJson), (True, ExitJson)])
def test_verify_fails_a_run_and_reports_in_check_mode(tmp_path, monkeypatch, check_mode, kind):
    # Not installed yet (a dry run on a fresh host): a run fails naming the packages; check mode
    # reports the same problems and warns instead, because the run would install them first.
    monkeypatch.setattr(toolkit_host, "installed", fake_installed(None))
    warned = []
    monkeypatch.setattr(mod.AnsibleModule, "warn", lambda self, text: warned.append(text))
    args = {"action": "verify", "inputs": inputs(), "platform": platform(tmp_path), "engines": [], "pin": "1.19.1-*",
            "_ansible_check_mode": check_mode}
    got, result = run(args)
    assert got is kind
    assert len(result["problems"]) == 1 and "not at the pinned version 1.19.1-*" in result["problems"][0]
    assert "nvidia-container-toolkit not installed" in result["problems"][0]
    if check_mode:
        assert result["changed"] is False
        assert [w for w in warned if w.startswith("check mode: the host does not pass verification yet: ")]
    else:
        assert "not at the pinned version" in result["msg"] and not warned


def test_resolve_problems_fail_in_check_mode_too(etc):
    # Only verify reports instead of failing in check mode: a refusal of the resolve fails a dry run as a run.
    (etc / "docker" / "daemon.json").write_text('{"log-driver": "journald",')
    kind, result = run({"action": "resolve", "inputs": inputs(engines=["docker"]), "platform": platform(etc),
                        "_ansible_check_mode": True})
    assert kind is FailJson and "not valid JSON" in result["msg"]


class _DpkgHost:
    """Answers the one dpkg-query the resolve makes (the format its installed() asks for)."""

    def __init__(self, text):
        self.text = text

    def run(self, argv, check=True):
        assert argv[:2] == ["dpkg-query", "-W"]
        return 0, self.text, ""


def test_installed_reads_versions_and_holds_once():
    # Three toolkit packages installed (two held), one removed with its conffiles left: the
    # resolve's install_state says the converged part needs no apt and which holds are missing.
    text = ("nvidia-container-toolkit\t1.19.1-1\thi \n"
            "nvidia-container-toolkit-base\t1.19.1-1\thi \n"
            "libnvidia-container-tools\t1.19.1-1\tii \n"
            "libnvidia-container1\t1.19.1-1\trc \n")
    have = toolkit_host.installed(_DpkgHost(text), [])
    assert have["packages"] == {"nvidia-container-toolkit": "1.19.1-1", "nvidia-container-toolkit-base": "1.19.1-1",
                                "libnvidia-container-tools": "1.19.1-1"}
    assert have["state"]["libnvidia-container-tools"] == {"version": "1.19.1-1", "held": False}
    pinned = dict((name, "1.19.1-*") for name in toolkit_host.ctk.PACKAGES)
    state = toolkit_host.dpkg_state.install_state(pinned, [], have["state"], True)
    assert state == {"install": True, "missing": ["libnvidia-container1"], "hold": sorted(toolkit_host.ctk.PACKAGES)}
    converged = dict((name, {"version": "1.19.1-1", "held": name != "libnvidia-container1"})
                     for name in toolkit_host.ctk.PACKAGES)
    assert toolkit_host.dpkg_state.install_state(pinned, [], converged, False) == {
        "install": False, "missing": [], "hold": ["libnvidia-container1"]}


def fake_held(version, held=True):
    """installed() of a host with the four packages at ``version`` (held or not)."""
    packages = dict((name, version) for name in toolkit_host.ctk.PACKAGES)
    state = dict((name, {"version": version, "held": held}) for name in toolkit_host.ctk.PACKAGES)
    return lambda host, accept: {"packages": packages, "state": state, "versions": [version], "verdicts": {},
                                 "refused": []}


def test_resolve_of_a_converged_host_verifies_it_and_each_drift_reopens_the_gate(etc, monkeypatch):
    # The fast path: what the role would write is on the host (root:root 0644), the packages are
    # at the pin and held: converged, and the verification is made in the same round trip.
    monkeypatch.setattr(toolkit_host, "installed", fake_held("1.19.1-1"))
    plat = platform(etc)
    args = {"action": "resolve", "platform": plat,
            "inputs": inputs(engines=["crio"], cdi=False, runtime_settings={"nvidia-container-cli": {"debug": "/x.log"}})}
    kind, first = run(args)
    assert kind is ExitJson and first["converged"]["current"] is False and first["verify"] is None
    assert first["runtime"]["current"] is False
    # what the role writes, written by the module's own actions (runtime, write)
    os.makedirs(os.path.dirname(plat["crio_dropin"]), exist_ok=True)
    os.makedirs(os.path.dirname(plat["runtime_config"]), exist_ok=True)
    kind, checked = run(dict(args, action="write", _ansible_check_mode=True, _ansible_diff=True))
    assert checked["changed"] and [d["after"] for d in checked["diff"]] == [first["files"][0]["content"]]
    assert not os.path.exists(plat["crio_dropin"]), "check mode wrote"
    kind, written = run(dict(args, action="write"))
    assert kind is ExitJson and written["written"] == [{"dest": plat["crio_dropin"], "engine": "crio", "changed": True}]
    kind, runtime = run(dict(args, action="runtime"))
    assert kind is ExitJson and runtime["changed"] and os.path.exists(plat["runtime_config"])
    kind, again = run(dict(args, action="runtime"))
    assert again["changed"] is False
    kind, result = run(args)
    assert kind is ExitJson, result.get("msg")
    assert result["converged"] == {"current": True, "reasons": []}, result["converged"]
    assert result["files"] == [] and result["runtime"]["settings"]["nvidia-container-cli"]["debug"] == "/x.log"
    assert result["verify"]["engines"]["crio"]["nvidia_runtime"] is True
    # drift: the drop-in's mode, the runtime config edited, the packages unheld
    os.chmod(plat["crio_dropin"], 0o600)
    kind, result = run(args)
    assert result["converged"]["current"] is False and [f["dest"] for f in result["files"]] == [plat["crio_dropin"]]
    os.chmod(plat["crio_dropin"], 0o644)
    # (a comment added is kept: the file is the package's, merged by its settings, not rewritten)
    with open(plat["runtime_config"]) as handle:
        text = handle.read()
    with open(plat["runtime_config"], "w") as handle:
        handle.write(text.replace('"/x.log"', '"/y.log"'))
    kind, result = run(args)
    assert result["converged"]["current"] is False and result["runtime"]["current"] is False
    kind, runtime = run(dict(args, action="runtime"))
    assert runtime["changed"] and os.path.exists(plat["runtime_config"]) and runtime["diff"][0]["before"] == (
        text.replace('"/x.log"', '"/y.log"'))
    kind, result = run(args)
    assert result["converged"]["current"] is True
    monkeypatch.setattr(toolkit_host, "installed", fake_held("1.19.1-1", held=False))
    kind, result = run(args)
    assert result["converged"]["current"] is False and result["converged"]["reasons"][0].startswith("not held: ")


def test_the_users_daemon_json_is_judged_by_content_only(etc):
    # daemon.json is the user's: merged content decides; its owner and mode stay the user's (a
    # rewrite for a mode would restart Docker, and a write keeps them). A content drift is still a change.
    plat = platform(etc)
    args = {"action": "resolve", "platform": plat,
            "inputs": inputs(engines=["docker"], cdi=False, restart_running_containers=True)}
    kind, first = run(args)
    assert kind is ExitJson, first.get("msg")
    [daemon] = first["files"]
    with open(plat["docker_daemon_json"], "w") as handle:
        handle.write(daemon["content"])
    os.chmod(plat["docker_daemon_json"], 0o600)
    kind, result = run(args)
    assert kind is ExitJson and result["files"] == []
    with open(plat["docker_daemon_json"], "w") as handle:
        handle.write(json.dumps(USER_DAEMON))
    kind, result = run(args)
    assert [f["dest"] for f in result["files"]] == [plat["docker_daemon_json"]]
    assert result["converged"]["current"] is False
    # the merge rewrites the user's text and keeps the user's mode (0600: never opened up to 0644)
    kind, written = run(dict(args, action="write"))
    assert kind is ExitJson and written["written"] == [
        {"dest": plat["docker_daemon_json"], "engine": "docker", "changed": True}], written
    assert os.stat(plat["docker_daemon_json"]).st_mode & 0o7777 == 0o600
    with open(plat["docker_daemon_json"]) as handle:
        assert json.load(handle)["registry-mirrors"] == USER_DAEMON["registry-mirrors"]
    kind, result = run(args)
    assert result["files"] == []   # merged and kept at 0600: nothing more to write
