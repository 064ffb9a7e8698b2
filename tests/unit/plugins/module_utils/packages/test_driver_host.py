# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What gpuops.dlserver.__private.nvidia_driver_host reads on the host (plugins/module_utils/packages/driver_host.py):
an interrupted dpkg and a held lock (commands and /proc mocked), the package index (check mode
reads only), and the scratch apt directory (read by apt's sandbox user, not as root)."""

import os
import subprocess

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_host as dh
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo as repo
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages.repo_trust import Failure


class FakeHost(object):
    """Commands answered from a table, files from a dict."""

    def __init__(self, commands, files=None):
        self.commands, self.files, self.ran = commands, files or {}, []

    def run(self, args, check=True, what=None, env=None):
        self.ran.append(args)
        rc, out, err = self.commands.get(args[0], (0, "", ""))
        if check and rc:
            raise Failure("%s failed" % args[0], rc=rc, stderr=err)
        return rc, out, err

    def read(self, path):
        return self.files[path]

    module = type("Module", (), {"check_mode": False})()


AUDIT = ("The following packages are only half configured, probably due to problems\n"
         "configuring them the first time.  The configuration should be retried using\n"
         "dpkg --configure <package> or the configure menu option in dselect:\n"
         " nvidia-kernel-dkms   NVIDIA binary kernel module DKMS source\n")


def test_interrupted_dpkg_fails_naming_the_packages_and_the_repair(monkeypatch):
    monkeypatch.setattr(dh, "lock_probe", lambda host: lambda path: None)
    host = FakeHost({"dpkg": (0, AUDIT, ""),
                     "dpkg-query": (0, "nvidia-kernel-dkms\tiF \nnvidia-smi\tii \n", "")})
    with pytest.raises(Failure) as err:
        dh.check_dpkg(host, 5)
    assert "nvidia-kernel-dkms (iF)" in err.value.msg and "dpkg --configure -a" in err.value.msg
    assert ["dpkg", "--audit"] in host.ran


def test_consistent_dpkg_passes(monkeypatch):
    monkeypatch.setattr(dh, "lock_probe", lambda host: lambda path: None)
    host = FakeHost({"dpkg": (0, "", ""), "dpkg-query": (0, "nvidia-smi\tii \n", "")})
    assert dh.check_dpkg(host, 5)["ok"] is True


def test_held_lock_waits_bounded_and_names_the_holder(monkeypatch):
    clock = {"t": 0.0}
    monkeypatch.setattr(dh.time, "time", lambda: clock["t"])
    monkeypatch.setattr(dh.time, "sleep", lambda s: clock.__setitem__("t", clock["t"] + s))
    monkeypatch.setattr(dh, "lock_probe", lambda host: lambda path: (
        "%s is held by pid 4242 (/usr/bin/python3 /usr/bin/unattended-upgrade)" % path
        if path.endswith("lock-frontend") else None))
    with pytest.raises(Failure) as err:
        dh.check_dpkg(FakeHost({}), 30)
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
        text = dh.lock_probe(RealRead({}))(str(lock))
        assert text.startswith(str(lock) + " is held by pid %d" % holder.pid) and "time.sleep" in text
    finally:
        holder.kill()
        holder.wait()
    assert dh.lock_probe(FakeHost({}))(str(lock)) is None


@pytest.mark.parametrize("age,check_mode,refresh,stale", [
    (None, False, True, False), (7200, False, True, False), (60, False, False, False),
    (None, True, False, True), (7200, True, False, True), (60, True, False, False),
])
def test_index_refresh_decision(age, check_mode, refresh, stale):
    decision = repo.index_refresh(age, 3600, check_mode)
    assert (decision["refresh"], decision["stale"]) == (refresh, stale) and decision["reason"]
    if stale:
        assert "check mode" in decision["reason"] and "stale" in decision["reason"]


def test_check_mode_never_runs_apt_get_update(monkeypatch):
    monkeypatch.setattr(dh.time, "time", lambda: 10 ** 10)
    host = FakeHost({})
    host.module = type("Module", (), {"check_mode": True})()
    decision = dh.refresh_index(host, True)
    assert decision["stale"] is True and not any(args[0] == "apt-get" for args in host.ran)
    decision = dh.refresh_index(FakeHost({}), False)
    assert decision["refresh"] is True


def test_scratch_apt_update_runs_in_apts_sandbox(monkeypatch):
    seen = {}

    class Recorder(FakeHost):
        def run(self, args, check=True, what=None, env=None):
            if args[0] == "apt-get":
                work = [a.split("=", 1)[1] for a in args if a.startswith("Dir::State::Lists=")][0].rsplit("/", 1)[0]
                seen["mode"] = os.stat(work).st_mode & 0o777
                seen["sources_mode"] = os.stat(os.path.join(work, "sources.list.d", "query.sources")).st_mode & 0o777
            return super(Recorder, self).run(args, check, what, env)
    host = Recorder({"apt-cache": (0, "x | 1.0-1 | file:/m ./ Packages\n", "")})
    assert dh.apt_query(host, ["x"], "Types: deb\nURIs: file:/m\nSuites: /\n") == {"x": ["1.0-1"]}
    update = [args for args in host.ran if args[0] == "apt-get"][0]
    assert not any("Sandbox" in arg for arg in update), update
    assert seen == {"mode": 0o755, "sources_mode": 0o644}
