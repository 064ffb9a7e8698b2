# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The pure parts of bench/fleet_bench.py: node plan, inventory, configuration reading,
task counts, statistics, budget checks and the printed table. No Docker, no Ansible run.
tests/unit/bench/ tests them."""

from __future__ import print_function

import configparser
import io
import ipaddress
import json
import os
import re

# The budgets of a no-op run of the whole stack (issue "Fleet cost", part 2).
TASK_BUDGET = 60           # executed tasks per GPU host
SKIPPED_BUDGET = 60        # skipped tasks per GPU host (they cost controller CPU too)
CPU_BUDGET = 5.0           # controller CPU seconds per added host
MARGINAL_BUDGET = 0.25     # an added node costs at most this fraction of a one-node run (wall)

# What a configuration changes that matters for a fleet run, and Ansible's defaults for it.
SETTINGS = (
    # (section, key, ansible default)
    ("defaults", "forks", "5"),
    ("defaults", "gathering", "implicit"),
    ("defaults", "fact_caching", "memory"),
    ("defaults", "callbacks_enabled", ""),
    ("ssh_connection", "pipelining", "False"),
    ("ssh_connection", "ssh_args", "-C -o ControlMaster=auto -o ControlPersist=60s"),
    ("defaults", "strategy", "linear"),
)


# --------------------------------------------------------------------------- plan

def parse_sizes(text):
    """'1,4,8' -> [1, 4, 8]: distinct, ascending, positive; the first is the one-node baseline."""
    sizes = sorted(set(int(part) for part in text.split(",") if part.strip()))
    if not sizes or sizes[0] < 1:
        raise ValueError("sizes must be positive integers, e.g. 1,4,8 (got %r)" % text)
    return sizes


def node_plan(count, subnet, first_host, prefix, debian, fixture):
    """The benchmark's nodes: ``prefix-1`` .. ``prefix-count`` at consecutive addresses
    starting with host number ``first_host`` of ``subnet``."""
    net = ipaddress.ip_network(subnet)
    nodes = []
    for index in range(count):
        address = net.network_address + first_host + index
        if address not in net or address == net.broadcast_address:
            raise ValueError("node %d would get %s, outside %s" % (index + 1, address, subnet))
        nodes.append({"name": "%s%d" % (prefix, index + 1), "ip": str(address),
                      "debian": str(debian), "fixture": fixture})
    return nodes


def inventory(nodes, group):
    """The benchmark's hosts (YAML inventory plugin structure), every node in ``group``, with
    only what is the node's own: its address and the sysfs fixture it carries. Everything else
    - connection, SSH key, the mirror, the repository doubles - is the lab's: the benchmark
    runs with inventories/lab/groups.yml as a second inventory source (as the molecule
    scenarios do), whose group_vars apply to ``group`` (a child of lab_nodes there)."""
    hosts = dict((node["name"], {"ansible_host": node["ip"], "gpuops_fixture": node["fixture"]}) for node in nodes)
    return {"all": {"children": {group: {"hosts": hosts}}}}


def inventory_text(nodes, group):
    """The inventory as JSON, which Ansible's YAML inventory plugin reads from a ``.json`` file
    (and which yamllint, unlike a ``.yml`` file, does not lint)."""
    return json.dumps(inventory(nodes, group), indent=2, sort_keys=True) + "\n"


def limit_for(nodes, size):
    """The --limit that selects the first ``size`` nodes."""
    if size > len(nodes):
        raise ValueError("%d nodes asked for, %d started" % (size, len(nodes)))
    return ",".join(node["name"] for node in nodes[:size])


# --------------------------------------------------------------------------- configuration

def read_cfg(text):
    """The fleet-relevant settings of an ansible.cfg text: each of SETTINGS, with Ansible's
    default where the file does not set it, and ``source`` saying which."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    settings = {}
    for section, key, default in SETTINGS:
        if parser.has_option(section, key):
            settings[key] = {"value": parser.get(section, key).strip(), "source": "cfg"}
        else:
            settings[key] = {"value": default, "source": "default"}
    return settings


def callbacks_with(cfg_settings, extra):
    """ANSIBLE_CALLBACKS_ENABLED that keeps the configuration's callbacks and adds ``extra``
    (the environment variable replaces the file's value, it does not add to it)."""
    names = [name.strip() for name in cfg_settings["callbacks_enabled"]["value"].split(",") if name.strip()]
    if extra not in names:
        names.append(extra)
    return ",".join(names)


def defaults_cfg(collections_path):
    """An ansible.cfg that leaves every setting at Ansible's default; it only says where the
    collection is (that changes where Ansible looks, not how fast it runs)."""
    return "[defaults]\ncollections_path = %s\n" % collections_path


# Settings of an ansible.cfg that name a path, resolved against the file's directory.
PATH_SETTINGS = (("defaults", "collections_path"), ("defaults", "fact_caching_connection"))


def cfg_with(recommended_text, cfg_dir, changes):
    """The recommended ansible.cfg with ``changes`` ([(section, key, value)]; value None removes
    the key), to be written elsewhere than ``cfg_dir``: its relative paths are made absolute."""
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read_string(recommended_text)
    for section, key in PATH_SETTINGS:
        if parser.has_option(section, key):
            value = parser.get(section, key).strip()
            parser.set(section, key, ":".join(
                part if part.startswith(("/", "~")) else os.path.normpath(os.path.join(cfg_dir, part))
                for part in value.split(":")))
    for section, key, value in changes:
        if value is None:
            if parser.has_option(section, key):
                parser.remove_option(section, key)
            continue
        if not parser.has_section(section):
            parser.add_section(section)
        parser.set(section, key, value)
    out = io.StringIO()
    parser.write(out)
    return out.getvalue()


def mitogen_cfg(recommended_text, cfg_dir, strategy_dir):
    """The recommended ansible.cfg with Mitogen's ``mitogen_linear`` strategy (plugins in
    ``strategy_dir``, from the ``mitogen`` package). Host key checking is off (the lab's nodes
    get fresh host keys; Mitogen does not honour the inventory's ssh options the same way)."""
    return cfg_with(recommended_text, cfg_dir, [("defaults", "strategy", "mitogen_linear"),
                                                ("defaults", "strategy_plugins", strategy_dir),
                                                ("defaults", "host_key_checking", "False")])


# One setting of the recommended ansible.cfg at a time, set to Ansible's default or to an
# alternative (--sweep): (name, what it tries, [(section, key, value)]). "{tmp}" is a scratch
# directory of the run.
SWEEP = (
    ("pipelining-off", "pipelining = false (Ansible's default)", [("ssh_connection", "pipelining", "false")]),
    ("forks-5", "forks = 5 (Ansible's default)", [("defaults", "forks", "5")]),
    ("forks-50", "forks = 50", [("defaults", "forks", "50")]),
    ("jsonfile-cache", "fact_caching = jsonfile (a fact cache on disk)",
     [("defaults", "fact_caching", "jsonfile"), ("defaults", "fact_caching_connection", "{tmp}/facts")]),
    ("result-format-json", "callback_result_format = json (Ansible's default)",
     [("defaults", "callback_result_format", "json")]),
    ("no-preload", "callbacks_enabled without gpuops.dlserver.preload",
     [("defaults", "callbacks_enabled", "gpuops.dlserver.fleet_summary")]),
    ("ssh-args-default", "ssh_args = Ansible's default (-C, ControlPersist=60s)",
     [("ssh_connection", "ssh_args", "-C -o ControlMaster=auto -o ControlPersist=60s")]),
    ("gathering-implicit", "gathering = implicit (Ansible's default)", [("defaults", "gathering", "implicit")]),
)


def sweep_cfg(recommended_text, cfg_dir, name, tmp):
    """The recommended ansible.cfg with the one change of SWEEP entry ``name``."""
    for entry_name, _what, changes in SWEEP:
        if entry_name == name:
            return cfg_with(recommended_text, cfg_dir,
                            [(section, key, value.replace("{tmp}", tmp)) for section, key, value in changes])
    raise ValueError("unknown sweep setting %r; known: %s" % (name, ", ".join(e[0] for e in SWEEP)))


def sweep_table(runs, reference):
    """Rows (setting, what, wall_s, cpu_s, wall change, cpu change) of the sweep runs against the
    recommended run of the same size (``reference``): a change in % of the reference, + is worse."""
    what = dict((entry[0], entry[1]) for entry in SWEEP)
    rows = []
    for run in runs:
        rows.append({
            "setting": run["config"], "what": what.get(run["config"], run["config"]),
            "wall_s": run["wall_s"], "cpu_s": run["cpu_s"], "noop": run["noop"],
            "wall_change": round(100.0 * (run["wall_s"] - reference["wall_s"]) / reference["wall_s"], 1),
            "cpu_change": round(100.0 * (run["cpu_s"] - reference["cpu_s"]) / reference["cpu_s"], 1),
        })
    return rows


# --------------------------------------------------------------------------- counts

def host_counts(counts_doc, hosts):
    """Per-host task counts from the callback's JSON document, for ``hosts`` (every host must
    be there: a host with no result did not run)."""
    per_host = counts_doc.get("hosts", {})
    missing = [host for host in hosts if host not in per_host]
    if missing:
        raise ValueError("no task results for %s" % ", ".join(missing))
    return dict((host, per_host[host]) for host in hosts)


def recap_disagreements(counts, recap):
    """Hosts whose counts do not add up to Ansible's own recap (executed + includes = ok +
    failures; skipped = skipped): a sign that the counting callback missed results."""
    wrong = []
    for host in sorted(counts):
        mine, theirs = counts[host], recap.get(host)
        if theirs is None:
            wrong.append("%s: not in the recap" % host)
            continue
        if (mine["executed"] + mine.get("includes", 0) != theirs.get("ok", 0) + theirs.get("failures", 0)
                or mine["skipped"] != theirs.get("skipped", 0)):
            wrong.append("%s: counted %d executed + %d includes, %d skipped; recap ok=%d failures=%d skipped=%d"
                         % (host, mine["executed"], mine.get("includes", 0), mine["skipped"], theirs.get("ok", 0),
                            theirs.get("failures", 0), theirs.get("skipped", 0)))
    return wrong


def run_summary(counts, wall_s, cpu_s, returncode, recap=None):
    """One timed run: wall and controller CPU seconds, per-host task counts and whether it was
    a clean no-op (rc 0, nothing changed, failed or unreachable, counts that agree with the
    recap when one is given)."""
    size = len(counts)
    executed = [c["executed"] for c in counts.values()]
    problems = []
    if returncode != 0:
        problems.append("ansible-playbook exited %d" % returncode)
    for key in ("changed", "failed", "unreachable"):
        total = sum(c.get(key, 0) for c in counts.values())
        if total:
            problems.append("%d task(s) %s" % (total, key))
    if recap is not None:
        problems.extend("counts disagree with the recap: " + text for text in recap_disagreements(counts, recap))
    return {
        "nodes": size,
        "wall_s": round(wall_s, 2),
        "cpu_s": round(cpu_s, 2),
        "cpu_s_per_host": round(cpu_s / size, 2),
        "executed_per_host": max(executed),
        "executed_per_host_min": min(executed),
        "skipped_per_host": max(c["skipped"] for c in counts.values()),
        "includes_per_host": max(c.get("includes", 0) for c in counts.values()),
        "controller_only_per_host": max(c.get("controller_only", 0) for c in counts.values()),
        "changed": sum(c.get("changed", 0) for c in counts.values()),
        "noop": not problems,
        "problems": problems,
        "hosts": counts,
    }


def cgroup_cpu_counter(container_id, cgroup_root="/sys/fs/cgroup"):
    """The file that counts a Docker container's CPU time: cgroup v1 (cgroupfs driver)
    ``cpuacct/docker/<id>/cpuacct.usage`` (nanoseconds), or cgroup v2 ``cpu.stat`` (its
    ``usage_usec`` line) under ``system.slice/docker-<id>.scope`` (systemd driver) or
    ``docker/<id>`` (cgroupfs driver); None when none exists."""
    if not re.fullmatch(r"[0-9a-f]{64}", container_id or ""):
        raise ValueError("not a full container id: %r" % (container_id,))
    for parts in (("cpuacct", "docker", container_id, "cpuacct.usage"),
                  ("system.slice", "docker-%s.scope" % container_id, "cpu.stat"),
                  ("docker", container_id, "cpu.stat")):
        path = os.path.join(cgroup_root, *parts)
        if os.path.exists(path):
            return path
    return None


def read_cpu_counter(path):
    """CPU seconds in a counter file of cgroup_cpu_counter (0.0 when it cannot be read)."""
    try:
        with open(path) as handle:
            text = handle.read()
    except (OSError, TypeError):
        return 0.0
    if path.endswith("cpu.stat"):
        found = re.search(r"^usage_usec ([0-9]+)$", text, re.M)
        return int(found.group(1)) / 1e6 if found else 0.0
    return int(text.strip() or 0) / 1e9 if text.strip().isdigit() else 0.0


# --------------------------------------------------------------------------- statistics

def slope(points):
    """Least-squares slope of (x, y) points: the cost of one more x."""
    if len(points) < 2:
        raise ValueError("a slope needs two points at least")
    n = float(len(points))
    xs = [point[0] for point in points]
    ys = [point[1] for point in points]
    mean_x = sum(xs) / n
    mean_y = sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("a slope needs two different x values")
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys)) / sxx


def median(values):
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of nothing")
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2.0


def config_stats(runs, cpus=None):
    """Marginal cost of an added node for one configuration's runs (several per size allowed:
    the median of each size is used): least-squares slope over all sizes of wall and CPU
    seconds, and the slope as a fraction of the one-node run; with ``cpus`` (the controller's)
    and every run's controller_split, also ``separate_machines`` (separate_estimate)."""
    by_size = {}
    for run in runs:
        by_size.setdefault(run["nodes"], []).append(run)
    sizes = sorted(by_size)
    wall = [(size, median([r["wall_s"] for r in by_size[size]])) for size in sizes]
    cpu = [(size, median([r["cpu_s"] for r in by_size[size]])) for size in sizes]
    stats = {"sizes": sizes, "wall_s": dict(wall), "cpu_s": dict(cpu), "baseline_nodes": sizes[0]}
    if len(sizes) >= 2:
        wall_slope, cpu_slope = slope(wall), slope(cpu)
        stats.update({
            "marginal_wall_s": round(wall_slope, 2),
            "marginal_cpu_s": round(cpu_slope, 2),
            "marginal_wall_fraction": round(wall_slope / wall[0][1], 3) if wall[0][1] else None,
            "marginal_cpu_fraction": round(cpu_slope / cpu[0][1], 3) if cpu[0][1] else None,
        })
        estimate = separate_estimate(by_size, cpus, wall[0][1])
        if estimate:
            stats["separate_machines"] = estimate
    return stats


def separate_estimate(by_size, cpus, one_node_wall):
    """What an added node would cost against nodes that do not share the controller's CPUs, from
    the measured split of the controller's CPU (the median of each size): ``ansible-playbook``'s
    own process runs serially (its slope is a floor), its workers spread over ``cpus``, so an added
    node costs max(main, (main + workers) / cpus) seconds of wall. An estimate from measured figures,
    not a measurement: None without ``cpus``, two sizes, or a split in every run. Also the slope of
    the nodes' own CPU (which separate machines would not share), where every run has it."""
    sizes = sorted(by_size)
    if not cpus or len(sizes) < 2 or not one_node_wall:
        return None
    if not all(isinstance(r.get("controller_split"), dict) for rs in by_size.values() for r in rs):
        return None
    main = slope([(n, median([r["controller_split"]["main"] for r in by_size[n]])) for n in sizes])
    workers = slope([(n, median([r["controller_split"]["workers"] for r in by_size[n]])) for n in sizes])
    wall = max(main, (main + workers) / float(cpus))
    out = {"main_cpu_s": round(main, 2), "workers_cpu_s": round(workers, 2), "cpus": cpus,
           "wall_s": round(wall, 2), "fraction": round(wall / one_node_wall, 3)}
    if all(isinstance(r.get("node_cpu_s"), dict) and r["node_cpu_s"] for rs in by_size.values() for r in rs):
        out["node_cpu_s"] = round(slope([(n, median([sum(r["node_cpu_s"].values()) for r in by_size[n]]))
                                         for n in sizes]), 2)
    return out


# --------------------------------------------------------------------------- budget

def budget_checks(runs, stats, task_budget=TASK_BUDGET, marginal_budget=MARGINAL_BUDGET,
                  skipped_budget=SKIPPED_BUDGET, cpu_budget=CPU_BUDGET):
    """The budgets for one configuration, in this order: executed and skipped tasks per GPU host
    in a no-op run (the most any host had in any run), the marginal wall time of an added node
    as a fraction of the one-node run, and the controller CPU seconds per added node. Each
    check: name, limit, value, passed, detail."""
    checks = []
    noop = all(run["noop"] for run in runs)
    for name, key, limit in (("tasks per GPU host (no-op run)", "executed_per_host", task_budget),
                             ("skipped tasks per GPU host (no-op run)", "skipped_per_host", skipped_budget)):
        value = max(run[key] for run in runs)
        checks.append({
            "name": name,
            "limit": limit,
            "value": value,
            "passed": value <= limit and noop,
            "detail": ("most on any host in any run" if noop else "not every run was a clean no-op: see problems"),
        })
    fraction = stats.get("marginal_wall_fraction")
    if fraction is None:
        checks.append({"name": "added node / one-node run (wall)", "limit": marginal_budget,
                       "value": None, "passed": False,
                       "detail": "needs runs of at least two sizes"})
    else:
        checks.append({
            "name": "added node / one-node run (wall)",
            "limit": marginal_budget,
            "value": fraction,
            "passed": fraction <= marginal_budget,
            "detail": "least-squares slope over %s nodes: %.2f s per node, one-node run %.2f s"
                      % ("/".join(str(s) for s in stats["sizes"]), stats["marginal_wall_s"],
                         stats["wall_s"][stats["baseline_nodes"]]),
        })
    cpu = stats.get("marginal_cpu_s")
    checks.append({"name": "controller CPU s per added node", "limit": cpu_budget, "value": cpu,
                   "passed": cpu is not None and cpu <= cpu_budget,
                   "detail": "least-squares slope of the controller CPU over the sizes" if cpu is not None
                             else "needs runs of at least two sizes"})
    return checks


# --------------------------------------------------------------------------- table

def format_budget_value(check):
    """(value, limit) of a budget check as printed: the wall fraction in per cent, the CPU
    budget in seconds, task counts as they are, a missing value as '-'."""
    value, limit = check["value"], check["limit"]
    if check["name"].startswith("added node"):
        return ("-" if value is None else "%.0f %%" % (100 * value)), "%.0f %%" % (100 * limit)
    if check["name"].startswith("controller CPU"):
        return ("-" if value is None else "%.2f s" % value), "%.2f s" % limit
    return ("-" if value is None else str(value)), str(limit)


def busy_runs(result):
    """Runs during which the controller's 1-minute load average (before or after) exceeded its CPUs."""
    cpus = result.get("controller", {}).get("cpus") or 1
    return [run for run in result["runs"] if run.get("load_1m") and max(run["load_1m"]) > cpus]


def table(result):
    """The printed report: one row per timed run, then per configuration the marginal cost
    and the budget checks."""
    lines = []
    head = ("config", "nodes", "wall s", "CPU s", "CPU s/host", "node CPU s/host", "tasks/host", "skipped/host",
            "load", "no-op")
    rows = [head]
    for run in result["runs"]:
        load = run.get("load_1m")
        node = run.get("node_cpu_s_per_host")
        rows.append((run["config"], str(run["nodes"]), "%.1f" % run["wall_s"], "%.1f" % run["cpu_s"],
                     "%.2f" % run["cpu_s_per_host"], "-" if node is None else "%.2f" % node,
                     str(run["executed_per_host"]),
                     str(run["skipped_per_host"]), "%.1f" % max(load) if load else "-",
                     "yes" if run["noop"] else "NO: " + "; ".join(run["problems"])))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head) - 1)]
    for index, row in enumerate(rows):
        cells = [row[i].rjust(widths[i]) if i else row[i].ljust(widths[i]) for i in range(len(widths))]
        lines.append("  ".join(cells + [row[-1]]).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths) + "  -----")
    lines.append("")
    busy = busy_runs(result)
    if busy:
        lines.append("warning: the controller's 1-minute load exceeded its %d CPUs during %d run(s): other work "
                     "shared the CPUs, so those figures are inflated" % (result["controller"]["cpus"], len(busy)))
    for config, entry in result["configs"].items():
        stats = entry["stats"]
        if "marginal_wall_s" in stats:
            lines.append("%s: an added node costs %.2f s wall (%.0f %% of the %d-node run), %.2f s controller CPU"
                         % (config, stats["marginal_wall_s"], 100 * (stats["marginal_wall_fraction"] or 0),
                            stats["baseline_nodes"], stats["marginal_cpu_s"]))
        separate = stats.get("separate_machines")
        if separate:
            lines.append("  against separate machines (an estimate from the controller's split): %.2f s wall per added "
                         "node, %.0f %% of the %d-node run (ansible-playbook %.2f s serial, workers %.2f s over %d "
                         "CPUs)%s" % (separate["wall_s"], 100 * separate["fraction"], stats["baseline_nodes"],
                                      separate["main_cpu_s"], separate["workers_cpu_s"], separate["cpus"],
                                      "; the node's own CPU %.2f s, not shared there" % separate["node_cpu_s"]
                                      if "node_cpu_s" in separate else ""))
        for check in entry["budget"]:
            shown, limit = format_budget_value(check)
            verdict = "PASS" if check["passed"] else "FAIL"
            lines.append("  budget %-34s %-8s limit %-6s %s" % (check["name"], shown, limit, verdict))
    sweep = result.get("sweep")
    if sweep:
        lines.append("")
        lines.append("one setting changed at a time, %d nodes, against the recommended ansible.cfg (%.1f s wall, "
                     "%.1f s CPU); + is worse:" % (sweep["size"], sweep["reference"]["wall_s"],
                                                   sweep["reference"]["cpu_s"]))
        for row in sweep["rows"]:
            lines.append("  %-52s wall %6.1f s (%+5.1f %%)  CPU %6.1f s (%+5.1f %%)%s"
                         % (row["what"], row["wall_s"], row["wall_change"], row["cpu_s"], row["cpu_change"],
                            "" if row["noop"] else "  NOT a clean no-op"))
    controller = result.get("controller") or {}
    if controller.get("ansible"):
        # which end of the ansible-core matrix ran it (make bench-fleet ANSIBLE_END=newest)
        lines.append("")
        lines.append("controller: %s, Python %s, %s CPUs"
                     % (controller["ansible"], controller.get("python", "unknown"), controller.get("cpus", "unknown")))
    return "\n".join(lines)
