# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet benchmark: what a no-op re-run of playbooks/site.yml costs per node, over SSH.

    .venv/bin/python bench/fleet_bench.py                 # as root, after `make setup`
    .venv/bin/python bench/fleet_bench.py --sizes 1,4,8 --repeat 1 --keep
    .cache/venv-newest/bin/python bench/fleet_bench.py    # the newest tested ansible-core (make bench-fleet ANSIBLE_END=newest)

Starts 8 container nodes of its own (gpuops-bench-1..8 at 172.30.99.101-108 on the lab
network, Debian 13, each carrying the rtx4090-8gpu sysfs fixture), converges them once
with the whole site.yml (untimed: Debian's real driver packages are installed, so every node
is a GPU node) and re-runs it once on all of them (untimed too: the first no-op after a
converge refreshes what the converge changed, such as os_tuning's kept apt simulation; its
figures are in the results as "settle"), then times no-op re-runs of the whole site.yml (every run in one batch,
-e gpuops_serial=100%: site.yml's default canary-then-20% batches would run the nodes one after
the other; --serial to change) on the first 1, 4 and 8 nodes
with the repository's ansible.cfg (the recommended settings), with Ansible's defaults, and
with the recommended settings under Mitogen's mitogen_linear strategy (when the mitogen
package is installed). The nodes' variables are the lab's (inventories/lab/groups.yml as a
second inventory source: connection, key, mirror, repository doubles); the mirror and the
doubles are made as `make lab` makes them. Run it under the molecule lock (`make bench-fleet`).

For each run: wall seconds, controller CPU seconds (ansible-playbook, its workers and the
ssh clients, including the ControlPersist masters), per host, and executed tasks per host
(counted by bench/callback_plugins/fleet_bench_tasks.py). For each configuration: the
marginal cost of an added node (least-squares slope over the sizes) and the budget checks
(<= 60 executed and <= 60 skipped tasks per GPU host; an added node <= 25 % of a one-node
run's wall time and <= 5 s of controller CPU).

Results: bench/results/fleet-<UTC time>.json (and fleet-latest.json), the playbook logs in
bench/results/fleet-<UTC time>/, a table on stdout. Exit status: 0 when every run ran
(budget misses are reported, not fatal, unless --fail-on-budget), 1 when a run failed,
2 when the lab could not be set up. The nodes are removed at the end unless --keep; the lab's
mirror and package cache are stopped at the end either way (the next run starts them again).
"""

from __future__ import print_function

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, BENCH)

import fleet_report  # noqa: E402  pylint: disable=wrong-import-position

PLAYBOOK = os.path.join(ROOT, "playbooks", "site.yml")
RECOMMENDED_CFG = os.path.join(ROOT, "ansible.cfg")
# The lab's groups without hosts: its group_vars (connection, key, mirror, repository doubles)
# reach the benchmark's nodes through this second inventory source, as they reach molecule's.
LAB_INVENTORY = os.path.join(ROOT, "inventories", "lab", "groups.yml")
DOUBLE_BUILDERS = (os.path.join(ROOT, "tests", "doubles", "build_repo.py"),
                   os.path.join(ROOT, "tests", "doubles", "build_node_exporter_release.py"))
COLLECTIONS = os.path.join(ROOT, ".cache", "collections")
CALLBACK_DIR = os.path.join(BENCH, "callback_plugins")
CALLBACK = "fleet_bench_tasks"
RESULTS = os.path.join(BENCH, "results")
# The lab's own label (lab/lab.py LABEL) with a kind of the benchmark's own.
NODE_LABEL = "io.gpuops.lab"
NODE_LABEL_VALUE = "bench-fleet"
GROUP = "gpu_nodes"
# site.yml's batches (gpuops_serial; its default is a canary host, then 20 % at a time) would run
# the nodes one batch after the other; a no-op drift check of a converged fleet runs them in one
# batch, as the benchmark does by default (--serial).
SERIAL = ["100%"]


class BenchError(Exception):
    """The benchmark cannot go on; the message says why."""


def log(msg):
    print("fleet-bench: " + msg, flush=True)


def sh(cmd, check=True, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    kw.setdefault("universal_newlines", True)
    res = subprocess.run(cmd, check=False, **kw)
    if check and res.returncode != 0:
        detail = (res.stderr or res.stdout or "").strip()[-1500:]
        raise BenchError("command failed (rc=%d): %s\n%s" % (res.returncode, " ".join(cmd), detail))
    return res


# --------------------------------------------------------------------------- the lab

def lab_module():
    sys.path.insert(0, os.path.join(ROOT, "lab"))
    import lab  # pylint: disable=import-error,import-outside-toplevel
    return lab


def start_nodes(nodes):
    """Start the benchmark's nodes with lab/lab.py, the one definition of a lab node (engine,
    network, package cache, image, `docker run` arguments, SSH key, fixture). This is the
    only place that knows lab.py's API; adapt it here when lab.py changes. The nodes carry
    the lab's label with a kind of their own (NODE_LABEL_VALUE), so `lab.py down` and the
    molecule scenarios leave them alone. Returns what the inventory needs: the private key
    and the network's subnet."""
    lab = lab_module()
    try:
        lab.ensure_engine()
        lab.ensure_network()
        cache_url = lab.ensure_apt_cache()
        lab.ensure_images(set(node["debian"] for node in nodes), cache_url=cache_url)
        specs = [lab.node_spec({"name": node["name"], "debian": node["debian"], "fixture": node["fixture"],
                                "ip": node["ip"]}, NODE_LABEL_VALUE) for node in nodes]
        for spec in specs:
            log("starting %s (Debian %s, %s, fixture %s)" % (spec["name"], spec["debian"], spec["ip"],
                                                             spec["fixture"]))
        lab.nodes_up(specs, cache_url=cache_url)
        key = lab.ssh_key()
        # The mirror and the repository doubles the lab's group_vars point at, as `make lab` makes them.
        lab.ensure_mirror()
    except lab.LabError as exc:
        raise BenchError("lab: %s" % exc)
    for builder in DOUBLE_BUILDERS:
        sh([sys.executable, builder, "--mirror-dir", lab.MIRROR_DIR])
    return {"ssh_key": key, "subnet": lab.SUBNET, "network": lab.NETWORK}


def lab_subnet_and_network():
    lab = lab_module()
    return lab.SUBNET, lab.NETWORK


def stop_lab_services():
    """Stop this checkout's mirror and package cache, as a molecule scenario's destroy does: every
    lab service is scoped to its checkout, and the next scenario (from any checkout) starts its own."""
    lab = lab_module()
    try:
        lab.stop_mirror()
        lab.APT_CACHE_SERVICE.stop()
    except lab.LabError as exc:
        log("could not stop the lab's services: %s" % exc)


def ours(name):
    res = sh(["docker", "inspect", "--format", "{{ index .Config.Labels \"%s\" }}" % NODE_LABEL, name], check=False)
    if res.returncode != 0:
        return None          # no such container
    return res.stdout.strip() == NODE_LABEL_VALUE


def node_running(name):
    res = sh(["docker", "inspect", "--format", "{{.State.Running}}", name], check=False)
    return res.returncode == 0 and res.stdout.strip() == "true"


def check_free(nodes, network):
    """Refuse to touch a container or an address that is not the benchmark's."""
    for node in nodes:
        if ours(node["name"]) is False:
            raise BenchError("a container named %s exists and is not a benchmark node; remove it or use --prefix"
                             % node["name"])
    res = sh(["docker", "network", "inspect", "--format",
              "{{range $id, $c := .Containers}}{{$c.Name}} {{$c.IPv4Address}}\n{{end}}", network], check=False)
    if res.returncode != 0:
        return
    wanted = dict((node["ip"], node["name"]) for node in nodes)
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].split("/")[0] in wanted and not ours(parts[0]):
            raise BenchError("%s is taken by %s on %s; use --first-host" % (parts[1], parts[0], network))


def remove_nodes(names):
    removed = [name for name in names if ours(name)]
    for name in removed:
        sh(["docker", "rm", "-f", name], check=False)
    if removed:
        log("removed %s" % ", ".join(removed))


def wait_ready(nodes, timeout):
    """systemd up and sshd answering on every node."""
    deadline = time.time() + timeout
    for node in nodes:
        while True:
            res = sh(["docker", "exec", node["name"], "systemctl", "is-system-running"], check=False)
            if res.stdout.strip() in ("running", "degraded"):
                break
            if time.time() > deadline:
                raise BenchError("%s did not boot (systemd: %s)" % (node["name"], res.stdout.strip()))
            time.sleep(1)
        while True:
            try:
                socket.create_connection((node["ip"], 22), timeout=2).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise BenchError("sshd of %s does not answer on %s:22" % (node["name"], node["ip"]))
                time.sleep(0.5)


def seed_apt_archives(source, targets):
    """Copy the packages the first converge downloaded into the other nodes' apt cache, so
    eight nodes do not download the driver eight times (the converge is not timed)."""
    for target in targets:
        pack = subprocess.Popen(["docker", "exec", source, "sh", "-c",
                                 "cd /var/cache/apt/archives && tar -cf - --exclude=lock --exclude=partial ."],
                                stdout=subprocess.PIPE)
        unpack = subprocess.run(["docker", "exec", "-i", target, "tar", "-C", "/var/cache/apt/archives", "-xf", "-"],
                                stdin=pack.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        pack.stdout.close()
        pack.wait()
        if unpack.returncode != 0 or pack.returncode != 0:
            log("could not copy apt archives to %s (it downloads them itself)" % target)


def lab_env():
    """What the lab's group_vars read from the environment (inventories/lab/group_vars: the SSH
    key under the lab's state directory, the repository doubles' descriptions in its mirror
    directory): the lab's own settings, since the benchmark's hosts file lives elsewhere."""
    lab = lab_module()
    return {"GPUOPS_LAB_STATE": lab.STATE, "GPUOPS_MIRROR_DIR": lab.MIRROR_DIR}


# --------------------------------------------------------------------------- running ansible

def mitogen_strategy_dir():
    """Where the mitogen package keeps its strategy plugins (mitogen_linear), or None."""
    try:
        import ansible_mitogen  # pylint: disable=import-error,import-outside-toplevel
    except ImportError:
        return None
    return os.path.join(os.path.dirname(ansible_mitogen.__file__), "plugins", "strategy")


def ansible_playbook():
    """The ansible-playbook of the venv that runs the benchmark (`make bench-fleet
    ANSIBLE_END=newest` runs it with the newest tested ansible-core's python), else the checkout's
    .venv's, else the one on PATH."""
    for candidate in (os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                      os.path.join(ROOT, ".venv", "bin", "ansible-playbook")):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("ansible-playbook")
    if not found:
        raise BenchError("ansible-playbook not found: run `make setup` and use .venv/bin/python")
    return found


def mux_masters(control_dir):
    """SSH ControlPersist masters of one run: they detach from ansible-playbook, so their CPU
    is not in its rusage. {pid: cpu seconds}."""
    tick = float(os.sysconf("SC_CLK_TCK"))
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                cmdline = handle.read().decode("utf-8", "replace")
            if control_dir not in cmdline or not cmdline.startswith("ssh"):
                continue
            with open("/proc/%s/stat" % pid) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            found[int(pid)] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            continue
    return found


def stop_masters(control_dir):
    """Stop the run's SSH masters and remove its ControlPath directory; their CPU seconds."""
    masters = mux_masters(control_dir)
    for pid in masters:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    shutil.rmtree(control_dir, ignore_errors=True)
    return masters


def node_counters(names):
    """{node: the file counting its container's CPU time}; nodes without one are left out."""
    found = {}
    for name in names:
        cid = sh(["docker", "inspect", "-f", "{{.Id}}", name], check=False).stdout.strip()
        try:
            path = fleet_report.cgroup_cpu_counter(cid)
        except ValueError:
            path = None
        if path:
            found[name] = path
    return found


def play(cfg, callbacks, inventory_path, limit, log_path, timeout):
    """Run site.yml once; returns wall and controller CPU seconds, the nodes' CPU seconds
    (their containers' cgroups, when readable), rc and the task counts."""
    counts_path = log_path[:-4] + ".counts.json"
    counters = node_counters(limit.split(","))
    counters_path = log_path[:-4] + ".nodes.json"
    with open(counters_path, "w") as handle:
        json.dump(counters, handle)
    control_dir = tempfile.mkdtemp(prefix="gfb-")
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("ANSIBLE_"))
    env.update(lab_env())
    env.update({
        "ANSIBLE_CONFIG": cfg,
        "ANSIBLE_CALLBACK_PLUGINS": CALLBACK_DIR,
        "ANSIBLE_CALLBACKS_ENABLED": callbacks,
        "ANSIBLE_SSH_CONTROL_PATH_DIR": control_dir,
        "ANSIBLE_NOCOLOR": "1",
        "GPUOPS_BENCH_COUNTS": counts_path,
        "GPUOPS_BENCH_NODE_CPU": counters_path,
    })
    cmd = [ansible_playbook(), "-i", inventory_path, "-i", LAB_INVENTORY, "--limit", limit,
           "-e", "gpuops_serial=%s" % SERIAL[0], PLAYBOOK]
    load_before = os.getloadavg()[0]
    nodes_before = dict((name, fleet_report.read_cpu_counter(path)) for name, path in counters.items())
    start = time.time()
    with open(log_path, "w") as out:
        out.write("# %s\n# ANSIBLE_CONFIG=%s ANSIBLE_CALLBACKS_ENABLED=%s\n" % (" ".join(cmd), cfg, callbacks))
        out.flush()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, cwd=ROOT, start_new_session=True)
        try:
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.time() - start > timeout:
                    os.killpg(proc.pid, signal.SIGTERM)
                    status, usage = os.wait4(proc.pid, 0)[1:]
                    status = 124 << 8
                    break
                time.sleep(0.1)
        except BaseException:
            os.killpg(proc.pid, signal.SIGTERM)
            os.wait4(proc.pid, 0)
            stop_masters(control_dir)
            raise
    wall = time.time() - start
    nodes_cpu = dict((name, round(fleet_report.read_cpu_counter(path) - nodes_before[name], 2))
                     for name, path in counters.items())
    proc.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    masters = stop_masters(control_dir)
    counts = {}
    if os.path.exists(counts_path):
        with open(counts_path) as handle:
            counts = json.load(handle)
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime + sum(masters.values()),
            "load_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "cpu_s_mux_masters": round(sum(masters.values()), 2), "rc": proc.returncode, "counts": counts,
            "node_cpu_s": nodes_cpu,
            "log": os.path.relpath(log_path, ROOT)}


# --------------------------------------------------------------------------- main

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,4,8", help="node counts to time (default 1,4,8)")
    parser.add_argument("--configs", default="recommended,defaults,mitogen",
                        help="recommended (the repository's ansible.cfg), defaults (Ansible's), mitogen (the "
                             "recommended one with Mitogen's mitogen_linear strategy; skipped, and said so, "
                             "without the mitogen package), comma-separated")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs per size and configuration (median)")
    parser.add_argument("--sweep", type=int, default=4,
                        help="after the sizes, time this many nodes with the recommended ansible.cfg changed "
                             "in one setting at a time (fleet_report.SWEEP: pipelining, forks, fact cache, "
                             "callback_result_format, the preload callback, ssh_args, gathering); 0: no sweep "
                             "(default 4, or the largest size when smaller)")
    parser.add_argument("--sweep-settings", default="",
                        help="comma-separated names of fleet_report.SWEEP to try (default: all)")
    parser.add_argument("--fixture", default="rtx4090-8gpu", help="sysfs fixture of every node (tests/fixtures/hosts/)")
    parser.add_argument("--debian", default="13", help="Debian release of the nodes")
    parser.add_argument("--prefix", default="gpuops-bench-", help="node name prefix")
    parser.add_argument("--first-host", type=int, default=101, help="host number of the first node in the lab subnet")
    parser.add_argument("--converge-timeout", type=int, default=1200, help="seconds for each untimed converge")
    parser.add_argument("--run-timeout", type=int, default=600, help="seconds for each timed run")
    parser.add_argument("--max-minutes", type=float, default=30,
                        help="stop starting timed runs after this long (the report says what was skipped)")
    parser.add_argument("--keep", action="store_true", help="leave the nodes running at the end")
    parser.add_argument("--reuse", action="store_true",
                        help="keep benchmark nodes that already run (left by --keep) and start only the missing ones")
    parser.add_argument("--skip-converge", action="store_true",
                        help="with --reuse: do not converge first (the nodes were converged by an earlier run)")
    parser.add_argument("--serial", default="100%",
                        help="site.yml's batch size (gpuops_serial) for every run (default 100%%: one batch)")
    parser.add_argument("--fail-on-budget", action="store_true", help="exit 3 when a budget check fails")
    return parser.parse_args(argv)


def _interrupt(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


def converge(nodes, inventory_path, run_dir, cfg_settings, timeout, result):
    """The untimed first run: the first node alone, its downloaded packages copied to the
    others, then the others; then one untimed no-op run of every node (``settle``), the first
    re-run after a converge: it refreshes what the converge changed under the steady state's
    feet (os_tuning's kept apt simulation is simulated again once after packages were
    installed) and proves the converge left nothing to do. Its wall, CPU and changed tasks go
    into ``result['settle']``. Fails unless every run succeeds."""
    callbacks = fleet_report.callbacks_with(cfg_settings, CALLBACK)
    steps = [("converge-1", nodes[:1])]
    if len(nodes) > 1:
        steps.append(("converge-rest", nodes[1:]))
    steps.append(("settle", nodes))
    total = 0.0
    for name, subset in steps:
        if name == "converge-rest":
            seed_apt_archives(nodes[0]["name"], [node["name"] for node in subset])
        log("%s: site.yml on %s (untimed)" % (name, ", ".join(node["name"] for node in subset)))
        res = play(RECOMMENDED_CFG, callbacks, inventory_path, ",".join(node["name"] for node in subset),
                   os.path.join(run_dir, name + ".log"), timeout)
        if res["rc"] != 0:
            raise BenchError("%s failed (rc=%d); see %s" % (name, res["rc"], res["log"]))
        if name == "settle":
            changed = sum(host.get("changed", 0) for host in (res["counts"].get("hosts") or {}).values())
            result["settle"] = {"nodes": len(subset), "wall_s": round(res["wall_s"], 1), "cpu_s": round(res["cpu_s"], 1),
                                "node_cpu_s": res["node_cpu_s"], "changed": changed, "log": res["log"]}
            log("settle: the first no-op after the converge, %d node(s): %.1f s wall, %.1f s CPU, %d task(s) changed"
                % (len(subset), res["wall_s"], res["cpu_s"], changed))
            continue
        total += res["wall_s"]
    return round(total, 1)


def bench(args, nodes, run_dir, result, deadline):
    network = lab_subnet_and_network()[1]
    check_free(nodes, network)
    running = [node for node in nodes if args.reuse and ours(node["name"]) and node_running(node["name"])]
    if running:
        log("reusing %s" % ", ".join(node["name"] for node in running))
    fresh = [node for node in nodes if node not in running]
    remove_nodes([node["name"] for node in fresh])
    start_nodes(fresh)
    wait_ready(nodes, 180)
    inventory_path = os.path.join(run_dir, "hosts.json")
    with open(inventory_path, "w") as handle:
        handle.write(fleet_report.inventory_text(nodes, GROUP))

    with open(RECOMMENDED_CFG) as handle:
        recommended = fleet_report.read_cfg(handle.read())
    defaults_path = os.path.join(run_dir, "defaults.cfg")
    with open(defaults_path, "w") as handle:
        handle.write(fleet_report.defaults_cfg(COLLECTIONS))
    with open(defaults_path) as handle:
        defaults = fleet_report.read_cfg(handle.read())
    configs = {"recommended": (RECOMMENDED_CFG, recommended), "defaults": (defaults_path, defaults)}
    wanted = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in wanted if c not in configs and c != "mitogen"]
    if unknown:
        raise BenchError("unknown configuration(s) %s; known: recommended, defaults, mitogen" % ", ".join(unknown))
    if "mitogen" in wanted:
        strategy_dir = mitogen_strategy_dir()
        if strategy_dir is None:
            log("mitogen: the mitogen package is not installed in %s: that configuration is not run"
                % sys.prefix)
            result["not_run"] = {"mitogen": "the mitogen package is not installed"}
            wanted.remove("mitogen")
        else:
            mitogen_path = os.path.join(run_dir, "mitogen.cfg")
            with open(RECOMMENDED_CFG) as handle:
                text = fleet_report.mitogen_cfg(handle.read(), ROOT, strategy_dir)
            with open(mitogen_path, "w") as handle:
                handle.write(text)
            configs["mitogen"] = (mitogen_path, fleet_report.read_cfg(text))
    for config in wanted:
        result["configs"][config] = {"ansible_cfg": os.path.relpath(configs[config][0], ROOT),
                                     "settings": configs[config][1]}

    if args.skip_converge:
        log("--skip-converge: timing nodes as they are (a run that changes something is reported as no no-op)")
    else:
        t0 = time.time()
        result["converge_wall_s"] = converge(nodes, inventory_path, run_dir, recommended, args.converge_timeout,
                                             result)
        log("converged %d node(s) in %.0f s" % (len(nodes), time.time() - t0))

    failed = False
    result["skipped_runs"] = []
    for size in result["sizes"]:
        for config in wanted:
            for rep in range(1, args.repeat + 1):
                if time.time() > deadline:
                    result["skipped_runs"].append("%s x%d #%d" % (config, size, rep))
                    continue
                summary = timed_run(configs[config], inventory_path, nodes[:size],
                                    os.path.join(run_dir, "%s-%d-%d.log" % (config, size, rep)), args.run_timeout)
                if summary is None:
                    failed = True
                    continue
                summary.update({"config": config, "repeat": rep})
                result["runs"].append(summary)
                failed = failed or summary["rc"] != 0
    if args.sweep:
        failed = sweep(args, nodes, inventory_path, run_dir, result, deadline, configs["recommended"]) or failed
    return failed


def sweep(args, nodes, inventory_path, run_dir, result, deadline, recommended):
    """One setting of the recommended ansible.cfg changed at a time, on ``--sweep`` nodes, against
    the recommended run of that size (timed again here when the sizes did not include it)."""
    size = min(args.sweep, len(nodes))
    names = [n.strip() for n in args.sweep_settings.split(",") if n.strip()] or [e[0] for e in fleet_report.SWEEP]
    with open(RECOMMENDED_CFG) as handle:
        text = handle.read()
    reference = [run for run in result["runs"] if run["config"] == "recommended" and run["nodes"] == size]
    failed = False
    if not reference:
        summary = timed_run(recommended, inventory_path, nodes[:size],
                            os.path.join(run_dir, "sweep-recommended-%d.log" % size), args.run_timeout)
        if summary is None:
            return True
        summary.update({"config": "recommended"})
        reference = [summary]
    runs = []
    for name in names:
        if time.time() > deadline:
            result["skipped_runs"].append("sweep %s x%d" % (name, size))
            continue
        path = os.path.join(run_dir, "sweep-%s.cfg" % name)
        variant = fleet_report.sweep_cfg(text, ROOT, name, run_dir)
        with open(path, "w") as handle:
            handle.write(variant)
        summary = timed_run((path, fleet_report.read_cfg(variant)), inventory_path, nodes[:size],
                            os.path.join(run_dir, "sweep-%s-%d.log" % (name, size)), args.run_timeout)
        if summary is None:
            failed = True
            continue
        summary.update({"config": name})
        runs.append(summary)
        failed = failed or summary["rc"] != 0
    result["sweep"] = {"size": size, "reference": {k: reference[0][k] for k in ("wall_s", "cpu_s", "load_1m")},
                       "rows": fleet_report.sweep_table(runs, reference[0]), "runs": runs}
    return failed


def timed_run(config, inventory_path, nodes, log_path, timeout):
    """One timed no-op run of site.yml on ``nodes``; its summary, or None when it left no counts."""
    path, settings = config
    res = play(path, fleet_report.callbacks_with(settings, CALLBACK), inventory_path,
               ",".join(node["name"] for node in nodes), log_path, timeout)
    name = os.path.basename(log_path)[:-4]
    try:
        counts = fleet_report.host_counts(res["counts"], [node["name"] for node in nodes])
    except ValueError as exc:
        log("%s: %s (rc=%d); see %s" % (name, exc, res["rc"], res["log"]))
        return None
    summary = fleet_report.run_summary(counts, res["wall_s"], res["cpu_s"], res["rc"], res["counts"].get("recap"))
    summary.update({"rc": res["rc"], "log": res["log"], "cpu_s_mux_masters": res["cpu_s_mux_masters"],
                    "load_1m": res["load_1m"], "slowest_tasks": res["counts"].get("slowest_tasks", []),
                    "costliest_tasks": res["counts"].get("costliest_tasks", []),
                    "node_costliest_tasks": res["counts"].get("node_costliest_tasks", []),
                    "node_cpu_s": res["node_cpu_s"],
                    "controller_split": res["counts"].get("controller_split"),
                    "node_cpu_s_per_host": (round(sum(res["node_cpu_s"].values()) / len(res["node_cpu_s"]), 2)
                                            if res["node_cpu_s"] else None)})
    log("%s: %.1f s wall, %.1f s CPU, %s s node CPU/host, %d tasks/host executed, %d skipped, load %.1f%s"
        % (name, summary["wall_s"], summary["cpu_s"], summary["node_cpu_s_per_host"],
           summary["executed_per_host"], summary["skipped_per_host"],
           max(summary["load_1m"]), "" if summary["noop"] else " -- " + "; ".join(summary["problems"])))
    return summary


def summarize(result):
    """Marginal cost and budget checks of each configuration, from the runs done so far."""
    for config, entry in result["configs"].items():
        runs = [run for run in result["runs"] if run["config"] == config]
        if runs:
            entry["stats"] = fleet_report.config_stats(runs, result["controller"].get("cpus"))
            entry["budget"] = fleet_report.budget_checks(runs, entry["stats"])
    result["configs"] = dict((name, entry) for name, entry in result["configs"].items() if "stats" in entry)


def main(argv=None):
    args = parse_args(argv)
    if not re.fullmatch(r"[1-9][0-9]{0,4}%?", args.serial):
        print("fleet-bench: --serial %r: give a host count or a percentage, e.g. 100%%" % args.serial, file=sys.stderr)
        return 2
    SERIAL[0] = args.serial
    started = time.time()
    deadline = started + 60 * args.max_minutes
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        sizes = fleet_report.parse_sizes(args.sizes)
    except ValueError as exc:
        print("fleet-bench: error: %s" % exc, file=sys.stderr)
        return 2
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run_dir = os.path.join(RESULTS, "fleet-" + stamp)
    os.makedirs(run_dir)
    subnet = lab_subnet_and_network()[0]
    nodes = fleet_report.node_plan(sizes[-1], subnet, args.first_host, args.prefix, args.debian, args.fixture)
    version = sh([ansible_playbook(), "--version"], check=False).stdout.splitlines()[:1]
    result = {
        "started": stamp,
        "command": " ".join([sys.executable] + sys.argv),
        "controller": {"cpus": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version(),
                       "ansible": version[0] if version else None},
        "playbook": os.path.relpath(PLAYBOOK, ROOT),
        "fixture": args.fixture, "debian": args.debian, "group": GROUP,
        "nodes": nodes, "sizes": sizes, "gpuops_serial": SERIAL[0],
        "counting": ("executed = task results with status ok (changed or not) or failed on that host, one per task "
                     "even when it loops, dynamic includes (include_tasks/include_role/include_vars) excluded; "
                     "skipped counted apart"),
        "cpu": ("user+system seconds of ansible-playbook and every process it waited for (workers, ssh clients), "
                "plus the SSH ControlPersist masters of the run"),
        "budget": {"tasks_per_gpu_host": fleet_report.TASK_BUDGET, "skipped_per_gpu_host": fleet_report.SKIPPED_BUDGET,
                   "cpu_s_per_added_host": fleet_report.CPU_BUDGET, "added_node_fraction": fleet_report.MARGINAL_BUDGET},
        "runs": [], "configs": {},
    }
    code = 0
    try:
        failed = bench(args, nodes, run_dir, result, deadline)
        code = 1 if failed else 0
    except BenchError as exc:
        print("fleet-bench: error: %s" % exc, file=sys.stderr)
        result["error"] = str(exc)
        code = 2
    except KeyboardInterrupt as exc:
        print("fleet-bench: interrupted (%s)" % exc, file=sys.stderr)
        result["error"] = "interrupted"
        code = 130
    finally:
        if not args.keep:
            remove_nodes([node["name"] for node in nodes])
        # with --keep too: a kept node needs no mirror until the next run, which starts it again,
        # and a mirror left on its port would stop the next molecule scenario's create
        stop_lab_services()
    summarize(result)
    result["elapsed_s"] = round(time.time() - started, 1)
    out = os.path.join(RESULTS, "fleet-%s.json" % stamp)
    for path in (out, os.path.join(RESULTS, "fleet-latest.json")):
        with open(path, "w") as handle:
            json.dump(result, handle, indent=2, sort_keys=True)
    if result["runs"]:
        print()
        print(fleet_report.table(result))
        print()
    if result.get("skipped_runs"):
        log("not run (past --max-minutes): " + ", ".join(result["skipped_runs"]))
    log("results: %s (logs in %s), %.0f s in all"
        % (os.path.relpath(out, ROOT), os.path.relpath(run_dir, ROOT), result["elapsed_s"]))
    if code == 0 and args.fail_on_budget and not all(
            check["passed"] for entry in result["configs"].values() for check in entry["budget"]):
        code = 3
    return code


if __name__ == "__main__":
    sys.exit(main())
