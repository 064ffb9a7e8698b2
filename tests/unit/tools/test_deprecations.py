"""tools/deprecations.py: the deprecation warnings of ansible-core 2.21 output, whose they are, and
the allow-list. The fixtures under data/deprecations/ are real ansible-core 2.21.5 output (each
file's SOURCE line says how it was made)."""
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DATA = os.path.join(os.path.dirname(__file__), "data", "deprecations")
SPEC = importlib.util.spec_from_file_location("deprecations", os.path.join(ROOT, "tools", "deprecations.py"))
dep = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(dep)

INJECT = ("INJECT_FACTS_AS_VARS default to `True` is deprecated, top-level facts will not be auto injected after "
          "the change. This feature will be removed from ansible-core version 2.24.")
NULL_REPR = ("DEFAULT_NULL_REPRESENTATION option. Reason: This option is no longer used in the Ansible Core code base. "
             "Alternatives: There is no alternative at the moment. A different mechanism would have to be implemented "
             "in the current code base. This feature will be removed from ansible-core version 2.23.")
# The tiny plays were run under /tmp/i35dep; the collection's tree there is a copy of its layout.
OUTSIDE_ROOTS = ["/nonexistent-checkout"]


def lines(name):
    with open(os.path.join(DATA, name), encoding="utf-8") as fh:
        text = fh.read().splitlines(True)
    assert text[0].startswith("SOURCE: ansible [core 2.21.5]")
    return text


@pytest.mark.parametrize("name, expected", [
    ("inject_outside.txt", [(INJECT, "/tmp/i35dep/play.yml:11:14")]),
    ("ansible_log.txt", [(INJECT, "/tmp/i35dep/play.yml:11:14")]),
    ("inject_collection_tree.txt",
     [(INJECT, "/tmp/i35dep/ansible_collections/gpuops/dlserver/playbooks/inject.yml:11:14")]),
    ("config_setting.txt", [(NULL_REPR, None), (INJECT, "/tmp/i35dep/play.yml:11:14")]),
])
def test_parse_real_output(name, expected):
    assert [tuple(d) for d in dep.parse(lines(name))] == expected


def test_parse_molecule_wrapped_output():
    """molecule 26 frames ansible-playbook's output ("  │ ", colours) and wraps it at 80 columns,
    the origin's path cut mid-word: joined again."""
    found = dep.parse(lines("molecule_wrapped.txt"))
    assert found and all(d.message == INJECT for d in found)
    assert found[0].origin == ("/work/wt-i35-matrix2/.cache/collections/ansible_collections/gpuops/dlserver/"
                               "roles/common/tasks/probe.yml:18:9")
    assert all(d.origin and dep.origin_path(d.origin).endswith(".yml") for d in found)


def test_no_deprecation_no_failure():
    text = ["PLAY [x] ***\n", "[WARNING]: Deprecation warnings can be disabled by setting x\n",
            "ok: [localhost]\n", "  from cryptography.hazmat.primitives.asymmetric.dsa import (\n"]
    assert dep.parse(text) == []
    result = dep.judge([], [], OUTSIDE_ROOTS)
    assert result == {"failures": [], "allowed": [], "unused": []}


@pytest.mark.parametrize("origin, message, roots, own", [
    # in the checkout (the collection link resolves into it) or in any tree of the collection
    (os.path.join(ROOT, "roles", "common", "tasks", "probe.yml") + ":18:9", INJECT, [ROOT], True),
    (os.path.join(ROOT, ".cache", "collections", "ansible_collections", "gpuops", "dlserver", "roles", "x.yml") + ":1:1",
     INJECT, OUTSIDE_ROOTS, True),
    ("/tmp/i35dep/ansible_collections/gpuops/dlserver/playbooks/inject.yml:11:14", INJECT, OUTSIDE_ROOTS, True),
    # a message that names the collection, whatever the origin
    (None, "gpuops.dlserver.gpu_facts returns x, deprecated", OUTSIDE_ROOTS, True),
    # elsewhere, or no origin: third-party
    ("/tmp/i35dep/play.yml:11:14", INJECT, [ROOT], False),
    (None, NULL_REPR, [ROOT], False),
    # ansible-core's "<unknown>" (a template whose source it lost) is no path, not the checkout's
    # "<unknown>" relative to the working directory: no origin (seen in nvidia_driver@newest)
    ("<unknown>", "While processing '<<container>>': " + INJECT, [os.getcwd()], False),
    ("roles/x.yml:1:1", INJECT, [os.getcwd()], False),
    # a sibling directory whose name starts like the checkout's is not in it
    (ROOT + "-other/roles/x.yml:1:1", INJECT, [ROOT], False),
])
def test_is_own(origin, message, roots, own):
    assert dep.is_own(dep.Deprecation(message, origin), roots)[0] is own


def test_collection_deprecations_fail_even_when_allow_listed(tmp_path):
    allow = tmp_path / "allow.yml"
    allow.write_text("- {message: 'INJECT_FACTS_AS_VARS', reason: 'would hide our own reads'}\n")
    found = dep.parse(lines("inject_collection_tree.txt"))
    result = dep.judge(found, dep.load_allow(str(allow)), OUTSIDE_ROOTS)
    assert len(result["failures"]) == 1 and result["failures"][0]["own"]
    assert "the allow-list cannot excuse the collection's own code" in result["failures"][0]["why"]
    assert result["unused"] == ["would hide our own reads"]


def test_third_party_needs_an_allow_list_entry(tmp_path):
    found = dep.parse(lines("config_setting.txt"))
    result = dep.judge(found, [], OUTSIDE_ROOTS)
    assert [f["origin"] for f in result["failures"]] == [None, "/tmp/i35dep/play.yml:11:14"]
    allow = tmp_path / "allow.yml"
    allow.write_text("- message: '^DEFAULT_NULL_REPRESENTATION option\\.'\n"
                     "  reason: set by the environment, not by the collection\n")
    result = dep.judge(found, dep.load_allow(str(allow)), OUTSIDE_ROOTS)
    assert [f["message"] for f in result["failures"]] == [INJECT]
    assert [a["message"] for a in result["allowed"]] == [NULL_REPR]
    assert result["allowed"][0]["why"] == "allowed: set by the environment, not by the collection"
    assert result["unused"] == []


def test_the_same_deprecation_is_counted_once_per_origin():
    text = lines("inject_outside.txt") + lines("ansible_log.txt") + lines("inject_collection_tree.txt")
    result = dep.judge(dep.parse(text), [], OUTSIDE_ROOTS)
    assert [(f["origin"], f["count"]) for f in result["failures"]] == [
        ("/tmp/i35dep/play.yml:11:14", 2),
        ("/tmp/i35dep/ansible_collections/gpuops/dlserver/playbooks/inject.yml:11:14", 1)]


@pytest.mark.parametrize("content, error", [
    ("{message: x, reason: y}\n", "a YAML list"),
    ("- {message: x}\n", "exactly the keys"),
    ("- {message: x, reason: y, extra: z}\n", "exactly the keys"),
    ("- {message: x, reason: ' '}\n", "has no reason"),
    ("- {message: '', reason: y}\n", "non-empty regular expression"),
    ("- {message: '(', reason: y}\n", "not a regular expression"),
    ("- {message: [x], reason: y}\n", "non-empty regular expression"),
])
def test_bad_allow_list_is_refused(tmp_path, content, error):
    allow = tmp_path / "allow.yml"
    allow.write_text(content)
    with pytest.raises(ValueError, match=error):
        dep.load_allow(str(allow))


def test_the_shipped_allow_list_loads_and_excuses_nothing_of_ours():
    entries = dep.load_allow(os.path.join(ROOT, "tests", "deprecations_allowed.yml"))
    for rx, reason in entries:
        assert reason and not rx.search(INJECT), "INJECT_FACTS_AS_VARS is the collection's to fix: %s" % reason


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools", "deprecations.py")] + list(args),
                          input=stdin, capture_output=True, text=True, check=False)


def test_command_line(tmp_path):
    failed = run_cli("--root", OUTSIDE_ROOTS[0], os.path.join(DATA, "config_setting.txt"))
    assert failed.returncode == 1
    assert failed.stdout.startswith("deprecations: FAILED: 2 deprecation warning(s), 2 printed in all")
    assert "(no origin) [1x] DEFAULT_NULL_REPRESENTATION option." in failed.stdout
    assert "/tmp/i35dep/play.yml:11:14 [1x] INJECT_FACTS_AS_VARS" in failed.stdout
    clean = tmp_path / "clean.txt"
    clean.write_text("PLAY RECAP ***\nlocalhost : ok=2 changed=0\n")
    passed = run_cli("--allow", os.path.join(ROOT, "tests", "deprecations_allowed.yml"), str(clean))
    assert passed.returncode == 0 and passed.stdout.startswith("deprecations: passed")
    piped = run_cli("-", stdin="".join(lines("inject_outside.txt")))
    assert piped.returncode == 1
    assert run_cli(str(tmp_path / "missing.txt")).returncode == 2
    bad = tmp_path / "bad.yml"
    bad.write_text("- {message: x}\n")
    refused = run_cli("--allow", str(bad), str(clean))
    assert refused.returncode == 2 and "exactly the keys" in refused.stderr


def test_an_unknown_origin_is_not_attributed_to_the_checkout():
    """In the nvidia_driver@newest log, site.yml's own deprecation and, right after it, one whose
    origin ansible-core lost ("Origin: <unknown>"): the first is the collection's, the second has
    no file, so it is third-party and fails unless allow-listed (it is not)."""
    found = dep.parse(lines("molecule_log_unknown_origin.txt"))
    assert [(d.origin, d.message) for d in found] == [
        ("/work/wt-i35-matrix2/playbooks/site.yml:41:18", INJECT),
        ("<unknown>", "While processing '<<container>>': " + INJECT)]
    result = dep.judge(found, [], ["/work/wt-i35-matrix2"])
    assert [f["own"] for f in result["failures"]] == [True, False]
    assert result["failures"][1]["why"].startswith("ansible-core names no file as its origin (<unknown>)")
