"""roles/<role>/README.md are generated from docs/roles/<role>.md and meta/argument_specs.yml
(tools/role_readme.py): a README that drifts from its sources, or a role without one, fails here."""
import importlib.util
import os
import shutil

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("role_readme", os.path.join(REPO, "tools", "role_readme.py"))
role_readme = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(role_readme)


def test_every_role_has_a_readme_in_step_with_its_sources(capsys):
    rc = role_readme.main(["--check"])
    err = capsys.readouterr().err
    assert rc == 0, "role READMEs out of step (run `make role-readmes`):\n" + err
    for role in role_readme.roles():
        assert os.path.exists(os.path.join(REPO, "roles", role, "README.md")), role


def _copy_repo(tmp_path, roles=("os_tuning", "common")):
    repo = tmp_path / "repo"
    for role in roles:
        shutil.copytree(os.path.join(REPO, "roles", role), str(repo / "roles" / role))
    shutil.copytree(os.path.join(REPO, "docs"), str(repo / "docs"))
    return repo


def test_a_changed_argument_spec_is_reported_as_drift(tmp_path, capsys):
    repo = _copy_repo(tmp_path)
    assert role_readme.main(["--check", "--repo", str(repo)]) == 0
    spec_path = repo / "roles" / "os_tuning" / "meta" / "argument_specs.yml"
    spec = yaml.safe_load(spec_path.read_text())
    spec["argument_specs"]["main"]["options"]["os_tuning_cpu_governor"]["default"] = "powersave"
    spec_path.write_text(yaml.safe_dump(spec))
    assert role_readme.main(["--check", "--repo", str(repo)]) == 1
    assert "roles/os_tuning/README.md differs from its sources" in capsys.readouterr().err
    # writing brings it back in step, with the new default in the variables table
    assert role_readme.main(["--repo", str(repo)]) == 0
    assert "| `os_tuning_cpu_governor` | str | `powersave` |" in (repo / "roles" / "os_tuning" / "README.md").read_text()


def test_a_changed_docs_page_is_reported_as_drift(tmp_path, capsys):
    repo = _copy_repo(tmp_path)
    page = repo / "docs" / "roles" / "os_tuning.md"
    page.write_text(page.read_text() + "\nOne more sentence.\n")
    assert role_readme.main(["--check", "--repo", str(repo)]) == 1
    assert "os_tuning" in capsys.readouterr().err


def test_a_new_role_without_readme_or_docs_page_fails_naming_what_to_write(tmp_path, capsys):
    repo = _copy_repo(tmp_path)
    new = repo / "roles" / "zz_new_role" / "meta"
    new.mkdir(parents=True)
    (new / "argument_specs.yml").write_text(
        "argument_specs:\n  main:\n    short_description: Run DCGM exporter.\n    options: {}\n")
    assert role_readme.main(["--check", "--repo", str(repo)]) == 1
    assert "role zz_new_role has no docs/roles/zz_new_role.md" in capsys.readouterr().err
    (repo / "docs" / "roles" / "zz_new_role.md").write_text("# gpuops.dlserver.zz_new_role\n\nExports.\n")
    assert role_readme.main(["--check", "--repo", str(repo)]) == 1
    assert "roles/zz_new_role/README.md is missing" in capsys.readouterr().err
    assert role_readme.main(["--repo", str(repo)]) == 0
    text = (repo / "roles" / "zz_new_role" / "README.md").read_text()
    assert text.splitlines()[1] == "# gpuops.dlserver.zz_new_role"
    assert "This entry point takes no options." in text


def test_the_private_role_says_it_is_private_and_lists_its_entry_points():
    text = role_readme.render("common")
    assert "private plumbing" in text and "Not for direct use" in text
    for entry in ("preflight", "status", "reboot", "gpu"):
        assert "### `%s`" % entry in text


def test_relative_links_of_the_docs_page_still_resolve_from_the_role():
    body = "see [gating](../hardware-gating.md#rules), [x](#local), [web](https://example.org/a)"
    out = role_readme._rewrite_links(body, "docs/roles", "roles/os_tuning")
    assert "[gating](../../docs/hardware-gating.md#rules)" in out
    assert "[x](#local)" in out and "[web](https://example.org/a)" in out


@pytest.mark.parametrize("src, want", [
    ("C(foo) and V(bar)", "`foo` and `bar`"),
    ("O(strict=true)", "`strict=true`"),
    ("M(gpuops.dlserver.gpu_facts)", "`gpuops.dlserver.gpu_facts`"),
    ("I(only) B(bold) U(https://a.b)", "*only* **bold** <https://a.b>"),
    ("L(the docs, https://a.b/c)", "[the docs](https://a.b/c)"),
    ("C(pip --target /opt/gpuops/nvml (sic))", "`pip --target /opt/gpuops/nvml (sic)`"),
])
def test_doc_markup_becomes_markdown(src, want):
    assert role_readme.markup(src) == want


def test_a_role_without_main_entry_point_is_refused(tmp_path):
    repo = _copy_repo(tmp_path, roles=("os_tuning",))
    (repo / "roles" / "os_tuning" / "meta" / "argument_specs.yml").write_text("argument_specs: {}\n")
    with pytest.raises(role_readme.RoleReadmeError, match="no main entry point"):
        role_readme.render("os_tuning", str(repo))
