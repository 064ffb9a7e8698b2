"""playbooks/mirror.yml against localhost: fetch with checksum, index (gpuops.dlserver.mirror_index),
refuse bad input before anything is fetched."""
import hashlib
import os
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOK = os.path.join(REPO, "playbooks", "mirror.yml")
BIN = os.path.dirname(sys.executable)


def run_playbook(tmp_path, artifacts):
    import json
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps({"gpuops_mirror_dir": str(tmp_path / "mirror"),
                                 "gpuops_mirror_artifacts": artifacts}))
    env = dict(os.environ, ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"))
    return subprocess.run([os.path.join(BIN, "ansible-playbook"), PLAYBOOK, "-e", "@%s" % extra,
                           "-e", "ansible_python_interpreter=%s" % sys.executable],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def source(tmp_path):
    src = tmp_path / "vendor" / "pkg.deb"
    src.parent.mkdir()
    src.write_bytes(b"test double: not a real package\n")
    return src, hashlib.sha256(src.read_bytes()).hexdigest()


def test_fills_layout_and_index(tmp_path, source):
    src, digest = source
    res = run_playbook(tmp_path, [{"path": "files/vendor/pkg.deb", "url": src.as_uri(),
                                   "checksum": "sha256:" + digest}])
    assert res.returncode == 0, res.stdout + res.stderr
    mirror = tmp_path / "mirror"
    assert (mirror / "files/vendor/pkg.deb").read_bytes() == src.read_bytes()
    assert (mirror / "SHA256SUMS").read_text() == "%s  files/vendor/pkg.deb\n" % digest


def test_index_keeps_lines_of_other_tools(tmp_path, source):
    src, digest = source
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    other = "%s  apt/cuda/debian12/x86_64/Packages\n" % ("a" * 64)
    (mirror / "SHA256SUMS").write_text(other + "%s  files/pkg.deb\n" % ("b" * 64))
    res = run_playbook(tmp_path, [{"path": "files/pkg.deb", "url": src.as_uri(), "checksum": "sha256:" + digest}])
    assert res.returncode == 0, res.stdout + res.stderr
    assert (mirror / "SHA256SUMS").read_text() == other + "%s  files/pkg.deb\n" % digest


def test_checksum_mismatch_fails(tmp_path, source):
    src, _digest = source
    res = run_playbook(tmp_path, [{"path": "files/pkg.deb", "url": src.as_uri(), "checksum": "sha256:" + "0" * 64}])
    assert res.returncode != 0
    assert "checksum" in (res.stdout + res.stderr).lower()
    assert not (tmp_path / "mirror" / "files" / "pkg.deb").exists()


@pytest.mark.parametrize("entry", [
    {"path": "../escape", "url": "file:///dev/null", "checksum": "sha256:" + "0" * 64},
    {"path": "files/x", "url": "file:///dev/null", "checksum": "md5:abc"},
    {"path": "files/x", "url": "file:///dev/null"},
])
def test_bad_entries_fail_before_any_change(tmp_path, entry):
    res = run_playbook(tmp_path, [entry])
    assert res.returncode != 0
    assert "gpuops_mirror_artifacts entries need" in res.stdout
    assert not (tmp_path / "mirror").exists()


def test_second_run_changes_nothing(tmp_path, source):
    src, digest = source
    artifacts = [{"path": "files/vendor/pkg.deb", "url": src.as_uri(), "checksum": "sha256:" + digest}]
    assert run_playbook(tmp_path, artifacts).returncode == 0
    res = run_playbook(tmp_path, artifacts)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "changed=0" in res.stdout, res.stdout


def test_inventory_variables_are_honoured(tmp_path, source):
    # the mirror host's group_vars, not -e: play vars must not override them
    src, digest = source
    inv = tmp_path / "inv"
    (inv / "group_vars").mkdir(parents=True)
    (inv / "hosts.yml").write_text("all:\n  hosts:\n    localhost:\n      ansible_connection: local\n"
                                   "      ansible_python_interpreter: %s\n" % sys.executable)
    (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump({
        "gpuops_mirror_dir": str(tmp_path / "site-mirror"),
        "gpuops_mirror_url": "http://mirror.example.internal/gpuops",
        "gpuops_mirror_artifacts": [{"path": "files/vendor/pkg.deb", "url": src.as_uri(),
                                     "checksum": "sha256:" + digest}]}))
    env = dict(os.environ, ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"))
    res = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", str(inv), PLAYBOOK], cwd=str(tmp_path),
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "site-mirror" / "files" / "vendor" / "pkg.deb").exists()
    # the table of what the roles read from the mirror, from the roles' own defaults
    assert "apt/cuda (apt repositories) <- https://developer.download.nvidia.com/compute/cuda/repos" in res.stdout


def test_an_installed_collection_needs_a_mirror_dir(tmp_path):
    # installed, the playbook's directory is inside the collection (MANIFEST.json beside playbooks/)
    coll = tmp_path / "coll" / "ansible_collections" / "gpuops" / "dlserver"
    (coll / "playbooks").mkdir(parents=True)
    (coll / "MANIFEST.json").write_text("{}")
    with open(PLAYBOOK) as handle:
        (coll / "playbooks" / "mirror.yml").write_text(handle.read())
    env = dict(os.environ, ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"))
    res = subprocess.run([os.path.join(BIN, "ansible-playbook"), str(coll / "playbooks" / "mirror.yml"),
                          "-e", "ansible_python_interpreter=%s" % sys.executable], cwd=str(tmp_path), env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode != 0
    assert "set gpuops_mirror_dir" in res.stdout, res.stdout + res.stderr
    assert not (coll / ".cache").exists()


def test_a_bad_mirror_directory_fails_in_the_first_task(tmp_path, source):
    # gpuops_mirror_dir is checked by meaning (a directory of its own) before anything is fetched or written
    import json
    src, digest = source
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps({"gpuops_mirror_dir": "relative/mirror",
                                 "gpuops_mirror_artifacts": [{"path": "files/pkg.deb", "url": src.as_uri(),
                                                              "checksum": "sha256:" + digest}]}))
    env = dict(os.environ, ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false",
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"))
    res = subprocess.run([os.path.join(BIN, "ansible-playbook"), PLAYBOOK, "-e", "@%s" % extra,
                          "-e", "ansible_python_interpreter=%s" % sys.executable],
                         cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode != 0
    assert "gpuops_mirror_dir: 'relative/mirror' is a relative path" in res.stdout
    assert "Check the mirror variables before anything is fetched" in res.stdout
    assert not (tmp_path / "relative").exists()
