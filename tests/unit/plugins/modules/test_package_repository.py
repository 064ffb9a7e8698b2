"""gpuops.dlserver.__private.package_repository, the one way a role adds a repository, and the key trust of
EVERY role that trusts a key: each include of roles/common/tasks/package_repo.yml found in the roles
(dcgm_exporter, cuda_toolkit, ...), each read module's repository option (nvidia_container_toolkit's
resolve, dcgm_exporter's host read) and nvidia_driver's CUDA key are run against a key
file holding a second key (real gpg): refused without a fingerprint, naming the role's variable;
with one, only that key reaches the Signed-By keyring."""
import glob
import hashlib
import os
import re
import shutil
import subprocess

import pytest
import yaml
from ansible.module_utils.testing import patch_module_args

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_resolve
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_trust
from ansible_collections.gpuops.dlserver.plugins.modules.__private import package_repository as mod
from module_harness import ExitJson, FailJson

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
pytestmark = pytest.mark.skipif(not shutil.which("gpg"), reason="needs gpg")


# role read modules that check their repository in their own round trip (option ``repository``:
# the same options and library as package_repository)
READ_MODULES_WITH_A_REPOSITORY = ("gpuops.dlserver.__private.nvidia_container_toolkit_host",
                                  "gpuops.dlserver.__private.dcgm_exporter_host")
ROLE_VAR_RE = re.compile(r"\{\{ *(__[a-z0-9_]+) *(?:if [^}]*)?\}\}")


def resolved(role, spec):
    """The repository spec itself: a task may name it by a role variable (``{{ __<role>_repository }}``,
    alone or under a condition), defined once in the role's vars/main.yml."""
    if isinstance(spec, dict):
        return spec
    found = ROLE_VAR_RE.fullmatch(" ".join(str(spec).split()))
    assert found, "%s: the repository spec %r is neither a mapping nor one role variable" % (role, spec)
    with open(os.path.join(REPO, "roles", role, "vars", "main.yml")) as handle:
        return yaml.safe_load(handle)[found.group(1)]


def repo_includes():
    """(role, task file, repository spec) of every include or import of common's package_repo.yml
    (its __common_repo) and of every read module's ``repository`` option."""
    found = []
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml"))):
        role = path.split(os.sep)[-3]

        def walk(tasks):
            for task in tasks or []:
                if "block" in task:
                    walk(task["block"])
                inc = task.get("ansible.builtin.include_role") or task.get("ansible.builtin.import_role") or {}
                if inc.get("tasks_from") == "package_repo.yml":
                    found.append((role, os.path.basename(path), resolved(role, task["vars"]["__common_repo"])))
                for name in READ_MODULES_WITH_A_REPOSITORY:
                    if "repository" in (task.get(name) or {}):
                        found.append((role, os.path.basename(path), resolved(role, task[name]["repository"])))
        with open(path) as handle:
            walk(yaml.safe_load(handle))
    return found


INCLUDES = repo_includes()


def test_the_roles_that_trust_a_key_use_the_shared_helper():
    assert sorted(set(r for r, dummy, dummy2 in INCLUDES)) == ["cuda_toolkit", "dcgm_exporter", "nvidia_container_toolkit"]
    # No role downloads a key and string-matches gpg's output itself any more.
    for path in glob.glob(os.path.join(REPO, "roles", "*", "tasks", "*.yml")):
        with open(path) as handle:
            text = handle.read()
        assert "--show-keys" not in text and "Signed-By:" not in text, path


def run(args):
    with patch_module_args(args):
        with pytest.raises((ExitJson, FailJson)) as exc:
            mod.main()
    return exc.type, exc.value.args[0]


def args_for(repo, key_url, fingerprint="", sha256="", tmp_path=None):
    key = dict(repo["key"], url=key_url, fingerprint=fingerprint, sha256=sha256)
    return {"url": "https://mirror.example/repo/", "url_var": repo.get("url_var", "URL"), "key": key,
            "keyring_file": str(tmp_path / "keyring.asc"), "sources_file": str(tmp_path / "x.sources")}


@pytest.mark.parametrize("role,task_file,repo", INCLUDES, ids=["%s/%s" % (r, t) for r, t, dummy in INCLUDES])
def test_two_key_file_refused_without_a_fingerprint(two_key_file, tmp_path, role, task_file, repo):
    path, fprs = two_key_file
    sha = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    kind, result = run(args_for(repo, "file://%s" % path, sha256=sha, tmp_path=tmp_path))
    assert kind is FailJson
    assert "carries 2 keys" in result["msg"] and fprs[1] in result["msg"]
    assert repo["key"].get("fingerprint_var", "the key fingerprint") in result["msg"]


@pytest.mark.parametrize("role,task_file,repo", INCLUDES, ids=["%s/%s" % (r, t) for r, t, dummy in INCLUDES])
def test_two_key_file_exports_only_the_wanted_key(two_key_file, tmp_path, role, task_file, repo):
    path, fprs = two_key_file
    kind, result = run(args_for(repo, "file://%s" % path, fingerprint=fprs[0], tmp_path=tmp_path))
    assert kind is ExitJson, result.get("msg")
    assert result["keyring"]["fingerprints"] == [fprs[0]] and result["keyring"]["dropped"] == [fprs[1]]
    keyring = [f for f in result["files"] if f["dest"].endswith("keyring.asc")][0]
    shown = tmp_path / "shown.asc"
    shown.write_text(keyring["content"])
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    out = subprocess.run(["gpg", "--homedir", str(home), "--batch", "--with-colons", "--show-keys", str(shown)],
                         check=True, capture_output=True).stdout.decode()
    assert fprs[0] in out and fprs[1] not in out
    sources = [f for f in result["files"] if f["dest"].endswith("x.sources")][0]["content"]
    assert "Signed-By: %s\n" % (tmp_path / "keyring.asc") in sources


@pytest.mark.parametrize("role,task_file,repo", INCLUDES, ids=["%s/%s" % (r, t) for r, t, dummy in INCLUDES])
def test_plain_http_key_needs_a_fingerprint_or_checksum(tmp_path, role, task_file, repo):
    # issue 37: a pinned fingerprint verifies a key over plain http; with neither it is refused
    kind, result = run(args_for(repo, "http://mirror.example/key.asc", fingerprint="", tmp_path=tmp_path))
    assert kind is FailJson and "plain http" in result["msg"] and repo["key"]["checksum_var"] in result["msg"]
    assert repo["key"]["fingerprint_var"] in result["msg"]


def test_nvidia_drivers_cuda_key_refuses_a_two_key_file(two_key_file, tmp_path):
    path, fprs = two_key_file
    url, spec = driver_resolve.cuda_key({"url": "https://mirror.example/cuda/debian13/x86_64/",
                                         "key_url": "file://%s" % path, "fingerprint": "",
                                         "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}, True)
    host = repo_trust.Host(type("M", (), {"get_bin_path": staticmethod(shutil.which)})())
    host.run = lambda args, check=True, what=None, env=None: _run(args, check, what, env)
    with pytest.raises(repo_trust.Failure) as err:
        repo_trust.fetch_key(host, spec, str(tmp_path))
    assert "carries 2 keys" in err.value.msg and "gpuops_cuda_repo_key_fingerprint" in err.value.msg


def _run(args, check, what, env):
    proc = subprocess.run(args, capture_output=True, check=False, env=dict(os.environ, **(env or {})))
    if check and proc.returncode:
        raise repo_trust.Failure("%s failed" % what, rc=proc.returncode, stderr=proc.stderr.decode())
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_another_sources_file_naming_the_url_is_used_as_it_is(tmp_path, monkeypatch):
    from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_files
    own = str(tmp_path / "gpuops-dcgm.sources")
    files = {"/etc/apt/sources.list.d/gpuops-nvidia-cuda.sources":
             "Types: deb\nURIs: https://mirror.example/repo/\nSuites: /\nSigned-By: /etc/apt/keyrings/x.asc\n"}
    spec = {"url": "https://mirror.example/repo", "key": {"url": "https://mirror.example/k", "sha256": "",
            "fingerprint": "A" * 40}, "keyring_file": "/etc/apt/keyrings/gpuops-dcgm.asc", "sources_file": own,
            "skip_if_configured": True}
    result = repo_files.run(None, spec, read_sources=lambda host: files)
    assert result["files"] == [] and result["configured_by"] == list(files)


@pytest.mark.parametrize("field,value", [("url", "https://mirror.example/repo\nSigned-By: /tmp/evil"),
                                         ("suites", ["stable\nComponents: evil"]),
                                         ("components", ["main\n"])])
def test_a_newline_never_reaches_the_sources_file(tmp_path, field, value):
    args = {"url": "https://mirror.example/repo/", "key": {"url": "https://mirror.example/k", "fingerprint": "A" * 40},
            "keyring_file": str(tmp_path / "k.asc"), "sources_file": str(tmp_path / "x.sources")}
    args[field] = value
    kind, result = run(args)
    assert kind is FailJson and "not a valid" in result["msg"]


@pytest.mark.skipif(os.geteuid() != 0, reason="the files a role writes are root's")
def test_files_say_whether_the_host_has_them_already(two_key_file, tmp_path):
    """The converged fast path: the role writes only the files the module found not current."""
    path, fprs = two_key_file
    repo = INCLUDES[0][2]
    args = args_for(repo, "file://%s" % path, fingerprint=fprs[0], tmp_path=tmp_path)
    kind, first = run(args)
    assert kind is ExitJson, first.get("msg")
    assert [f["current"] for f in first["files"]] == [False, False] and first["current"] is False
    for f in first["files"]:                  # what the role's copy task leaves
        with open(f["dest"], "w") as handle:
            handle.write(f["content"])
        os.chmod(f["dest"], 0o644)
    kind, second = run(args)
    assert [f["current"] for f in second["files"]] == [True, True] and second["current"] is True
    os.chmod(str(tmp_path / "x.sources"), 0o600)           # a mode changed by hand is written again
    kind, third = run(args)
    assert {os.path.basename(f["dest"]): f["current"] for f in third["files"]} == {"keyring.asc": True,
                                                                                   "x.sources": False}
    assert third["current"] is False


@pytest.mark.skipif(os.geteuid() != 0, reason="the files are written root-owned")
def test_write_renders_and_writes_the_files_on_the_host(two_key_file, tmp_path):
    """write: the files not current are written here (check mode: none), and a second run changes nothing."""
    path, fprs = two_key_file
    args = dict(args_for(INCLUDES[0][2], "file://%s" % path, fingerprint=fprs[0], tmp_path=tmp_path), write=True)
    kind, read = run(dict(args, write=False))
    kind, checked = run(dict(args, _ansible_check_mode=True, _ansible_diff=True))
    assert kind is ExitJson and checked["changed"] and [d["after"] for d in checked["diff"]] == [
        f["content"] for f in read["files"]]
    assert not (tmp_path / "x.sources").exists(), "check mode wrote"
    kind, written = run(args)
    assert written["changed"] and [f["changed"] for f in written["files"]] == [True, True]
    assert (tmp_path / "x.sources").read_text() == read["files"][1]["content"]
    kind, again = run(args)
    assert again["changed"] is False and again["current"] is True and [f["changed"] for f in again["files"]] == [False, False]
