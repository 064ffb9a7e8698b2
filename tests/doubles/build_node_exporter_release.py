# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a TEST DOUBLE of node_exporter's upstream release tarball into the lab's artifact mirror.

    python3 tests/doubles/build_node_exporter_release.py [--mirror-dir DIR] [--cache-dir DIR]

GitHub's release downloads cannot be reached from CI, so gpuops.dlserver.node_exporter's
``release`` source is tested against a tarball shaped like upstream's
(``node_exporter-<version>.linux-amd64/node_exporter`` plus ``LICENSE`` and ``NOTICE``, and a
``sha256sums.txt`` beside it) whose binary is REAL: Debian 12's ``prometheus-node-exporter``
(``apt-get download`` + ``dpkg-deb -x`` on the controller), at Debian's upstream version. What
is a double is the packaging: upstream builds its own binary, and the tarball carries a
``TESTDOUBLE`` file saying where this one came from.

Layout: ``<mirror>/files/node_exporter/<version>/node_exporter-<version>.linux-amd64.tar.gz``,
``sha256sums.txt`` and ``testdouble.json`` (version, archive, sha256, the .deb it came from);
the mirror's SHA256SUMS gets their lines (plugins/module_utils/packages/mirror.py). Reproducible
(sorted members, fixed times, gzip without a timestamp): the same .deb gives the same bytes,
so a second run changes nothing. The same double is also built under the node_exporter role's
default version (``node_exporter_version`` in roles/node_exporter/defaults/main.yml), so that the
path the role derives from ``gpuops_mirror_url`` with no version set exists in the lab mirror; its
``TESTDOUBLE``/``NOTICE`` and ``testdouble.json`` (``binary_version``) say that the binary is
Debian's. Prints one JSON line ``{"changed": bool, ...}``.
"""

from __future__ import print_function

import argparse
import glob
import gzip
import hashlib
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PACKAGE = "prometheus-node-exporter"
MTIME = 1735689600  # 2025-01-01T00:00:00Z


def _mirror_utils():
    spec = importlib.util.spec_from_file_location(
        "gpuops_mirror_utils", os.path.join(REPO, "plugins", "module_utils", "packages", "mirror.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fetch_deb(cache):
    """The .deb of Debian's node_exporter in ``cache`` (downloaded once)."""
    os.makedirs(cache, exist_ok=True)
    debs = sorted(glob.glob(os.path.join(cache, PACKAGE + "_*.deb")))
    if not debs:
        proc = subprocess.run(["apt-get", "download", PACKAGE], cwd=cache, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            if os.geteuid() != 0:
                raise SystemExit("build_node_exporter_release: apt-get download %s failed: %s" % (PACKAGE, proc.stderr))
            subprocess.run(["apt-get", "update", "-qq"], check=True)
            subprocess.run(["apt-get", "download", PACKAGE], cwd=cache, check=True, capture_output=True)
        debs = sorted(glob.glob(os.path.join(cache, PACKAGE + "_*.deb")))
    return debs[-1]


def _member(tar, name, data, mode):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    info.mtime = MTIME
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


def role_default_version():
    """node_exporter_version in roles/node_exporter/defaults/main.yml: the release the role fetches
    under gpuops_mirror_url when the inventory sets no version (the lab mirror serves it too)."""
    with open(os.path.join(REPO, "roles", "node_exporter", "defaults", "main.yml")) as handle:
        for line in handle:
            match = re.match(r'node_exporter_version: "?([0-9][0-9A-Za-z.+~-]*)"?\s*\Z', line)
            if match:
                return match.group(1)
    raise SystemExit("build_node_exporter_release: no node_exporter_version in the role's defaults")


def build(mirror, cache, serve_as=None):
    """The double at Debian's version, or at ``serve_as`` (the role's default release, whose real
    binary Debian does not ship: the tarball then carries Debian's binary and says so)."""
    deb = fetch_deb(cache)
    deb_version = os.path.basename(deb).split("_")[1]
    binary_version = deb_version.split("-")[0].split(":")[-1].split("+")[0]
    version = serve_as or binary_version
    name = "node_exporter-%s.linux-amd64" % version
    out_dir = os.path.join(mirror, "files", "node_exporter", version)
    archive = os.path.join(out_dir, name + ".tar.gz")
    with tempfile.TemporaryDirectory() as work:
        subprocess.run(["dpkg-deb", "-x", deb, work], check=True)
        with open(os.path.join(work, "usr", "bin", PACKAGE), "rb") as fh:
            binary = fh.read()
        with open(os.path.join(work, "usr", "share", "doc", PACKAGE, "copyright"), "rb") as fh:
            license_text = fh.read()
    note = ("TEST DOUBLE of node_exporter's release tarball, built by gpuops.dlserver "
            "(tests/doubles/build_node_exporter_release.py) from Debian's %s %s: the binary is Debian's "
            "real build of node_exporter %s, the packaging imitates upstream's.\n" % (PACKAGE, deb_version, binary_version))
    if version != binary_version:
        note += ("It is served as release %s (the node_exporter role's default, so that every default path under "
                 "gpuops_mirror_url exists in the lab mirror); the binary inside reports %s.\n" % (version, binary_version))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        dir_info = tarfile.TarInfo(name)
        dir_info.type = tarfile.DIRTYPE
        dir_info.mode = 0o755
        dir_info.mtime = MTIME
        tar.addfile(dir_info)
        _member(tar, name + "/LICENSE", license_text, 0o644)
        _member(tar, name + "/NOTICE", note.encode(), 0o644)
        _member(tar, name + "/TESTDOUBLE", note.encode(), 0o644)
        _member(tar, name + "/node_exporter", binary, 0o755)
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    data = packed.getvalue()
    sha = hashlib.sha256(data).hexdigest()
    manifest = {"testdouble": True, "what": note.strip(), "version": version, "binary_version": binary_version,
                "archive": name + ".tar.gz",
                "sha256": sha, "deb": os.path.basename(deb)}
    files = {archive: data,
             os.path.join(out_dir, "sha256sums.txt"): ("%s  %s.tar.gz\n" % (sha, name)).encode(),
             os.path.join(out_dir, "testdouble.json"): (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()}
    changed = False
    os.makedirs(out_dir, exist_ok=True)
    for path, content in files.items():
        if os.path.exists(path):
            with open(path, "rb") as fh:
                if fh.read() == content:
                    continue
        with open(path + ".tmp", "wb") as fh:
            fh.write(content)
        os.rename(path + ".tmp", path)
        changed = True
    if changed:
        utils = _mirror_utils()
        _dummy, text, _changes, problems = utils.index_mirror(mirror, scan=["files/node_exporter"])
        if problems:
            raise SystemExit("build_node_exporter_release: cannot index %s: %s" % (mirror, "; ".join(problems)))
        utils.write_index(mirror, text)
    manifest.update(changed=changed, manifest=os.path.join(out_dir, "testdouble.json"))
    return manifest


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror-dir", default=os.environ.get("GPUOPS_MIRROR_DIR") or os.path.join(REPO, ".cache", "mirror"))
    parser.add_argument("--cache-dir", default=os.path.join(os.environ.get("GPUOPS_LAB_STATE") or os.path.join(REPO, ".cache", "lab"),
                                                            "debs"))
    args = parser.parse_args(argv)
    mirror, cache = os.path.abspath(args.mirror_dir), os.path.abspath(args.cache_dir)
    result = build(mirror, cache)
    if role_default_version() != result["version"]:
        result["role_default"] = build(mirror, cache, role_default_version())
        result["changed"] = result["changed"] or result["role_default"]["changed"]
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
