"""The lab's node images: Debian 12/13 built with debootstrap and `docker import`, cached.

The recipe (RELEASES, PACKAGES and POST_INSTALL) is hashed into the image tag
(gpuops-lab/debian:<major>-<recipe>), so checkouts with different recipes each keep theirs
and an image is built only when its recipe is new.
"""

import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time

from .common import LABEL, LabError, log, run
from .engine import need_root

RELEASES = {
    "12": {"suite": "bookworm", "updates": True},
    "13": {"suite": "trixie", "updates": True},
}
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
# Throwaway test nodes: dpkg does not fsync every file it unpacks (Debian's Docker images did
# the same), and apt fetches no translations. A node's package installs cost CPU and I/O that
# the two CPUs of the CI machine share with everything else.
echo force-unsafe-io > /etc/dpkg/dpkg.cfg.d/gpuops-lab-unsafe-io
echo 'Acquire::Languages "none";' > /etc/apt/apt.conf.d/99gpuops-lab-no-translations
apt-get clean
# No package lists, dated long ago: the first apt task with update_cache/cache_valid_time
# refreshes them, as on a server that has not run apt since it was installed.
rm -rf /var/lib/apt/lists/*
mkdir -p /var/lib/apt/lists/partial
touch -d '2000-01-01 00:00:00' /var/lib/apt/lists /var/lib/apt/lists/partial
rm -f /var/lib/apt/periodic/update-success-stamp
"""


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


def image_tag(cfg, major):
    """The node image of a Debian release, named by its recipe."""
    if str(major) not in RELEASES:
        raise LabError("no lab image for Debian %s; the lab builds Debian %s"
                       % (major, " and ".join(sorted(RELEASES))))
    return "%s:%s-%s" % (cfg.image_repo, major, recipe_hash(str(major)))


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


def build_image(cfg, major, force=False, cache_url=None):
    rel = RELEASES[major]
    tag = image_tag(cfg, major)
    if not force and image_exists(tag):
        log("image %s is current" % tag)
        return False
    need_root("building node images (debootstrap)")
    mirror = host_debian_mirror()
    os.makedirs(cfg.state, exist_ok=True)
    root = tempfile.mkdtemp(prefix="rootfs-%s-" % rel["suite"], dir=cfg.state)
    t0 = time.time()
    env = dict(os.environ)
    if cache_url:
        env["http_proxy"] = cache_url  # debootstrap's downloads go through the package cache too
    log("debootstrap %s from %s%s into %s (a minute or two)"
        % (rel["suite"], mirror, " through %s" % cache_url if cache_url else "", root))
    try:
        os.makedirs(os.path.join(cfg.log_dir), exist_ok=True)
        with open(os.path.join(cfg.log_dir, "debootstrap-%s.log" % rel["suite"]), "w") as out:
            res = subprocess.run(  # the log file says why it failed
                ["debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
                 rel["suite"], root, mirror], stdout=out, stderr=subprocess.STDOUT, check=False, env=env)
        if res.returncode != 0:
            raise LabError("debootstrap %s failed; see %s/debootstrap-%s.log"
                           % (rel["suite"], cfg.log_dir, rel["suite"]))
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


def ensure_images(cfg, majors=None, force=False, cache_url=None):
    """Build the missing node images side by side: a build mostly waits on downloads and on
    dpkg's disk writes in its chroot, so two builds take little more than the longer one.
    The first error is raised once both have ended."""
    wanted = sorted(majors or RELEASES)
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(wanted) or 1) as pool:
        futures = [pool.submit(build_image, cfg, major, force=force, cache_url=cache_url) for major in wanted]
    for future in futures:
        future.result()
