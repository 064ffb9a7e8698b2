# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a TEST DOUBLE of the DCGM packages of NVIDIA's CUDA apt repository into the lab mirror.

    python3 tests/doubles/build_dcgm_repo.py [--mirror-dir DIR] [--state-dir DIR] [--force]

DCGM (``datacenter-gpu-manager-4-*``) and the dcgm-exporter package
(``datacenter-gpu-manager-exporter``) come only from NVIDIA's CUDA repository, which CI cannot
reach, so gpuops.dlserver.dcgm_exporter's host mode is tested against this one. It is laid out
like NVIDIA's flat repositories (``<mirror>/apt/dcgm/<distro>/<arch>/``) and signed by the same
lab key as the CUDA repository double (tests/doubles/build_cuda_repo.py, whose code builds the
packages and indexes), published next to the packages as a keyring file.

Every package is a double and says so (version suffix ``+gpuops.testdouble``, Description
``TEST DOUBLE``). The core package ships ``nv-hostengine`` and ``nvidia-dcgm.service``, the
exporter package ``dcgm-exporter`` (tests/doubles/dcgm/: Python stand-ins that refuse unknown
options; the exporter serves the fields of its -f file for the GPUs the host engine double
reads from the lab's sysfs fixture). The CUDA-major and proprietary packages are markers.

Idempotent: nothing is rebuilt while the recipe and the key are unchanged. Prints one JSON line:
``{"changed": bool, "manifest": path, "fingerprint": ...}``.
"""

from __future__ import print_function

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DCGM_VERSION = "4.4.1"
EXPORTER_VERSION = "4.4.1-4.5.2"
REVISION = "1+gpuops.testdouble"
REPOS = [("debian12", "x86_64"), ("debian13", "x86_64")]
CUDA_MAJORS = ("11", "12", "13")
MANIFEST_NAME = "testdouble.json"


def _cuda_double():
    spec = importlib.util.spec_from_file_location("gpuops_build_cuda_repo", os.path.join(HERE, "build_cuda_repo.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CUDA = _cuda_double()


def control_text(name, version, depends, extra, arch="amd64"):
    fields = [("Package", name), ("Version", version), ("Architecture", arch), ("Maintainer", CUDA.MAINTAINER)]
    if depends:
        fields.append(("Depends", depends))
    for key in ("Conflicts", "Provides"):
        if extra.get(key):
            fields.append((key, extra[key]))
    fields += [("Section", "non-free/utils"), ("Priority", "optional"),
               ("Description", "TEST DOUBLE of %s for the gpuops.dlserver lab\n"
                               " Not NVIDIA software: built by tests/doubles/build_dcgm_repo.py so that\n"
                               " the dcgm_exporter role can be tested without NVIDIA's repository." % name)]
    return "".join("%s: %s\n" % (key, value) for key, value in fields)


def _read(name):
    """A double's source, made an executable script of the package (the node's python3)."""
    with open(os.path.join(HERE, "dcgm", name)) as handle:
        return "#!/usr/bin/python3\n" + handle.read()


def _marker(name):
    return {"/usr/share/doc/%s/TEST-DOUBLE" % name: "TEST DOUBLE of %s (gpuops.dlserver lab)\n" % name}


HOSTENGINE_UNIT = """[Unit]
Description=TEST DOUBLE of the NVIDIA DCGM host engine (gpuops.dlserver lab)
After=network.target

[Service]
Type=simple
ExecStart=/usr/bin/nv-hostengine -n --service-account nvidia-dcgm
Restart=on-failure

[Install]
WantedBy=multi-user.target
"""


def package_table():
    """[(name, version, depends, extra, files)]."""
    dcgm = DCGM_VERSION + "-" + REVISION
    core = "datacenter-gpu-manager-4-core (= %s)" % dcgm
    table = [("datacenter-gpu-manager-4-core", dcgm, "python3", {}, dict(_marker("datacenter-gpu-manager-4-core"), **{
        "/usr/bin/nv-hostengine": (_read("nv_hostengine.py"), 0o755),
        "/usr/lib/systemd/system/nvidia-dcgm.service": (HOSTENGINE_UNIT, 0o644)}))]
    for major in CUDA_MAJORS:
        table.append(("datacenter-gpu-manager-4-cuda%s" % major, dcgm, core, {},
                      _marker("datacenter-gpu-manager-4-cuda%s" % major)))
        table.append(("datacenter-gpu-manager-4-proprietary-cuda%s" % major, dcgm,
                      "datacenter-gpu-manager-4-proprietary (= %s)" % dcgm, {},
                      _marker("datacenter-gpu-manager-4-proprietary-cuda%s" % major)))
    table.append(("datacenter-gpu-manager-4-proprietary", dcgm, core, {},
                  _marker("datacenter-gpu-manager-4-proprietary")))
    table.append(("datacenter-gpu-manager-exporter", EXPORTER_VERSION + "-" + REVISION,
                  "datacenter-gpu-manager-4-core, python3", {},
                  dict(_marker("datacenter-gpu-manager-exporter"),
                       **{"/usr/bin/dcgm-exporter": (_read("dcgm_exporter.py"), 0o755)})))
    return table


def recipe_hash(fingerprint):
    digest = hashlib.sha256()
    for path in (os.path.abspath(__file__), os.path.join(HERE, "dcgm", "nv_hostengine.py"),
                 os.path.join(HERE, "dcgm", "dcgm_exporter.py"), os.path.join(HERE, "build_cuda_repo.py")):
        with open(path, "rb") as handle:
            digest.update(handle.read())
    digest.update(fingerprint.encode())
    return digest.hexdigest()[:16]


def build(mirror, state, force=False):
    CUDA.control_text = control_text  # build_deb writes the control file with this
    home = os.path.join(state, "cuda-double-gnupg")
    fingerprint = CUDA.ensure_key(home)
    base = os.path.join(mirror, "apt", "dcgm")
    manifest_path = os.path.join(base, MANIFEST_NAME)
    recipe = recipe_hash(fingerprint)
    if not force and os.path.exists(manifest_path):
        with open(manifest_path) as handle:
            old = json.load(handle)
        complete = all(os.path.exists(os.path.join(base, repo["path"], name))
                       for repo in old.get("repos", {}).values()
                       for name in ("InRelease", "Packages", CUDA.KEYRING_NAME))
        if old.get("recipe") == recipe and complete:
            return {"changed": False, "manifest": manifest_path, "fingerprint": fingerprint}
    if os.path.isdir(base):
        shutil.rmtree(base)
    os.makedirs(base)
    manifest = {"recipe": recipe, "fingerprint": fingerprint, "keyring": CUDA.KEYRING_NAME,
                "version_suffix": CUDA.SUFFIX, "repos": {}}
    work = tempfile.mkdtemp(prefix="dcgm-double-")
    try:
        for distro, arch in REPOS:
            repo_dir = os.path.join(base, distro, arch)
            os.makedirs(repo_dir)
            debs, names = [], {}
            for name, version, depends, extra, files in package_table():
                deb = CUDA.build_deb(name, version, depends, extra, files, repo_dir, os.path.join(work, distro, arch))
                debs.append((deb, control_text(name, version, depends, extra)))
                names.setdefault(name, []).append(version)
            CUDA.write_indexes(repo_dir, CUDA.packages_index(debs, repo_dir))
            release = os.path.join(repo_dir, "Release")
            CUDA.gpg(home, "--local-user", fingerprint, "--digest-algo", "SHA512", "--clearsign",
                     "--output", os.path.join(repo_dir, "InRelease"), release)
            keyring = os.path.join(repo_dir, CUDA.KEYRING_NAME)
            CUDA.gpg(home, "--output", keyring, "--export", fingerprint)
            manifest["repos"]["%s/%s" % (distro, arch)] = {"path": "%s/%s" % (distro, arch), "packages": names}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(manifest_path, "w") as handle:
        json.dump(manifest, handle, indent=2, sort_keys=True)
        handle.write("\n")
    CUDA.update_sha256sums(mirror, os.path.join("apt", "dcgm"))
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
            raise SystemExit("build_dcgm_repo: %s is missing" % tool)
    print(json.dumps(build(os.path.abspath(args.mirror_dir), os.path.abspath(args.state_dir), args.force),
                     sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
