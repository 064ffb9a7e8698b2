"""tools/release.py: refuses what cannot be released, and sets the version everywhere the collection states it."""
import importlib.util
import os
import shutil

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("release", os.path.join(REPO, "tools", "release.py"))
release = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(release)


@pytest.fixture
def repo(tmp_path):
    # An unreleased tree (the state before a release), whatever main's own changelog holds now.
    root = tmp_path / "repo"
    (root / "changelogs" / "fragments").mkdir(parents=True)
    shutil.copy(os.path.join(REPO, "changelogs", "config.yaml"), str(root / "changelogs" / "config.yaml"))
    (root / "changelogs" / "changelog.yaml").write_text("ancestor: null\nreleases: {}\n")
    (root / "changelogs" / "fragments" / "summary.yml").write_text("release_summary: The first release.\n")
    (root / "changelogs" / "fragments" / "change.yml").write_text("minor_changes:\n  - role - a change.\n")
    shutil.copytree(os.path.join(REPO, "execution-environment"), str(root / "execution-environment"))
    shutil.copy(os.path.join(REPO, "galaxy.yml"), str(root / "galaxy.yml"))
    return root


def test_an_unreleased_tree_can_release_galaxy_yml_s_version(repo):
    version = yaml.safe_load((repo / "galaxy.yml").read_text())["version"]
    release.check(version, str(repo))


@pytest.mark.parametrize("version", ["1.0", "v0.1.0", "0.1.0-rc1", ""])
def test_a_version_that_is_not_semver_is_refused(repo, version):
    with pytest.raises(release.ReleaseError, match="x.y.z"):
        release.check(version, str(repo))


def test_released_and_lower_versions_are_refused(repo):
    (repo / "changelogs" / "changelog.yaml").write_text(
        "ancestor: null\nreleases:\n  0.2.0:\n    changes:\n      release_summary: x\n")
    with pytest.raises(release.ReleaseError, match="already released"):
        release.check("0.2.0", str(repo))
    with pytest.raises(release.ReleaseError, match="lower than the released 0.2.0"):
        release.check("0.1.5", str(repo))
    release.check("0.10.0", str(repo))  # numeric, not string, order


def test_a_release_needs_exactly_one_release_summary(repo):
    frags = repo / "changelogs" / "fragments"
    for name in os.listdir(str(frags)):
        if "release_summary" in (frags / name).read_text():
            (frags / name).unlink()
    with pytest.raises(release.ReleaseError, match="found none"):
        release.check("0.1.0", str(repo))
    (frags / "a.yml").write_text("release_summary: one\n")
    (frags / "b.yml").write_text("release_summary: two\n")
    with pytest.raises(release.ReleaseError, match="a.yml, b.yml"):
        release.check("0.1.0", str(repo))


def test_bump_sets_galaxy_yml_and_the_execution_environment(repo):
    release.bump("0.3.1", str(repo))
    assert yaml.safe_load((repo / "galaxy.yml").read_text())["version"] == "0.3.1"
    reqs = yaml.safe_load((repo / "execution-environment" / "requirements.yml").read_text())
    assert reqs["collections"] == [{"name": "collections/gpuops-dlserver-0.3.1.tar.gz", "type": "file"}]
    ee_text = (repo / "execution-environment" / "execution-environment.yml").read_text()
    assert "gpuops-dlserver-ee:0.3.1" in yaml.safe_load(ee_text)["options"]["tags"]
    assert yaml.safe_load(ee_text)["additional_build_files"] == [
        {"src": "gpuops-dlserver-0.3.1.tar.gz", "dest": "collections"}]
    assert "dlserver-ee:0.1.0" not in ee_text and "dlserver-0.1.0" not in ee_text
