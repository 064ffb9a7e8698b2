"""Verify gpuops.dlserver.nvidia_container_toolkit against the libnvidia-container repository
TEST DOUBLE, Debian's real docker.io and containerd, and the users' own engine files
(molecule/nvidia_container_toolkit/files). Expectations are written here or read from the
users' files and the double's published data, never from the role's own record."""

import json
import os
import re
import tomllib

import pytest

STATUS = "/etc/gpuops/nvidia_container_toolkit.json"
PACKAGES = ["nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
            "libnvidia-container1"]
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DROPIN = "/etc/containerd/conf.d/99-gpuops-nvidia.toml"


def user_file(name):
    with open(os.path.join(HERE, "files", name)) as handle:
        return handle.read()


def manifest():
    mirror = os.environ.get("GPUOPS_MIRROR_DIR") or os.path.join(os.environ["MOLECULE_PROJECT_DIRECTORY"], ".cache",
                                                                 "mirror")
    with open(os.path.join(mirror, "apt", "libnvidia-container", "testdouble.json")) as handle:
        return json.load(handle)


def name(host):
    return host.backend.get_hostname()


def status(host):
    return json.loads(host.file(STATUS).content_string)


def gpu_node(host):
    return name(host) != "ctk-cpu"


def test_cpu_node_gets_nothing_and_says_why(host):
    if gpu_node(host):
        pytest.skip("GPU node")
    record = status(host)
    assert record["run"] is False
    assert record["reason"].startswith("no driver")
    for package in PACKAGES:
        assert not host.package(package).is_installed
    assert not host.file("/etc/apt/sources.list.d/gpuops-nvidia-container-toolkit.sources").exists


def test_packages_pinned_held_and_from_the_checked_key(host):
    if not gpu_node(host):
        pytest.skip("CPU node")
    want = "1.18.2" if name(host) == "ctk-docker" else "1.19.1"
    selections = host.check_output("dpkg --get-selections %s" % " ".join(PACKAGES))
    for package in PACKAGES:
        assert host.package(package).version == "%s-1+gpuops.testdouble" % want
        assert re.search(r"^%s(:amd64)?\s+hold$" % re.escape(package), selections, re.M), selections
    pref = host.file("/etc/apt/preferences.d/gpuops-nvidia-container-toolkit.pref").content_string
    assert "Pin: version %s-*" % want in pref and "Pin-Priority: 1001" in pref
    sources = host.file("/etc/apt/sources.list.d/gpuops-nvidia-container-toolkit.sources").content_string
    assert "Signed-By: /etc/apt/keyrings/gpuops-nvidia-container-toolkit.asc" in sources
    out = host.check_output("h=$(mktemp -d); GNUPGHOME=$h gpg --batch --with-colons --show-keys "
                            "/etc/apt/keyrings/gpuops-nvidia-container-toolkit.asc; rm -rf $h")
    fprs = [line.split(":")[9] for line in out.splitlines() if line.startswith("fpr:")]
    assert fprs[0] == manifest()["fingerprint"]
    assert "TEST DOUBLE" in host.check_output("nvidia-ctk --version")


def test_installed_version_checked_and_reported(host):
    if not gpu_node(host):
        pytest.skip("CPU node")
    record = status(host)
    assert record["run"] is True
    verdicts = record["installed"]["verdicts"]
    if name(host) == "ctk-docker":
        # 1.18.2 is affected by CVE-2026-24260, accepted by name on this node.
        verdict = verdicts["1.18.2-1+gpuops.testdouble"]
        assert verdict["accepted"] == ["CVE-2026-24260"] and not verdict["refused"]
        assert verdict["fixed_in"] == "1.19.1"
    else:
        verdict = verdicts["1.19.1-1+gpuops.testdouble"]
        assert verdict["cves"] == [] and not verdict["refused"]


def test_docker_keeps_every_user_key_and_accepts_the_file(host):
    if name(host) not in ("ctk-docker", "ctk-both"):
        pytest.skip("no Docker here")
    user = json.loads(user_file("daemon.json"))
    merged = json.loads(host.file("/etc/docker/daemon.json").content_string)
    for key, value in user.items():
        if key == "runtimes":
            assert merged["runtimes"]["crun"] == value["crun"]
        else:
            assert merged[key] == value, key
    assert merged["runtimes"]["nvidia"]["path"] == "/usr/bin/nvidia-container-runtime"
    assert merged["features"] == {"cdi": True}
    if name(host) == "ctk-both":
        assert merged["default-runtime"] == "nvidia"
    else:
        assert "default-runtime" not in merged
    backups = [b for b in host.check_output("ls /etc/docker").split() if b.startswith("daemon.json.") and b.endswith("~")]
    assert len(backups) == 1, backups
    assert json.loads(host.file("/etc/docker/" + backups[0]).content_string) == user
    assert host.run("dockerd --validate --config-file /etc/docker/daemon.json").rc == 0
    runtimes = host.check_output("docker info --format '{{json .Runtimes}}'")
    assert "nvidia" in json.loads(runtimes) and "crun" in json.loads(runtimes)
    assert host.service("docker").is_running


def test_containerd_keeps_the_users_file_and_reads_the_dropin(host):
    if name(host) not in ("ctk-containerd", "ctk-both"):
        pytest.skip("no containerd configured here")
    user = user_file("config.toml")
    main = host.file("/etc/containerd/config.toml").content_string
    # Only the imports line was added: every line of the user's file, comments included, stays.
    added = [line for line in main.splitlines() if line not in user.splitlines()]
    assert added == ['imports = ["/etc/containerd/conf.d/*.toml"]'], added
    assert [line for line in main.splitlines() if line in user.splitlines()] == user.splitlines()
    dropin = tomllib.loads(host.file(DROPIN).content_string)
    cri = dropin["plugins"]["io.containerd.grpc.v1.cri"]
    assert cri["containerd"]["runtimes"]["nvidia"]["options"]["BinaryName"] == "/usr/bin/nvidia-container-runtime"
    assert cri["enable_cdi"] is True
    dump = tomllib.loads(host.check_output("containerd config dump"))
    merged = dump["plugins"]["io.containerd.grpc.v1.cri"]
    assert "nvidia" in merged["containerd"]["runtimes"]
    assert merged["containerd"]["runtimes"]["runc"]["options"]["SystemdCgroup"] is True
    # The nvidia runtime inherits runc's options (as nvidia-ctk runtime configure copies them):
    # runtimeClassName: nvidia pods use the systemd cgroup driver like kubelet.
    assert merged["containerd"]["runtimes"]["nvidia"]["options"]["SystemdCgroup"] is True
    assert merged["sandbox_image"] == "registry-mirror.example.internal/pause:3.9"
    assert merged["enable_cdi"] is True
    assert dump["root"] == "/srv/containerd" and dump["oom_score"] == -999
    assert merged["containerd"].get("default_runtime_name") == ("nvidia" if name(host) == "ctk-both" else "runc")
    assert host.service("containerd").is_running


def test_docker_only_node_leaves_containerd_alone(host):
    if name(host) != "ctk-docker":
        pytest.skip("not the Docker-only node")
    assert not host.file(DROPIN).exists
    assert status(host)["engines"]["value"] == ["docker"]


def test_runtime_settings_merged(host):
    if name(host) != "ctk-both":
        pytest.skip("runtime settings are set on ctk-both")
    config = tomllib.loads(host.file("/etc/nvidia-container-runtime/config.toml").content_string)
    assert config["nvidia-container-runtime"]["mode"] == "cdi"
    assert config["nvidia-container-cli"]["no-cgroups"] is False
    assert config["nvidia-container-cli"]["debug"] == "/var/log/nvidia-container-toolkit.log"
    # The package's own settings stay.
    assert config["nvidia-container-cli"]["ldconfig"] == "@/sbin/ldconfig.real"
    assert config["nvidia-container-runtime"]["modes"]["cdi"]["default-kind"] == "nvidia.com/gpu"


def test_cdi_and_smoke_test_skipped_without_a_driver(host):
    if not gpu_node(host):
        pytest.skip("CPU node")
    record = status(host)
    assert record["cdi"]["generate"] is False and "container guest" in record["cdi"]["reason"]
    assert record["cdi"]["specs"] == []
    assert record["smoke_test"]["run"] is False and record["smoke_test"]["reason"]
    assert not host.file("/var/run/cdi/nvidia.yaml").exists


def test_cdi_refresh_units_enabled_for_the_next_boot(host):
    # The specification lives in /var/run/cdi (tmpfs): only the enabled service regenerates it at
    # boot, as the toolkit's own packages arrange (both units enabled; the double's units carry the
    # real units' [Install] WantedBy=multi-user.target).
    if not gpu_node(host):
        pytest.skip("CPU node")
    for unit in ("nvidia-cdi-refresh.path", "nvidia-cdi-refresh.service"):
        state = host.run("systemctl is-enabled %s", unit)
        assert state.stdout.strip() == "enabled", (unit, state.stdout, state.stderr)


def test_second_run_restarted_nothing(host):
    if not gpu_node(host):
        pytest.skip("CPU node")
    first = host.file("/root/engines-started.first").content_string
    last = host.file("/root/engines-started.last").content_string
    assert first == last
    docker, containerd = first.split()
    assert int(containerd) > 0
    assert (int(docker) > 0) == (name(host) != "ctk-containerd")
