"""tools/ee_context.py: the execution environment's build context with the built tarball.

The real `ansible-builder create` runs in `make publish-check` (tools/publish_check.py, step ee) and
`make ee-context`; here the definition it is given and the checks of the context it makes."""
import io
import os
import sys
import tarfile

import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import ee_context  # noqa: E402

NAME = "gpuops-dlserver-0.1.0.tar.gz"


def test_the_local_definition_installs_the_tarball_and_keeps_the_rest():
    with open(ee_context.EE_DEFINITION) as handle:
        shipped = yaml.safe_load(handle)
    local, reqs = ee_context.local_definition(shipped, NAME)
    assert local["dependencies"]["galaxy"] == ee_context.LOCAL_REQUIREMENTS
    assert local["additional_build_files"] == [{"src": NAME, "dest": "collections"}]
    assert reqs == {"collections": [{"name": "collections/" + NAME, "type": "file"}]}
    for key in ("images", "options", "version"):
        assert local[key] == shipped[key]
    assert shipped["dependencies"]["galaxy"] == "requirements.yml", "the shipped definition is not changed"
    again = ee_context.local_definition(local, NAME)[0]
    assert again["additional_build_files"] == local["additional_build_files"]


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
