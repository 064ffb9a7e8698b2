"""Unit tests of the nvidia_driver role's target-side helper
(roles/nvidia_driver/files/gpuops_nvidia_repo.py): dpkg version order, apt sources
parsing, the Debian non-free stanzas, and the version decision (cases in
data/nvidia_driver_decide.yml)."""

import importlib.util
import json
import os
import sys

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SCRIPT = os.path.join(REPO, "roles", "nvidia_driver", "files", "gpuops_nvidia_repo.py")

_spec = importlib.util.spec_from_file_location("gpuops_nvidia_repo", SCRIPT)
helper = importlib.util.module_from_spec(_spec)
sys.dont_write_bytecode, _saved = True, sys.dont_write_bytecode
_spec.loader.exec_module(helper)
sys.dont_write_bytecode = _saved

with open(os.path.join(HERE, "data", "nvidia_driver_decide.yml")) as _fh:
    DECIDE = yaml.safe_load(_fh)["cases"]

COMPONENTS = ["contrib", "non-free", "non-free-firmware"]


@pytest.mark.parametrize("older,newer", [
    ("535.261.03-1", "535.309.01-0+deb12u1"),
    ("580.95.05-1", "580.105.08-1"),
    ("1.0~rc1-1", "1.0-1"),
    ("2.0-1", "1:1.0-1"),
    ("535.171.04-1~deb12u1", "535.171.04-1"),
    ("580.95.05-1", "580.95.05-1+gpuops.testdouble"),
    ("5.14.0-427.el9", "5.14.0-503.el9"),
    ("1.2a-1", "1.2b-1"),
])
def test_dpkg_version_order(older, newer):
    assert helper.compare_versions(older, newer) < 0
    assert helper.compare_versions(newer, older) > 0
    assert helper.compare_versions(newer, newer) == 0
    assert helper.sort_desc([older, newer, older]) == [newer, older]


@pytest.mark.parametrize("version,upstream,branch", [
    ("535.309.01-0+deb12u1", "535.309.01", 535),
    ("1:580.95.05-1", "580.95.05", 580),
    ("580.105.08", "580.105.08", 580),
    ("1000.1.2-1ubuntu1", "1000.1.2", 1000),
])
def test_upstream_and_branch(version, upstream, branch):
    assert helper.upstream_of(version) == upstream
    assert helper.branch_of(version) == branch


def test_one_line_and_deb822_sources(tmp_path):
    etc = tmp_path / "etc" / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "sources.list").write_text(
        "# comment\n"
        "deb http://mirror.example/debian bookworm main contrib # trailing\n"
        "deb-src http://mirror.example/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/usr/share/keyrings/x.gpg] http://mirror.example/debian bookworm-updates main\n"
        "not a source line\n")
    (etc / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\n"
        "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n")
    (etc / "sources.list.d" / "inline.sources").write_text(
        "Types: deb\nURIs: http://inline.example/x\nSuites: /\nSigned-By:\n"
        " -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n AAAA\n -----END PGP PUBLIC KEY BLOCK-----\n")
    (etc / "sources.list.d" / "gpuops-nvidia-debian.sources").write_text(
        "Types: deb\nURIs: http://own.example/debian\nSuites: bookworm\nComponents: non-free\n")
    entries = helper.read_apt_sources(str(tmp_path))
    files = sorted(set(e["file"] for e in entries))
    assert "/etc/apt/sources.list.d/gpuops-nvidia-debian.sources" not in files, "the role's own file is read"
    first = entries[0]
    assert (first["types"], first["uris"], first["suites"], first["components"]) == (
        ["deb"], ["http://mirror.example/debian"], ["bookworm"], ["main", "contrib"])
    assert entries[2]["signed_by"] == "/usr/share/keyrings/x.gpg"
    disabled = [e for e in entries if e["uris"] == ["http://off.example/debian"]]
    assert disabled and disabled[0]["enabled"] is False
    inline = [e for e in entries if e["uris"] == ["http://inline.example/x"]][0]
    assert inline["signed_by"] == ("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nAAAA\n"
                                   "-----END PGP PUBLIC KEY BLOCK-----")
    text = helper.render_deb822([{"uri": "http://x/", "suites": ["/"], "components": [],
                                  "signed_by": inline["signed_by"]}])
    assert "Signed-By: -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n AAAA\n" in text
    assert helper._deb822_entries(text, "x")[0]["signed_by"] == inline["signed_by"]


def _entry(uri, suite, comps, signed=None, kind="deb", enabled=True):
    return {"file": "/etc/apt/sources.list.d/debian.sources", "types": [kind], "uris": [uri],
            "suites": [suite], "components": comps, "signed_by": signed, "enabled": enabled}


def test_debian_stanzas_add_only_missing_components_to_the_hosts_archive():
    key = "/usr/share/keyrings/debian-archive-keyring.pgp"
    entries = [
        _entry("http://m.example/debian", "trixie", ["main"], key),
        _entry("http://m.example/debian/", "trixie-updates", ["main"], key),
        _entry("http://m.example/debian-security", "trixie-security", ["main", "non-free-firmware"], key),
        _entry("http://docker.example/linux/debian", "trixie", ["stable"]),
        _entry("http://m.example/debian", "trixie-backports", ["main"], key),
        _entry("http://m.example/debian", "bookworm", ["main"], key),
        _entry("http://off.example/debian", "trixie", ["main"], key, enabled=False),
    ]
    missing, full, files = helper.debian_stanzas(entries, "trixie", COMPONENTS)
    assert files == ["/etc/apt/sources.list.d/debian.sources"]
    assert missing == [
        {"uri": "http://m.example/debian-security/", "suites": ["trixie-security"],
         "components": ["contrib", "non-free"], "signed_by": key},
        {"uri": "http://m.example/debian/", "suites": ["trixie", "trixie-updates"],
         "components": COMPONENTS, "signed_by": key},
    ]
    assert [s["components"] for s in full] == [COMPONENTS, COMPONENTS]
    assert [s["suites"] for s in full] == [["trixie-security"], ["trixie", "trixie-updates"]]


def test_debian_stanzas_nothing_missing_and_no_archive():
    entries = [_entry("http://m.example/debian", "bookworm", ["main"] + COMPONENTS)]
    missing, full, dummy = helper.debian_stanzas(entries, "bookworm", COMPONENTS)
    assert missing == [] and len(full) == 1
    assert helper.debian_stanzas([_entry("http://x/", "bookworm", ["stable"])], "bookworm", COMPONENTS)[1] == []


def test_debian_stanzas_with_a_given_mirror_ignore_the_host():
    missing, full, files = helper.debian_stanzas(
        [_entry("http://m.example/debian", "bookworm", ["main"])], "bookworm", COMPONENTS,
        mirror="http://local.example/debian/", keyring="/k.gpg")
    assert files == []
    assert missing == full == [{"uri": "http://local.example/debian/", "suites": ["bookworm", "bookworm-updates"],
                                "components": COMPONENTS, "signed_by": "/k.gpg"}]


def test_parse_madison_and_fingerprints():
    out = ("nvidia-smi | 535.309.01-0+deb12u1 | http://m/debian-security bookworm-security/non-free amd64 Packages\n"
           "nvidia-smi | 535.261.03-1 | http://m/debian bookworm/non-free amd64 Packages\n"
           "  libcuda1 | 535.261.03-1 | http://m/debian bookworm/non-free amd64 Packages\n"
           "  libcuda1 | 535.261.03-1 | http://m/debian bookworm/non-free i386 Packages\n"
           "nvidia-graphics-drivers | 535.261.03-1 | http://m/debian bookworm/non-free Sources\n")
    assert helper.parse_madison(out) == {"nvidia-smi": ["535.309.01-0+deb12u1", "535.261.03-1"],
                                         "libcuda1": ["535.261.03-1"]}
    colons = ("pub:-:255:22:4B2B3FB657533A95:1735689600:::-:::scESC::::::23::0:\n"
              "fpr:::::::::612F6B38E555C102747DA70C4B2B3FB657533A95:\n"
              "uid:-::::1735689600::X::lab <lab@x>::::::::::0:\n"
              "sub:-:255:18:AAAA:1735689600::::::e::::::23:\n"
              "fpr:::::::::BBBB0000BBBB0000BBBB0000BBBB0000BBBB0000:\n")
    assert helper.parse_fingerprints(colons) == ["612F6B38E555C102747DA70C4B2B3FB657533A95"]


@pytest.mark.parametrize("case", DECIDE, ids=[c["id"] for c in DECIDE])
def test_decide(case):
    versions = case["versions"]
    result = helper.decide(case["request"], versions, case.get("installed") or {})
    expect = case["expect"]
    for key in ("target", "pinned", "change", "held", "keep", "problems"):
        if key in expect:
            assert result[key] == expect[key], key
    if "problems_contain" in expect:
        text = " | ".join(result["problems"])
        assert result["problems"], "no problem reported"
        for part in expect["problems_contain"]:
            assert part in text, (part, text)


def test_main_answers_json_even_on_bad_input(monkeypatch, capsys):
    monkeypatch.setenv(helper.ENV, "{not json")
    assert helper.main(["resolve"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["ok"] is False and helper.ENV in answer["error"]
    assert helper.main(["frobnicate"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is False


def test_keyring_checks_checksum_and_fingerprint(tmp_path):
    key = tmp_path / "key.asc"
    key.write_bytes(b"not really a key")
    sha = helper._sha256(str(key))
    work = tmp_path / "w"
    work.mkdir()
    dest, got, fprs = helper.fetch_keyring({"url": "file://%s" % key, "name": "k.asc", "sha256": "sha256:" + sha},
                                           str(work))
    assert got == sha and fprs == [] and open(dest, "rb").read() == b"not really a key"
    with pytest.raises(RuntimeError, match="expected"):
        helper.fetch_keyring({"url": "file://%s" % key, "name": "k2.asc", "sha256": "0" * 64}, str(work))


with open(os.path.join(HERE, "data", "nvidia_driver_activation.yml")) as _fh:
    ACTIVATION = yaml.safe_load(_fh)["cases"]


@pytest.mark.parametrize("case", ACTIVATION, ids=[c["id"] for c in ACTIVATION])
def test_activation(case):
    result = helper.decide_activation(case["target"], case["state"])
    expect = case["expect"]
    assert result["action"] == expect["action"]
    assert result["services_start"] is expect["services_start"]
    for part in expect.get("reason_contains", []):
        assert part in result["reason"], (part, result["reason"])
