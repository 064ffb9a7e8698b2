"""Fixtures of the package-repository library's tests: a host edge that runs real commands (the
key file with two keys is tests/unit/conftest.py's)."""
import os
import shutil
import subprocess

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure, Host


class GpgModule(object):
    check_mode = False

    def get_bin_path(self, name, opt_dirs=None):
        return shutil.which(name)


class GpgHost(Host):
    """The real edge, without AnsibleModule: commands run, files read."""

    def __init__(self):
        super(GpgHost, self).__init__(GpgModule())

    def run(self, args, check=True, what=None, env=None):
        proc = subprocess.run(args, capture_output=True, check=False, env=dict(os.environ, **(env or {})))
        if check and proc.returncode:
            raise Failure("%s failed" % what, rc=proc.returncode, stderr=proc.stderr.decode())
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture(name="gpg_host")
def fixture_gpg_host():
    return GpgHost()


@pytest.fixture(name="fingerprints_in")
def fixture_fingerprints_in(tmp_path):
    """The primary-key fingerprints of a keyring file, as gpg shows them."""
    def show(keyring):
        home = tmp_path / "check"
        home.mkdir(mode=0o700, exist_ok=True)
        shown = subprocess.run(["gpg", "--homedir", str(home), "--batch", "--with-colons", "--show-keys", str(keyring)],
                               check=True, capture_output=True).stdout.decode()
        return [line.split(":")[9] for line in shown.splitlines() if line.startswith("fpr:")]
    return show
