"""gpuops.dlserver.__private.status_file's action: the host asked once per run, the rest answered here."""
import json
import os
import stat

import pytest

from ansible_collections.gpuops.dlserver.plugins.action.__private.status_file import current, known_states, run_id, wanted
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.files import file_states, text_digest
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.status import record_text

PLAN = {"driver": {"branch": {"value": "570", "from": "newest"}}, "roles": {}}
STATUS = {"run": True, "reason": "every host runs node_exporter"}


def test_run_id_has_the_start_time_of_the_process(tmp_path):
    (tmp_path / "4242").mkdir()
    fields = ["S"] + [str(n) for n in range(4, 22)] + ["987654"] + ["0"] * 10
    (tmp_path / "4242" / "stat").write_text("4242 (ansible-playbook) %s\n" % " ".join(fields))
    assert run_id(4242, str(tmp_path)) == "4242-987654"
    # no /proc entry (another system): the pid alone
    assert run_id(4343, str(tmp_path)) == "4343-"
    assert run_id().startswith("%d-" % os.getppid())


@pytest.mark.parametrize("args,paths", [
    ({"path": "/etc/gpuops/a.json", "status": STATUS, "plan": PLAN}, ["/etc/gpuops/a.json", "/etc/gpuops/plan.json"]),
    ({"plan": PLAN, "plan_path": "/srv/plan.json"}, ["/srv/plan.json"]),
    # a plan left to the driver source is not recorded
    ({"path": "/etc/gpuops/a.json", "status": STATUS, "plan": {"driver": {"branch": {"from": "source"}}}},
     ["/etc/gpuops/a.json"]),
])
def test_wanted(args, paths):
    files = wanted(args)
    assert [path for path, _text in files] == paths
    assert files[0][1] == record_text(STATUS if "status" in args else PLAN)


@pytest.mark.parametrize("args", [
    {"path": "relative.json", "status": STATUS},
    {"path": "/etc/gpuops/$HOME.json", "status": STATUS},
    {"path": "~/a.json", "status": STATUS},
    {"path": "/etc/gpuops/a.json", "status": ["not", "a", "dict"]},
    {"plan": ["not", "a", "plan"]},
    {"path": "/etc/gpuops/a.json", "status": {"not json": object()}},
], ids=["relative", "dollar", "tilde", "status-list", "plan-list", "not-json"])
def test_what_cannot_be_told_here_asks_the_host(args):
    assert wanted(args) is None


def test_current_needs_every_file_with_its_bytes_and_attributes():
    files = [("/etc/gpuops/a.json", "x\n"), ("/etc/gpuops/plan.json", "y\n")]
    known = {"/etc/gpuops/a.json": {"sha256": text_digest("x\n"), "attrs": True},
             "/etc/gpuops/plan.json": {"sha256": text_digest("y\n"), "attrs": True}}
    assert current(known, files)
    assert not current(dict(known, **{"/etc/gpuops/plan.json": {"sha256": text_digest("y\n"), "attrs": False}}), files)
    assert not current(dict(known, **{"/etc/gpuops/a.json": {"sha256": text_digest("z\n"), "attrs": True}}), files)
    assert not current({"/etc/gpuops/a.json": known["/etc/gpuops/a.json"]}, files)


def test_file_states(tmp_path):
    (tmp_path / "a.json").write_text("x\n")
    os.chmod(str(tmp_path / "a.json"), 0o644)
    (tmp_path / "b.json").write_text("y\n")
    os.chmod(str(tmp_path / "b.json"), 0o600)
    (tmp_path / "c.txt").write_text("not json\n")
    (tmp_path / ".a.json.tmp.json").write_text("half\n")
    os.symlink(str(tmp_path / "a.json"), str(tmp_path / "link.json"))
    uid, gid = os.getuid(), os.getgid()
    states = file_states([str(tmp_path), str(tmp_path / "missing")], uid=uid, gid=gid)
    assert states == {str(tmp_path / "a.json"): {"sha256": text_digest("x\n"), "attrs": True},
                      str(tmp_path / "b.json"): {"sha256": text_digest("y\n"), "attrs": False}}


PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - name: first
      gpuops.dlserver.__private.status_file: {path: "{{ dir }}/a.json", status: {run: true}, plan: {roles: {}}, plan_path: "{{ dir }}/plan.json"}
      register: first
    - name: same bytes, another role's file not written yet
      gpuops.dlserver.__private.status_file: {path: "{{ dir }}/b.json", status: {run: false}, plan: {roles: {}}, plan_path: "{{ dir }}/plan.json"}
      register: second
    - name: same bytes again
      gpuops.dlserver.__private.status_file: {path: "{{ dir }}/b.json", status: {run: false}, plan: {roles: {}}, plan_path: "{{ dir }}/plan.json"}
      register: third
    - name: other bytes
      gpuops.dlserver.__private.status_file: {path: "{{ dir }}/a.json", status: {run: false}, plan: {roles: {}}, plan_path: "{{ dir }}/plan.json"}
      register: fourth
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ runs | map(attribute='asked_host') | list | to_json }}|{{ runs | map(attribute='changed') | list | to_json }}"
      vars:
        runs: "{{ [first, second, third, fourth] }}"
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the module writes root-owned files")
def test_one_round_trip_per_run_and_a_new_run_trusts_nothing(tmp_path, run_play):
    files = tmp_path / "gpuops"
    cache = tmp_path / "facts"
    os.environ["ANSIBLE_CACHE_PLUGIN"], os.environ["ANSIBLE_CACHE_PLUGIN_CONNECTION"] = "jsonfile", str(cache)
    try:
        res = run_play(tmp_path, PLAY, None, "dir=%s" % files)
        assert res.returncode == 0, res.stdout + res.stderr
        asked, changed = (json.loads(part) for part in (tmp_path / "out.json").read_text().split("|"))
        # asked: the first (nothing seen yet), the second (b.json not there yet), not the third,
        # the fourth (other bytes); the third changed nothing and asked nothing
        assert asked == [True, True, False, True] and changed == [True, True, False, True]
        assert json.loads((files / "a.json").read_text()) == {"run": False}
        assert stat.S_IMODE(os.stat(str(files / "a.json")).st_mode) == 0o644
        cached = [path.read_text() for path in cache.iterdir() if path.name.endswith("localhost")]
        assert cached and "__gpuops_status_files" in cached[0], "the digests went to the fact cache"
        # a later run begins with b.json, which the fact cache still holds with the bytes that
        # run wrote: those digests are another run's, so the file edited in between is repaired
        (files / "b.json").write_text('{"run": "edited by hand"}\n')
        head = PLAY.split("    - name: first", maxsplit=1)[0]
        again = PLAY.split("    - name: same bytes again", maxsplit=1)[1].split("    - name: other bytes", maxsplit=1)[0]
        later = (head + "    - name: same bytes again" + again + "    - ansible.builtin.copy:\n        dest: \"{{ out }}\"\n"
                 "        content: \"{{ [third.asked_host, third.changed] | to_json }}\"\n")
        res = run_play(tmp_path, later, None, "dir=%s" % files)
        assert res.returncode == 0, res.stdout + res.stderr
        assert json.loads((tmp_path / "out.json").read_text()) == [True, True]
        assert json.loads((files / "b.json").read_text()) == {"run": False}
    finally:
        del os.environ["ANSIBLE_CACHE_PLUGIN"], os.environ["ANSIBLE_CACHE_PLUGIN_CONNECTION"]


FACT_PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - gpuops.dlserver.__private.status_file: {path: "{{ dir }}/a.json", status: {run: true}, fact: a_status}
    - gpuops.dlserver.__private.status_file: {path: "{{ dir }}/a.json", status: {run: true}, fact: again_status}
      register: answered_here
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ [a_status, again_status, answered_here.asked_host] | to_json }}"
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the module writes root-owned files")
def test_the_status_is_published_as_the_fact_named_whether_or_not_the_host_was_asked(tmp_path, run_play):
    res = run_play(tmp_path, FACT_PLAY, None, "dir=%s" % (tmp_path / "gpuops"))
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == [{"run": True}, {"run": True}, False]


def test_a_fact_name_that_is_no_variable_name_fails(tmp_path, run_play):
    play = FACT_PLAY.replace("fact: a_status", 'fact: "a status"')
    res = run_play(tmp_path, play, None, "dir=%s" % (tmp_path / "gpuops"))
    assert res.returncode != 0
    assert "status_file: fact must be a variable name" in res.stdout + res.stderr
    assert not (tmp_path / "gpuops").exists()


def test_known_states_takes_only_what_file_states_returns():
    good = {"/etc/gpuops/plan.json": {"sha256": "a" * 64, "attrs": True}}
    assert known_states(good) == good
    assert known_states({}) == {}
    for bad in (None, "text", ["/etc/gpuops/plan.json"],
                {"relative.json": {"sha256": "a" * 64, "attrs": True}},
                {"/etc/gpuops/plan.json": {"sha256": "A" * 64, "attrs": True}},
                {"/etc/gpuops/plan.json": {"sha256": "a" * 64 + "\n", "attrs": True}},
                {"/etc/gpuops/plan.json": {"sha256": "a" * 63, "attrs": True}},
                {"/etc/gpuops/plan.json": {"sha256": "a" * 64, "attrs": "yes"}},
                {"/etc/gpuops/plan.json": {"sha256": "a" * 64}},
                {"/etc/gpuops/plan.json": "a" * 64}):
        assert known_states(bad) is None, bad


KNOWN_PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - name: first, with the digests another module read this run
      gpuops.dlserver.__private.status_file:
        {path: "{{ dir }}/a.json", status: {run: true}, plan: {roles: {}}, plan_path: "{{ dir }}/plan.json", known_files: "{{ known }}"}
      register: first
    - name: second, the same bytes
      gpuops.dlserver.__private.status_file:
        {path: "{{ dir }}/a.json", status: {run: true}, plan: {roles: {}}, plan_path: "{{ dir }}/plan.json", known_files: {}}
      register: second
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ [first.asked_host, first.changed, second.asked_host, second.changed] | to_json }}"
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the module writes root-owned files")
@pytest.mark.parametrize("case,expected", [
    # the files hold what would be written: neither call asks the host
    ("current", [False, False, False, False]),
    # the handed digests say a.json differs (edited by hand): the first call asks and repairs it,
    # the second is answered from what the first call read
    ("stale", [True, True, False, False]),
    # not the shape file_states returns: ignored, the host is asked
    ("malformed", [True, False, False, False]),
])
def test_known_files_answer_the_first_call_of_a_run(tmp_path, run_play, case, expected):
    files = tmp_path / "gpuops"
    res = run_play(tmp_path, KNOWN_PLAY, None, "dir=%s known={}" % files)
    assert res.returncode == 0, res.stdout + res.stderr
    known = file_states([str(files)])
    assert sorted(known) == [str(files / "a.json"), str(files / "plan.json")]
    if case == "stale":
        (files / "a.json").write_text('{"run": "edited by hand"}\n')
        known = dict(known, **{str(files / "a.json"): {"sha256": text_digest("{}\n"), "attrs": True}})
    elif case == "malformed":
        known = {str(files / "a.json"): "not a state"}
    extra = tmp_path / "known.json"
    extra.write_text(json.dumps({"dir": str(files), "known": known}))
    res = run_play(tmp_path, KNOWN_PLAY, None, "@%s" % extra)
    assert res.returncode == 0, res.stdout + res.stderr
    assert json.loads((tmp_path / "out.json").read_text()) == expected
    assert json.loads((files / "a.json").read_text()) == {"run": True}
