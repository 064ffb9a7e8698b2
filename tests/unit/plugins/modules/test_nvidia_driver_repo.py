# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops.dlserver.nvidia_driver_repo at its edges: an interrupted dpkg and a held lock (commands
and /proc mocked), the key export (real gpg with a two-key file), and the module's failure."""

import hashlib
import os
import shutil
import subprocess

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.modules import nvidia_driver_repo as mod


class FakeHost(object):
    """Commands answered from a table, files from a dict."""

    def __init__(self, commands, files=None):
        self.commands, self.files, self.ran = commands, files or {}, []

    def run(self, args, check=True, what=None, env=None):
        self.ran.append(args)
        rc, out, err = self.commands.get(args[0], (0, "", ""))
        if check and rc:
            raise mod.Failure("%s failed" % args[0], rc=rc, stderr=err)
        return rc, out, err

    def read(self, path):
        return self.files[path]


AUDIT = ("The following packages are only half configured, probably due to problems\n"
         "configuring them the first time.  The configuration should be retried using\n"
         "dpkg --configure <package> or the configure menu option in dselect:\n"
         " nvidia-kernel-dkms   NVIDIA binary kernel module DKMS source\n")


def test_interrupted_dpkg_fails_naming_the_packages_and_the_repair(monkeypatch):
    monkeypatch.setattr(mod, "lock_probe", lambda host: lambda path: None)
    host = FakeHost({"dpkg": (0, AUDIT, ""),
                     "dpkg-query": (0, "nvidia-kernel-dkms\tiF \nnvidia-smi\tii \n", "")})
    with pytest.raises(mod.Failure) as err:
        mod.check_dpkg(host, 5)
    assert "nvidia-kernel-dkms (iF)" in err.value.msg and "dpkg --configure -a" in err.value.msg
    assert ["dpkg", "--audit"] in host.ran


def test_consistent_dpkg_passes(monkeypatch):
    monkeypatch.setattr(mod, "lock_probe", lambda host: lambda path: None)
    host = FakeHost({"dpkg": (0, "", ""), "dpkg-query": (0, "nvidia-smi\tii \n", "")})
    assert mod.check_dpkg(host, 5)["ok"] is True


def test_held_lock_waits_bounded_and_names_the_holder(monkeypatch):
    clock = {"t": 0.0}
    monkeypatch.setattr(mod.time, "time", lambda: clock["t"])
    monkeypatch.setattr(mod.time, "sleep", lambda s: clock.__setitem__("t", clock["t"] + s))
    monkeypatch.setattr(mod, "lock_probe", lambda host: lambda path: (
        "%s is held by pid 4242 (/usr/bin/python3 /usr/bin/unattended-upgrade)" % path
        if path.endswith("lock-frontend") else None))
    with pytest.raises(mod.Failure) as err:
        mod.check_dpkg(FakeHost({}), 30)
    assert "pid 4242 (/usr/bin/python3 /usr/bin/unattended-upgrade)" in err.value.msg
    assert "after waiting 30 s" in err.value.msg and 30 <= clock["t"] <= 32


def test_lock_probe_reads_the_holder_from_proc(monkeypatch, tmp_path):
    lock = tmp_path / "lock-frontend"
    lock.write_text("")
    holder = subprocess.Popen(["python3", "-c", "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR); "
                               "fcntl.lockf(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(30)",
                               str(lock)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"locked"

        class RealRead(FakeHost):
            def read(self, path):
                with open(path) as handle:
                    return handle.read()
        text = mod.lock_probe(RealRead({}))(str(lock))
        assert text.startswith(str(lock) + " is held by pid %d" % holder.pid) and "time.sleep" in text
    finally:
        holder.kill()
        holder.wait()
    assert mod.lock_probe(FakeHost({}))(str(lock)) is None


@pytest.fixture(name="two_key_file")
def fixture_two_key_file(tmp_path):
    if not shutil.which("gpg"):
        pytest.skip("gpg is not installed")
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
    path = tmp_path / "two.gpg"
    path.write_bytes(data)
    return path, fprs


class GpgModule(object):
    def get_bin_path(self, name):
        return shutil.which(name)


class GpgHost(mod.Host):
    def __init__(self):
        self.module = GpgModule()

    def run(self, args, check=True, what=None, env=None):
        proc = subprocess.run(args, capture_output=True, check=False, env=dict(os.environ, **(env or {})))
        if check and proc.returncode:
            raise mod.Failure("%s failed" % what, rc=proc.returncode, stderr=proc.stderr.decode())
        return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_two_key_file_exports_only_the_wanted_key(two_key_file, tmp_path):
    path, fprs = two_key_file
    spec = {"url": "file://%s" % path, "sha256": "", "fingerprint": fprs[0]}
    work = tmp_path / "work"
    work.mkdir()
    keyring, info = mod.fetch_key(GpgHost(), spec, str(work))
    assert info["fingerprints"] == [fprs[0]] and info["dropped"] == [fprs[1]]
    home = tmp_path / "check"
    home.mkdir(mode=0o700)
    shown = subprocess.run(["gpg", "--homedir", str(home), "--batch", "--with-colons", "--show-keys", keyring],
                           check=True, capture_output=True).stdout.decode()
    assert [line.split(":")[9] for line in shown.splitlines() if line.startswith("fpr:")][:1] == [fprs[0]]
    assert fprs[1] not in shown


def test_two_key_file_without_a_fingerprint_is_refused(two_key_file, tmp_path):
    path, fprs = two_key_file
    spec = {"url": "file://%s" % path, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "fingerprint": ""}
    with pytest.raises(mod.Failure) as err:
        mod.fetch_key(GpgHost(), spec, str(tmp_path))
    assert "carries 2 keys" in err.value.msg and fprs[1] in err.value.msg


def test_module_fails_with_problems_and_names_the_variable(monkeypatch):
    def fail_json(self, **kwargs):
        raise SystemExit(kwargs)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    with patch_module_args({"action": "inputs", "inputs": {"version": "latest", "source": "distro",
                                                           "cuda_repo_base_url": "https://x/", "reboot_timeout": 1800,
                                                           "status_file": "/etc/gpuops/x.json"},
                            "platform": {"default_branch": {"distro": "535"}}}):
        with pytest.raises(SystemExit) as err:
            mod.main()
    assert "nvidia_driver_version must be a driver version" in err.value.args[0]["msg"]
