# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Split the molecule scenarios into lanes that `make test` runs side by side.

One scenario alone leaves a part of the machine's two CPUs idle (systemd booting the nodes,
SSH round trips, a playbook waiting on its slowest host); two lanes of scenarios fill it. Each
lane runs its scenarios one after the other; the lanes share the lab's network, package cache
and artifact mirror, which `make molecule-services` starts and fills before them (so no
scenario builds a double while another reads it). Scenario nodes have names of their own and addresses
from the network's dynamic range, so the lanes never meet on a node.

The split is longest-first onto the lane that ends soonest, from the seconds each scenario
took (`.cache/test-times.tsv` of an earlier `make test` where it has the scenario, else
SECONDS below, else DEFAULT_SECONDS): the lanes end close together.

An entry `NAME@END` is the scenario NAME run on another ansible-core end of the matrix
(`@newest`: the newest tested ansible-core's venv, `make molecule-one SCENARIO=NAME@newest`).
Its seconds, until a timing table has them, are the scenario's own. A scenario and its other
ends are one unit, placed in one lane one after the other (NAME first): they start nodes of
the same names (a scenario's platform names are its containers' names), so two of them side
by side would share, and destroy, each other's nodes.

    python tools/molecule_lanes.py --lanes 2 [--times FILE] SCENARIO[@END]...

prints one line per lane, the scenario names separated by spaces (a lane may be empty)."""

from __future__ import absolute_import, division, print_function

import argparse
import os
import re
import sys

# Seconds per scenario in its lane, `make test` on the 2-core CI machine (cold run of
# 2026-12-02, the sixth session that day: two lanes beside the static stages): relative
# weights, not a budget. gpu_validate and storage have changed since (the data group; storage
# came later): theirs are `make molecule-one` alone on 2026-12-07 (184 s and 48 s) times 1.44,
# gpu_validate's in-lane/alone ratio of that cold run (325 s) to its run alone of 2026-12-01 (225 s).
SECONDS = {
    "cuda_toolkit": 194,
    "cuda_toolkit_distro": 577,
    "dcgm_exporter": 197,
    "gpu_validate": 265,
    "ipmi_exporter": 215,  # 149 s alone on a quiet machine (2026-12-07), scaled by the lanes' 1.44 as above
    "monitoring": 184,
    "nvidia_container_toolkit": 261,
    "nvidia_driver": 893,
    "nvidia_driver_cuda_repo": 185,
    "os_tuning": 170,
    "python_stack": 283,
    "rolling_upgrade": 224,
    "storage": 69,
    "volcano": 16,
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


def split(scenarios, lanes, seconds=None):
    """Lists of scenario names, one per lane: a scenario with its other ends (`NAME@END`) is one
    unit; the longest unit first, each onto the lane with the fewest seconds so far (the first
    such lane on a tie); a lane keeps its scenarios in the order they were placed, a unit's
    entries NAME first, then its ends by name."""
    if lanes < 1:
        raise ValueError("lanes must be 1 or more, not %r" % (lanes,))
    units = {}
    for name in scenarios:
        units.setdefault(base_of(name), []).append(name)
    known = dict(SECONDS)
    known.update(seconds or {})
    for base, names in units.items():
        units[base] = sorted(dict.fromkeys(names), key=lambda n: (n != base, n))
    weight = {base: sum(seconds_of(n, known) for n in names) for base, names in units.items()}
    order = sorted(units, key=lambda b: (-weight[b], b))
    result = [[] for _lane in range(lanes)]
    load = [0] * lanes
    for base in order:
        lane = load.index(min(load))
        result[lane].extend(units[base])
        load[lane] += weight[base]
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lanes", type=int, default=2)
    parser.add_argument("--times", help="a `make test` timing table (.cache/test-times.tsv) of an earlier run")
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args(argv)
    try:
        lanes = split(args.scenarios, args.lanes, times_from(args.times))
    except ValueError as exc:
        parser.error(str(exc))
    for lane in lanes:
        print(" ".join(lane))
    return 0


if __name__ == "__main__":
    sys.exit(main())
