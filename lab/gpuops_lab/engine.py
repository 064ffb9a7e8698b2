"""A Docker engine for the lab: Debian's docker.io and debootstrap (and openipmi for the simulated BMCs), and a
running dockerd."""

import os
import shutil
import subprocess
import time

from .common import LabError, docker_answers, log, run


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
    if not shutil.which("ipmi_sim") or not shutil.which("sdrcomp"):
        missing.append("openipmi")  # the simulated BMCs (lab.py bmc-sim)
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


def ensure_engine(cfg):
    ensure_packages()
    if docker_answers():
        return
    need_root("starting dockerd")
    os.makedirs(cfg.log_dir, exist_ok=True)
    logfile = os.path.join(cfg.log_dir, "dockerd.log")
    if os.path.isdir("/run/systemd/system") and shutil.which("systemctl"):
        log("starting docker.service through systemd")
        run(["systemctl", "start", "docker.service"], check=False)
    if not docker_answers():
        dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
        if not os.path.exists(dockerd):
            raise LabError("no dockerd found after installing docker.io; install Debian's docker.io")
        log("starting dockerd in the background (log: %s)" % logfile)
        with open(logfile, "ab") as out:
            subprocess.Popen([dockerd], stdout=out, stderr=subprocess.STDOUT,  # pylint: disable=consider-using-with
                             stdin=subprocess.DEVNULL, start_new_session=True)
    for _attempt in range(60):
        if docker_answers():
            log("docker engine answers")
            return
        time.sleep(1)
    raise LabError("dockerd did not answer within 60 s; see %s" % logfile)
