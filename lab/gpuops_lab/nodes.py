"""The lab's nodes: containers that boot systemd from a lab image, on the lab network.

THE definition of a lab node (node_run_args) serves `make lab`, every molecule scenario and
the fleet benchmark. Every node carries the lab's label (its kind) and the checkout that made
it; a checkout removes and replaces only its own nodes.
"""

import json
import os
import shutil
import sys
import tempfile
import time

from .aptcache import APT_CACHE_CONF, apt_proxy_conf
from .common import CHECKOUT_LABEL, LABEL, LabError, checkout, log, run
from .images import RELEASES, image_tag


# Loop devices a node may be handed (the storage scenario's dataset drives), each a sparse file of
# LOOP_SIZE_MIB (XFS needs 300 MiB at least) under the lab state directory.
MAX_LOOP_DEVICES = 6
LOOP_SIZE_MIB = 320
# Inside the node, the loop devices it was handed, one path a line, in the order of their files.
LOOP_LIST = "/etc/gpuops-lab/loop-devices"


def node_spec(cfg, raw, kind):
    """A node as lab.py runs it, from an inventories/lab host or a molecule platform:
    name, Debian release, optional fixture (tests/fixtures/hosts/<fixture>) and address."""
    if not isinstance(raw, dict) or not raw.get("name"):
        raise LabError("a node needs a name: %r" % (raw,))
    debian = str(raw.get("debian", ""))
    if debian not in RELEASES:
        raise LabError("node %s: debian must be one of %s, not %r"
                       % (raw["name"], ", ".join(sorted(RELEASES)), raw.get("debian")))
    fixture = raw.get("fixture") or None
    if fixture and not os.path.isdir(os.path.join(cfg.repo, "tests", "fixtures", "hosts", fixture)):
        raise LabError("node %s: no fixture tests/fixtures/hosts/%s" % (raw["name"], fixture))
    loops = raw.get("loop_devices") or 0
    if isinstance(loops, bool) or not isinstance(loops, int) or not 0 <= loops <= MAX_LOOP_DEVICES:
        raise LabError("node %s: loop_devices must be a whole number from 0 to %d, not %r"
                       % (raw["name"], MAX_LOOP_DEVICES, loops))
    return {"name": str(raw["name"]), "debian": debian, "fixture": fixture, "ip": raw.get("ip") or None,
            "kind": kind, "loop_devices": loops}


def load_nodes(cfg):
    """The lab nodes of inventories/lab: hosts that carry `gpuops_lab_node` ({debian: ...});
    a host's sysfs fixture is its `gpuops_fixture`, as in the molecule scenarios."""
    inventory = os.path.join(cfg.repo, "inventories", "lab")
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
        nodes.append(node_spec(cfg, {"name": name, "ip": hostvars[name]["ansible_host"], "debian": spec.get("debian"),
                                     "fixture": hostvars[name].get("gpuops_fixture")}, "node"))
    if not nodes:
        raise LabError("no host in %s has gpuops_lab_node" % inventory)
    return nodes


def ssh_key(cfg):
    key = os.path.join(cfg.state, "ssh", "id_ed25519")
    if not os.path.exists(key):
        os.makedirs(os.path.dirname(key), mode=0o700, exist_ok=True)
        run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuops-lab", "-f", key], capture=True)
    return key


def container_state(name):
    """(running, kind, checkout) of a container: kind is its lab label value (None: not the
    lab's), checkout the checkout that made it (None: no checkout label, an older lab.py's
    node); None when there is no such container. A node the molecule docker driver of earlier
    versions of this repository made (label owner=molecule, a lab image) counts as a molecule
    node of no checkout."""
    res = run(["docker", "inspect", "--format",
               "{{.State.Running}}|{{ index .Config.Labels \"%s\" }}|{{ index .Config.Labels \"owner\" }}|"
               "{{ .Config.Image }}|{{ index .Config.Labels \"%s\" }}" % (LABEL, CHECKOUT_LABEL), name],
              check=False, capture=True)
    if res.returncode != 0:
        return None
    fields = (res.stdout.strip().split("|") + ["", "", "", "", ""])[:5]
    running, kind, owner, image, made_by = fields[0] == "true", fields[1], fields[2], fields[3], fields[4]
    if not kind:
        kind = "molecule" if owner == "molecule" and image.startswith("gpuops-lab") else None
    return running, kind, (made_by or None) if kind else None


def node_run_args(cfg, node):
    """THE definition of a lab node container (lab and molecule alike)."""
    args = [
        "docker", "run", "-d", "--name", node["name"], "--hostname", node["name"],
        "--label", "%s=%s" % (LABEL, node["kind"]),
        "--label", "%s=%s" % (CHECKOUT_LABEL, checkout(cfg)),
        "--cap-add", "SYS_ADMIN", "--cgroupns", "host",
        "-v", "/sys/fs/cgroup:/sys/fs/cgroup:rw",
        "--tmpfs", "/run", "--tmpfs", "/run/lock", "--tmpfs", "/tmp",
        "--stop-signal", "SIGRTMIN+3",
        "--network", cfg.network,
    ]
    if node.get("ip"):
        args += ["--ip", node["ip"]]
    # A loop device is handed over as a device node (mkfs, mount: the node has CAP_SYS_ADMIN already);
    # the container's /sys is read-only, so the device's own queue directory is bound writable for
    # its read-ahead and I/O scheduler. Nothing else of the host's sysfs becomes writable.
    for device in node.get("loop_device_paths") or []:
        queue = "/sys/devices/virtual/block/%s/queue" % os.path.basename(device)
        args += ["--device", device, "-v", "%s:%s:rw" % (queue, queue)]
    return args + [image_tag(cfg, node["debian"])]


def _loop_images(cfg, name):
    folder = os.path.join(cfg.state, "loop")
    return folder, sorted(f for f in (os.listdir(folder) if os.path.isdir(folder) else [])
                          if f.startswith(name + "-") and f.endswith(".img") and f[len(name) + 1:-4].isdigit())


def loops_down(cfg, name):
    """Detach the loop devices of a node's image files and remove the files."""
    folder, images = _loop_images(cfg, name)
    for image in images:
        path = os.path.join(folder, image)
        attached = run(["losetup", "-j", path, "-n", "-O", "NAME"], check=False, capture=True).stdout.split()
        for device in attached:
            run(["losetup", "-d", device], check=False, capture=True)
        os.remove(path)
    if images:
        log("detached the loop devices of %s" % name)


def loops_up(cfg, node):
    """Fresh (zeroed, sparse) image files attached as loop devices for a node that starts: their paths."""
    loops_down(cfg, node["name"])
    folder = os.path.join(cfg.state, "loop")
    os.makedirs(folder, exist_ok=True)
    devices = []
    for index in range(node.get("loop_devices") or 0):
        path = os.path.join(folder, "%s-%d.img" % (node["name"], index))
        with open(path, "wb") as handle:
            handle.truncate(LOOP_SIZE_MIB * 1024 * 1024)
        devices.append(run(["losetup", "-f", "--show", path], capture=True).stdout.strip())
    return devices


def node_address(cfg, name):
    res = run(["docker", "inspect", "--format",
               "{{ with index .NetworkSettings.Networks \"%s\" }}{{ .IPAddress }}{{ end }}" % cfg.network, name],
              capture=True)
    return res.stdout.strip()


def fixed_address(cfg, name):
    """The address a node container was started with on the lab network (its spec's ``ip``, which docker
    keeps when the container starts again); '' where docker gave it one from the dynamic range, or no such container."""
    res = run(["docker", "inspect", "--format",
               "{{ with index .NetworkSettings.Networks \"%s\" }}{{ with .IPAMConfig }}{{ .IPv4Address }}{{ end }}{{ end }}"
               % cfg.network, name], check=False, capture=True)
    return res.stdout.strip() if res.returncode == 0 else ""


def fixture_into(cfg, node):
    """Copy a rendered sysfs fixture tree into the node at /opt/gpuops-fixture/sys."""
    fixture = node.get("fixture")
    if not fixture:
        return
    builder = os.path.join(cfg.repo, "tests", "fixtures", "build_sysfs.py")
    spec = os.path.join(cfg.repo, "tests", "fixtures", "hosts", fixture)
    os.makedirs(cfg.state, exist_ok=True)
    out = tempfile.mkdtemp(prefix="fixture-", dir=cfg.state)
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


def nodes_up(cfg, nodes, cache_url=None):
    """Start the nodes that do not run yet (a node of this checkout that runs is kept);
    returns the molecule instance config: address, user, port and key of every node. A
    container of the same name that another checkout made (or that is not a lab node) is
    left alone and named in the error."""
    key = ssh_key(cfg)
    with open(key + ".pub") as fh:
        pub = fh.read()
    started = []
    for node in nodes:
        state = container_state(node["name"])
        if state is not None and state[1] is None:
            raise LabError("a container named %s exists and is not a lab node; remove it or rename the node"
                           % node["name"])
        if state is not None and state[2] != checkout(cfg):
            raise LabError("a lab node named %s exists and belongs to %s, not to this checkout; remove it from "
                           "there (`lab/lab.py nodes-down --names %s`) or by hand (`docker rm -f %s`)"
                           % (node["name"], state[2] or "no checkout (an older lab.py made it)",
                              node["name"], node["name"]))
        if state is not None and state[0] and state[1] == node["kind"]:
            log("node %s runs" % node["name"])
            continue
        if state is not None:
            run(["docker", "rm", "-f", node["name"]], check=False, capture=True)
        node = dict(node, loop_device_paths=loops_up(cfg, node))
        log("starting node %s (Debian %s%s%s)" % (node["name"], node["debian"],
                                                  ", " + node["fixture"] if node["fixture"] else "",
                                                  ", " + node["ip"] if node["ip"] else ""))
        run(node_run_args(cfg, node), capture=True)
        node_exec_write(node["name"], "/root/.ssh/authorized_keys", pub, mode="600")
        if node["loop_device_paths"]:
            run(["docker", "exec", node["name"], "mkdir", "-p", os.path.dirname(LOOP_LIST)], capture=True)
            node_exec_write(node["name"], LOOP_LIST, "".join(d + "\n" for d in node["loop_device_paths"]))
        if cache_url:
            node_exec_write(node["name"], APT_CACHE_CONF, apt_proxy_conf(cfg))
        fixture_into(cfg, node)
        started.append(node)
    wait_booted(started)
    instances = [{"instance": n["name"], "address": node_address(cfg, n["name"]), "user": "root", "port": 22,
                  "identity_file": key} for n in nodes]
    log("nodes up: " + ", ".join("%s=%s" % (i["instance"], i["address"]) for i in instances))
    return instances


def nodes_to_remove(cfg, names):
    """Of the named containers, this checkout's lab nodes; the others are left alone (and
    another checkout's nodes are named in the log)."""
    ids = []
    for name in names:
        state = container_state(name)
        if state is None or state[1] is None:
            continue
        if state[2] != checkout(cfg):
            log("left %s alone: it belongs to %s" % (name, state[2] or "no checkout (an older lab.py made it)"))
            continue
        ids.append(name)
    return ids


def nodes_down(cfg, names=None, kind="node"):
    """Remove this checkout's lab containers: the named ones (any lab kind), or every one of
    `kind`. A container without the lab's label, or made by another checkout, is never touched."""
    if names:
        ids = nodes_to_remove(cfg, names)
    else:
        res = run(["docker", "ps", "-aq", "--filter", "label=%s=%s" % (LABEL, kind),
                   "--filter", "label=%s=%s" % (CHECKOUT_LABEL, checkout(cfg))], check=False, capture=True)
        ids = res.stdout.split()
    if ids:
        run(["docker", "rm", "-f"] + ids, capture=True)
        log("removed %d lab node(s)" % len(ids))
    for name in names or []:
        loops_down(cfg, name)
