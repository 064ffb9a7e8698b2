"""The gpuops.dlserver container lab.

One tool for everything the development commands (CONTRIBUTING.md) and the molecule scenarios need around
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
    lab.py molecule-lock PATH   check (or create) the machine-wide molecule lock file
    lab.py bmc-sim start --spec-file F [--ttl S]   simulated BMCs (OpenIPMI's ipmi_sim) on the lab
                           network, one per BMC of F (lab/gpuops_lab/bmc_sim.py says what F holds)
    lab.py bmc-sim stop [--names A,B]   stop this checkout's simulators (all, or the named ones)
    lab.py bmc-sim status  what simulators run

Nothing is pulled from a registry and no container is privileged: nodes get SYS_ADMIN,
the host cgroup namespace and /sys/fs/cgroup mounted read-write, which runs systemd.

Everything the lab makes is scoped to its checkout. The mirror and the package cache are
processes of this checkout: each pid is kept in a pid file under <state>, and a process is
signalled only when it is that pid AND /proc/<pid>/cmdline runs this checkout's lab.py; a
process of anything else holding their port (another checkout's lab included) is named in the
error and left alone. Nothing an HTTP answer says is ever used to pick a process to signal.
Nodes carry the checkout that made them (label io.gpuops.lab.checkout); `down` and
`nodes-down` remove only this checkout's. The package cache forwards only the Debian mirrors
the lab uses.

The code lives in lab/gpuops_lab/ by concern; this file is the command line, and the
functions below are the API that bench/fleet_bench.py and the unit tests use (each bound to
the settings this file was loaded with).
"""

import argparse
import functools
import json
import os
import shutil  # pylint: disable=unused-import  # the lab's API: tests patch shutil.which through it
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# The lab's API (bench/fleet_bench.py, tests/unit/lab): names of the package, re-exported here.
# pylint: disable=wrong-import-position,unused-import
from gpuops_lab import aptcache, bmc_sim, common, engine, images, mirror, network, nodes  # noqa: E402
from gpuops_lab.common import LABEL, CHECKOUT_LABEL, NODE_KINDS, LabError, docker_answers, log, run  # noqa: E402,F401
from gpuops_lab.engine import ensure_packages, need_root  # noqa: E402,F401
from gpuops_lab.images import (  # noqa: E402,F401
    PACKAGES, RELEASES, host_debian_mirror, image_exists, recipe_hash, sources_deb822,
)
from gpuops_lab.aptcache import APT_CACHE_CONF, cache_path, url_allowed  # noqa: E402,F401
from gpuops_lab.services import is_lab_service_argv, listener_pids, proc_cmdline  # noqa: E402,F401
# pylint: enable=wrong-import-position,unused-import

LAB_PY = os.path.abspath(__file__)
CFG = common.settings_from_env(LAB_PY)
REPO, STATE, NETWORK, SUBNET = CFG.repo, CFG.state, CFG.network, CFG.subnet
MIRROR_DIR, MIRROR_PORT = CFG.mirror_dir, CFG.mirror_port
APT_CACHE_DIR, APT_CACHE_PORT = CFG.apt_cache_dir, CFG.apt_cache_port

MIRROR_SERVICE = mirror.mirror_service(CFG)
APT_CACHE_SERVICE = aptcache.apt_cache_service(CFG)

# The lab's API, bound to this checkout's settings.
gateway = functools.partial(common.gateway, CFG)
dynamic_range = functools.partial(common.dynamic_range, CFG)
ensure_engine = functools.partial(engine.ensure_engine, CFG)
image_tag = functools.partial(images.image_tag, CFG)
build_image = functools.partial(images.build_image, CFG)
ensure_images = functools.partial(images.ensure_images, CFG)
ensure_network = functools.partial(network.ensure_network, CFG)
mirror_url = functools.partial(mirror.mirror_url, CFG)
mirror_argv = functools.partial(mirror.mirror_argv, CFG)
mirror_identity = functools.partial(mirror.mirror_identity, CFG)
ensure_mirror = functools.partial(mirror.ensure_mirror, CFG, MIRROR_SERVICE)
apt_cache_url = functools.partial(aptcache.apt_cache_url, CFG)
apt_cache_argv = functools.partial(aptcache.apt_cache_argv, CFG)
apt_proxy_conf = functools.partial(aptcache.apt_proxy_conf, CFG)
ensure_apt_cache = functools.partial(aptcache.ensure_apt_cache, CFG, APT_CACHE_SERVICE)
node_spec = functools.partial(nodes.node_spec, CFG)
load_nodes = functools.partial(nodes.load_nodes, CFG)
ssh_key = functools.partial(nodes.ssh_key, CFG)
node_run_args = functools.partial(nodes.node_run_args, CFG)
nodes_up = functools.partial(nodes.nodes_up, CFG)
nodes_down = functools.partial(nodes.nodes_down, CFG)
container_state = nodes.container_state


def our_mirror_pid():
    return MIRROR_SERVICE.our_pid()


def mirror_alive():
    """Our mirror process runs and holds the mirror address."""
    return MIRROR_SERVICE.alive()


def stop_mirror():
    """Stop this checkout's mirror: the pid of our pid file, when /proc shows it is ours."""
    MIRROR_SERVICE.stop()


def is_lab_mirror_argv(argv):
    return is_lab_service_argv(argv, "_serve-mirror")


def is_our_mirror_argv(argv):
    return MIRROR_SERVICE.is_ours(argv)


def check_lock_file(path):
    """The machine-wide molecule lock: a regular file owned by root (created, as root, when
    missing). Any other user could create a file in a world-writable place first and hold
    every checkout's scenarios, or make it a link; so anything else is refused."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        os.close(fd)
    except FileExistsError:
        pass
    except OSError as exc:
        raise LabError("cannot create the molecule lock %s (%s): create it as root (`sudo touch %s`), or set "
                       "MOLECULE_LOCK to a root-owned file" % (path, exc.strerror, path))
    info = os.lstat(path)
    if not stat.S_ISREG(info.st_mode):
        raise LabError("the molecule lock %s is not a regular file; remove it as root or set MOLECULE_LOCK" % path)
    if info.st_uid != 0:
        raise LabError("the molecule lock %s is owned by uid %d, not root: any user could hold every "
                       "checkout's scenarios with it; remove it as root or set MOLECULE_LOCK" % (path, info.st_uid))


def status():
    print("docker engine: %s" % ("answers" if docker_answers() else "not running"))
    cache = "not running"
    if APT_CACHE_SERVICE.alive():
        cache = "serving %s (pid %s)" % (APT_CACHE_DIR, APT_CACHE_SERVICE.running_pid())
    print("package cache %s: %s" % (apt_cache_url(), cache))
    ident = mirror_identity()
    served = "not serving"
    if mirror_alive():
        served = "serving %s (pid %s)" % (MIRROR_DIR, MIRROR_SERVICE.running_pid())
    elif ident is not None:
        served = "another server answers: %r" % (ident,)
    print("mirror %s: %s" % (mirror_url(), served))
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
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_bmc-power"]:
        # ipmi_sim's chassis_control: `lab.py _bmc-power <bmc> <mc> get|set ...` (bmc_sim.power)
        return bmc_sim.power(CFG, argv[1] if len(argv) > 1 else "", argv[2:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["engine", "cache", "images", "network", "mirror", "up", "down",
                                            "nodes-up", "nodes-down", "mirror-stop", "status", "mirror-url",
                                            "molecule-lock", "bmc-sim", "_serve-mirror", "_serve-apt-cache"])
    parser.add_argument("path", nargs="?", help="molecule-lock: the lock file; bmc-sim: start, stop or status")
    parser.add_argument("--force", action="store_true", help="rebuild images even when current")
    parser.add_argument("--spec", help="nodes-up: JSON list of {name, debian, fixture}")
    parser.add_argument("--kind", choices=NODE_KINDS, default="molecule", help="nodes-up/nodes-down: label value")
    parser.add_argument("--instance-config", help="nodes-up: write molecule's instance config here")
    parser.add_argument("--names", help="nodes-down, bmc-sim stop: comma-separated names")
    parser.add_argument("--spec-file", help="bmc-sim start: JSON list of BMCs")
    parser.add_argument("--ttl", type=int, default=bmc_sim.DEFAULT_TTL, help="bmc-sim start: seconds a simulator runs")
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--bind", help=argparse.SUPPRESS)
    parser.add_argument("--allow", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        if args.command == "_serve-mirror":
            mirror.serve_mirror(args.dir, args.bind)
        elif args.command == "_serve-apt-cache":
            aptcache.serve_apt_cache(args.dir, args.bind, args.allow)
        elif args.command == "molecule-lock":
            if not args.path:
                raise LabError("molecule-lock: say which file")
            check_lock_file(args.path)
        elif args.command == "bmc-sim":
            bmc_command(args)
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
            up(args)
    except LabError as exc:
        print("lab: error: %s" % exc, file=sys.stderr)
        return 2
    return 0


def bmc_command(args):
    """bmc-sim start|stop|status (the spec is read from a file: it holds passwords)."""
    if args.path == "start":
        if not args.spec_file:
            raise LabError("bmc-sim start: say --spec-file")
        with open(args.spec_file) as fh:
            bmcs = bmc_sim.specs_from(CFG, fh.read())
        ensure_engine()
        ensure_network()
        bmc_sim.start(CFG, bmcs, ttl=args.ttl)
    elif args.path == "stop":
        bmc_sim.stop(CFG, [n for n in (args.names or "").split(",") if n] or None)
    elif args.path == "status":
        bmc_sim.status(CFG)
    else:
        raise LabError("bmc-sim: say start, stop or status, not %r" % (args.path,))


def up(args):
    """engine, cache, images, network, mirror, up and nodes-up: each makes what it needs."""
    wanted = None
    if args.command == "nodes-up":
        try:
            wanted = [node_spec(raw, args.kind) for raw in json.loads(args.spec or "")]
        except ValueError as exc:
            raise LabError("--spec must be a JSON list of nodes: %s" % exc)
    elif args.command == "up":
        wanted = load_nodes()
    ensure_engine()
    cache_url = None
    if args.command in ("network", "cache", "images", "mirror", "up", "nodes-up"):
        ensure_network()
    if args.command in ("cache", "images", "up", "nodes-up"):
        cache_url = ensure_apt_cache()
    if args.command in ("images", "up", "nodes-up"):
        ensure_images({n["debian"] for n in wanted} if wanted else None, force=args.force, cache_url=cache_url)
    if args.command in ("mirror", "up", "nodes-up"):
        ensure_mirror()
    if wanted is not None:
        instances = nodes_up(wanted, cache_url=cache_url)
        if args.instance_config:
            write_instance_config(args.instance_config, instances)


if __name__ == "__main__":
    sys.exit(main())
