"""packages/apt_simulation.py: the simulated upgrade is kept while apt's inputs stay the same."""
import json
import os

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_simulation as sim

ARGV = ["apt-get", "--simulate", "--ignore-hold", "-o", "Debug::NoLocking=true", "dist-upgrade"]
CACHE = "/var/cache/gpuops/apt-simulation.json"


@pytest.fixture
def root(tmp_path):
    for path, text in (("etc/apt/sources.list.d/debian.sources", "Types: deb\n"),
                       ("etc/apt/preferences.d/gpuops-nvidia-driver.pref", "Package: nvidia-*\n"),
                       ("var/lib/apt/lists/deb.example_dists_bookworm_main_binary-amd64_Packages", "Package: a\n"),
                       ("var/lib/apt/lists/lock", ""),
                       ("var/lib/apt/extended_states", ""),
                       ("var/lib/dpkg/status", "Package: linux-image-amd64\nStatus: install ok installed\n")):
        full = tmp_path / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(text)
    (tmp_path / "var/lib/apt/lists/partial").mkdir()
    return tmp_path


class Simulator:
    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return [{"name": "linux-image-amd64", "installed": "6.1.90-1", "candidate": "6.1.99-1",
                 "origins": ["Debian-Security:12/stable-security"], "security": True}]


def test_the_second_read_uses_the_kept_answer(root):
    run = Simulator()
    first, cached = sim.cached_simulation(ARGV, run, CACHE, str(root))
    assert (cached, run.calls) == (False, 1) and first[0]["security"] is True
    again, cached = sim.cached_simulation(ARGV, run, CACHE, str(root))
    assert (again, cached, run.calls) == (first, True, 1)
    stored = json.loads((root / CACHE.lstrip("/")).read_text())
    assert stored["argv"] == ARGV and stored["result"] == first
    assert oct(os.stat(str(root / CACHE.lstrip("/"))).st_mode & 0o777) == "0o644"


@pytest.mark.parametrize("change", [
    "var/lib/dpkg/status",                                                   # an install or a hold
    "var/lib/apt/lists/deb.example_dists_bookworm_main_binary-amd64_Packages",  # apt-get update
    "etc/apt/preferences.d/gpuops-nvidia-driver.pref",                       # an edited pin
    "var/lib/apt/extended_states",                                           # apt-mark auto/manual
    "etc/apt/sources.list.d/cuda.sources",                                   # a new repository
])
def test_a_change_to_what_apt_reads_simulates_again(root, change):
    run = Simulator()
    sim.cached_simulation(ARGV, run, CACHE, str(root))
    path = root / change
    text = path.read_text() if path.exists() else ""
    path.write_text(text + "Pin: version 550.*\n")
    os.utime(str(path), ns=(1, 1))  # a different mtime even within the clock's resolution
    _result, cached = sim.cached_simulation(ARGV, run, CACHE, str(root))
    assert cached is False and run.calls == 2


def test_what_apt_writes_while_it_works_does_not_count(root):
    before = sim.state_key(ARGV, str(root))
    (root / "var/lib/apt/lists/lock").write_text("x")
    (root / "var/lib/apt/lists/partial/half.gz").write_text("x")
    assert sim.state_key(ARGV, str(root)) == before


def test_another_command_line_is_another_answer(root):
    assert sim.state_key(ARGV, str(root)) != sim.state_key(ARGV[:-1] + ["upgrade"], str(root))


def test_check_mode_reads_the_cache_and_writes_nothing(root):
    run = Simulator()
    _result, cached = sim.cached_simulation(ARGV, run, CACHE, str(root), write=False)
    assert cached is False and not (root / CACHE.lstrip("/")).exists()
    sim.cached_simulation(ARGV, run, CACHE, str(root))
    _result, cached = sim.cached_simulation(ARGV, run, CACHE, str(root), write=False)
    assert cached is True and run.calls == 2


@pytest.mark.parametrize("text", ["", "not json", "[]", json.dumps({"key": "x"}),
                                  json.dumps({"version": 0, "key": "k", "result": []})])
def test_a_damaged_or_foreign_cache_is_simulated_again_and_replaced(root, text):
    path = root / CACHE.lstrip("/")
    path.parent.mkdir(parents=True)
    path.write_text(text)
    run = Simulator()
    _result, cached = sim.cached_simulation(ARGV, run, CACHE, str(root))
    assert cached is False and run.calls == 1
    assert json.loads(path.read_text())["version"] == sim.CACHE_VERSION


def test_no_cache_path_always_simulates(root):
    run = Simulator()
    for _attempt in range(2):
        assert sim.cached_simulation(ARGV, run, "", str(root))[1] is False
    assert run.calls == 2
