"""Make the checkout importable as ``ansible_collections.gpuops.dlserver``.

The repository root *is* the collection. Tests import plugins by their collection
path, the way Ansible loads them, so a link
``.cache/collections/ansible_collections/gpuops/dlserver -> <repo root>`` is made
(the Makefile makes the same link for ansible itself) and its parent put on sys.path.

Shared fixture: ``two_key_file``, a repository key file holding a wanted key and an intruder's
(real gpg), for every test of key trust.
"""
import os
import shutil
import subprocess
import sys

import pytest

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
COLLECTIONS_ROOT = os.path.join(REPO_ROOT, ".cache", "collections")
LINK = os.path.join(COLLECTIONS_ROOT, "ansible_collections", "gpuops", "dlserver")

if not os.path.islink(LINK):
    os.makedirs(os.path.dirname(LINK), exist_ok=True)
    os.symlink(REPO_ROOT, LINK)

if COLLECTIONS_ROOT not in sys.path:
    sys.path.insert(0, COLLECTIONS_ROOT)

# ``ansible_collections`` may already be imported (the ansible package ships one);
# make sure our root is part of its namespace path.
if "ansible_collections" in sys.modules:
    ns = sys.modules["ansible_collections"]
    path = os.path.join(COLLECTIONS_ROOT, "ansible_collections")
    if hasattr(ns, "__path__") and path not in list(ns.__path__):
        ns.__path__.append(path)


@pytest.fixture(name="two_key_file", scope="session")
def fixture_two_key_file(tmp_path_factory):
    """A key file holding the wanted key and an intruder's (what a mirror could serve)."""
    if not shutil.which("gpg"):
        pytest.skip("gpg is not installed")
    tmp_path = tmp_path_factory.mktemp("keys")
    fprs, data = [], b""
    for uid in ("wanted <w@gpuops.invalid>", "intruder <i@gpuops.invalid>"):
        home = tmp_path / uid.split()[0]
        home.mkdir(mode=0o700)
        base = ["gpg", "--homedir", str(home), "--batch", "--no-tty"]
        subprocess.run(base + ["--passphrase", "", "--pinentry-mode", "loopback", "--quick-gen-key", uid, "ed25519",
                               "sign", "never"], check=True, capture_output=True)
        out = subprocess.run(base + ["--with-colons", "--list-keys"], check=True, capture_output=True).stdout.decode()
        fprs.append([line.split(":")[9] for line in out.splitlines() if line.startswith("fpr:")][0])
        data += subprocess.run(base + ["--export", fprs[-1]], check=True, capture_output=True).stdout
        subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "gpg-agent"], check=False, capture_output=True)
    path = tmp_path / "two.gpg"
    path.write_bytes(data)
    return path, fprs
