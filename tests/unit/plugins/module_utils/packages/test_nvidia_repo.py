"""Decisions of the nvidia_driver role (plugins/module_utils/packages/nvidia_repo.py), from case tables in
data/nvidia_repo_cases.yml and data/nvidia_repo_decide.yml."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import apt_sources as sources
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import dpkg_state
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import nvidia_repo as repo
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_trust

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "data", "nvidia_repo_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
with open(os.path.join(HERE, "data", "nvidia_repo_decide.yml")) as _fh:
    DECIDE = yaml.safe_load(_fh)["cases"]
COMPONENTS = ["contrib", "non-free", "non-free-firmware"]
DEFAULTS = {"reboot_timeout": 1800, "status_file": "/etc/gpuops/nvidia_driver.json",
            "modules_load": ["nvidia", "nvidia-uvm"],
            "debian_keyring": "/usr/share/keyrings/debian-archive-keyring.gpg"}


def ids(cases):
    return [c["id"] for c in cases]


@pytest.mark.parametrize("version,upstream,branch", [
    ("535.309.01-0+deb12u1", "535.309.01", 535), ("1:580.95.05-1", "580.95.05", 580),
    ("580.105.08", "580.105.08", 580), ("1000.1.2-1ubuntu1", "1000.1.2", 1000),
])
def test_upstream_and_branch(version, upstream, branch):
    assert repo.upstream_of(version) == upstream and repo.branch_of(version) == branch


@pytest.mark.parametrize("case", CASES["fabric_manager"],
                         ids=["%(distribution)s-%(source)s-%(branch)s" % c for c in CASES["fabric_manager"]])
def test_fabric_manager_package_names(case):
    result = repo.fabric_manager_packages(case["distribution"], case["source"], case["branch"])
    assert result["value"] == case["expect"] and result["reason"]


@pytest.mark.parametrize("case", CASES["keys"], ids=ids(CASES["keys"]))
def test_choose_key(case):
    result = repo_trust.choose_key("http://mirror/key.pub", case["found"], case["wanted"],
                                   "nvidia_driver_cuda_keyring_fingerprint")
    expect = case["expect"]
    assert result["ok"] is expect["ok"]
    for key in ("fingerprint", "dropped"):
        if key in expect:
            assert result[key] == expect[key]
    for part in expect.get("error_contains", []):
        assert part in result["error"]


@pytest.mark.parametrize("case", CASES["dpkg"], ids=ids(CASES["dpkg"]))
def test_dpkg_problems(case):
    problems = dpkg_state.dpkg_problems(case["audit"], [tuple(r) for r in case["rows"]])
    if not case["expect"]:
        assert problems == []
    else:
        assert len(problems) == 1
        for part in case["expect"]:
            assert part in problems[0], (part, problems[0])


@pytest.mark.parametrize("case", CASES["activation"], ids=ids(CASES["activation"]))
def test_activation(case):
    result = repo.activation(*case["args"], timeout=1800)
    expect = case["expect"]
    assert result["action"] == expect["action"]
    assert result["reboot"]["action"] == expect["reboot_action"]
    assert result["services_start"] is expect["services_start"]
    for part in expect.get("reason_contains", []):
        assert part in result["reason"], (part, result["reason"])
    for part in expect.get("reboot_reason_contains", []):
        assert part in result["reboot"]["reason"], (part, result["reboot"]["reason"])


@pytest.mark.parametrize("case", CASES["signing"], ids=ids(CASES["signing"]))
def test_signing_problems(case):
    problems = " | ".join(repo.signing_problems(case["keys"], case["key"], case["cert"], case["sb"]))
    if not case["expect"]:
        assert problems == ""
    for part in case["expect"]:
        assert part in problems, (part, problems)


@pytest.mark.parametrize("case", CASES["inputs"], ids=ids(CASES["inputs"]))
def test_input_problems(case):
    inputs = dict(DEFAULTS, **case["inputs"])
    problems = " | ".join(repo.input_problems(inputs))
    if not case["expect"]:
        assert problems == ""
    for part in case["expect"]:
        assert part in problems, (part, problems)


def test_dkms_signing_conf_quotes_paths_a_shell_sources():
    text = repo.dkms_signing_conf({"private_key": "/keys/my key;rm -rf /.priv", "certificate": "/keys/$(id).der"}, "#h")
    assert "mok_signing_key='/keys/my key;rm -rf /.priv'\n" in text
    assert "mok_certificate='/keys/$(id).der'\n" in text
    assert repo.dkms_signing_conf({}, "#h") == ""


def test_proc_locks_holders():
    text = ("1: POSIX  ADVISORY  WRITE 4242 08:01:1310723 0 EOF\n"
            "2: FLOCK  ADVISORY  WRITE 99 00:1a:77 0 EOF\n"
            "2: -> POSIX  ADVISORY  WRITE 5555 08:01:1310723 0 EOF\n")
    assert dpkg_state.proc_locks_holders(text, 1310723) == [4242]
    assert dpkg_state.proc_locks_holders(text, 12) == []


def test_wait_for_locks_retries_then_succeeds():
    clock = {"t": 0.0}
    answers = iter(["pid 7 (apt-get install x)", "pid 7 (apt-get install x)", None])
    result = dpkg_state.wait_for_locks(lambda lock: next(answers), ["/var/lib/dpkg/lock-frontend"], 60,
                                       lambda s: clock.__setitem__("t", clock["t"] + s), lambda: clock["t"])
    assert result["ok"] is True and result["waited"] == 4.0


def test_wait_for_locks_is_bounded_and_names_the_holder():
    clock = {"t": 0.0}
    holder = dpkg_state.lock_holder_text("/var/lib/dpkg/lock-frontend", 4242, "/usr/bin/unattended-upgrade")
    result = dpkg_state.wait_for_locks(lambda lock: holder, ["/var/lib/dpkg/lock-frontend"], 10,
                                       lambda s: clock.__setitem__("t", clock["t"] + s), lambda: clock["t"])
    assert result["ok"] is False and 10 <= result["waited"] <= 11
    assert "pid 4242 (/usr/bin/unattended-upgrade)" in result["error"] and "after waiting 10 s" in result["error"]


def test_parse_sources_skips_own_files_and_reads_both_formats():
    files = {
        "/etc/apt/sources.list": ("# comment\ndeb http://mirror.example/debian bookworm main contrib # trailing\n"
                                  "deb-src http://mirror.example/debian bookworm main\n"
                                  "deb [arch=amd64 signed-by=/usr/share/keyrings/x.gpg] http://mirror.example/debian "
                                  "bookworm-updates main\nnot a source line\n"),
        "/etc/apt/sources.list.d/debian.sources": (
            "Types: deb\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\n"
            "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
            "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n"),
        "/etc/apt/sources.list.d/inline.sources": (
            "Types: deb\nURIs: http://inline.example/x\nSuites: /\nSigned-By:\n"
            " -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n AAAA\n -----END PGP PUBLIC KEY BLOCK-----\n"),
        "/etc/apt/sources.list.d/gpuops-nvidia-debian.sources": "Types: deb\nURIs: http://own/\nSuites: x\n",
    }
    entries = sources.parse_sources(files)
    assert "/etc/apt/sources.list.d/gpuops-nvidia-debian.sources" not in set(e["file"] for e in entries)
    first = entries[0]
    assert (first["types"], first["uris"], first["suites"], first["components"]) == (
        ["deb"], ["http://mirror.example/debian"], ["bookworm"], ["main", "contrib"])
    assert entries[2]["signed_by"] == "/usr/share/keyrings/x.gpg"
    assert [e for e in entries if e["uris"] == ["http://off.example/debian"]][0]["enabled"] is False
    inline = [e for e in entries if e["uris"] == ["http://inline.example/x"]][0]
    assert inline["signed_by"] == "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nAAAA\n-----END PGP PUBLIC KEY BLOCK-----"
    text = sources.render_deb822([{"uri": "http://x/", "suites": ["/"], "components": [], "signed_by": inline["signed_by"]}])
    assert "Signed-By: -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n AAAA\n" in text
    assert sources.parse_sources({"/etc/apt/sources.list.d/x.sources": text})[0]["signed_by"] == inline["signed_by"]


def _entry(uri, suite, comps, signed=None, enabled=True):
    return {"file": "/etc/apt/sources.list.d/debian.sources", "types": ["deb"], "uris": [uri],
            "suites": [suite], "components": comps, "signed_by": signed, "enabled": enabled}


def test_debian_stanzas_add_only_missing_components_to_the_hosts_archive():
    key = "/usr/share/keyrings/debian-archive-keyring.pgp"
    entries = [_entry("http://m.example/debian", "trixie", ["main"], key),
               _entry("http://m.example/debian/", "trixie-updates", ["main"], key),
               _entry("http://m.example/debian-security", "trixie-security", ["main", "non-free-firmware"], key),
               _entry("http://docker.example/linux/debian", "trixie", ["stable"]),
               _entry("http://m.example/debian", "trixie-backports", ["main"], key),
               _entry("http://off.example/debian", "trixie", ["main"], key, enabled=False)]
    missing, full, files = sources.debian_stanzas(entries, "trixie", COMPONENTS)
    assert files == ["/etc/apt/sources.list.d/debian.sources"]
    assert missing == [{"uri": "http://m.example/debian-security/", "suites": ["trixie-security"],
                        "components": ["contrib", "non-free"], "signed_by": key},
                       {"uri": "http://m.example/debian/", "suites": ["trixie", "trixie-updates"],
                        "components": COMPONENTS, "signed_by": key}]
    assert [s["components"] for s in full] == [COMPONENTS, COMPONENTS]
    assert sources.debian_stanzas([_entry("http://x/", "bookworm", ["stable"])], "bookworm", COMPONENTS)[1] == []
    missing, full, files = sources.debian_stanzas(entries, "bookworm", COMPONENTS, mirror="http://l/d/", keyring="/k")
    assert files == [] and missing == full


def test_parse_madison_fingerprints_and_dpkg_query():
    out = ("nvidia-smi | 535.309.01-0+deb12u1 | http://m/debian-security bookworm-security/non-free amd64 Packages\n"
           "  libcuda1 | 535.261.03-1 | http://m/debian bookworm/non-free amd64 Packages\n"
           "nvidia-graphics-drivers | 535.261.03-1 | http://m/debian bookworm/non-free Sources\n")
    assert sources.parse_madison(out) == {"nvidia-smi": ["535.309.01-0+deb12u1"], "libcuda1": ["535.261.03-1"]}
    colons = ("pub:-:255:22:4B2B3FB657533A95:1735689600:::-:::scESC::::::23::0:\n"
              "fpr:::::::::612F6B38E555C102747DA70C4B2B3FB657533A95:\n"
              "sub:-:255:18:AAAA:1735689600::::::e::::::23:\n"
              "fpr:::::::::BBBB0000BBBB0000BBBB0000BBBB0000BBBB0000:\n"
              "pub:-:255:22:1111:1735689600:::-:::scESC::::::23::0:\n"
              "fpr:::::::::CCCC0000CCCC0000CCCC0000CCCC0000CCCC0000:\n")
    assert repo_trust.parse_fingerprints(colons) == ["612F6B38E555C102747DA70C4B2B3FB657533A95",
                                                     "CCCC0000CCCC0000CCCC0000CCCC0000CCCC0000"]
    rows = "nvidia-smi\t535.1-1\thi \nlibcuda1\t535.1-1\tii \nx\t1\tii \nnvidia-kernel-dkms\t\tun \n"
    assert sources.parse_dpkg_query(rows, ["nvidia-smi", "libcuda1", "nvidia-kernel-dkms"]) == {
        "nvidia-smi": {"version": "535.1-1", "held": True}, "libcuda1": {"version": "535.1-1", "held": False}}


@pytest.mark.parametrize("case", DECIDE, ids=ids(DECIDE))
def test_decide(case):
    result = repo.decide(case["request"], case["versions"], case.get("installed") or {})
    expect = case["expect"]
    for key in ("target", "pinned", "change", "held", "keep", "problems"):
        if key in expect:
            assert result[key] == expect[key], key
    for part in expect.get("problems_contain", []):
        assert part in " | ".join(result["problems"]), part


PLAN = {"fabric_manager": {"required": True, "reason": "8 NVSwitches"},
        "nvlink_subnet_manager": {"required": False}, "persistence": {"enabled": True}}
DEBIAN_SETS = {"distro": {"current": {"open": ["nvidia-open-kernel-dkms", "nvidia-smi", "libcuda1"],
                                      "proprietary": ["nvidia-kernel-dkms", "nvidia-smi", "libcuda1"]},
                          "other": {"open": [], "proprietary": ["nvidia-tesla-{branch}-kernel-dkms"]},
                          "persistenced": ["nvidia-persistenced"], "fabric_manager_available": False},
               "cuda_repo": {"current": {"open": ["nvidia-driver-cuda", "nvidia-kernel-open-dkms"],
                                         "proprietary": ["nvidia-driver-cuda", "nvidia-kernel-dkms"]},
                             "other": {"open": ["nvidia-driver-cuda", "nvidia-kernel-open-dkms"],
                                       "proprietary": ["nvidia-driver-cuda", "nvidia-kernel-dkms"]},
                             "persistenced": []}}


def test_choose_packages_fabric_manager_from_the_cuda_repository_on_debian():
    facts = {"distribution": "Debian", "distro_branch": "535", "branch": "535", "flavour": "open"}
    inp = {"source": "distro", "cuda_repo_for_fabric_manager": True, "modules_load": ["nvidia"]}
    result = repo.choose_packages(DEBIAN_SETS, inp, PLAN, facts)
    assert result["problems"] == [] and result["fm_from_cuda"] and result["cuda_needed"]
    assert result["fabric_manager"] == ["nvidia-fabricmanager-535"]
    assert result["other"] == ["nvidia-persistenced"]
    refused = repo.choose_packages(DEBIAN_SETS, dict(inp, cuda_repo_for_fabric_manager=False), PLAN, facts)
    assert "nvidia_driver_cuda_repo_for_fabric_manager" in refused["problems"][0]


def test_choose_packages_nvlsm_needs_infiniband_diags_and_ib_umad():
    plan = dict(PLAN, nvlink_subnet_manager={"required": True})
    facts = {"distribution": "Debian", "distro_branch": "535", "branch": "580", "flavour": "open"}
    inp = {"source": "cuda_repo", "modules_load": ["nvidia", "nvidia-uvm"], "packages_extra": []}
    result = repo.choose_packages(DEBIAN_SETS, inp, plan, facts)
    assert result["fabric_manager"] == ["nvidia-fabricmanager"]
    assert result["nvlsm"] == ["nvlsm"] and "infiniband-diags" in result["other"] and "nvlsm" in result["other"]
    assert result["modules_load"] == ["nvidia", "nvidia-uvm", "ib_umad"]


def test_choose_packages_open_modules_other_branch_refused_on_debian():
    facts = {"distribution": "Debian", "distro_branch": "535", "branch": "550", "flavour": "open"}
    result = repo.choose_packages(DEBIAN_SETS, {"source": "distro"}, dict(PLAN, fabric_manager={"required": False,
                                                                                                "reason": "x"}), facts)
    assert "nvidia_driver_kernel_modules: proprietary" in result["problems"][0]
    assert "not available" in repo.choose_packages({"cuda_repo": {}}, {"source": "distro"}, PLAN,
                                                   dict(facts, distribution="RedHat"))["problems"][0]


def test_verify_problems():
    gpu = {"source": "nvml", "gpu_count": 2, "driver": {"loaded": True, "version": "580.95.05"},
           "gpus": [{"pci_bus_id": "0000:01:00.0", "uuid": "GPU-1"}, {"pci_bus_id": "0000:02:00.0"}]}
    result = repo.verify_problems(gpu, "580.95.05", "580.105.08", "open")
    text = " | ".join(result["problems"])
    assert "NVML reports driver 580.95.05, the pinned version is 580.105.08" in text
    assert "kernel module is version 580.95.05" in text and "0000:02:00.0" in text
    ok = repo.verify_problems(dict(gpu, gpus=gpu["gpus"][:1]), "580.95.05", "580.95.05", "open")
    assert ok["problems"] == [] and ok["ran"] is True


@pytest.mark.parametrize("case", CASES["install_state"], ids=ids(CASES["install_state"]))
def test_install_state(case):
    got = dpkg_state.install_state(case["pinned"], case["other"], case["installed"], case["change"])
    assert got == case["expect"]


@pytest.mark.parametrize("age", [None, 10, 7200])
def test_index_status_is_the_same_whether_this_run_refreshed_or_not(age):
    # The status file must not change on the run an hour later that refreshes the index again.
    run = repo.index_status(repo.index_refresh(age, 3600, False))
    assert run == repo.index_status(repo.index_refresh(5, 3600, False)) == {
        "stale": False, "reason": "the package index is refreshed before it is read when older than 3600 s"}
    check = repo.index_status(repo.index_refresh(age, 3600, True))
    assert check["stale"] is (age != 10)
    assert repo.index_status(None) is None


@pytest.mark.parametrize('name,valid', [
    ('nvidia-kernel-dkms', True), ('libnv*', True), ('g++-12', True), ('nvidia-*', True),
    ('/^libnv/', False), ('*', False), ('nv*dia', False), ('libnv**', False), ('nvidia-\n*', False),
    ('nvidia-*\n', False), ('Nvidia', False), ('', False),
])
def test_a_pinned_package_is_a_name_or_a_prefix_glob(name, valid):
    if valid:
        assert sources.render_pin([name], '580.95.05-*').startswith('Package: %s\n' % name)
    else:
        with pytest.raises(ValueError, match='not a valid package'):
            sources.render_pin([name], '580.95.05-*')
