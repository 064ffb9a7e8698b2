# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a TEST DOUBLE of NVIDIA's CUDA apt repository into the lab's artifact mirror.

    python3 tests/doubles/build_cuda_repo.py [--mirror-dir DIR] [--state-dir DIR] [--force]

NVIDIA's repository cannot be reached from CI, so gpuops.dlserver.nvidia_driver's
``cuda_repo`` source is tested against this one. It is laid out like NVIDIA's flat
repositories (``<mirror>/apt/cuda/<distro>/<arch>/`` with ``Packages``, ``Packages.gz``,
``Release``, ``InRelease``, ``Release.gpg`` and the .deb files) and signed by a lab GPG
key made here, whose public part is published next to the packages as a keyring file.

Every package is a double and says so: the version carries ``+gpuops.testdouble``, the
Description starts with ``TEST DOUBLE`` and the files it ships are markers, unit files and
scripts that print TEST DOUBLE and fail the way the real tools fail without a loaded driver.
Two versions of the 580 branch let the role's upgrade path be tested; Fabric Manager
doubles at Debian's own driver versions serve hosts that take the driver from Debian.

Needs the standard library, ``dpkg-deb`` and ``gpg``. Idempotent: nothing is rebuilt
while the recipe (this file's package table and code) and the key are unchanged. Prints
one JSON line: ``{"changed": bool, "manifest": path, ...}``.

Defaults: DIR is $GPUOPS_MIRROR_DIR or <repo>/.cache/mirror; the private key lives in
$GPUOPS_LAB_STATE/cuda-double-gnupg (default <repo>/.cache/lab), never in the mirror.
"""

from __future__ import print_function

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SUFFIX = "+gpuops.testdouble"
REVISION = "1" + SUFFIX
MAINTAINER = "gpuops.dlserver lab <lab@gpuops.invalid>"
KEY_UID = "gpuops.dlserver lab TEST DOUBLE CUDA repository signing key <lab@gpuops.invalid>"
KEYRING_NAME = "testdouble-archive-keyring.gpg"
MANIFEST_NAME = "testdouble.json"
# Release date of every repository (fixed: apt refuses Release files dated in the future).
RELEASE_EPOCH = 1735689600  # 2025-01-01T00:00:00Z

# The 580 branch at two versions (the upgrade path), plus Fabric Manager at the versions of
# the driver Debian itself ships (hosts on the `distro` source take only Fabric Manager from
# the CUDA repository).
CUDA_BRANCH_VERSIONS = {"580": ["580.95.05", "580.105.08"]}
DISTRO_FABRIC_MANAGER = {
    "debian12": {"535": ["535.261.03", "535.309.01"]},
    "debian13": {"550": ["550.163.01"]},
}
REPOS = [("debian12", "x86_64"), ("debian13", "x86_64")]

NO_DRIVER = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
             "Make sure that the latest NVIDIA driver is installed and running.")


def _script(tool, message, code):
    return ("#!/bin/sh\n# TEST DOUBLE of %s (gpuops.dlserver lab); not NVIDIA software.\n"
            "cat >&2 <<'EOF'\nTEST DOUBLE of %s (gpuops.dlserver lab): %s\nEOF\nexit %d\n"
            % (tool, tool, message, code))


def _unit(what, binary):
    return ("[Unit]\nDescription=TEST DOUBLE of %s (gpuops.dlserver lab)\n\n"
            "[Service]\nType=simple\nExecStart=%s\n\n[Install]\nWantedBy=multi-user.target\n" % (what, binary))


def driver_packages(version, branch):
    """The packages of one driver version, as (name, depends, extra fields, files)."""
    ver = version + "-" + REVISION

    def marker(name):
        return {"/usr/share/doc/%s/TEST-DOUBLE" % name: "TEST DOUBLE of %s %s\n" % (name, ver)}

    smi = {"/usr/bin/nvidia-smi": (_script("nvidia-smi", NO_DRIVER, 9), 0o755)}
    smi.update(marker("nvidia-smi"))
    persistenced = {
        "/usr/bin/nvidia-persistenced": (_script("nvidia-persistenced", "no NVIDIA driver is loaded", 1), 0o755),
        "/usr/lib/systemd/system/nvidia-persistenced.service": (
            _unit("NVIDIA Persistence Daemon", "/usr/bin/nvidia-persistenced"), 0o644),
    }
    persistenced.update(marker("nvidia-persistenced"))
    return [
        ("nvidia-driver-cuda", "nvidia-smi (= {v}), libcuda1 (= {v}), nvidia-persistenced (= {v})".format(v=ver),
         {}, marker("nvidia-driver-cuda")),
        ("nvidia-smi", "libnvidia-ml1 (= %s)" % ver, {}, smi),
        ("libnvidia-ml1", "", {}, marker("libnvidia-ml1")),
        ("libcuda1", "", {}, marker("libcuda1")),
        ("nvidia-persistenced", "", {}, persistenced),
        ("nvidia-kernel-open-dkms", "", {"Conflicts": "nvidia-kernel-dkms", "Provides": "nvidia-kernel-%s" % version},
         marker("nvidia-kernel-open-dkms")),
        ("nvidia-kernel-dkms", "", {"Conflicts": "nvidia-kernel-open-dkms", "Provides": "nvidia-kernel-%s" % version},
         marker("nvidia-kernel-dkms")),
    ] + fabric_manager_packages(version, branch)


def fabric_manager_packages(version, branch):
    # NVIDIA's repositories name Fabric Manager nvidia-fabricmanager from R580 on (the
    # -<branch> name is only provided), nvidia-fabricmanager-<branch> below.
    name = "nvidia-fabricmanager" if int(branch) >= 580 else "nvidia-fabricmanager-%s" % branch
    extra = {"Provides": "nvidia-fabricmanager-%s" % branch} if int(branch) >= 580 else {}
    files = {
        "/usr/bin/nv-fabricmanager": (_script("nv-fabricmanager", "no NVSwitch fabric here", 1), 0o755),
        "/usr/lib/systemd/system/nvidia-fabricmanager.service": (
            _unit("NVIDIA Fabric Manager", "/usr/bin/nv-fabricmanager"), 0o644),
        "/usr/share/doc/%s/TEST-DOUBLE" % name: "TEST DOUBLE of %s %s-%s\n" % (name, version, REVISION),
    }
    return [(name, "", extra, files)]


def package_table(distro):
    """[(name, version, depends, extra, files)] of one repository."""
    table = []
    for branch, versions in sorted(CUDA_BRANCH_VERSIONS.items()):
        for version in versions:
            for name, depends, extra, files in driver_packages(version, branch):
                table.append((name, version + "-" + REVISION, depends, extra, files))
    for branch, versions in sorted(DISTRO_FABRIC_MANAGER.get(distro, {}).items()):
        for version in versions:
            for name, depends, extra, files in fabric_manager_packages(version, branch):
                table.append((name, version + "-" + REVISION, depends, extra, files))
    return table


def control_text(name, version, depends, extra, arch="amd64"):
    fields = [("Package", name), ("Version", version), ("Architecture", arch), ("Maintainer", MAINTAINER)]
    if depends:
        fields.append(("Depends", depends))
    for key in ("Conflicts", "Provides"):
        if extra.get(key):
            fields.append((key, extra[key]))
    fields.append(("Section", "non-free/libs"))
    fields.append(("Priority", "optional"))
    fields.append(("Description", "TEST DOUBLE of %s for the gpuops.dlserver lab\n"
                                  " Not NVIDIA software: built by tests/doubles/build_cuda_repo.py so that\n"
                                  " the nvidia_driver role can be tested without NVIDIA's repository." % name))
    return "".join("%s: %s\n" % (key, value) for key, value in fields)


def run(cmd, **kw):
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, **kw)
    if res.returncode != 0:
        raise SystemExit("build_cuda_repo: %s failed (rc=%d): %s" % (
            " ".join(cmd), res.returncode, res.stderr.decode("utf-8", "replace").strip()[-800:]))
    return res.stdout.decode("utf-8", "replace")


def build_deb(name, version, depends, extra, files, out_dir, work):
    root = os.path.join(work, "%s_%s" % (name, version))
    os.makedirs(os.path.join(root, "DEBIAN"))
    with open(os.path.join(root, "DEBIAN", "control"), "w") as handle:
        handle.write(control_text(name, version, depends, extra))
    for path, content in sorted(files.items()):
        mode = 0o644
        if isinstance(content, tuple):
            content, mode = content
        dest = os.path.join(root, path.lstrip("/"))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w") as handle:
            handle.write(content)
        os.chmod(dest, mode)
    for dirpath, dirnames, filenames in os.walk(root):
        for entry in dirnames + filenames:
            os.utime(os.path.join(dirpath, entry), (RELEASE_EPOCH, RELEASE_EPOCH))
    deb = os.path.join(out_dir, "%s_%s_amd64.deb" % (name, version))
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(RELEASE_EPOCH))
    run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, deb], env=env)
    return deb


def digests(path):
    data = open(path, "rb").read()
    return {"md5": hashlib.md5(data).hexdigest(), "sha1": hashlib.sha1(data).hexdigest(),  # nosec: apt index fields
            "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def packages_index(debs, repo_dir):
    stanzas = []
    for deb, control in debs:
        info = digests(deb)
        stanzas.append(control + "Filename: ./%s\nSize: %d\nMD5sum: %s\nSHA1: %s\nSHA256: %s\n" % (
            os.path.relpath(deb, repo_dir), info["size"], info["md5"], info["sha1"], info["sha256"]))
    return "\n".join(stanzas)


def write_indexes(repo_dir, packages_text):
    with open(os.path.join(repo_dir, "Packages"), "w") as handle:
        handle.write(packages_text)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as handle:
        handle.write(packages_text.encode())
    with open(os.path.join(repo_dir, "Packages.gz"), "wb") as handle:
        handle.write(buf.getvalue())
    sums = {"MD5Sum": "md5", "SHA1": "sha1", "SHA256": "sha256"}
    lines = ["Origin: gpuops.dlserver lab", "Label: TEST DOUBLE of the NVIDIA CUDA repository",
             "Architectures: amd64 all",
             "Date: %s" % time.strftime("%a, %d %b %Y %H:%M:%S UTC", time.gmtime(RELEASE_EPOCH)),
             "Description: TEST DOUBLE of NVIDIA's CUDA repository, built by tests/doubles/build_cuda_repo.py"]
    files = [(name, digests(os.path.join(repo_dir, name))) for name in ("Packages", "Packages.gz")]
    for field, key in sums.items():
        lines.append("%s:" % field)
        lines.extend(" %s %d %s" % (info[key], info["size"], name) for name, info in files)
    with open(os.path.join(repo_dir, "Release"), "w") as handle:
        handle.write("\n".join(lines) + "\n")


def gpg(home, *args, **kw):
    return run(["gpg", "--homedir", home, "--batch", "--yes", "--no-tty", "--pinentry-mode", "loopback",
                "--passphrase", ""] + list(args), **kw)


def ensure_key(home):
    """The lab signing key (made once); returns its fingerprint."""
    os.makedirs(home, mode=0o700, exist_ok=True)
    os.chmod(home, 0o700)
    listing = gpg(home, "--with-colons", "--list-secret-keys")
    if "fpr:" not in listing:
        gpg(home, "--quick-generate-key", KEY_UID, "ed25519", "sign", "never")
        listing = gpg(home, "--with-colons", "--list-secret-keys")
    for line in listing.splitlines():
        if line.startswith("fpr:"):
            return line.split(":")[9]
    raise SystemExit("build_cuda_repo: no secret key in %s" % home)


def recipe_hash(fingerprint):
    digest = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as handle:
        digest.update(handle.read())
    digest.update(fingerprint.encode())
    return digest.hexdigest()[:16]


def _mirror_utils():
    """The collection's mirror index code (plugins/module_utils/packages/mirror.py): the one
    SHA256SUMS implementation, shared with gpuops.dlserver.mirror_index."""
    import importlib.util  # pylint: disable=import-outside-toplevel
    spec = importlib.util.spec_from_file_location(
        "gpuops_mirror_utils", os.path.join(REPO, "plugins", "module_utils", "packages", "mirror.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def update_sha256sums(mirror, base):
    """Index every file under ``base`` in <mirror>/SHA256SUMS; lines of other tools are kept."""
    utils = _mirror_utils()
    dummy, text, dummy_changes, problems = utils.index_mirror(mirror, scan=[base.replace(os.sep, "/")])
    if problems:
        raise SystemExit("build_cuda_repo: cannot index %s: %s" % (mirror, "; ".join(problems)))
    utils.write_index(mirror, text)


def build(mirror, state, force=False):
    home = os.path.join(state, "cuda-double-gnupg")
    fingerprint = ensure_key(home)
    base = os.path.join(mirror, "apt", "cuda")
    manifest_path = os.path.join(base, MANIFEST_NAME)
    recipe = recipe_hash(fingerprint)
    if not force and os.path.exists(manifest_path):
        with open(manifest_path) as handle:
            old = json.load(handle)
        complete = all(os.path.exists(os.path.join(base, repo["path"], name))
                       for repo in old.get("repos", {}).values()
                       for name in ("InRelease", "Packages", KEYRING_NAME))
        if old.get("recipe") == recipe and complete:
            return {"changed": False, "manifest": manifest_path, "fingerprint": fingerprint}
    if os.path.isdir(base):
        shutil.rmtree(base)
    os.makedirs(base)
    manifest = {"recipe": recipe, "fingerprint": fingerprint, "keyring": KEYRING_NAME,
                "version_suffix": SUFFIX, "repos": {}}
    work = tempfile.mkdtemp(prefix="cuda-double-")
    try:
        for distro, arch in REPOS:
            repo_dir = os.path.join(base, distro, arch)
            os.makedirs(repo_dir)
            debs, names = [], {}
            for name, version, depends, extra, files in package_table(distro):
                deb = build_deb(name, version, depends, extra, files, repo_dir, os.path.join(work, distro, arch))
                debs.append((deb, control_text(name, version, depends, extra)))
                names.setdefault(name, []).append(version)
            write_indexes(repo_dir, packages_index(debs, repo_dir))
            release = os.path.join(repo_dir, "Release")
            gpg(home, "--local-user", fingerprint, "--digest-algo", "SHA512", "--clearsign",
                "--output", os.path.join(repo_dir, "InRelease"), release)
            gpg(home, "--local-user", fingerprint, "--digest-algo", "SHA512", "--armor", "--detach-sign",
                "--output", os.path.join(repo_dir, "Release.gpg"), release)
            keyring = os.path.join(repo_dir, KEYRING_NAME)
            gpg(home, "--output", keyring, "--export", fingerprint)
            manifest["repos"]["%s/%s" % (distro, arch)] = {
                "path": "%s/%s" % (distro, arch), "keyring_sha256": digests(keyring)["sha256"],
                "packages": names}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(manifest_path, "w") as handle:
        json.dump(manifest, handle, indent=2, sort_keys=True)
        handle.write("\n")
    update_sha256sums(mirror, os.path.join("apt", "cuda"))
    return {"changed": True, "manifest": manifest_path, "fingerprint": fingerprint}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mirror-dir", default=os.environ.get("GPUOPS_MIRROR_DIR")
                        or os.path.join(REPO, ".cache", "mirror"))
    parser.add_argument("--state-dir", default=os.environ.get("GPUOPS_LAB_STATE")
                        or os.path.join(REPO, ".cache", "lab"))
    parser.add_argument("--force", action="store_true", help="rebuild even when the recipe is unchanged")
    args = parser.parse_args(argv)
    for tool in ("dpkg-deb", "gpg"):
        if not shutil.which(tool):
            raise SystemExit("build_cuda_repo: %s is missing; install %s" % (
                tool, "dpkg" if tool == "dpkg-deb" else "gpg"))
    print(json.dumps(build(os.path.abspath(args.mirror_dir), os.path.abspath(args.state_dir), args.force),
                     sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
