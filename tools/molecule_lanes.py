# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Split the molecule scenarios into lanes that `make test` runs side by side.

One scenario alone leaves a part of the machine's two CPUs idle (systemd booting the nodes,
SSH round trips, a playbook waiting on its slowest host); two lanes of scenarios fill it. Each
lane runs its scenarios one after the other; the lanes share the lab's network, package cache
and artifact mirror, which `make molecule-services` starts and fills before them (so no
scenario builds a double while another reads it). Scenario nodes have names of their own and addresses
from the network's dynamic range, so the lanes never meet on a node.

The order is longest-first, from the seconds each scenario took (`.cache/test-times.tsv` of an
earlier `make test` where it has the scenario, else SECONDS below, else DEFAULT_SECONDS). `make
test` writes that order into a queue (`--queue FILE`) and each lane takes the next unit from it
when it comes free (`--take FILE`, under a lock on the file): a scenario that takes longer than
its seconds said only delays the lane that runs it, and the lanes end at most one unit apart.
(`split` places the same units onto lanes beforehand; it is what the lanes would do if every
scenario took exactly its seconds.)

An entry `NAME@END` is the scenario NAME run on another ansible-core end of the matrix
(`@newest`: the newest tested ansible-core's venv, `make molecule-one SCENARIO=NAME@newest`).
Its seconds, until a timing table has them, are the scenario's own. A scenario and its other
ends are one unit, placed in one lane one after the other (NAME first): they start nodes of
the same names (a scenario's platform names are its containers' names), so two of them side
by side would share, and destroy, each other's nodes.

    python tools/molecule_lanes.py --lanes 2 [--times FILE] SCENARIO[@END]...

prints one line per lane, the scenario names separated by spaces (a lane may be empty);

    python tools/molecule_lanes.py --queue FILE [--times FILE] SCENARIO[@END]...
    python tools/molecule_lanes.py --take FILE

write the units longest first into FILE, one line each (and print them), and take the first
line from FILE (printed; nothing once FILE is empty)."""

from __future__ import absolute_import, division, print_function

import argparse
import fcntl
import os
import re
import sys

# Seconds per scenario in its lane, `make test` from a cold machine (a clean clone on a fresh
# 2-core machine, 2026-12-08: no node image, no package cache; two lanes beside the static
# stages): relative weights for the order, not a budget. A clean clone has no timing table of
# its own, so these order its queue.
SECONDS = {
    "cuda_toolkit": 161,
    "cuda_toolkit_distro": 478,
    "dcgm_exporter": 287,
    "gpu_validate": 715,
    "ipmi_exporter": 241,
    "monitoring": 174,
    "nvidia_container_toolkit": 332,
    "nvidia_driver": 843,
    "nvidia_driver_cuda_repo": 222,
    "os_tuning": 105,
    "python_stack": 549,
    "rolling_upgrade": 365,
    "storage": 54,
    "volcano": 13,
}
DEFAULT_SECONDS = 300
# The other ends of the ansible-core matrix a scenario runs on (the Makefile's molecule-one).
ENDS = ("newest",)
NAME = re.compile(r'(?P<base>[a-z0-9_]+)(?:@(?P<end>[a-z0-9_]+))?')
STAGE = re.compile(r'molecule (?P<name>[a-z0-9_]+(?:@[a-z0-9_]+)?)')


def times_from(path):
    """{scenario: seconds} from a `make test` timing table (stage, seconds, result, log): the
    scenarios that passed (a failed run's seconds say little about the next one)."""
    seconds = {}
    if not path or not os.path.exists(path):
        return seconds
    with open(path) as fh:
        for line in fh:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 3 or fields[2] != "passed":
                continue
            match = STAGE.fullmatch(fields[0])
            if match and fields[1].isdigit():
                seconds[match.group("name")] = int(fields[1])
    return seconds


def base_of(name):
    """The scenario of an entry (`nvidia_driver@newest` -> `nvidia_driver`); ValueError for
    anything that is not a scenario name, optionally with one of ENDS."""
    match = NAME.fullmatch(name)
    if not match:
        raise ValueError("not a scenario name: %r" % (name,))
    if match.group("end") is not None and match.group("end") not in ENDS:
        raise ValueError("not an ansible-core end of the matrix: %r in %r (one of: %s)"
                         % (match.group("end"), name, ", ".join(ENDS)))
    return match.group("base")


def seconds_of(name, known):
    """An entry's expected seconds: its own, else (another end) its scenario's, else the default."""
    if name in known:
        return known[name]
    return known.get(base_of(name), DEFAULT_SECONDS)


def units(scenarios, seconds=None):
    """``[(seconds, [names])]``, the longest unit first (ties by name): a scenario with its other
    ends (`NAME@END`) is one unit, its entries NAME first, then its ends by name; a name given
    twice runs once."""
    grouped = {}
    for name in scenarios:
        grouped.setdefault(base_of(name), []).append(name)
    known = dict(SECONDS)
    known.update(seconds or {})
    result = []
    for base, names in grouped.items():
        names = sorted(dict.fromkeys(names), key=lambda n: (n != base, n))
        result.append((sum(seconds_of(n, known) for n in names), base, names))
    return [(weight, names) for weight, _base, names in sorted(result, key=lambda u: (-u[0], u[1]))]


def split(scenarios, lanes, seconds=None):
    """Lists of scenario names, one per lane: the units longest first, each onto the lane with
    the fewest seconds so far (the first such lane on a tie) - what the queue's lanes do when
    every scenario takes its seconds; a lane keeps its scenarios in the order they were placed."""
    if lanes < 1:
        raise ValueError("lanes must be 1 or more, not %r" % (lanes,))
    result = [[] for _lane in range(lanes)]
    load = [0] * lanes
    for weight, names in units(scenarios, seconds):
        lane = load.index(min(load))
        result[lane].extend(names)
        load[lane] += weight
    return result


def write_queue(path, scenarios, seconds=None):
    """The units longest first into ``path``, one line each (names separated by spaces); returns the lines."""
    lines = [" ".join(names) for _weight, names in units(scenarios, seconds)]
    with open(path, "w") as handle:
        handle.write("".join(line + "\n" for line in lines))
    return lines


def take(path):
    """The first line of the queue ``path``, removed from it under an exclusive lock on the file
    (two lanes never take the same unit); '' once the queue is empty."""
    with open(path, "r+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        lines = handle.read().splitlines()
        first = lines[0] if lines else ""
        handle.seek(0)
        handle.truncate()
        handle.write("".join(line + "\n" for line in lines[1:]))
    for name in first.split():
        base_of(name)   # only scenario names leave the queue (the Makefile runs them)
    return first


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lanes", type=int, default=2)
    parser.add_argument("--times", help="a `make test` timing table (.cache/test-times.tsv) of an earlier run")
    parser.add_argument("--queue", metavar="FILE", help="write the units longest first into FILE, one line each")
    parser.add_argument("--take", metavar="FILE", help="print the first line of the queue FILE and remove it")
    parser.add_argument("scenarios", nargs="*")
    args = parser.parse_args(argv)
    try:
        if args.take:
            if args.scenarios or args.queue:
                parser.error("--take FILE takes no scenarios and no --queue")
            first = take(args.take)
            if first:
                print(first)
            return 0
        if not args.scenarios:
            parser.error("name at least one scenario")
        if args.queue:
            for line in write_queue(args.queue, args.scenarios, times_from(args.times)):
                print(line)
            return 0
        lanes = split(args.scenarios, args.lanes, times_from(args.times))
    except (ValueError, OSError) as exc:
        parser.error(str(exc))
    for lane in lanes:
        print(" ".join(lane))
    return 0


if __name__ == "__main__":
    sys.exit(main())
