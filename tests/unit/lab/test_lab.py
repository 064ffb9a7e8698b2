"""lab/lab.py: the pieces that do not need Docker."""
import http.server
import shutil
import importlib.util
import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

LAB = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab", "lab.py"))


_LAB_ENV = ("GPUOPS_LAB_STATE", "GPUOPS_LAB_NETWORK", "GPUOPS_LAB_SUBNET", "GPUOPS_LAB_MIRROR_PORT", "GPUOPS_MIRROR_DIR",
            "GPUOPS_LAB_APT_CACHE", "GPUOPS_LAB_APT_CACHE_PORT", "GPUOPS_LAB_APT_CACHE_DIR", "GPUOPS_LAB_IMAGE_REPO")


@pytest.fixture(autouse=True)
def _lab_defaults(monkeypatch):
    """lab.py as it behaves without overrides, whatever the environment of the test run."""
    for name in _LAB_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def lab():
    spec = importlib.util.spec_from_file_location("gpuops_lab", LAB)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sources_follow_the_hosts_mirror(lab):
    text = lab.sources_deb822("http://mirror.example/debian", "trixie", True)
    assert "URIs: http://mirror.example/debian\nSuites: trixie trixie-updates\n" in text
    assert "URIs: http://mirror.example/debian-security\nSuites: trixie-security\n" in text
    assert text.count("Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg") == 2


def test_mirror_override(lab, monkeypatch):
    monkeypatch.setenv("GPUOPS_LAB_DEBIAN_MIRROR", "http://m.example/debian/")
    assert lab.host_debian_mirror() == "http://m.example/debian"


def test_recipe_hash_changes_with_the_recipe(lab, monkeypatch):
    before = lab.recipe_hash("12")
    assert before == lab.recipe_hash("12")
    assert lab.image_tag("12") == "gpuops-lab/debian:12-" + before
    monkeypatch.setattr(lab.images, "PACKAGES", lab.images.PACKAGES + ["vim"])
    assert lab.recipe_hash("12") != before
    assert lab.recipe_hash("13") != lab.recipe_hash("12")


def test_the_images_are_built_side_by_side_and_a_failure_is_raised_after_both(lab, monkeypatch):
    """ensure_images starts every missing image's build at once (downloads and dpkg's writes
    overlap) and raises the first failure only once every build has ended."""
    started, ended = [], []
    both_started = threading.Barrier(2, timeout=10)

    def fake_build(cfg, major, force=False, cache_url=None):
        started.append(major)
        both_started.wait()  # a build one after the other would stop here (BrokenBarrierError)
        ended.append(major)
        if major == "12":
            raise lab.LabError("debootstrap bookworm failed")
        return True

    monkeypatch.setattr(lab.images, "build_image", fake_build)
    with pytest.raises(lab.LabError, match="bookworm"):
        lab.ensure_images()
    assert sorted(started) == sorted(ended) == ["12", "13"]


def test_unknown_release_is_refused(lab):
    with pytest.raises(lab.LabError, match="Debian 12 and 13"):
        lab.image_tag("11")


def test_gateway_is_first_host_of_subnet(lab):
    assert lab.gateway() == "172.30.99.1"
    assert lab.mirror_url() == "http://172.30.99.1:8099"


def test_root_needed_message(lab, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(lab.LabError, match="needs root"):
        lab.need_root("starting dockerd")


def test_missing_tools_without_apt_say_what_to_install(lab, monkeypatch):
    monkeypatch.setattr(lab.shutil, "which", lambda name: None)
    monkeypatch.setattr(os.path, "exists", lambda path: False)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(lab.LabError, match="docker.io, debootstrap, openssh-client"):
        lab.ensure_packages()


def test_one_node_definition(lab):
    """Lab and molecule nodes come from the same docker run line; only name, label,
    address and image differ."""
    lab_node = lab.node_spec({"name": "lab-hgx", "debian": "12", "fixture": "hgx-h100-8gpu",
                              "ip": "172.30.99.11"}, "node")
    mol_node = lab.node_spec({"name": "nvd-cpu", "debian": 13, "groups": ["cpu_nodes"]}, "molecule")
    a, b = lab.node_run_args(lab_node), lab.node_run_args(mol_node)
    for args in (a, b):
        for flag in (["--cap-add", "SYS_ADMIN"], ["--cgroupns", "host"], ["-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw"],
                     ["--stop-signal", "SIGRTMIN+3"], ["--network", lab.NETWORK]):
            assert any(args[i:i + 2] == flag for i in range(len(args))), flag
        assert "--privileged" not in args
    assert a[a.index("--ip") + 1] == "172.30.99.11" and "--ip" not in b
    assert "io.gpuops.lab=node" in a and "io.gpuops.lab=molecule" in b
    assert a[-1] == lab.image_tag("12") and b[-1] == lab.image_tag("13")


@pytest.mark.parametrize("raw, message", [
    ({"debian": "12"}, "needs a name"),
    ({"name": "x", "debian": "11"}, "debian must be one of 12, 13"),
    ({"name": "x", "debian": "12", "fixture": "no-such-host"}, "no fixture"),
    ({"name": "x", "debian": "12", "loop_devices": 7}, "loop_devices must be a whole number from 0 to 6"),
    ({"name": "x", "debian": "12", "loop_devices": "2"}, "loop_devices must be a whole number"),
])
def test_bad_node_specs(lab, raw, message):
    with pytest.raises(lab.LabError, match=message):
        lab.node_spec(raw, "molecule")


def test_loop_devices_are_handed_over_without_privileges(lab):
    """The storage scenario's node: each loop device as a device node, and only its own sysfs queue
    directory writable (read-ahead, scheduler); never --privileged."""
    node = dict(lab.node_spec({"name": "st", "debian": "12", "loop_devices": 2}, "molecule"),
                loop_device_paths=["/dev/loop3", "/dev/loop4"])
    args = lab.node_run_args(node)
    assert "--privileged" not in args
    for name in ("loop3", "loop4"):
        queue = "/sys/devices/virtual/block/%s/queue" % name
        at = args.index("/dev/%s" % name)
        assert args[at - 1] == "--device" and args[at + 1:at + 3] == ["-v", "%s:%s:rw" % (queue, queue)]
    assert not [a for a in lab.node_run_args(lab.node_spec({"name": "n", "debian": "12"}, "molecule"))
                if a == "--device"]


def test_dynamic_addresses_stay_clear_of_the_lab_nodes(lab):
    assert lab.dynamic_range() == "172.30.99.128/25"


def test_nodes_use_the_cache_but_reach_the_mirror_directly(lab):
    conf = lab.apt_proxy_conf()
    assert 'Acquire::http::Proxy "http://172.30.99.1:3142";' in conf
    assert 'Acquire::http::Proxy::172.30.99.1 "DIRECT";' in conf


@pytest.mark.parametrize("url, cached_as", [
    ("http://deb.debian.org/debian/pool/main/d/dkms/dkms_3.0.10-8_all.deb", "deb.debian.org/debian/pool/main/d/dkms/dkms_3.0.10-8_all.deb"),
    ("http://deb.debian.org/debian/dists/bookworm/main/binary-amd64/by-hash/SHA256/ab12",
     "deb.debian.org/debian/dists/bookworm/main/binary-amd64/by-hash/SHA256/ab12"),
    ("http://deb.debian.org/debian/dists/bookworm/InRelease", None),
    ("http://deb.debian.org/debian/dists/bookworm/main/binary-amd64/Packages.xz", None),
    ("http://deb.debian.org/debian/pool/../../etc/x.deb", None),
    ("https://deb.debian.org/debian/pool/x.deb", None),
    ("http://x.deb", None),
])
def test_what_the_package_cache_keeps(lab, url, cached_as):
    path = lab.cache_path("/c", url)
    assert path == (os.path.join("/c", cached_as) if cached_as else None)


def test_lab_mirror_argv_recognised(lab):
    argv = lab.mirror_argv()
    assert lab.is_our_mirror_argv(argv) and lab.is_lab_mirror_argv(argv)
    assert lab.is_our_mirror_argv(["/usr/bin/python3"] + argv[1:])
    assert lab.is_our_mirror_argv(["/usr/bin/python3", "/other/checkout/lab/lab.py"] + argv[2:]), \
        "the same directory and address served by another checkout's lab.py is the same mirror"
    other = list(argv)
    other[argv.index("--dir") + 1] = "/elsewhere/.cache/mirror"
    assert lab.is_lab_mirror_argv(other) and not lab.is_our_mirror_argv(other)
    for argv in (None, [], ["sleep", "60"], ["python3", "/x/lab.py", "up"], ["python3", "/x/lab.py", "_serve-mirror"]):
        assert not lab.is_our_mirror_argv(argv)
        assert not lab.is_lab_mirror_argv(argv)


# ---------------------------------------------------------------------------- the mirror process

_PORTS = iter(range(18099, 18199))


def _load_lab(monkeypatch, tmp_path, name, port, lab_py=LAB, mirror_dir=None):
    monkeypatch.setenv("GPUOPS_LAB_SUBNET", "127.77.0.0/24")
    monkeypatch.setenv("GPUOPS_LAB_MIRROR_PORT", str(port))
    monkeypatch.setenv("GPUOPS_LAB_STATE", str(tmp_path / name / "state"))
    monkeypatch.setenv("GPUOPS_MIRROR_DIR", mirror_dir or str(tmp_path / name / "mirror"))
    spec = importlib.util.spec_from_file_location("gpuops_lab_" + name, lab_py)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def port():
    return next(_PORTS) + (os.getpid() % 50) * 100


@pytest.fixture
def bystander():
    """An unrelated process the lab must never signal."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def _alive(proc):
    return proc.poll() is None


def test_mirror_is_tracked_by_its_pid_file(monkeypatch, tmp_path, port):
    lab = _load_lab(monkeypatch, tmp_path, "one", port)
    try:
        pid = lab.ensure_mirror()
        assert lab.mirror_alive()
        assert int((tmp_path / "one" / "state" / "mirror.pid").read_text()) == pid
        assert lab.proc_cmdline(pid)[1:] == lab.mirror_argv()[1:]
        assert lab.listener_pids("127.77.0.1", port) == [pid]
        assert lab.ensure_mirror() == pid  # running: nothing restarts
        with urllib.request.urlopen(lab.mirror_url() + "/SHA256SUMS", timeout=5) as resp:
            assert resp.status == 200
    finally:
        lab.stop_mirror()
    assert not lab.mirror_alive()
    assert not (tmp_path / "one" / "state" / "mirror.pid").exists()


def test_pid_file_naming_another_process_is_not_signalled(monkeypatch, tmp_path, port, bystander):
    """A stale pid file whose pid now belongs to another process: that process lives."""
    lab = _load_lab(monkeypatch, tmp_path, "stale", port)
    state = tmp_path / "stale" / "state"
    state.mkdir(parents=True)
    (state / "mirror.pid").write_text("%d\n" % bystander.pid)
    assert lab.our_mirror_pid() is None
    lab.stop_mirror()
    (state / "mirror.pid").write_text("%d\n" % bystander.pid)
    try:
        pid = lab.ensure_mirror()
        assert pid != bystander.pid
    finally:
        lab.stop_mirror()
    time.sleep(0.2)
    assert _alive(bystander)


class _Liar(http.server.BaseHTTPRequestHandler):
    """An HTTP server that claims to be a lab mirror run by someone else's pid."""
    victim = None

    def do_GET(self):  # noqa: N802
        body = json.dumps({"dir": "/elsewhere/.cache/mirror", "pid": self.victim}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_http_answer_never_chooses_a_process_to_kill(monkeypatch, tmp_path, port, bystander):
    """Something else holds the mirror port and names an unrelated pid in its answer: the lab
    refuses, names the holder, and signals nobody."""
    lab = _load_lab(monkeypatch, tmp_path, "liar", port)
    handler = type("Liar", (_Liar,), {"victim": bystander.pid})
    server = http.server.ThreadingHTTPServer(("127.77.0.1", port), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert lab.mirror_identity()["pid"] == bystander.pid
        with pytest.raises(lab.LabError, match="pid %d .* is not a gpuops lab mirror" % os.getpid()):
            lab.ensure_mirror()
        assert not lab.mirror_alive()
    finally:
        server.shutdown()
        server.server_close()
    time.sleep(0.2)
    assert _alive(bystander)


def _other_checkout(tmp_path):
    """A copy of lab/ in another directory: the lab.py of another checkout."""
    other = tmp_path / "other-checkout" / "lab"
    shutil.copytree(os.path.dirname(LAB), str(other), ignore=shutil.ignore_patterns("__pycache__"))
    return str(other / "lab.py")


def test_mirror_of_the_same_checkout_without_our_pid_file_is_left_alone(monkeypatch, tmp_path, port):
    """A lab mirror that our pid file does not name (here: the same lab.py with another state
    directory) holds the port: it is named in the error and keeps running."""
    first = _load_lab(monkeypatch, tmp_path, "first", port)
    second = _load_lab(monkeypatch, tmp_path, "second", port)
    try:
        old = first.ensure_mirror()
        assert first.mirror_alive() and not second.mirror_alive()
        with pytest.raises(second.LabError, match="pid %d, the lab mirror of .* listens on" % old):
            second.ensure_mirror()
        assert first.mirror_alive() and first.our_mirror_pid() == old
        second.stop_mirror()
        assert first.mirror_alive()
    finally:
        second.stop_mirror()
        first.stop_mirror()


def test_another_checkouts_service_is_never_signalled(monkeypatch, tmp_path, port):
    """Another checkout's lab mirror holds the port, and our pid file even names it: /proc
    shows it runs another checkout's lab.py, so it is neither stopped nor replaced."""
    other = _load_lab(monkeypatch, tmp_path, "theirs", port, lab_py=_other_checkout(tmp_path))
    ours = _load_lab(monkeypatch, tmp_path, "ours", port)
    try:
        theirs = other.ensure_mirror()
        assert other.proc_cmdline(theirs)[1] == str(tmp_path / "other-checkout" / "lab" / "lab.py")
        (tmp_path / "ours" / "state").mkdir(parents=True)
        (tmp_path / "ours" / "state" / "mirror.pid").write_text("%d\n" % theirs)
        assert ours.our_mirror_pid() is None
        (tmp_path / "ours" / "state" / "mirror.pid").write_text("%d\n" % theirs)
        ours.stop_mirror()
        with pytest.raises(ours.LabError, match="the lab mirror of %s" % (tmp_path / "other-checkout")):
            ours.ensure_mirror()
        time.sleep(0.2)
        assert other.mirror_alive() and other.our_mirror_pid() == theirs
    finally:
        ours.stop_mirror()
        other.stop_mirror()
    assert not other.mirror_alive()


def test_same_settings_of_another_checkout_are_used_not_replaced(monkeypatch, tmp_path, port):
    """The same service with the same settings (directory, address) run by another
    checkout's lab.py is used as it is (the shared package cache works so)."""
    other = _load_lab(monkeypatch, tmp_path, "theirs", port, lab_py=_other_checkout(tmp_path))
    ours = _load_lab(monkeypatch, tmp_path, "ours", port, mirror_dir=str(tmp_path / "theirs" / "mirror"))
    try:
        theirs = other.ensure_mirror()
        assert ours.ensure_mirror() == theirs
        ours.stop_mirror()
        assert other.mirror_alive()
    finally:
        other.stop_mirror()


class _Origin(http.server.BaseHTTPRequestHandler):
    """A Debian archive stand-in that counts what it serves."""
    hits = None

    def do_GET(self):  # noqa: N802
        self.hits.append(self.path)
        body = ("content of %s\n" % self.path).encode()
        if self.path.endswith("missing.deb"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_package_cache_keeps_packages_and_passes_indexes(monkeypatch, tmp_path, port):
    monkeypatch.setenv("GPUOPS_LAB_APT_CACHE_PORT", str(port + 1))
    monkeypatch.setenv("GPUOPS_LAB_APT_CACHE_DIR", str(tmp_path / "apt-cache"))
    lab = _load_lab(monkeypatch, tmp_path, "cache", port)
    hits = []
    origin = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("O", (_Origin,), {"hits": hits}))
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % origin.server_address[1]
    monkeypatch.setenv("GPUOPS_LAB_DEBIAN_MIRROR", base + "/debian")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": lab.apt_cache_url()}))
    try:
        assert lab.ensure_apt_cache() == "http://127.77.0.1:%d" % (port + 1)
        assert lab.APT_CACHE_SERVICE.alive()
        for _round in range(2):
            with opener.open(base + "/debian/pool/main/x/x_1.0_amd64.deb", timeout=10) as resp:
                assert resp.read() == b"content of /debian/pool/main/x/x_1.0_amd64.deb\n"
            with opener.open(base + "/debian/dists/bookworm/InRelease", timeout=10) as resp:
                assert resp.read().startswith(b"content of")
        with pytest.raises(urllib.error.HTTPError) as err:
            opener.open(base + "/debian/pool/missing.deb", timeout=10)
        assert err.value.code == 404
        for elsewhere in (base + "/private/status", base + "/debian/../private/status",
                          "http://127.77.0.1:%d/SHA256SUMS" % port):
            with pytest.raises(urllib.error.HTTPError) as err:
                opener.open(elsewhere, timeout=10)
            assert err.value.code == 403, elsewhere
        assert not [h for h in hits if "private" in h], "nothing outside the Debian mirrors is forwarded"
        assert hits.count("/debian/pool/main/x/x_1.0_amd64.deb") == 1, "a package is fetched once"
        assert hits.count("/debian/dists/bookworm/InRelease") == 2, "indexes always come from the origin"
        kept = tmp_path / "apt-cache" / ("127.0.0.1:%d" % origin.server_address[1]) / "debian/pool/main/x/x_1.0_amd64.deb"
        assert kept.is_file()
        assert not list((tmp_path / "apt-cache").rglob("missing.deb"))
    finally:
        lab.APT_CACHE_SERVICE.stop()
        origin.shutdown()
        origin.server_close()
    assert not lab.APT_CACHE_SERVICE.alive()


@pytest.mark.parametrize("inspect, state", [
    ("true|molecule||gpuops-lab/debian:12-abc|/src/a\n", (True, "molecule", "/src/a")),
    ("false|node||gpuops-lab/debian:13-abc|/src/b\n", (False, "node", "/src/b")),
    ("true|node||gpuops-lab/debian:13-abc|\n", (True, "node", None)),  # an older lab.py's node: no checkout
    ("true||molecule|gpuops-lab/debian:12|\n", (True, "molecule", None)),  # the old molecule docker driver's node
    ("true||molecule|postgres:16|\n", (True, None, None)),
    ("true|||gpuops-lab/debian:13|/src/a\n", (True, None, None)),  # someone else's container on a lab image
])
def test_only_lab_containers_count_as_nodes(lab, monkeypatch, inspect, state):
    class Res:
        returncode, stdout = 0, inspect
    monkeypatch.setattr(lab.nodes, "run", lambda *a, **kw: Res)
    assert lab.container_state("x") == state


# ---------------------------------------------------------------------------- nodes of this checkout

def test_nodes_carry_their_checkout(lab):
    args = lab.node_run_args(lab.node_spec({"name": "n1", "debian": "12"}, "molecule"))
    assert "io.gpuops.lab.checkout=%s" % os.path.realpath(lab.REPO) in args
    assert args[args.index("io.gpuops.lab.checkout=%s" % os.path.realpath(lab.REPO)) - 1] == "--label"


class _Docker:
    """Records docker commands; containers: name -> (running, kind, checkout)."""

    def __init__(self, containers, listed=""):
        self.calls, self.containers, self.listed = [], containers, listed

    def __call__(self, cmd, check=True, capture=False, **kw):
        self.calls.append(cmd)

        class Res:
            returncode, stdout = 0, self.listed
        return Res


def test_lab_down_removes_only_this_checkouts_nodes(lab, monkeypatch):
    docker = _Docker({}, listed="abc123\n")
    monkeypatch.setattr(lab.nodes, "run", docker)
    lab.nodes_down(kind="node")
    listing = docker.calls[0]
    assert listing[:3] == ["docker", "ps", "-aq"]
    assert "label=io.gpuops.lab=node" in listing
    assert "label=io.gpuops.lab.checkout=%s" % os.path.realpath(lab.REPO) in listing
    assert docker.calls[1] == ["docker", "rm", "-f", "abc123"]


def test_nodes_down_by_name_leaves_other_checkouts_alone(lab, monkeypatch, capsys):
    mine = os.path.realpath(lab.REPO)
    states = {"a": (True, "molecule", mine), "b": (True, "molecule", "/work/other"), "c": (True, "node", None),
              "d": (True, None, None), "e": None}
    docker = _Docker(states)
    monkeypatch.setattr(lab.nodes, "run", docker)
    monkeypatch.setattr(lab.nodes, "container_state", states.get)
    lab.nodes_down(["a", "b", "c", "d", "e"], kind="molecule")
    assert docker.calls == [["docker", "rm", "-f", "a"]]
    out = capsys.readouterr().out
    assert "left b alone: it belongs to /work/other" in out and "left c alone" in out


@pytest.mark.parametrize("state, message", [
    ((True, "molecule", "/work/other"), "belongs to /work/other, not to this checkout"),
    ((True, "node", None), "belongs to no checkout"),
    ((True, None, None), "is not a lab node"),
])
def test_nodes_up_never_replaces_another_checkouts_container(lab, monkeypatch, tmp_path, state, message):
    docker = _Docker({})
    monkeypatch.setattr(lab.nodes, "run", docker)
    monkeypatch.setattr(lab.nodes, "container_state", lambda name: state)
    monkeypatch.setattr(lab.nodes, "ssh_key", lambda cfg: str(tmp_path / "key"))
    (tmp_path / "key.pub").write_text("ssh-ed25519 AAAA test\n")
    with pytest.raises(lab.LabError, match=message):
        lab.nodes_up([lab.node_spec({"name": "n1", "debian": "12"}, "molecule")])
    assert docker.calls == []


# ---------------------------------------------------------------------------- the package cache's reach

_ALLOWED = ("http://deb.debian.org/debian", "http://deb.debian.org/debian-security")


@pytest.mark.parametrize("url, allowed", [
    ("http://deb.debian.org/debian/pool/main/d/dkms/dkms_3.0.10-8_all.deb", True),
    ("http://deb.debian.org/debian/dists/bookworm/InRelease", True),
    ("http://deb.debian.org/debian-security/dists/bookworm-security/InRelease", True),
    ("http://deb.debian.org/debian/pool/main/n/nvidia/libnvidia_535%3a1_amd64.deb", True),
    ("http://DEB.debian.org:80/debian/dists/trixie/Release", True),
    ("http://deb.debian.org/debianx/pool/x.deb", False),
    ("http://deb.debian.org/debian", False),
    ("http://deb.debian.org/", False),
    ("http://deb.debian.org/debian/../etc/passwd", False),
    ("http://deb.debian.org/debian/%2e%2e/admin", False),
    ("http://deb.debian.org/debian/a%2fb", False),
    ("http://deb.debian.org:8080/debian/pool/x.deb", False),
    ("http://deb.debian.org@127.0.0.1/debian/pool/x.deb", False),
    ("http://127.0.0.1:9100/metrics", False),
    ("http://172.30.99.1:8099/debian/pool/x.deb", False),
    ("http://169.254.169.254/latest/meta-data/", False),
    ("http://deb.debian.org/debian/dists/bookworm/InRelease?x=1", False),
    ("https://deb.debian.org/debian/dists/bookworm/InRelease", False),
    ("http://deb.debian.org:x/debian/", False),
])
def test_the_package_cache_forwards_only_the_debian_mirrors(lab, url, allowed):
    assert lab.url_allowed(url, _ALLOWED) is allowed


def test_the_package_cache_allows_the_hosts_mirror_and_its_security_archive(lab, monkeypatch):
    monkeypatch.setenv("GPUOPS_LAB_DEBIAN_MIRROR", "http://m.example/debian/")
    argv = lab.apt_cache_argv()
    assert argv[argv.index("--allow") + 1] == "http://m.example/debian,http://m.example/debian-security"


# ---------------------------------------------------------------------------- the molecule lock

def test_makefile_locks_under_run():
    with open(os.path.join(os.path.dirname(LAB), "..", "Makefile")) as fh:
        text = fh.read()
    assert "MOLECULE_LOCK ?= /run/gpuops-molecule.lock\n" in text
    assert "$(LAB) molecule-lock $(MOLECULE_LOCK)" in text


@pytest.mark.skipif(os.geteuid() != 0, reason="creates root-owned files")
def test_the_molecule_lock_must_be_a_root_owned_regular_file(lab, tmp_path):
    fresh = tmp_path / "fresh.lock"
    lab.check_lock_file(str(fresh))
    assert fresh.is_file() and fresh.stat().st_uid == 0
    lab.check_lock_file(str(fresh))  # already there: fine
    theirs = tmp_path / "theirs.lock"
    theirs.write_text("")
    os.chown(str(theirs), 1000, 1000)
    with pytest.raises(lab.LabError, match="owned by uid 1000, not root"):
        lab.check_lock_file(str(theirs))
    link = tmp_path / "link.lock"
    link.symlink_to(fresh)
    with pytest.raises(lab.LabError, match="not a regular file"):
        lab.check_lock_file(str(link))
    with pytest.raises(lab.LabError, match="not a regular file"):
        lab.check_lock_file(str(tmp_path))
    assert lab.main(["molecule-lock", str(theirs)]) == 2


def test_molecule_lock_of_a_user_is_refused(lab, tmp_path, monkeypatch):
    """Whoever runs it: a lock file another user made is refused (os.lstat reports its owner)."""
    path = tmp_path / "x.lock"
    path.write_text("")
    real = os.lstat

    class Fake:
        st_mode, st_uid = real(str(path)).st_mode, 1234
    monkeypatch.setattr(lab.os, "lstat", lambda p: Fake)
    with pytest.raises(lab.LabError, match="uid 1234"):
        lab.check_lock_file(str(path))
