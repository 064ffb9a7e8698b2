"""Settings, errors and commands shared by every part of the lab."""

import collections
import ipaddress
import os
import shutil
import subprocess

LABEL = "io.gpuops.lab"
# The checkout a node belongs to (its realpath): `down` and `nodes-down` remove only their own.
CHECKOUT_LABEL = LABEL + ".checkout"
NODE_KINDS = ("node", "molecule")  # label values: lab nodes of `make lab`, molecule nodes

Settings = collections.namedtuple("Settings", [
    "repo", "lab_py", "state", "log_dir", "network", "subnet", "mirror_port", "mirror_dir",
    "apt_cache", "apt_cache_port", "apt_cache_dir", "image_repo"])


def settings_from_env(lab_py, environ=None):
    """The lab's settings: defaults for this checkout, overridden by GPUOPS_LAB_* variables."""
    env = os.environ if environ is None else environ
    repo = os.path.dirname(os.path.dirname(os.path.abspath(lab_py)))
    return Settings(
        repo=repo,
        lab_py=os.path.abspath(lab_py),
        state=env.get("GPUOPS_LAB_STATE", os.path.join(repo, ".cache", "lab")),
        log_dir=env.get("GPUOPS_LAB_LOG_DIR", "/var/log/gpuops-lab"),
        network=env.get("GPUOPS_LAB_NETWORK", "gpuops-lab"),
        subnet=env.get("GPUOPS_LAB_SUBNET", "172.30.99.0/24"),
        mirror_port=int(env.get("GPUOPS_LAB_MIRROR_PORT", "8099")),
        mirror_dir=env.get("GPUOPS_MIRROR_DIR", os.path.join(repo, ".cache", "mirror")),
        # The package cache directory is shared by every checkout on the machine (a cache another
        # checkout started with the same directory, address and mirrors is used as it is).
        # GPUOPS_LAB_APT_CACHE=off leaves the cache out (nodes then fetch from the Debian mirror directly).
        apt_cache=env.get("GPUOPS_LAB_APT_CACHE", "on"),
        apt_cache_port=int(env.get("GPUOPS_LAB_APT_CACHE_PORT", "3142")),
        apt_cache_dir=env.get("GPUOPS_LAB_APT_CACHE_DIR", "/var/cache/gpuops-lab/apt"),
        image_repo=env.get("GPUOPS_LAB_IMAGE_REPO", "gpuops-lab/debian"),
    )


def checkout(cfg):
    """This checkout, as the lab names it in labels and compares it with /proc."""
    return os.path.realpath(cfg.repo)


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


def gateway(cfg):
    return str(next(ipaddress.ip_network(cfg.subnet).hosts()))


def dynamic_range(cfg):
    """Addresses docker hands out (molecule nodes): the upper half of the subnet, so the
    fixed addresses of inventories/lab (lower half) are never taken."""
    net = ipaddress.ip_network(cfg.subnet)
    if net.prefixlen >= 30:
        return None
    return str(list(net.subnets(prefixlen_diff=1))[1])
