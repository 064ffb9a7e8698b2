"""tools/ee_context.py: the execution environment's build context with the built tarball.

The real `ansible-builder create` runs in `make publish-check` (tools/publish_check.py, step ee) and
`make ee-context`; here the definition it is given and the checks of the context it makes."""
import io
import json
import os
import sys
import tarfile

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import ee_context  # noqa: E402

NAME = "gpuops-dlserver-0.1.0.tar.gz"


def _collection_tarball(path, version="0.1.0", ee_dir=None, extra=()):
    """A tarball shaped like the collection's: MANIFEST.json, requirements.txt, meta/ and the
    execution-environment/ directory of this checkout (or ``ee_dir``'s files)."""
    ee_dir = ee_dir or os.path.join(REPO, "execution-environment")
    files = {"MANIFEST.json": json.dumps({"collection_info": {"namespace": "gpuops", "name": "dlserver",
                                                              "version": version}}),
             "requirements.txt": "bcrypt>=4.0.0\n", "meta/execution-environment.yml": "version: 1\n"}
    for name in os.listdir(ee_dir):
        with open(os.path.join(ee_dir, name)) as handle:
            files["execution-environment/" + name] = handle.read()
    files.update(dict(extra))
    with tarfile.open(str(path), "w:gz") as tar:
        for name, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


FAKE_BUILDER = """#!/bin/sh
# ansible-builder create -f DEF -c CONTEXT ...: what the real one copies into the context
set -e
def=$3; ctx=$5; dir=$(dirname "$def")
mkdir -p "$ctx/_build/collections"
echo "FROM base" > "$ctx/Containerfile"
cp "$dir/requirements.yml" "$ctx/_build/requirements.yml"
cp "$dir"/*.tar.gz "$ctx/_build/collections/"
"""


def test_the_context_is_made_from_the_tarball_alone(tmp_path, monkeypatch):
    tarball = tmp_path / "dist" / NAME
    tarball.parent.mkdir()
    _collection_tarball(tarball)
    builder = tmp_path / "ansible-builder"
    builder.write_text(FAKE_BUILDER)
    builder.chmod(0o755)
    elsewhere = tmp_path / "nowhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(ee_context, "REPO", str(tmp_path / "no-checkout"))
    (rc, _out), problems = ee_context.prepare(str(tarball), str(tmp_path / "ee"), str(builder))
    assert rc == 0 and problems == []
    assert (tmp_path / "ee" / "context" / "_build" / "collections" / NAME).is_file()


def test_a_tarball_whose_definition_asks_a_server_is_refused(tmp_path):
    ee_dir = tmp_path / "ee-src"
    ee_dir.mkdir()
    (ee_dir / "execution-environment.yml").write_text(yaml.safe_dump(
        {"version": 3, "dependencies": {"galaxy": "requirements.yml"}}))
    (ee_dir / "requirements.yml").write_text(yaml.safe_dump(
        {"collections": [{"name": "gpuops.dlserver", "version": "0.1.0"}]}))
    tarball = tmp_path / NAME
    _collection_tarball(tarball, ee_dir=str(ee_dir))
    (_rc, _out), problems = ee_context.prepare(str(tarball), str(tmp_path / "ee"), "/bin/false")
    assert any("do not install %s" % NAME in p for p in problems), problems
    assert any("does not copy %s" % NAME in p for p in problems), problems


def test_a_tarball_member_outside_the_tarball_is_refused(tmp_path):
    tarball = tmp_path / NAME
    _collection_tarball(tarball, extra=[("../escape.txt", "x")])
    (_rc, _out), problems = ee_context.prepare(str(tarball), str(tmp_path / "ee"), "/bin/false")
    assert problems and "not a plain file or directory inside the tarball" in problems[0]
    assert not (tmp_path / "escape.txt").exists()


def test_the_shipped_definition_installs_the_release_tarball():
    with open(os.path.join(REPO, "execution-environment", "execution-environment.yml")) as handle:
        shipped = yaml.safe_load(handle)
    assert ee_context.definition_problems(REPO, "gpuops-dlserver-%s.tar.gz" % ee_context.galaxy_version()) == []
    assert shipped["dependencies"]["galaxy"] == "requirements.yml"


def test_the_collection_declares_bcrypt_for_the_ee():
    with open(os.path.join(REPO, "requirements.txt")) as handle:
        assert "bcrypt>=4.0.0" in ee_context.declared(handle.read())


def _tarball(path, requirements):
    with tarfile.open(str(path), "w:gz") as tar:
        for name, text in (("requirements.txt", requirements), ("meta/execution-environment.yml", "version: 1\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_context_checks(tmp_path):
    context = tmp_path / "context"
    assert len(ee_context.context_problems(str(context), NAME)) == 3
    (context / "_build" / "collections").mkdir(parents=True)
    (context / "Containerfile").write_text("FROM base\n")
    (context / "_build" / "requirements.yml").write_text(
        yaml.safe_dump({"collections": [{"name": "collections/" + NAME, "type": "file"}]}))
    _tarball(context / "_build" / "collections" / NAME, "# x\nbcrypt>=4.0.0\n")
    assert ee_context.context_problems(str(context), NAME, ["bcrypt>=4.0.0"]) == []
    problems = ee_context.context_problems(str(context), NAME, ["bcrypt>=4.0.0", "kubernetes>=24.2.0"])
    assert problems == ["the tarball's requirements.txt does not declare kubernetes>=24.2.0"]
    (context / "_build" / "requirements.yml").write_text(yaml.safe_dump({"collections": ["gpuops.dlserver"]}))
    assert "does not install the tarball" in ee_context.context_problems(str(context), NAME, [])[0]
