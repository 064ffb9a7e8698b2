# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-call time of gpuops.dlserver.gpu_facts' work, on fixture hardware.

    python bench/gpu_facts_bench.py [--runs N]

1. ``gpu_probe.probe`` on the hgx-h100-8gpu fixture (8 GPUs, 4 NVSwitches,
   8 NICs) with NVML answered by the test double tests/unit/fake_pynvml.py:
   everything the module does except Python start-up and argument parsing.
   Target: median under 50 ms.
2. ``pci.scan_pci`` alone on a generated 256-function tree. Target: median
   under 20 ms.

The sysfs trees are rendered into a temporary directory by
tests/fixtures/build_sysfs.py. Exit status 1 when a median misses its target.
"""

from __future__ import print_function

import argparse
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
COLLECTIONS = os.path.join(ROOT, ".cache", "collections")
LINK = os.path.join(COLLECTIONS, "ansible_collections", "gpuops", "dlserver")
sys.path[0:0] = [COLLECTIONS, os.path.join(ROOT, "tests", "unit"), os.path.join(ROOT, "tests", "fixtures")]

import build_sysfs  # noqa: E402
import fake_pynvml  # noqa: E402


def _link_collection():
    if not os.path.islink(LINK) and not os.path.isdir(LINK):
        os.makedirs(os.path.dirname(LINK))
        os.symlink(ROOT, LINK)


def _stats(samples):
    ordered = sorted(samples)
    median = ordered[len(ordered) // 2]
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return median * 1000.0, p95 * 1000.0


def _time(func, runs):
    func()  # warm: imports, first reads of the tree
    samples = []
    for dummy in range(runs):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return _stats(samples)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=200, help="timed calls per case (default 200)")
    args = parser.parse_args(argv)

    _link_collection()
    from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.gpu_probe import probe
    from ansible_collections.gpuops.dlserver.plugins.module_utils.probe.pci import scan_pci

    work = tempfile.mkdtemp(prefix="gpu_facts_bench.")
    try:
        hgx = os.path.join(work, "hgx-h100-8gpu")
        build_sysfs.build(build_sysfs.load_spec(build_sysfs.host_dir("hgx-h100-8gpu")), hgx)
        big = os.path.join(work, "bench-256fn")
        count = build_sysfs.build(build_sysfs.load_spec(build_sysfs.host_dir("bench-256fn")), big)
        sys.modules["pynvml"] = fake_pynvml.from_host("hgx-h100-8gpu")
        proc = os.path.join(work, "proc")

        def full():
            facts = probe(sysfs_root=hgx, procfs_root=proc, nvidia_smi="disabled")
            assert facts["source"] == "nvml" and facts["gpu_count"] == 8

        rows = [
            ("probe, hgx-h100-8gpu, NVML (test double)", _time(full, args.runs), 50.0),
            ("scan_pci, %d PCI functions" % count, _time(lambda: scan_pci(big), args.runs), 20.0),
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print("gpu_facts benchmark: %d runs each, python %s, %d CPUs"
          % (args.runs, sys.version.split()[0], os.cpu_count() or 0))
    print("%-48s %10s %10s %10s  %s" % ("case", "median ms", "p95 ms", "target ms", "result"))
    missed = False
    for name, (median, p95), target in rows:
        ok = median < target
        missed = missed or not ok
        print("%-48s %10.2f %10.2f %10.1f  %s" % (name, median, p95, target, "ok" if ok else "MISSED"))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
