"""Held-back updates of the driver and its companions (plugins/module_utils/packages/held_updates.py),
from the case table data/held_updates_cases.yml and apt output in data/packages/ (SOURCES.md)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import held_updates

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
with open(os.path.join(DATA, "held_updates_cases.yml")) as _handle:
    CASES = yaml.safe_load(_handle)


def text(case, key):
    if key + "_text" in case:
        return case[key + "_text"]
    with open(os.path.join(DATA, "packages", case[key])) as handle:
        return handle.read()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_held_back(case):
    got = held_updates.held_back(text(case, "policy"), text(case, "files"), case["watched"], case["holds"])
    assert got["checked"] is True
    assert [[u["name"], u["available"], u["security"]] for u in got["updates"]] == case["expect"]
    assert [u["name"] for u in got["security"]] == case["security"]
    assert got["take"] == case["take"]


def test_the_driver_record_says_what_keeps_it_and_why_it_is_security():
    case = CASES[0]
    got = held_updates.held_back(text(case, "policy"), text(case, "files"), case["watched"], case["holds"])
    driver = [u for u in got["updates"] if u["name"] == "nvidia-driver"][0]
    assert driver["installed"] == "535.261.03-1~deb12u1" and driver["kept_by"] == "the dpkg hold"
    assert "labelled Debian-Security" in driver["source"]
    line = held_updates.summary_line(got)
    assert line.startswith("security updates held back: libcuda1 535.261.03-1~deb12u1 -> 535.309.01-0+deb12u1")
    assert "set nvidia_driver_version=535.309.01" in line


@pytest.mark.parametrize("source, releases, expected", [
    ({"url": "http://d/debian-security", "dist": "bookworm-security/non-free"}, {}, True),
    ({"url": "http://d/debian", "dist": "bookworm/non-free"}, {}, False),
    ({"url": "http://d/debian", "dist": "bookworm-security-not/main"}, {}, False),
    ({"url": "http://d/debian", "dist": "x-security\n/main"}, {}, False),
    ({"url": "http://d/debian", "dist": "trixie/main"},
     {("http://d/debian", "trixie/main"): {"l": "Debian-Security", "a": "stable"}}, True),
    ({"url": "http://d/debian", "dist": "bookworm-security/main"},
     {("http://d/debian", "bookworm-security/main"): {"l": "Debian", "a": "oldstable", "n": "bookworm"}}, False),
    ({"url": "http://d/ubuntu", "dist": "jammy-security/main"},
     {("http://d/ubuntu", "jammy-security/main"): {"o": "Ubuntu", "a": "jammy-security", "l": "Ubuntu"}}, True),
])
def test_is_security(source, releases, expected):
    assert held_updates.is_security(source, releases)[0] is expected


@pytest.mark.parametrize("version, expected", [
    ("535.309.01-0+deb12u1", "535.309.01"), ("1:1.19.1-1", "1.19.1"), ("580.95.05", "580.95.05"),
    ("535.230.02-0ubuntu0.22.04.3", "535.230.02")])
def test_upstream(version, expected):
    assert held_updates.upstream(version) == expected


class FakeHost:
    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def run(self, argv, check=True, what=None):
        self.calls.append(argv)
        return self.answers.pop(0)


def test_read_runs_apt_cache_twice_and_says_unchecked_on_failure():
    case = CASES[0]
    host = FakeHost([(0, text(case, "policy"), ""), (0, text(case, "files"), "")])
    got = held_updates.read(host, ["nvidia-smi", "nvidia-driver"], ["nvidia-driver"])
    assert host.calls == [["apt-cache", "policy", "nvidia-driver", "nvidia-smi"], ["apt-cache", "policy"]]
    assert [u["name"] for u in got["security"]] == ["nvidia-driver", "nvidia-smi"]
    failed = held_updates.read(FakeHost([(100, "", "E: broken cache")]), ["nvidia-driver"])
    assert failed["checked"] is False and "E: broken cache" in failed["reason"] and failed["security"] == []
    assert held_updates.read(FakeHost([]), [])["checked"] is False
    assert held_updates.summary_line(failed) == ""


def test_the_driver_resolve_hook_watches_the_installed_pinned_packages_and_companions():
    from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_resolve
    case = CASES[0]
    host = FakeHost([(0, text(case, "policy"), ""), (0, text(case, "files"), "")])
    pk = {"persistenced": ["nvidia-persistenced"], "fabric_manager": ["nvidia-fabricmanager-535"]}
    have = {"nvidia-driver": {"version": "535.261.03-1~deb12u1", "held": True},
            "nvidia-smi": {"version": "535.261.03-1~deb12u1", "held": False},
            "nvidia-persistenced": {"version": "535.171.04-1", "held": False}}
    pinned = {"nvidia-driver": "535.261.03-1~deb12u1", "nvidia-smi": "535.261.03-1~deb12u1",
              "libcuda1": "535.261.03-1~deb12u1"}
    got = driver_resolve.driver_held_back(host, "apt", pinned, pk, have)
    # Fabric Manager is neither pinned nor installed here: not asked about; the pinned packages are
    # read as the role leaves them (held: the role holds what it pins)
    assert host.calls[0] == ["apt-cache", "policy", "libcuda1", "nvidia-driver", "nvidia-persistenced", "nvidia-smi"]
    assert [(u["name"], u["kept_by"]) for u in got["security"]] == [
        ("libcuda1", "the dpkg hold"), ("nvidia-driver", "the dpkg hold"), ("nvidia-smi", "the dpkg hold")]
    el = driver_resolve.driver_held_back(FakeHost([]), "dnf", pinned, pk, have)
    assert el["checked"] is False and "dnf" in el["reason"]


def test_a_first_run_records_what_the_run_after_it_records():
    """The first run reads the host before its install: the record compares the pinned versions and
    holds the role leaves, so the status it writes is the next run's (idempotence)."""
    from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_resolve
    case = CASES[0]
    pk = {"persistenced": [], "fabric_manager": []}
    pinned = {"nvidia-driver": "535.261.03-1~deb12u1", "nvidia-smi": "535.261.03-1~deb12u1"}
    installed = {"nvidia-driver": {"version": "535.261.03-1~deb12u1", "held": True},
                 "nvidia-smi": {"version": "535.261.03-1~deb12u1", "held": True}}
    after = driver_resolve.driver_held_back(FakeHost([(0, text(case, "policy"), ""), (0, text(case, "files"), "")]),
                                            "apt", pinned, pk, installed)
    # before the install: apt's table says "Installed: (none)" for both
    policy = text(case, "policy").replace("Installed: 535.261.03-1~deb12u1", "Installed: (none)")
    assert policy != text(case, "policy")
    before = driver_resolve.driver_held_back(FakeHost([(0, policy, ""), (0, text(case, "files"), "")]),
                                             "apt", pinned, pk, {})
    assert before == after and [u["name"] for u in after["security"]] == ["nvidia-driver", "nvidia-smi"]
    # an upgrade to the security version itself: read before it (the old version installed), nothing is
    # recorded as held back - the version the role pins is the newest
    upgrade = dict((n, "535.309.01-0+deb12u1") for n in pinned)
    got = driver_resolve.driver_held_back(FakeHost([(0, text(case, "policy"), ""), (0, text(case, "files"), "")]),
                                          "apt", upgrade, pk, installed)
    assert got["checked"] is True and got["updates"] == [] and got["take"] is None


def test_after_the_install_the_record_is_read_again_and_the_status_takes_it(monkeypatch):
    """A first run reads the host before the CUDA repository is configured (apt-cache knows none of
    its versions) and before the packages are installed: the status file takes the record read after
    the install (action after_install), which is what the next run's resolve reads (idempotence)."""
    from ansible_collections.gpuops.dlserver.plugins.module_utils.core import status
    from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_host
    from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_resolve
    case = CASES[0]
    asked = []
    monkeypatch.setattr(driver_host, "installed", lambda host, backend, names: asked.append(names) or {
        "nvidia-driver": {"version": "535.261.03-1~deb12u1", "held": True}})
    state = {"pinned": {"nvidia-driver": "535.261.03-1~deb12u1"}, "companions": ["nvidia-persistenced"]}
    host = FakeHost([(0, text(case, "policy"), ""), (0, text(case, "files"), "")])
    got = driver_resolve.held_back_after(host, "apt", state)
    assert asked == [["nvidia-driver", "nvidia-persistenced"]]
    assert host.calls[0] == ["apt-cache", "policy", "nvidia-driver"]
    assert [u["name"] for u in got["security"]] == ["nvidia-driver"]
    # the status record: the after-install read wins over the resolve's (read before the install)
    plan = {"driver": {"required": True}}
    resolved = {"status": {"security_updates_held_back": {"checked": True, "updates": []}}}
    parts = {"plan": plan, "inputs": {}, "resolved": resolved,
             "after": {"dkms": {"status": []}, "security_updates_held_back": got}, "verified": {}}
    assert status.nvidia_driver(parts)["security_updates_held_back"] == got
    # no after-install read (check mode, or nothing installed): the resolve's
    parts["after"] = {}
    assert status.nvidia_driver(parts)["security_updates_held_back"] == {"checked": True, "updates": []}
