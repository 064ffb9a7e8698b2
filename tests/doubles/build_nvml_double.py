# -*- coding: utf-8 -*-
# Copyright: gpuops.dlserver contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the TEST DOUBLE of the pynvml binding that a lab node imports from /opt/gpuops/nvml.

    python3 tests/doubles/build_nvml_double.py --host FIXTURE --dest DIR [--ecc-uncorrected INDEX=COUNT ...]

DIR gets ``pynvml.py`` (a shim that replaces itself with tests/unit/fake_pynvml.py's module for
DIR/nvml.json), a copy of ``fake_pynvml.py`` and the fixture's ``nvml.json`` - with the injected
volatile uncorrectable ECC counts, and zero errors and no pending row remaps on every other
device. It is not NVIDIA's binding and talks to no driver; molecule/gpu_validate copies DIR to
the node standing for the fixture, where the probe and gpu_validate import it.
Prints {"changed": bool}.
"""
import argparse
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "unit"))

import fake_pynvml  # noqa: E402

SHIM = '''"""TEST DOUBLE of pynvml (tests/doubles/build_nvml_double.py): replays nvml.json beside it through
fake_pynvml.py. Not NVIDIA's binding; never installed outside the lab."""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
import fake_pynvml  # noqa: E402

sys.modules[__name__] = fake_pynvml.from_host(os.path.join(_HERE, "nvml.json"))
'''


def build(host, dest, ecc):
    data = fake_pynvml.load_host(host)
    for index in range(len(data["devices"])):
        data = fake_pynvml.inject_device(data, index, ecc_errors={"uncorrected_volatile": ecc.get(index, 0)},
                                         remapped_rows=[0, 0, 0, 0])
    files = {"pynvml.py": SHIM, "nvml.json": json.dumps(data, indent=1, sort_keys=True) + "\n"}
    with open(os.path.join(REPO, "tests", "unit", "fake_pynvml.py")) as handle:
        files["fake_pynvml.py"] = handle.read()
    changed = False
    os.makedirs(dest, exist_ok=True)
    for name, text in sorted(files.items()):
        path = os.path.join(dest, name)
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            with open(path + ".tmp", "w") as handle:
                handle.write(text)
            shutil.move(path + ".tmp", path)
            changed = True
    return changed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", required=True)
    parser.add_argument("--dest", required=True)
    parser.add_argument("--ecc-uncorrected", action="append", default=[], metavar="INDEX=COUNT")
    args = parser.parse_args()
    ecc = dict((int(k), int(v)) for k, v in (item.split("=", 1) for item in args.ecc_uncorrected))
    print(json.dumps({"changed": build(args.host, args.dest, ecc)}))


if __name__ == "__main__":
    main()
