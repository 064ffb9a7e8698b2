# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the TEST DOUBLES of NVIDIA's package repositories into the lab's artifact mirror.

    python3 tests/doubles/build_repo.py [--repo cuda|ctk ...] [--mirror-dir DIR] [--state-dir DIR] [--force]

The one builder of repository doubles: NVIDIA's repositories cannot be reached from CI, so the
roles are tested against these. Each repository is a spec in tests/doubles/repo_specs.py
(``cuda``: NVIDIA's CUDA repository with the driver, Fabric Manager and DCGM; ``ctk``: the
libnvidia-container repository). Each is laid out like NVIDIA's flat repositories (``Packages``,
``Packages.gz``, ``Release``, ``InRelease``, ``Release.gpg`` and the .deb files), signed by a lab
GPG key made here, whose public part is published next to the packages and under the key file
names the roles derive from ``gpuops_mirror_url`` (the spec's ``key_files``), and described in
``<base>/testdouble.json``; the mirror's SHA256SUMS index lists every file.

Needs the standard library, ``dpkg-deb`` and ``gpg``. Idempotent: nothing is rebuilt while the
recipe (this file, the specs and what they package) and the key are unchanged. Prints one JSON
line: with one ``--repo``, ``{"changed": bool, "manifest": path, "fingerprint": ...}``; else
``{"changed": any, "repos": {name: that}}``.

Defaults: DIR is $GPUOPS_MIRROR_DIR or <repo>/.cache/mirror; the private keys live in
$GPUOPS_LAB_STATE/<repo>-double-gnupg (default <repo>/.cache/lab), never in the mirror.
"""

from __future__ import print_function

import argparse
import gzip
import hashlib
import importlib.util
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
SPECS_FILE = os.path.join(HERE, "repo_specs.py")
_spec = importlib.util.spec_from_file_location("gpuops_repo_specs", SPECS_FILE)
specs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(specs)
SPECS = specs.SPECS
SUFFIX = specs.SUFFIX
MAINTAINER = "gpuops.dlserver lab <lab@gpuops.invalid>"
MANIFEST_NAME = "testdouble.json"
# Release date of every repository (fixed: apt refuses Release files dated in the future).
RELEASE_EPOCH = 1735689600  # 2025-01-01T00:00:00Z


def control_text(spec, name, version, depends, extra, arch="amd64"):
    fields = [("Package", name), ("Version", version), ("Architecture", arch), ("Maintainer", MAINTAINER)]
    if depends:
        fields.append(("Depends", depends))
    for key in ("Conflicts", "Provides"):
        if extra.get(key):
            fields.append((key, extra[key]))
    fields.append(("Section", spec["section"]))
    fields.append(("Priority", "optional"))
    fields.append(("Description", "TEST DOUBLE of %s for the gpuops.dlserver lab\n"
                                  " Not NVIDIA software: built by tests/doubles/build_repo.py so that\n"
                                  " the %s can be tested without %s." % (name, spec["roles"], spec["what"])))
    return "".join("%s: %s\n" % (key, value) for key, value in fields)


def run(cmd, retry=None, **kw):
    """The command's stdout; SystemExit naming it when it fails. ``retry(stderr, attempt)``: called
    after a failure, True to run the command again (it sleeps or cleans up first)."""
    attempt = 0
    while True:
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False, **kw)
        err = res.stderr.decode("utf-8", "replace")
        attempt += 1
        if res.returncode == 0 or retry is None or not retry(err, attempt):
            break
    if res.returncode != 0:
        raise SystemExit("build_repo: %s failed (rc=%d): %s" % (" ".join(cmd), res.returncode, err.strip()[-800:]))
    return res.stdout.decode("utf-8", "replace")


def build_deb(name, version, control, files, out_dir, work):
    root = os.path.join(work, "%s_%s" % (name, version))
    os.makedirs(os.path.join(root, "DEBIAN"))
    with open(os.path.join(root, "DEBIAN", "control"), "w") as handle:
        handle.write(control)
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


def write_indexes(repo_dir, packages_text, spec):
    with open(os.path.join(repo_dir, "Packages"), "w") as handle:
        handle.write(packages_text)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as handle:
        handle.write(packages_text.encode())
    with open(os.path.join(repo_dir, "Packages.gz"), "wb") as handle:
        handle.write(buf.getvalue())
    sums = {"MD5Sum": "md5", "SHA1": "sha1", "SHA256": "sha256"}
    lines = ["Origin: gpuops.dlserver lab", "Label: TEST DOUBLE of %s" % spec["what"],
             "Architectures: amd64 all",
             "Date: %s" % time.strftime("%a, %d %b %Y %H:%M:%S UTC", time.gmtime(RELEASE_EPOCH)),
             "Description: TEST DOUBLE of %s, built by tests/doubles/build_repo.py" % spec["what"]]
    files = [(name, digests(os.path.join(repo_dir, name))) for name in ("Packages", "Packages.gz")]
    for field, key in sums.items():
        lines.append("%s:" % field)
        lines.extend(" %s %d %s" % (info[key], info["size"], name) for name, info in files)
    with open(os.path.join(repo_dir, "Release"), "w") as handle:
        handle.write("\n".join(lines) + "\n")


# gpg starts the homedir's gpg-agent on demand. Under load the first connection of a run can fail with
# "gpg: can't connect to the agent: End of file" while the agent that stop_agent killed after the previous
# build of the same homedir is still going away (seen in the unit suite on the newest ansible-core beside
# the molecule lanes, 2026-12-08): the stale agent is killed again and the command retried, at most
# AGENT_ATTEMPTS times in all.
AGENT_ATTEMPTS = 4
AGENT_REFUSED = "can't connect to the agent"


def agent_retry(home):
    def retry(err, attempt):
        if AGENT_REFUSED not in err or attempt >= AGENT_ATTEMPTS:
            return False
        stop_agent(home)
        time.sleep(0.5 * attempt)
        return True
    return retry


def gpg(home, *args, **kw):
    return run(["gpg", "--homedir", home, "--batch", "--yes", "--no-tty", "--pinentry-mode", "loopback",
                "--passphrase", ""] + list(args), retry=agent_retry(home), **kw)


def ensure_key(home, uid):
    """The lab signing key of a repository (made once); returns its fingerprint."""
    os.makedirs(home, mode=0o700, exist_ok=True)
    os.chmod(home, 0o700)
    listing = gpg(home, "--with-colons", "--list-secret-keys")
    if "fpr:" not in listing:
        gpg(home, "--quick-generate-key", uid, "ed25519", "sign", "never")
        listing = gpg(home, "--with-colons", "--list-secret-keys")
    for line in listing.splitlines():
        if line.startswith("fpr:"):
            return line.split(":")[9]
    raise SystemExit("build_repo: no secret key in %s" % home)


def recipe_hash(spec, fingerprint):
    """This builder, the specs, the files a spec packages and the key: what a rebuild depends on."""
    digest = hashlib.sha256()
    for path in [os.path.abspath(__file__), SPECS_FILE] + list(spec["recipe"]):
        with open(path, "rb") as handle:
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
        raise SystemExit("build_repo: cannot index %s: %s" % (mirror, "; ".join(problems)))
    utils.write_index(mirror, text)


def stop_agent(home):
    """Stop the gpg-agent that signing started for ``home``: it would outlive the build."""
    subprocess.run(["gpgconf", "--homedir", home, "--kill", "gpg-agent"], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def build(mirror, state, force=False, name="cuda"):
    """Build the repository double ``name`` (a key of repo_specs.SPECS) into ``mirror``."""
    home = os.path.join(state, SPECS[name]["gnupg"])
    try:
        return _build(mirror, state, force, name, home)
    finally:
        stop_agent(home)


def _build(mirror, state, force, name, home):
    spec = SPECS[name]
    fingerprint = ensure_key(home, spec["key_uid"])
    base = os.path.join(mirror, *spec["base"].split("/"))
    manifest_path = os.path.join(base, MANIFEST_NAME)
    recipe = recipe_hash(spec, fingerprint)
    if not force and os.path.exists(manifest_path):
        with open(manifest_path) as handle:
            old = json.load(handle)
        complete = all(os.path.exists(os.path.join(base, repo["path"], entry))
                       for repo in old.get("repos", {}).values()
                       for entry in ("InRelease", "Packages", spec["keyring"])) and all(
            os.path.exists(os.path.join(base, *rel.split("/"))) for rel in spec.get("key_files", []))
        if old.get("recipe") == recipe and complete:
            return {"changed": False, "manifest": manifest_path, "fingerprint": fingerprint}
    if os.path.isdir(base):
        shutil.rmtree(base)
    os.makedirs(base)
    manifest = dict(spec["manifest"], recipe=recipe, fingerprint=fingerprint, keyring=spec["keyring"],
                    version_suffix=SUFFIX, repos={})
    work = tempfile.mkdtemp(prefix="%s-double-" % name)
    try:
        for key, rel in sorted(spec["repos"].items()):
            repo_dir = os.path.join(base, *rel.split("/"))
            os.makedirs(repo_dir)
            debs, names = [], {}
            for pkg, version, depends, extra, files in spec["table"](key):
                control = control_text(spec, pkg, version, depends, extra)
                debs.append((build_deb(pkg, version, control, files, repo_dir, os.path.join(work, key)), control))
                names.setdefault(pkg, []).append(version)
            write_indexes(repo_dir, packages_index(debs, repo_dir), spec)
            release = os.path.join(repo_dir, "Release")
            gpg(home, "--local-user", fingerprint, "--digest-algo", "SHA512", "--clearsign",
                "--output", os.path.join(repo_dir, "InRelease"), release)
            gpg(home, "--local-user", fingerprint, "--digest-algo", "SHA512", "--armor", "--detach-sign",
                "--output", os.path.join(repo_dir, "Release.gpg"), release)
            keyring = os.path.join(repo_dir, spec["keyring"])
            gpg(home, *((["--armor"] if spec["armor"] else []) + ["--output", keyring, "--export", fingerprint]))
            manifest["repos"][key] = {"path": rel, "keyring_sha256": digests(keyring)["sha256"], "packages": names}
        # the public key (armored, as NVIDIA publishes its .pub files) where the roles derive its URL
        manifest["key_files"] = {}
        for rel in spec.get("key_files", []):
            path = os.path.join(base, *rel.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            gpg(home, "--armor", "--output", path, "--export", fingerprint)
            manifest["key_files"][rel] = digests(path)["sha256"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    with open(manifest_path, "w") as handle:
        json.dump(manifest, handle, indent=2, sort_keys=True)
        handle.write("\n")
    update_sha256sums(mirror, os.path.join(*spec["base"].split("/")))
    return {"changed": True, "manifest": manifest_path, "fingerprint": fingerprint}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", action="append", choices=sorted(SPECS),
                        help="the repository double to build (repeatable; default: every one)")
    parser.add_argument("--mirror-dir", default=os.environ.get("GPUOPS_MIRROR_DIR")
                        or os.path.join(REPO, ".cache", "mirror"))
    parser.add_argument("--state-dir", default=os.environ.get("GPUOPS_LAB_STATE")
                        or os.path.join(REPO, ".cache", "lab"))
    parser.add_argument("--force", action="store_true", help="rebuild even when the recipe is unchanged")
    args = parser.parse_args(argv)
    for tool in ("dpkg-deb", "gpg"):
        if not shutil.which(tool):
            raise SystemExit("build_repo: %s is missing; install %s" % (tool, "dpkg" if tool == "dpkg-deb" else "gpg"))
    names = args.repo or sorted(SPECS)
    results = dict((name, build(os.path.abspath(args.mirror_dir), os.path.abspath(args.state_dir), args.force, name))
                   for name in names)
    if len(names) == 1:
        out = results[names[0]]
    else:
        out = {"changed": any(r["changed"] for r in results.values()), "repos": results}
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
