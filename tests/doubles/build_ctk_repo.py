# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a TEST DOUBLE of NVIDIA's libnvidia-container apt repository into the lab's mirror.

    python3 tests/doubles/build_ctk_repo.py [--mirror-dir DIR] [--state-dir DIR] [--force]

NVIDIA's repository (https://nvidia.github.io/libnvidia-container) cannot be reached from CI,
and neither Debian nor PyPI ships the NVIDIA Container Toolkit, so
gpuops.dlserver.nvidia_container_toolkit is tested against this double. It is laid out like
NVIDIA's flat repository (``<mirror>/apt/libnvidia-container/stable/deb/<arch>/`` with
``Packages``, ``InRelease``, ``Release.gpg``, the .deb files and the public key file) and
signed by a lab GPG key made here.

Every package is a double and says so: the version carries ``+gpuops.testdouble``, the
Description starts with ``TEST DOUBLE``, and the tools are scripts that print TEST DOUBLE.
``nvidia-ctk --version`` answers like the real one; everything that would need the NVIDIA
driver (``nvidia-ctk cdi generate``, the runtime, ``nvidia-container-cli info``) fails the way
the real tools fail without a loaded driver: the double never pretends to produce a CDI
specification or to start a GPU container. Two releases are served: 1.19.1 (the first
release fixing every CVE of the collection's table) and 1.18.2 (affected by CVE-2026-24260: the
refusal, the override and the upgrade path); both carry the CDI refresh units of the real 1.18+ packages.

The apt/index/signing code is build_cuda_repo.py's (imported, not copied). Idempotent: nothing
is rebuilt while this recipe and the key are unchanged. Prints one JSON line.
"""

from __future__ import print_function

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
_spec = importlib.util.spec_from_file_location("build_cuda_repo", os.path.join(HERE, "build_cuda_repo.py"))
cuda = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cuda)

VERSIONS = ["1.18.2", "1.19.1"]
ARCHES = ["amd64"]
BASE = os.path.join("apt", "libnvidia-container")
KEYRING_NAME = "gpgkey"
MANIFEST_NAME = "testdouble.json"
KEY_UID = "gpuops.dlserver lab TEST DOUBLE libnvidia-container repository signing key <lab@gpuops.invalid>"
NO_DRIVER = "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file"

DEFAULT_CONFIG = """#accept-nvidia-visible-devices-as-volume-mounts = false
#accept-nvidia-visible-devices-envvar-when-unprivileged = true
disable-require = false
supported-driver-capabilities = "compat32,compute,display,graphics,ngx,utility,video"

[nvidia-container-cli]
environment = []
ldconfig = "@/sbin/ldconfig.real"
load-kmods = true
#no-cgroups = false

[nvidia-container-runtime]
log-level = "info"
mode = "auto"
runtimes = ["docker-runc", "runc", "crun"]

[nvidia-container-runtime.modes.cdi]
annotation-prefixes = ["cdi.k8s.io/"]
default-kind = "nvidia.com/gpu"
spec-dirs = ["/etc/cdi", "/var/run/cdi"]

[nvidia-container-runtime-hook]
path = "nvidia-container-runtime-hook"
skip-mode-detection = false

[nvidia-ctk]
path = "nvidia-ctk"
"""


def _tool(name, version, body):
    return ("#!/bin/sh\n# TEST DOUBLE of %s %s (gpuops.dlserver lab); not NVIDIA software.\n%s" % (name, version, body),
            0o755)


def _fail(name):
    return ("echo 'TEST DOUBLE of %s (gpuops.dlserver lab): %s' >&2\nexit 1\n" % (name, NO_DRIVER))


def package_table(version):
    """[(name, package version, depends, extra, files)] of one release."""
    ver = version + "-" + cuda.REVISION

    def marker(name):
        return {"/usr/share/doc/%s/TEST-DOUBLE" % name: "TEST DOUBLE of %s %s\n" % (name, ver)}

    ctk_body = ('case "$1" in\n'
                '  --version|-v) echo "NVIDIA Container Toolkit CLI version %s (TEST DOUBLE, gpuops.dlserver lab)";'
                ' exit 0;;\n'
                '  *) %s;;\nesac\n') % (version, _fail("nvidia-ctk").replace("\n", "; ").rstrip("; "))
    cli_body = ('case "$1" in\n'
                '  --version) echo "cli-version: %s (TEST DOUBLE, gpuops.dlserver lab)"; exit 0;;\n'
                '  *) %s;;\nesac\n') % (version, _fail("nvidia-container-cli").replace("\n", "; ").rstrip("; "))
    base = {
        "/usr/bin/nvidia-ctk": _tool("nvidia-ctk", version, ctk_body),
        "/usr/bin/nvidia-container-runtime": _tool("nvidia-container-runtime", version,
                                                   _fail("nvidia-container-runtime")),
        "/usr/bin/nvidia-cdi-hook": _tool("nvidia-cdi-hook", version, _fail("nvidia-cdi-hook")),
        "/etc/nvidia-container-runtime/config.toml": "# TEST DOUBLE default configuration (gpuops.dlserver lab)\n"
                                                     + DEFAULT_CONFIG,
    }
    if tuple(int(p) for p in version.split(".")) >= (1, 18, 0):
        base["/usr/lib/systemd/system/nvidia-cdi-refresh.service"] = (
            "[Unit]\nDescription=TEST DOUBLE of the NVIDIA CDI refresh service (gpuops.dlserver lab)\n"
            "ConditionPathExists=/proc/driver/nvidia/version\n\n[Service]\nType=oneshot\n"
            "ExecStart=/usr/bin/nvidia-ctk cdi generate --output=/var/run/cdi/nvidia.yaml\n\n"
            "[Install]\nWantedBy=multi-user.target\n")
        base["/usr/lib/systemd/system/nvidia-cdi-refresh.path"] = (
            "[Unit]\nDescription=TEST DOUBLE of the NVIDIA CDI refresh trigger (gpuops.dlserver lab)\n\n"
            "[Path]\nPathChanged=/lib/modules/%v/modules.dep\nPathChanged=/proc/driver/nvidia/version\n\n"
            "[Install]\nWantedBy=multi-user.target\n")
    base.update(marker("nvidia-container-toolkit-base"))
    tools = {"/usr/bin/nvidia-container-cli": _tool("nvidia-container-cli", version, cli_body)}
    tools.update(marker("libnvidia-container-tools"))
    toolkit = {"/usr/bin/nvidia-container-runtime-hook": _tool("nvidia-container-runtime-hook", version,
                                                               _fail("nvidia-container-runtime-hook"))}
    toolkit.update(marker("nvidia-container-toolkit"))
    return [
        ("libnvidia-container1", ver, "", {}, marker("libnvidia-container1")),
        ("libnvidia-container-tools", ver, "libnvidia-container1 (>= %s)" % ver, {}, tools),
        ("nvidia-container-toolkit-base", ver, "", {}, base),
        ("nvidia-container-toolkit", ver,
         "nvidia-container-toolkit-base (= %s), libnvidia-container-tools (>= %s), libnvidia-container-tools (<< 2.0.0)"
         % (ver, ver), {}, toolkit),
    ]


_CUDA_CONTROL_TEXT = cuda.control_text


def control_text(name, version, depends, extra, arch="amd64"):
    """build_cuda_repo's control stanza, naming this builder and this role."""
    text = _CUDA_CONTROL_TEXT(name, version, depends, extra, arch)
    return text.replace("build_cuda_repo.py", "build_ctk_repo.py").replace("nvidia_driver role",
                                                                           "nvidia_container_toolkit role")


def build(mirror, state, force=False):
    # build_cuda_repo's code, with this double's key name and package descriptions.
    cuda.KEY_UID = KEY_UID
    cuda.control_text = control_text
    home = os.path.join(state, "ctk-double-gnupg")
    fingerprint = cuda.ensure_key(home)
    base = os.path.join(mirror, BASE)
    manifest_path = os.path.join(base, MANIFEST_NAME)
    digest = cuda.hashlib.sha256(open(os.path.abspath(__file__), "rb").read())
    digest.update(cuda.recipe_hash(fingerprint).encode())
    recipe = digest.hexdigest()[:16]
    if not force and os.path.exists(manifest_path):
        with open(manifest_path) as handle:
            old = json.load(handle)
        complete = all(os.path.exists(os.path.join(base, r["path"], n))
                       for r in old.get("repos", {}).values() for n in ("InRelease", "Packages", KEYRING_NAME))
        if old.get("recipe") == recipe and complete:
            return {"changed": False, "manifest": manifest_path, "fingerprint": fingerprint}
    if os.path.isdir(base):
        shutil.rmtree(base)
    os.makedirs(base)
    manifest = {"recipe": recipe, "fingerprint": fingerprint, "keyring": KEYRING_NAME,
                "version_suffix": cuda.SUFFIX, "versions": VERSIONS, "repos": {}}
    work = tempfile.mkdtemp(prefix="ctk-double-")
    try:
        for arch in ARCHES:
            rel = "stable/deb/%s" % arch
            repo_dir = os.path.join(base, rel)
            os.makedirs(repo_dir)
            debs, names = [], {}
            for version in VERSIONS:
                for name, ver, depends, extra, files in package_table(version):
                    deb = cuda.build_deb(name, ver, depends, extra, files, repo_dir, os.path.join(work, arch))
                    control = cuda.control_text(name, ver, depends, extra)
                    debs.append((deb, control))
                    names.setdefault(name, []).append(ver)
            cuda.write_indexes(repo_dir, cuda.packages_index(debs, repo_dir))
            release = os.path.join(repo_dir, "Release")
            with open(release) as handle:
                text = handle.read()
            with open(release, "w") as handle:
                handle.write(text.replace("NVIDIA CUDA repository", "NVIDIA libnvidia-container repository")
                             .replace("NVIDIA's CUDA repository, built by tests/doubles/build_cuda_repo.py",
                                      "NVIDIA's libnvidia-container repository, built by tests/doubles/build_ctk_repo.py"))
            cuda.gpg(home, "--local-user", fingerprint, "--digest-algo", "SHA512", "--clearsign",
                     "--output", os.path.join(repo_dir, "InRelease"), release)
            cuda.gpg(home, "--local-user", fingerprint, "--digest-algo", "SHA512", "--armor", "--detach-sign",
                     "--output", os.path.join(repo_dir, "Release.gpg"), release)
            keyring = os.path.join(repo_dir, KEYRING_NAME)
            cuda.gpg(home, "--armor", "--output", keyring, "--export", fingerprint)
            manifest["repos"][arch] = {"path": rel, "keyring_sha256": cuda.digests(keyring)["sha256"],
                                       "packages": names}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(manifest_path, "w") as handle:
        json.dump(manifest, handle, indent=2, sort_keys=True)
        handle.write("\n")
    cuda.update_sha256sums(mirror, BASE)
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
            raise SystemExit("build_ctk_repo: %s is missing" % tool)
    print(json.dumps(build(os.path.abspath(args.mirror_dir), os.path.abspath(args.state_dir), args.force),
                     sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
