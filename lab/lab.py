"""The gpuops.dlserver container lab.

One tool for everything the README's commands and the molecule scenarios need around
the collection: a Docker engine, systemd node images, the lab nodes, a package cache and
the artifact mirror. Standard library only, so it runs before any virtualenv exists.
This file is the only place that knows how a lab node is run: `make lab` starts the
nodes of inventories/lab with it, and every molecule scenario creates and destroys its
nodes with it (molecule/_shared/create.yml, destroy.yml).

    lab.py engine          ensure Debian's docker.io + debootstrap and a running dockerd
    lab.py cache           serve the nodes' package cache (an apt proxy) on the lab gateway
    lab.py images          build the Debian 12/13 node images (debootstrap + docker import), cached
    lab.py network         create the lab network (172.30.99.0/24 unless GPUOPS_LAB_SUBNET)
    lab.py mirror          serve the artifact mirror directory over HTTP on the lab gateway
    lab.py up              all of the above, then start the nodes of inventories/lab
    lab.py nodes-up        start the nodes named by --spec (JSON), e.g. a molecule scenario's
    lab.py nodes-down      remove the lab or molecule nodes named by --names
    lab.py down            remove the lab nodes, stop the mirror and the cache (images and
                           cached packages are kept)
    lab.py mirror-stop     stop this checkout's mirror and package cache
    lab.py status          what runs

Nothing is pulled from a registry and no container is privileged: nodes get SYS_ADMIN,
the host cgroup namespace and /sys/fs/cgroup mounted read-write, which runs systemd.

The mirror and the package cache are processes of this checkout: each pid is kept in a pid
file under <state>, and a pid counts as ours only when /proc/<pid>/cmdline is the command
this file starts it with. A process holding their port is stopped only when /proc shows it
is the same service of another checkout. Nothing an HTTP answer says is ever used to pick a
process to signal.
"""

import argparse
import functools
import hashlib
import http.server
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAB_PY = os.path.abspath(__file__)
REPO = os.path.dirname(HERE)
STATE = os.environ.get("GPUOPS_LAB_STATE", os.path.join(REPO, ".cache", "lab"))
LOG_DIR = os.environ.get("GPUOPS_LAB_LOG_DIR", "/var/log/gpuops-lab")
NETWORK = os.environ.get("GPUOPS_LAB_NETWORK", "gpuops-lab")
SUBNET = os.environ.get("GPUOPS_LAB_SUBNET", "172.30.99.0/24")
MIRROR_PORT = int(os.environ.get("GPUOPS_LAB_MIRROR_PORT", "8099"))
MIRROR_DIR = os.environ.get("GPUOPS_MIRROR_DIR", os.path.join(REPO, ".cache", "mirror"))
# The lab's package cache: an HTTP proxy on the lab gateway (run by this file, like the
# mirror) that every node's apt goes through and that keeps every package it passes on, so
# a package is downloaded once per machine, not once per node and scenario. The cache
# directory is shared by every checkout on the machine (a cache another checkout started with
# the same directory and address is used as it is). GPUOPS_LAB_APT_CACHE=off leaves it
# out (nodes then fetch from the Debian mirror directly).
APT_CACHE = os.environ.get("GPUOPS_LAB_APT_CACHE", "on")
APT_CACHE_PORT = int(os.environ.get("GPUOPS_LAB_APT_CACHE_PORT", "3142"))
APT_CACHE_DIR = os.environ.get("GPUOPS_LAB_APT_CACHE_DIR", "/var/cache/gpuops-lab/apt")
APT_CACHE_CONF = "/etc/apt/apt.conf.d/00gpuops-lab-apt-cache"
LABEL = "io.gpuops.lab"
NODE_KINDS = ("node", "molecule")  # label values: lab nodes of `make lab`, molecule nodes

# Node images. The recipe (this table, the package set and the post-install script) is
# hashed into the image tag (gpuops-lab/debian:<major>-<recipe>), so checkouts with
# different recipes each keep theirs and an image is built only when its recipe is new.
RELEASES = {
    "12": {"suite": "bookworm", "updates": True},
    "13": {"suite": "trixie", "updates": True},
}
IMAGE_REPO = os.environ.get("GPUOPS_LAB_IMAGE_REPO", "gpuops-lab/debian")
# A minimal server, plus what every scenario would otherwise install on every node:
# python3-pip (the NVML binding's installer, without its build-essential recommends) and
# dkms with its compiler (every driver package depends on it; no headers, so it builds
# nothing in a container).
PACKAGES = [
    "systemd", "systemd-sysv", "dbus", "python3", "python3-apt", "ca-certificates", "sudo",
    "iproute2", "procps", "kmod", "gnupg", "openssh-server", "curl",
    "python3-pip", "dkms",
]
HOST_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"
POST_INSTALL = r"""
set -e
# Trust the CAs the host trusts (proxies that re-sign TLS).
if [ -s /usr/local/share/ca-certificates/gpuops-host-bundle.crt ]; then
  update-ca-certificates >/dev/null 2>&1 || true
fi
# A node boots like a server: no getty on a console that does not exist, no machine-id
# baked into the image (systemd makes one at first boot).
systemctl mask getty@tty1.service console-getty.service systemd-logind.service >/dev/null 2>&1 || true
: > /etc/machine-id
rm -f /var/lib/dbus/machine-id
# Root logs in over SSH with the lab key only.
mkdir -p /root/.ssh /etc/ssh/sshd_config.d && chmod 700 /root/.ssh
printf 'PermitRootLogin prohibit-password\nPasswordAuthentication no\nUseDNS no\n' \
  > /etc/ssh/sshd_config.d/gpuops-lab.conf
rm -f /etc/ssh/ssh_host_*_key /etc/ssh/ssh_host_*_key.pub
mkdir -p /etc/systemd/system/ssh.service.d
printf '[Service]\nExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n' \
  > /etc/systemd/system/ssh.service.d/gpuops-lab-hostkeys.conf
systemctl enable ssh.service >/dev/null 2>&1 || true
apt-get clean
# No package lists, dated long ago: the first apt task with update_cache/cache_valid_time
# refreshes them, as on a server that has not run apt since it was installed.
rm -rf /var/lib/apt/lists/*
mkdir -p /var/lib/apt/lists/partial
touch -d '2000-01-01 00:00:00' /var/lib/apt/lists /var/lib/apt/lists/partial
rm -f /var/lib/apt/periodic/update-success-stamp
"""


class LabError(Exception):
    """A precondition the lab cannot meet; the message says what to do."""


def log(msg):
    print("lab: " + msg, flush=True)


def run(cmd, check=True, capture=False, **kw):
    if capture:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("text", True)
    res = subprocess.run(cmd, **kw)  # pylint: disable=subprocess-run-check
    if check and res.returncode != 0:
        detail = ""
        if capture:
            detail = "\n" + (res.stderr or res.stdout or "").strip()[-2000:]
        raise LabError("command failed (rc=%d): %s%s" % (res.returncode, " ".join(cmd), detail))
    return res


def docker_answers():
    if not shutil.which("docker"):
        return False
    return run(["docker", "info", "--format", "{{.ServerVersion}}"], check=False, capture=True).returncode == 0


# --------------------------------------------------------------------------- engine

def need_root(what):
    if os.geteuid() != 0:
        raise LabError(
            "%s needs root (it installs Debian packages and starts dockerd). "
            "Run it as root, e.g. `sudo make lab`, or start a Docker engine yourself and add "
            "your user to the docker group." % what)


def ensure_packages():
    missing = [p for p, binary in (("docker.io", "dockerd"), ("debootstrap", "debootstrap"))
               if not shutil.which(binary) and not os.path.exists("/usr/sbin/" + binary)]
    if not shutil.which("ssh"):
        missing.append("openssh-client")
    if not shutil.which("gpg"):
        missing.append("gnupg")  # signs the repository doubles (tests/doubles/)
    if not missing:
        return
    need_root("installing " + ", ".join(missing))
    if not shutil.which("apt-get"):
        raise LabError("missing %s and this host has no apt-get: install them with your "
                       "package manager, then run again" % ", ".join(missing))
    log("installing " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(["apt-get", "update", "-qq"], env=env)
    run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing, env=env,
        capture=True)


def ensure_engine():
    ensure_packages()
    if docker_answers():
        return
    need_root("starting dockerd")
    os.makedirs(LOG_DIR, exist_ok=True)
    logfile = os.path.join(LOG_DIR, "dockerd.log")
    if os.path.isdir("/run/systemd/system") and shutil.which("systemctl"):
        log("starting docker.service through systemd")
        run(["systemctl", "start", "docker.service"], check=False)
    if not docker_answers():
        dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
        if not os.path.exists(dockerd):
            raise LabError("no dockerd found after installing docker.io; install Debian's docker.io")
        log("starting dockerd in the background (log: %s)" % logfile)
        with open(logfile, "ab") as out:
            subprocess.Popen([dockerd], stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    for _attempt in range(60):
        if docker_answers():
            log("docker engine answers")
            return
        time.sleep(1)
    raise LabError("dockerd did not answer within 60 s; see %s" % logfile)


# --------------------------------------------------------------------------- images

def host_debian_mirror():
    """The Debian mirror this host uses, so nodes install from the same place."""
    if os.environ.get("GPUOPS_LAB_DEBIAN_MIRROR"):
        return os.environ["GPUOPS_LAB_DEBIAN_MIRROR"].rstrip("/")
    candidates = []
    src_dir = "/etc/apt/sources.list.d"
    if os.path.isdir(src_dir):
        for name in sorted(os.listdir(src_dir)):
            if name.endswith(".sources"):
                with open(os.path.join(src_dir, name)) as fh:
                    for line in fh:
                        if line.startswith("URIs:"):
                            candidates.extend(line.split()[1:])
    if os.path.exists("/etc/apt/sources.list"):
        with open("/etc/apt/sources.list") as fh:
            for line in fh:
                parts = line.split()
                if parts and parts[0] == "deb":
                    candidates.extend(p for p in parts[1:] if "://" in p)
    for uri in candidates:
        if "security" not in uri and uri.rstrip("/").endswith("/debian"):
            return uri.rstrip("/")
    raise LabError("cannot tell which Debian mirror this host uses; set GPUOPS_LAB_DEBIAN_MIRROR")


def recipe_hash(major):
    h = hashlib.sha256()
    h.update(json.dumps([RELEASES[major], PACKAGES, POST_INSTALL], sort_keys=True).encode())
    if os.path.exists(HOST_CA_BUNDLE):
        with open(HOST_CA_BUNDLE, "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()[:16]


def image_tag(major):
    """The node image of a Debian release, named by its recipe."""
    if str(major) not in RELEASES:
        raise LabError("no lab image for Debian %s; the lab builds Debian %s"
                       % (major, " and ".join(sorted(RELEASES))))
    return "%s:%s-%s" % (IMAGE_REPO, major, recipe_hash(str(major)))


def image_exists(tag):
    return run(["docker", "image", "inspect", "--format", "{{.Id}}", tag], check=False, capture=True).returncode == 0


def sources_deb822(mirror, suite, updates):
    security = mirror[: -len("/debian")] + "/debian-security" if mirror.endswith("/debian") else None
    suites = suite + (" %s-updates" % suite if updates else "")
    text = ("Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n"
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" % (mirror, suites))
    if security:
        text += ("\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n"
                 "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" % (security, suite))
    return text


def build_image(major, force=False, cache_url=None):
    rel = RELEASES[major]
    tag = image_tag(major)
    if not force and image_exists(tag):
        log("image %s is current" % tag)
        return False
    need_root("building node images (debootstrap)")
    mirror = host_debian_mirror()
    os.makedirs(STATE, exist_ok=True)
    root = tempfile.mkdtemp(prefix="rootfs-%s-" % rel["suite"], dir=STATE)
    t0 = time.time()
    env = dict(os.environ)
    if cache_url:
        env["http_proxy"] = cache_url  # debootstrap's downloads go through the package cache too
    log("debootstrap %s from %s%s into %s (a minute or two)"
        % (rel["suite"], mirror, " through %s" % cache_url if cache_url else "", root))
    try:
        os.makedirs(os.path.join(LOG_DIR), exist_ok=True)
        with open(os.path.join(LOG_DIR, "debootstrap-%s.log" % rel["suite"]), "w") as out:
            res = subprocess.run(  # the log file says why it failed
                ["debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
                 rel["suite"], root, mirror], stdout=out, stderr=subprocess.STDOUT, check=False, env=env)
        if res.returncode != 0:
            raise LabError("debootstrap %s failed; see %s/debootstrap-%s.log"
                           % (rel["suite"], LOG_DIR, rel["suite"]))
        if os.path.exists(HOST_CA_BUNDLE):
            shutil.copy(HOST_CA_BUNDLE,
                        os.path.join(root, "usr/local/share/ca-certificates/gpuops-host-bundle.crt"))
        try:
            os.remove(os.path.join(root, "etc/apt/sources.list"))
        except FileNotFoundError:
            pass
        # The image names the real mirror; the cache is a node's apt proxy, set when it starts.
        with open(os.path.join(root, "etc/apt/sources.list.d/debian.sources"), "w") as fh:
            fh.write(sources_deb822(mirror, rel["suite"], rel["updates"]))
        run(["chroot", root, "/bin/sh", "-c", POST_INSTALL], capture=True)
        changes = ["CMD [\"/lib/systemd/systemd\"]",
                   "ENV container=docker",
                   "LABEL %s.recipe=%s" % (LABEL, recipe_hash(major)),
                   "LABEL %s.release=debian-%s" % (LABEL, major)]
        cmd = ["docker", "import"]
        for c in changes:
            cmd += ["--change", c]
        cmd += ["-", tag]
        tar = subprocess.Popen(["tar", "-C", root, "--numeric-owner", "-c", "."], stdout=subprocess.PIPE)
        res = subprocess.run(cmd, stdin=tar.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             check=False)
        tar.stdout.close()
        tar.wait()
        if res.returncode != 0 or tar.returncode != 0:
            raise LabError("docker import of %s failed: %s" % (tag, res.stderr.strip()))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    log("built %s in %.0f s" % (tag, time.time() - t0))
    return True


def ensure_images(majors=None, force=False, cache_url=None):
    for major in sorted(majors or RELEASES):
        build_image(major, force=force, cache_url=cache_url)


# --------------------------------------------------------------------------- package cache

def apt_cache_url(host=None):
    return "http://%s:%d" % (host or gateway(), APT_CACHE_PORT)


def apt_cache_argv():
    return [sys.executable, LAB_PY, "_serve-apt-cache", "--dir", os.path.realpath(APT_CACHE_DIR),
            "--bind", "%s:%d" % (gateway(), APT_CACHE_PORT)]


def cache_path(cache_dir, url):
    """Where a cacheable download lives in the cache, or None when it is not cacheable:
    packages (.deb, their names carry the version) and by-hash index files are immutable;
    Release files and indexes by name change and always go to the origin."""
    if not url.startswith("http://"):
        return None
    rest = url[len("http://"):].split("?", 1)[0]
    parts = [p for p in rest.split("/") if p]
    if len(parts) < 2 or any(p in (".", "..") for p in parts):
        return None
    if not (parts[-1].endswith((".deb", ".udeb")) or "by-hash" in parts[:-1]):
        return None
    return os.path.join(cache_dir, *parts)


class AptCacheHandler(http.server.BaseHTTPRequestHandler):
    """An HTTP proxy for apt that keeps every package it passes on (see cache_path)."""

    cache_dir = None
    protocol_version = "HTTP/1.1"
    timeout = 120
    PASS_HEADERS = ("If-Modified-Since", "If-None-Match", "Range", "If-Range", "Cache-Control")

    def _reply_file(self, path, head):
        size = os.path.getsize(path)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        if not head:
            with open(path, "rb") as fh:
                shutil.copyfileobj(fh, self.wfile, 1 << 20)

    def _relay(self, head):
        import urllib.error  # pylint: disable=import-outside-toplevel
        import urllib.request  # pylint: disable=import-outside-toplevel
        url = self.path
        if not url.startswith("http://"):
            self.send_error(400, "apt proxy: absolute http:// URLs only")
            return
        target = cache_path(self.cache_dir, url)
        if target and os.path.isfile(target):
            self._reply_file(target, head)
            return
        headers = {k: self.headers[k] for k in self.PASS_HEADERS if self.headers.get(k) and not target}
        req = urllib.request.Request(url, headers=headers, method="HEAD" if head else "GET")
        try:
            resp = urllib.request.urlopen(req, timeout=60)  # pylint: disable=consider-using-with
        except urllib.error.HTTPError as exc:
            resp = exc
        except OSError as exc:
            self.send_error(502, "apt proxy: %s" % exc)
            return
        with resp:
            code = resp.getcode() if hasattr(resp, "getcode") else resp.code
            body_len = resp.headers.get("Content-Length")
            self.send_response(code)
            for key in ("Content-Type", "Last-Modified", "ETag", "Content-Range", "Accept-Ranges"):
                if resp.headers.get(key):
                    self.send_header(key, resp.headers[key])
            if head or code in (204, 304) or body_len is None:
                data = b"" if head or code in (204, 304) else resp.read()
                self.send_header("Content-Length", body_len if head and body_len else str(len(data)))
                self.end_headers()
                if data:
                    self.wfile.write(data)
                return
            self.send_header("Content-Length", body_len)
            self.end_headers()
            keep = target and code == 200
            tmp = None
            if keep:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                tmp = tempfile.NamedTemporaryFile(dir=os.path.dirname(target), delete=False)  # pylint: disable=consider-using-with
            try:
                while True:
                    chunk = resp.read(1 << 20)
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    if tmp:
                        tmp.write(chunk)
                if tmp:
                    tmp.close()
                    if os.path.getsize(tmp.name) == int(body_len):
                        os.chmod(tmp.name, 0o644)
                        os.replace(tmp.name, target)
            finally:
                if tmp and os.path.exists(tmp.name):
                    tmp.close()
                    os.remove(tmp.name)

    def do_GET(self):  # noqa: N802
        self._relay(head=False)

    def do_HEAD(self):  # noqa: N802
        self._relay(head=True)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), format % args))


def serve_apt_cache(directory, bind):
    host, port = bind.rsplit(":", 1)
    os.makedirs(directory, exist_ok=True)
    handler = type("BoundAptCacheHandler", (AptCacheHandler,), {"cache_dir": directory})
    httpd = http.server.ThreadingHTTPServer((host, int(port)), handler)
    httpd.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    httpd.serve_forever()


def ensure_apt_cache():
    """The lab's package cache on the gateway; returns its URL, or None when off."""
    if APT_CACHE == "off":
        return None
    APT_CACHE_SERVICE.ensure()
    return apt_cache_url()


def apt_proxy_conf():
    """The apt configuration of a node that uses the lab's package cache. The mirror on the
    lab gateway is reached directly."""
    gw = gateway()
    return ("// gpuops lab (lab/lab.py): packages come through the lab's package cache.\n"
            "Acquire::http::Proxy \"%s\";\n"
            "Acquire::http::Proxy::%s \"DIRECT\";\n" % (apt_cache_url(gw), gw))


# --------------------------------------------------------------------------- network

def gateway():
    return str(next(ipaddress.ip_network(SUBNET).hosts()))


def dynamic_range():
    """Addresses docker hands out (molecule nodes): the upper half of the subnet, so the
    fixed addresses of inventories/lab (lower half) are never taken."""
    net = ipaddress.ip_network(SUBNET)
    if net.prefixlen >= 30:
        return None
    return str(list(net.subnets(prefixlen_diff=1))[1])


def ensure_network():
    res = run(["docker", "network", "inspect", "--format", "{{range .IPAM.Config}}{{.Subnet}}{{end}}", NETWORK],
              check=False, capture=True)
    if res.returncode == 0:
        if res.stdout.strip() != SUBNET:
            raise LabError("docker network %s exists with subnet %s, not %s; remove it "
                           "(docker network rm %s) or set GPUOPS_LAB_SUBNET"
                           % (NETWORK, res.stdout.strip(), SUBNET, NETWORK))
        return
    log("creating docker network %s (%s)" % (NETWORK, SUBNET))
    cmd = ["docker", "network", "create", "--subnet", SUBNET, "--gateway", gateway()]
    if dynamic_range():
        cmd += ["--ip-range", dynamic_range()]
    run(cmd + ["--label", LABEL + "=network", NETWORK], capture=True)


# --------------------------------------------------------------------------- services (mirror, cache)

def mirror_url():
    return "http://%s:%d" % (gateway(), MIRROR_PORT)


IDENTITY_PATH = "/.gpuops-lab-mirror"


def mirror_argv():
    """The command line of this checkout's mirror: /proc/<pid>/cmdline must match it (the
    interpreter aside) for a pid to count as ours."""
    return [sys.executable, LAB_PY, "_serve-mirror", "--dir", os.path.realpath(MIRROR_DIR),
            "--bind", "%s:%d" % (gateway(), MIRROR_PORT)]


def proc_cmdline(pid):
    """argv of a live process, or None."""
    try:
        with open("/proc/%d/cmdline" % int(pid), "rb") as fh:
            raw = fh.read()
    except (OSError, ValueError):
        return None
    if not raw:
        return None  # a zombie, or a kernel thread
    return [part.decode("utf-8", "replace") for part in raw.rstrip(b"\0").split(b"\0")]


def is_lab_service_argv(argv, command):
    """A lab service of any checkout: `<python> <dir>/lab/lab.py <command> ...`."""
    return (bool(argv) and len(argv) >= 3 and os.path.basename(argv[1]) == "lab.py"
            and os.path.basename(os.path.dirname(argv[1])) == "lab" and argv[2] == command)


def _hex_addr(host, port):
    packed = ipaddress.ip_address(host).packed
    return "%s:%04X" % ("".join("%02X" % b for b in reversed(packed)), port)


def listener_pids(host, port):
    """Pids of the processes that hold a listening TCP socket on host:port (or on any
    address, port), read from /proc: who really holds the port, not who says so."""
    wanted = {_hex_addr(host, port), _hex_addr("0.0.0.0", port)}
    inodes = set()
    try:
        with open("/proc/net/tcp") as fh:
            next(fh)
            for line in fh:
                fields = line.split()
                if len(fields) > 9 and fields[3] == "0A" and fields[1] in wanted:
                    inodes.add("socket:[%s]" % fields[9])
    except OSError:
        return []
    pids = []
    if not inodes:
        return pids
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fd_dir = "/proc/%s/fd" % entry
        try:
            for fd in os.listdir(fd_dir):
                try:
                    if os.readlink(os.path.join(fd_dir, fd)) in inodes:
                        pids.append(int(entry))
                        break
                except OSError:
                    continue
        except OSError:
            continue
    return sorted(pids)


def port_in_use(host, port):
    import socket  # pylint: disable=import-outside-toplevel
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex((host, port)) == 0


def _terminate(pid, what):
    log("stopping %s (pid %d)" % (what, pid))
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _attempt in range(50):
        if proc_cmdline(pid) is None:
            return
        time.sleep(0.1)


class Service:
    """A long-running HTTP service of the lab (the mirror, the package cache), tracked by
    a pid file of this checkout and the process's /proc/<pid>/cmdline."""

    def __init__(self, name, command, argv, port, env_port):
        self.name, self.command, self._argv, self._port, self.env_port = name, command, argv, port, env_port

    @property
    def port(self):
        return self._port()

    def argv(self):
        return self._argv()

    @property
    def pidfile(self):
        return os.path.join(STATE, self.command.strip("_").replace("serve-", "") + ".pid")

    def is_ours(self, argv):
        """This service with this configuration (command, directory, address): started by
        this checkout or by another one with the same settings, whichever Python runs it."""
        return is_lab_service_argv(argv, self.command) and argv[2:] == self.argv()[2:]

    def our_pid(self):
        """The pid in our pid file when that process is our service, else None. A pid file
        that names any other process (a stale pid the system reused) is dropped."""
        try:
            with open(self.pidfile) as fh:
                pid = int(fh.read().strip() or 0)
        except (OSError, ValueError):
            return None
        if pid > 0 and self.is_ours(proc_cmdline(pid)):
            return pid
        try:
            os.remove(self.pidfile)
        except OSError:
            pass
        return None

    def running_pid(self):
        """The pid that holds the service's address when it is this service with this
        configuration, else None."""
        for pid in listener_pids(gateway(), self.port):
            if self.is_ours(proc_cmdline(pid)):
                return pid
        return None

    def alive(self):
        return self.running_pid() is not None

    def free_port(self):
        """Make the address free for our service. A process that holds it is stopped only
        when /proc shows that it is this lab service (of another checkout); anything else
        holding the port is left alone and named in the error."""
        url = "%s:%d" % (gateway(), self.port)
        for pid in listener_pids(gateway(), self.port):
            argv = proc_cmdline(pid)
            if is_lab_service_argv(argv, self.command):
                _terminate(pid, "the lab %s of %s" % (self.name, argv[argv.index("--dir") + 1]
                                                      if "--dir" in argv else argv[1]))
            else:
                raise LabError("pid %d (%s) listens on %s and is not a gpuops lab %s; stop it or set %s"
                               % (pid, " ".join(argv or ["?"])[:200], url, self.name, self.env_port))
        for _attempt in range(30):
            if not port_in_use(gateway(), self.port):
                return
            time.sleep(0.1)
        raise LabError("something this user cannot see listens on %s (not a process of the lab); stop it "
                       "or set %s" % (url, self.env_port))

    def ensure(self):
        running = self.running_pid()
        if running:
            return running
        stale = self.our_pid()
        if stale:
            _terminate(stale, "this checkout's %s, which does not hold its port" % self.name)
        self.free_port()
        os.makedirs(STATE, exist_ok=True)
        logfile = os.path.join(STATE, os.path.basename(self.pidfile)[:-4] + ".log")
        log("%s at %s:%d (log: %s)" % (self.name, gateway(), self.port, logfile))
        with open(logfile, "ab") as out:
            proc = subprocess.Popen(self.argv(), stdout=out, stderr=subprocess.STDOUT,  # pylint: disable=consider-using-with
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        with open(self.pidfile, "w") as fh:
            fh.write("%d\n" % proc.pid)
        for _attempt in range(50):
            if proc.poll() is not None:
                break
            if proc.pid in listener_pids(gateway(), self.port):
                return proc.pid
            time.sleep(0.1)
        raise LabError("the %s did not start; see %s" % (self.name, logfile))

    def stop(self):
        pid = self.our_pid()
        if pid:
            _terminate(pid, "the %s" % self.name)
        try:
            os.remove(self.pidfile)
        except OSError:
            pass


MIRROR_SERVICE = Service("mirror", "_serve-mirror", mirror_argv, lambda: MIRROR_PORT, "GPUOPS_LAB_MIRROR_PORT")
APT_CACHE_SERVICE = Service("package cache", "_serve-apt-cache", apt_cache_argv, lambda: APT_CACHE_PORT, "GPUOPS_LAB_APT_CACHE_PORT")


def is_lab_mirror_argv(argv):
    return is_lab_service_argv(argv, "_serve-mirror")


def is_our_mirror_argv(argv):
    return MIRROR_SERVICE.is_ours(argv)


def our_mirror_pid():
    return MIRROR_SERVICE.our_pid()


def mirror_alive():
    """Our mirror process runs and holds the mirror address."""
    return MIRROR_SERVICE.alive()


def mirror_identity():
    """What the mirror address answers at IDENTITY_PATH ({"dir": ...} from a lab mirror,
    {} from another HTTP server, None when nothing answers). Shown by `status`; never
    used to choose a process to stop."""
    import urllib.error  # pylint: disable=import-outside-toplevel
    import urllib.request  # pylint: disable=import-outside-toplevel
    try:
        with urllib.request.urlopen(mirror_url() + IDENTITY_PATH, timeout=2) as resp:
            return json.loads(resp.read().decode())
    except urllib.error.HTTPError:
        return {}
    except (OSError, ValueError):
        return None


def ensure_mirror():
    """Serve MIRROR_DIR on the lab gateway. The layout and its index come from
    playbooks/mirror.yml (the same playbook an air-gapped site runs) and the doubles'
    builders; both index with the collection's mirror module_utils."""
    os.makedirs(MIRROR_DIR, exist_ok=True)
    sums = os.path.join(MIRROR_DIR, "SHA256SUMS")
    if not os.path.exists(sums):
        open(sums, "w").close()
    return MIRROR_SERVICE.ensure()


def stop_mirror():
    """Stop this checkout's mirror: the pid of our pid file, when it is our mirror."""
    MIRROR_SERVICE.stop()


class MirrorHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a mirror directory, and at IDENTITY_PATH which directory and process serve it
    (for `status` and for the lab.py of older checkouts; this file never acts on it)."""

    mirror_dir = None

    def do_GET(self):
        if self.path == IDENTITY_PATH:
            body = json.dumps({"dir": self.mirror_dir, "pid": os.getpid()}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), format % args))


def serve_mirror(directory, bind):
    host, port = bind.rsplit(":", 1)
    handler_cls = type("BoundMirrorHandler", (MirrorHandler,), {"mirror_dir": directory})
    handler = functools.partial(handler_cls, directory=directory)
    httpd = http.server.ThreadingHTTPServer((host, int(port)), handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    httpd.serve_forever()


# --------------------------------------------------------------------------- nodes

def node_spec(raw, kind):
    """A node as lab.py runs it, from an inventories/lab host or a molecule platform:
    name, Debian release, optional fixture (tests/fixtures/hosts/<fixture>) and address."""
    if not isinstance(raw, dict) or not raw.get("name"):
        raise LabError("a node needs a name: %r" % (raw,))
    debian = str(raw.get("debian", ""))
    if debian not in RELEASES:
        raise LabError("node %s: debian must be one of %s, not %r"
                       % (raw["name"], ", ".join(sorted(RELEASES)), raw.get("debian")))
    fixture = raw.get("fixture") or None
    if fixture and not os.path.isdir(os.path.join(REPO, "tests", "fixtures", "hosts", fixture)):
        raise LabError("node %s: no fixture tests/fixtures/hosts/%s" % (raw["name"], fixture))
    return {"name": str(raw["name"]), "debian": debian, "fixture": fixture, "ip": raw.get("ip") or None,
            "kind": kind}


def load_nodes():
    """The lab nodes of inventories/lab: hosts that carry `gpuops_lab_node` ({debian: ...});
    a host's sysfs fixture is its `gpuops_fixture`, as in the molecule scenarios."""
    inventory = os.path.join(REPO, "inventories", "lab")
    tool = shutil.which("ansible-inventory")
    if not tool:
        raise LabError("ansible-inventory is not on PATH: run `make setup` (or activate .venv) first")
    res = run([tool, "-i", inventory, "--list"], capture=True)
    hostvars = json.loads(res.stdout).get("_meta", {}).get("hostvars", {})
    nodes = []
    for name in sorted(hostvars):
        spec = hostvars[name].get("gpuops_lab_node")
        if not spec:
            continue
        nodes.append(node_spec({"name": name, "ip": hostvars[name]["ansible_host"], "debian": spec.get("debian"),
                                "fixture": hostvars[name].get("gpuops_fixture")}, "node"))
    if not nodes:
        raise LabError("no host in %s has gpuops_lab_node" % inventory)
    return nodes


def ssh_key():
    key = os.path.join(STATE, "ssh", "id_ed25519")
    if not os.path.exists(key):
        os.makedirs(os.path.dirname(key), mode=0o700, exist_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuops-lab", "-f", key], capture=True)
    return key


def container_state(name):
    """(running, kind) of a container, kind being its lab label value (None: not the lab's);
    None when there is no such container. A node the molecule docker driver of earlier
    versions of this repository made (label owner=molecule, a lab image) counts as a
    molecule node."""
    res = run(["docker", "inspect", "--format",
               "{{.State.Running}}|{{ index .Config.Labels \"%s\" }}|{{ index .Config.Labels \"owner\" }}|"
               "{{ .Config.Image }}" % LABEL, name], check=False, capture=True)
    if res.returncode != 0:
        return None
    fields = (res.stdout.strip().split("|") + ["", "", "", ""])[:4]
    running, kind, owner, image = fields[0] == "true", fields[1], fields[2], fields[3]
    if kind not in NODE_KINDS:
        kind = "molecule" if owner == "molecule" and image.startswith("gpuops-lab") else None
    return running, kind


def node_run_args(node):
    """THE definition of a lab node container (lab and molecule alike)."""
    args = [
        "docker", "run", "-d", "--name", node["name"], "--hostname", node["name"],
        "--label", "%s=%s" % (LABEL, node["kind"]),
        "--cap-add", "SYS_ADMIN", "--cgroupns", "host",
        "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
        "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp",
        "--stop-signal", "SIGRTMIN+3",
        "--network", NETWORK,
    ]
    if node.get("ip"):
        args += ["--ip", node["ip"]]
    return args + [image_tag(node["debian"])]


def node_address(name):
    res = run(["docker", "inspect", "--format",
               "{{ with index .NetworkSettings.Networks \"%s\" }}{{ .IPAddress }}{{ end }}" % NETWORK, name],
              capture=True)
    return res.stdout.strip()


def fixture_into(node):
    """Copy a rendered sysfs fixture tree into the node at /opt/gpuops-fixture/sys."""
    fixture = node.get("fixture")
    if not fixture:
        return
    builder = os.path.join(REPO, "tests", "fixtures", "build_sysfs.py")
    spec = os.path.join(REPO, "tests", "fixtures", "hosts", fixture)
    os.makedirs(STATE, exist_ok=True)
    out = tempfile.mkdtemp(prefix="fixture-", dir=STATE)
    try:
        run([sys.executable, builder, "--no-driver", spec, os.path.join(out, "sys")], capture=True)
        run(["docker", "exec", node["name"], "mkdir", "-p", "/opt/gpuops-fixture"], capture=True)
        run(["docker", "cp", os.path.join(out, "sys"), node["name"] + ":/opt/gpuops-fixture/"], capture=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def node_exec_write(name, path, text, mode="644"):
    run(["docker", "exec", "-i", name, "sh", "-c",
         "umask 022; mkdir -p \"$(dirname '%s')\" && cat > '%s' && chmod %s '%s'" % (path, path, mode, path)],
        input=text, text=True, capture=True)


def wait_booted(nodes, timeout=180):
    deadline = time.time() + timeout
    for node in nodes:
        while True:
            res = run(["docker", "exec", node["name"], "sh", "-c",
                       "systemctl is-system-running; systemctl is-active ssh.service"], check=False, capture=True)
            lines = res.stdout.split()
            if len(lines) == 2 and lines[0] in ("running", "degraded") and lines[1] == "active":
                break
            if time.time() > deadline:
                raise LabError("node %s did not finish booting (systemd: %s); `docker logs %s`"
                               % (node["name"], " ".join(lines), node["name"]))
            time.sleep(0.5)


def nodes_up(nodes, cache_url=None):
    """Start the nodes that do not run yet (a node that runs is kept); returns the molecule
    instance config: address, user, port and key of every node."""
    key = ssh_key()
    with open(key + ".pub") as fh:
        pub = fh.read()
    started = []
    for node in nodes:
        state = container_state(node["name"])
        if state is not None and state[1] is None:
            raise LabError("a container named %s exists and is not a lab node; remove it or rename the node"
                           % node["name"])
        if state is not None and state[0] and state[1] == node["kind"]:
            log("node %s runs" % node["name"])
            continue
        if state is not None:
            run(["docker", "rm", "-f", node["name"]], check=False, capture=True)
        log("starting node %s (Debian %s%s%s)" % (node["name"], node["debian"],
                                                  ", " + node["fixture"] if node["fixture"] else "",
                                                  ", " + node["ip"] if node["ip"] else ""))
        run(node_run_args(node), capture=True)
        node_exec_write(node["name"], "/root/.ssh/authorized_keys", pub, mode="600")
        if cache_url:
            node_exec_write(node["name"], APT_CACHE_CONF, apt_proxy_conf())
        fixture_into(node)
        started.append(node)
    wait_booted(started)
    instances = [{"instance": n["name"], "address": node_address(n["name"]), "user": "root", "port": 22,
                  "identity_file": key} for n in nodes]
    log("nodes up: " + ", ".join("%s=%s" % (i["instance"], i["address"]) for i in instances))
    return instances


def nodes_down(names=None, kind="node"):
    """Remove lab containers: the named ones (any lab kind), or every one of `kind`.
    A container without the lab's label is never touched."""
    if names:
        ids = [n for n in names if (container_state(n) or (False, None))[1] is not None]
    else:
        res = run(["docker", "ps", "-aq", "--filter", "label=%s=%s" % (LABEL, kind)], check=False, capture=True)
        ids = res.stdout.split()
    if ids:
        run(["docker", "rm", "-f"] + ids, capture=True)
        log("removed %d lab node(s)" % len(ids))


def status():
    print("docker engine: %s" % ("answers" if docker_answers() else "not running"))
    cache = "not running"
    if APT_CACHE_SERVICE.alive():
        cache = "serving %s (pid %s)" % (APT_CACHE_DIR, APT_CACHE_SERVICE.running_pid())
    print("package cache %s: %s" % (apt_cache_url(), cache))
    ident = mirror_identity()
    mirror = "not serving"
    if mirror_alive():
        mirror = "serving %s (pid %s)" % (MIRROR_DIR, MIRROR_SERVICE.running_pid())
    elif ident is not None:
        mirror = "another server answers: %r" % (ident,)
    print("mirror %s: %s" % (mirror_url(), mirror))
    if not docker_answers():
        return
    for major in RELEASES:
        print("image %s: %s" % (image_tag(major), "built" if image_exists(image_tag(major)) else "missing"))
    for node in load_nodes():
        state = container_state(node["name"])
        print("node %s: %s" % (node["name"], "running" if state and state[0] else "absent"))


def write_instance_config(path, instances):
    with open(path, "w") as fh:
        json.dump(instances, fh, indent=2)
        fh.write("\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["engine", "cache", "images", "network", "mirror", "up", "down",
                                            "nodes-up", "nodes-down", "mirror-stop", "status", "mirror-url",
                                            "_serve-mirror", "_serve-apt-cache"])
    parser.add_argument("--force", action="store_true", help="rebuild images even when current")
    parser.add_argument("--spec", help="nodes-up: JSON list of {name, debian, fixture}")
    parser.add_argument("--kind", choices=NODE_KINDS, default="molecule", help="nodes-up/nodes-down: label value")
    parser.add_argument("--instance-config", help="nodes-up: write molecule's instance config here")
    parser.add_argument("--names", help="nodes-down: comma-separated container names")
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--bind", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        if args.command == "_serve-mirror":
            serve_mirror(args.dir, args.bind)
        elif args.command == "_serve-apt-cache":
            serve_apt_cache(args.dir, args.bind)
        elif args.command == "mirror-url":
            print(mirror_url())
        elif args.command == "status":
            status()
        elif args.command == "mirror-stop":
            stop_mirror()
            APT_CACHE_SERVICE.stop()
        elif args.command == "down":
            if docker_answers():
                nodes_down(kind="node")
            stop_mirror()
            APT_CACHE_SERVICE.stop()
        elif args.command == "nodes-down":
            if docker_answers():
                nodes_down([n for n in (args.names or "").split(",") if n], kind=args.kind)
        else:
            nodes = None
            if args.command == "nodes-up":
                try:
                    nodes = [node_spec(raw, args.kind) for raw in json.loads(args.spec or "")]
                except ValueError as exc:
                    raise LabError("--spec must be a JSON list of nodes: %s" % exc)
            elif args.command == "up":
                nodes = load_nodes()
            ensure_engine()
            cache_url = None
            if args.command in ("network", "cache", "images", "mirror", "up", "nodes-up"):
                ensure_network()
            if args.command in ("cache", "images", "up", "nodes-up"):
                cache_url = ensure_apt_cache()
            if args.command in ("images", "up", "nodes-up"):
                ensure_images({n["debian"] for n in nodes} if nodes else None, force=args.force, cache_url=cache_url)
            if args.command in ("mirror", "up", "nodes-up"):
                ensure_mirror()
            if nodes is not None:
                instances = nodes_up(nodes, cache_url=cache_url)
                if args.instance_config:
                    write_instance_config(args.instance_config, instances)
    except LabError as exc:
        print("lab: error: %s" % exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
