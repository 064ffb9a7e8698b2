# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST DOUBLE: a repository key file that carries two keys (the CUDA repository double's
key and an intruder's), for the nvidia_driver key-trust cases.

A mirror can slip its own key into the key file it serves; the role must install only the
key whose fingerprint it was given (or refuse the file when no fingerprint says which key
signs the repository). This script writes <mirror>/doubles/testdouble-two-keys.gpg: the
double's published keyring (tests/doubles/build_repo.py, spec cuda) followed by a second key made
here ("gpuops.dlserver lab TEST DOUBLE intruder"). It prints JSON: path, sha256, the
fingerprints in file order, and whether it changed anything.

Usage: python3 build_two_key_keyring.py --mirror-dir DIR [--state-dir DIR]
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
UID = "gpuops.dlserver lab TEST DOUBLE intruder key <intruder@gpuops.invalid>"
NAME = "testdouble-two-keys.gpg"


def gpg(home, *args):
    return subprocess.run(["gpg", "--homedir", home, "--batch", "--no-tty"] + list(args), check=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout


def intruder_key(home):
    os.makedirs(home, mode=0o700, exist_ok=True)
    if not gpg(home, "--list-secret-keys", "--with-colons").strip():
        gpg(home, "--passphrase", "", "--pinentry-mode", "loopback", "--quick-gen-key", UID, "ed25519", "sign", "never")
    for line in gpg(home, "--list-secret-keys", "--with-colons").decode().splitlines():
        if line.startswith("fpr:"):
            return line.split(":")[9], gpg(home, "--export", line.split(":")[9])
    raise SystemExit("build_two_key_keyring: no key in %s" % home)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror-dir", required=True)
    parser.add_argument("--state-dir", default=os.path.join(REPO, ".cache", "lab"))
    args = parser.parse_args(argv)
    with open(os.path.join(args.mirror_dir, "apt", "cuda", "testdouble.json")) as handle:
        manifest = json.load(handle)
    with open(os.path.join(args.mirror_dir, "apt", "cuda", "debian12", "x86_64", manifest["keyring"]), "rb") as handle:
        published = handle.read()
    home = os.path.join(args.state_dir, "two-key-double-gnupg")
    try:
        fpr, intruder = intruder_key(home)
    finally:  # the agent key generation started would outlive this script
        subprocess.run(["gpgconf", "--homedir", home, "--kill", "gpg-agent"], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = published + intruder
    dest = os.path.join(args.mirror_dir, "doubles", NAME)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    changed = not os.path.exists(dest) or open(dest, "rb").read() != data
    if changed:
        with open(dest, "wb") as handle:
            handle.write(data)
    print(json.dumps({"path": "doubles/" + NAME, "sha256": hashlib.sha256(data).hexdigest(),
                      "fingerprints": [manifest["fingerprint"], fpr], "changed": changed}, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
