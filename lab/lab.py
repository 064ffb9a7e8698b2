"""The gpuops.dlserver container lab.

One tool for everything the README's commands and the molecule scenarios need around
the collection: a Docker engine, systemd node images, the lab nodes and the artifact
mirror. Standard library only, so it runs before any virtualenv exists.

    lab.py engine          ensure Debian's docker.io + debootstrap and a running dockerd
    lab.py images          build the Debian 12/13 node images (debootstrap + docker import), cached
    lab.py network         create the lab network (172.30.99.0/24 unless GPUOPS_LAB_SUBNET)
    lab.py mirror          serve the artifact mirror directory over HTTP on the lab gateway
    lab.py up              all of the above, then start the nodes of inventories/lab
    lab.py down            remove the lab nodes, stop the mirror (images are kept)
    lab.py status          what runs

Nothing is pulled from a registry and no container is privileged: nodes get SYS_ADMIN,
the host cgroup namespace and /sys/fs/cgroup mounted read-write, which runs systemd.
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
REPO = os.path.dirname(HERE)
STATE = os.environ.get("GPUOPS_LAB_STATE", os.path.join(REPO, ".cache", "lab"))
LOG_DIR = os.environ.get("GPUOPS_LAB_LOG_DIR", "/var/log/gpuops-lab")
NETWORK = os.environ.get("GPUOPS_LAB_NETWORK", "gpuops-lab")
SUBNET = os.environ.get("GPUOPS_LAB_SUBNET", "172.30.99.0/24")
MIRROR_PORT = int(os.environ.get("GPUOPS_LAB_MIRROR_PORT", "8099"))
MIRROR_DIR = os.environ.get("GPUOPS_MIRROR_DIR", os.path.join(REPO, ".cache", "mirror"))
LABEL = "io.gpuops.lab"

# Node images. The recipe (this table, the package set and the post-install script) is
# hashed into a label; an image is rebuilt only when its recipe or the CA bundle changes.
RELEASES = {
    "12": {"suite": "bookworm", "updates": True},
    "13": {"suite": "trixie", "updates": True},
}
IMAGE_REPO = "gpuops-lab/debian"
PACKAGES = [
    "systemd", "systemd-sysv", "dbus", "python3", "python3-apt", "ca-certificates", "sudo",
    "iproute2", "procps", "kmod", "gnupg", "openssh-server", "curl",
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


def image_recipe(tag):
    res = run(["docker", "image", "inspect", "--format",
               "{{ index .Config.Labels \"%s.recipe\" }}" % LABEL, tag], check=False, capture=True)
    return res.stdout.strip() if res.returncode == 0 else None


def sources_deb822(mirror, suite, updates):
    security = mirror[: -len("/debian")] + "/debian-security" if mirror.endswith("/debian") else None
    suites = suite + (" %s-updates" % suite if updates else "")
    text = ("Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n"
            "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" % (mirror, suites))
    if security:
        text += ("\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\n"
                 "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" % (security, suite))
    return text


def build_image(major, force=False):
    rel = RELEASES[major]
    tag = "%s:%s" % (IMAGE_REPO, major)
    want = recipe_hash(major)
    if not force and image_recipe(tag) == want:
        log("image %s is current (recipe %s)" % (tag, want))
        return False
    need_root("building node images (debootstrap)")
    mirror = host_debian_mirror()
    os.makedirs(STATE, exist_ok=True)
    root = tempfile.mkdtemp(prefix="rootfs-%s-" % rel["suite"], dir=STATE)
    t0 = time.time()
    log("debootstrap %s into %s (a minute or two)" % (rel["suite"], root))
    try:
        os.makedirs(os.path.join(LOG_DIR), exist_ok=True)
        with open(os.path.join(LOG_DIR, "debootstrap-%s.log" % rel["suite"]), "w") as out:
            res = subprocess.run(  # the log file says why it failed
                ["debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
                 rel["suite"], root, mirror], stdout=out, stderr=subprocess.STDOUT, check=False)
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
        with open(os.path.join(root, "etc/apt/sources.list.d/debian.sources"), "w") as fh:
            fh.write(sources_deb822(mirror, rel["suite"], rel["updates"]))
        run(["chroot", root, "/bin/sh", "-c", POST_INSTALL], capture=True)
        changes = ["CMD [\"/lib/systemd/systemd\"]",
                   "ENV container=docker",
                   "LABEL %s.recipe=%s" % (LABEL, want), "LABEL %s.release=debian-%s" % (LABEL, major)]
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


def ensure_images(force=False):
    for major in RELEASES:
        build_image(major, force=force)


# --------------------------------------------------------------------------- network + mirror

def gateway():
    return str(next(ipaddress.ip_network(SUBNET).hosts()))


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
    run(["docker", "network", "create", "--subnet", SUBNET, "--gateway", gateway(),
         "--label", LABEL + "=network", NETWORK], capture=True)


def mirror_url():
    return "http://%s:%d" % (gateway(), MIRROR_PORT)


IDENTITY_PATH = "/.gpuops-lab-mirror"


def mirror_identity():
    """What answers on the mirror address: {"dir": ..., "pid": ...} for a lab mirror,
    {} for some other HTTP server, None when nothing answers."""
    import urllib.error  # pylint: disable=import-outside-toplevel
    import urllib.request  # pylint: disable=import-outside-toplevel
    try:
        with urllib.request.urlopen(mirror_url() + IDENTITY_PATH, timeout=2) as resp:
            return json.loads(resp.read().decode())
    except urllib.error.HTTPError:
        return {}
    except (OSError, ValueError):
        return None


def mirror_alive():
    ident = mirror_identity()
    return bool(ident) and ident.get("dir") == os.path.realpath(MIRROR_DIR)


def ensure_mirror():
    """Serve MIRROR_DIR on the lab gateway. The layout and its index come from
    playbooks/mirror.yml (the same playbook an air-gapped site runs). A lab mirror of
    another checkout on the same address is stopped first: its files are not ours."""
    os.makedirs(MIRROR_DIR, exist_ok=True)
    sums = os.path.join(MIRROR_DIR, "SHA256SUMS")
    if not os.path.exists(sums):
        open(sums, "w").close()
    ident = mirror_identity()
    if ident and ident.get("dir") == os.path.realpath(MIRROR_DIR):
        return
    if ident == {} and os.path.exists(os.path.join(STATE, "mirror.pid")):
        stop_mirror()  # ours, from a lab.py that did not answer its identity yet
        time.sleep(0.5)
        ident = mirror_identity()
    if ident:
        log("stopping the lab mirror of %s (pid %s) that holds %s" % (ident.get("dir"), ident.get("pid"), mirror_url()))
        try:
            os.kill(int(ident["pid"]), signal.SIGTERM)
        except (KeyError, ValueError, ProcessLookupError, PermissionError) as exc:
            raise LabError("cannot stop the other lab mirror on %s: %s" % (mirror_url(), exc))
        for _attempt in range(50):
            if mirror_identity() is None:
                break
            time.sleep(0.1)
    elif ident is not None:
        raise LabError("something that is not a gpuops lab mirror answers on %s; stop it or set "
                       "GPUOPS_LAB_MIRROR_PORT" % mirror_url())
    os.makedirs(STATE, exist_ok=True)
    logfile = os.path.join(STATE, "mirror.log")
    log("serving %s at %s (log: %s)" % (MIRROR_DIR, mirror_url(), logfile))
    with open(logfile, "ab") as out:
        env = dict(os.environ, GPUOPS_MIRROR_DIR=MIRROR_DIR, GPUOPS_LAB_SUBNET=SUBNET,
                   GPUOPS_LAB_MIRROR_PORT=str(MIRROR_PORT))
        proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "_serve-mirror"],
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env)
    with open(os.path.join(STATE, "mirror.pid"), "w") as fh:
        fh.write(str(proc.pid))
    for _attempt in range(30):
        if mirror_alive():
            return
        time.sleep(0.2)
    raise LabError("the mirror did not start; see %s" % logfile)


class MirrorHandler(http.server.SimpleHTTPRequestHandler):
    """Serves MIRROR_DIR, and at IDENTITY_PATH which directory and process serve it."""

    def do_GET(self):
        if self.path == IDENTITY_PATH:
            body = json.dumps({"dir": os.path.realpath(MIRROR_DIR), "pid": os.getpid()}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


def serve_mirror():
    handler = functools.partial(MirrorHandler, directory=MIRROR_DIR)
    httpd = http.server.ThreadingHTTPServer((gateway(), MIRROR_PORT), handler)
    httpd.serve_forever()


def stop_mirror():
    pidfile = os.path.join(STATE, "mirror.pid")
    if os.path.exists(pidfile):
        with open(pidfile) as fh:
            pid = int(fh.read().strip() or 0)
        if pid:
            try:
                os.kill(pid, signal.SIGTERM)
                log("stopped the mirror (pid %d)" % pid)
            except ProcessLookupError:
                pass
        os.remove(pidfile)


# --------------------------------------------------------------------------- nodes

def load_nodes():
    """The lab nodes of inventories/lab: hosts that carry `gpuops_lab_node` (debian, fixture)."""
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
        nodes.append({"name": name, "ip": hostvars[name]["ansible_host"],
                      "debian": str(spec["debian"]), "fixture": spec.get("fixture")})
    if not nodes:
        raise LabError("no host in %s has gpuops_lab_node" % inventory)
    return nodes


def ssh_key():
    key = os.path.join(STATE, "ssh", "id_ed25519")
    if not os.path.exists(key):
        os.makedirs(os.path.dirname(key), mode=0o700, exist_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuops-lab", "-f", key], capture=True)
    return key


def container_running(name):
    res = run(["docker", "inspect", "--format", "{{.State.Running}}", name], check=False, capture=True)
    return res.returncode == 0 and res.stdout.strip() == "true"


def node_run_args(node):
    return [
        "docker", "run", "-d", "--name", node["name"], "--hostname", node["name"],
        "--label", LABEL + "=node",
        "--cap-add", "SYS_ADMIN", "--cgroupns", "host",
        "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
        "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp",
        "--stop-signal", "SIGRTMIN+3",
        "--network", NETWORK, "--ip", node["ip"],
        "%s:%s" % (IMAGE_REPO, node["debian"]),
    ]


def fixture_into(node):
    """Copy a rendered sysfs fixture tree into the node at /opt/gpuops-fixture/sys."""
    fixture = node.get("fixture")
    if not fixture:
        return
    builder = os.path.join(REPO, "tests", "fixtures", "build_sysfs.py")
    spec = os.path.join(REPO, "tests", "fixtures", "hosts", fixture)
    out = tempfile.mkdtemp(prefix="fixture-", dir=STATE)
    try:
        run([sys.executable, builder, "--no-driver", spec, os.path.join(out, "sys")], capture=True)
        run(["docker", "exec", node["name"], "mkdir", "-p", "/opt/gpuops-fixture"], capture=True)
        run(["docker", "cp", os.path.join(out, "sys"), node["name"] + ":/opt/gpuops-fixture/"], capture=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def nodes_up():
    key = ssh_key()
    with open(key + ".pub") as fh:
        pub = fh.read()
    nodes = load_nodes()
    for node in nodes:
        if container_running(node["name"]):
            log("node %s runs" % node["name"])
            continue
        run(["docker", "rm", "-f", node["name"]], check=False, capture=True)
        log("starting node %s (Debian %s, %s)" % (node["name"], node["debian"], node["ip"]))
        run(node_run_args(node), capture=True)
        run(["docker", "exec", "-i", node["name"], "sh", "-c",
             "umask 077; mkdir -p /root/.ssh; cat > /root/.ssh/authorized_keys"], input=pub, text=True)
        fixture_into(node)
    deadline = time.time() + 120
    for node in nodes:
        while True:
            res = run(["docker", "exec", node["name"], "systemctl", "is-system-running"], check=False, capture=True)
            state = res.stdout.strip()
            if state in ("running", "degraded"):
                break
            if time.time() > deadline:
                raise LabError("node %s did not finish booting (systemd: %s); `docker logs %s`"
                               % (node["name"], state, node["name"]))
            time.sleep(1)
    log("nodes up: " + ", ".join("%s=%s" % (n["name"], n["ip"]) for n in nodes))


def nodes_down():
    res = run(["docker", "ps", "-aq", "--filter", "label=%s=node" % LABEL], check=False, capture=True)
    ids = res.stdout.split()
    if ids:
        run(["docker", "rm", "-f"] + ids, capture=True)
        log("removed %d lab node(s)" % len(ids))
    stop_mirror()


def status():
    print("docker engine: %s" % ("answers" if docker_answers() else "not running"))
    if not docker_answers():
        return
    for major in RELEASES:
        tag = "%s:%s" % (IMAGE_REPO, major)
        have = image_recipe(tag)
        print("image %s: %s" % (tag, "missing" if have is None else
                                ("current" if have == recipe_hash(major) else "stale")))
    for node in load_nodes():
        print("node %s: %s" % (node["name"], "running" if container_running(node["name"]) else "absent"))
    print("mirror %s: %s" % (mirror_url(), "serving" if mirror_alive() else "not serving"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["engine", "images", "network", "mirror", "up", "down",
                                            "status", "mirror-url", "_serve-mirror"])
    parser.add_argument("--force", action="store_true", help="rebuild images even when current")
    args = parser.parse_args(argv)
    try:
        if args.command == "_serve-mirror":
            serve_mirror()
        elif args.command == "mirror-url":
            print(mirror_url())
        elif args.command == "status":
            status()
        elif args.command == "down":
            if docker_answers():
                nodes_down()
            else:
                stop_mirror()
        else:
            ensure_engine()
            if args.command in ("images", "up"):
                ensure_images(force=args.force)
            if args.command in ("network", "mirror", "up"):
                ensure_network()
            if args.command in ("mirror", "up"):
                ensure_mirror()
            if args.command == "up":
                nodes_up()
    except LabError as exc:
        print("lab: error: %s" % exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
