"""tools/publish_check.py fails on any warning or error of the publishing tools (a check that
cannot fail would be worthless): its parsers, on output the tools really print."""
import importlib.util
import os

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("publish_check", os.path.join(REPO, "tools", "publish_check.py"))
publish_check = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(publish_check)

CLEAN = """Importing with galaxy-importer 0.4.44
Getting doc strings via ansible-doc
Finding content inside collection
Loading filter gpu_plan
Linting collection via ansible-lint 26.10.1...
...ansible-lint run complete
Collection loading complete
Importer processing completed successfully
"""


def test_clean_importer_output_passes():
    assert publish_check.importer_problems(CLEAN, 0) == []


def test_any_importer_warning_fails():
    # what the importer printed for this collection before issue 9 (role name pattern, lint)
    out = CLEAN.replace("...ansible-lint run complete",
                        "WARNING: roles/_common/meta/main.yml:1:1: role-name: Role name _common does not match "
                        "``^[a-z][a-z0-9_]*$`` pattern.\n...ansible-lint run complete")
    problems = publish_check.importer_problems(out, 0)
    assert len(problems) == 1 and "role-name" in problems[0]


def test_importer_error_and_exit_status_fail():
    out = "Importing with galaxy-importer 0.4.44\nERROR: The import failed for the following reason: No role readme found.\n"
    problems = publish_check.importer_problems(out, 1)
    assert any("No role readme found" in p for p in problems)
    assert any("exited with 1" in p for p in problems)
    assert any("did not say" in p for p in problems)


def test_a_traceback_fails_even_with_exit_0():
    out = CLEAN + "Traceback (most recent call last):\n  File x\n"
    assert publish_check.importer_problems(out, 0)


def _content(kind, name, doc=True, readme=False):
    return {"content_type": kind, "content_name": name, "doc_strings": {"doc": {"name": name}} if doc else None,
            "readme_html": "<p>x</p>" if readme else None}


def test_result_with_undocumented_filter_or_role_without_readme_fails():
    result = {"docs_blob": {"contents": [_content("filter", "gpu_plan"), _content("filter", "plan", doc=False),
                                         _content("role", "os_tuning", doc=False, readme=True),
                                         _content("role", "cuda_toolkit", doc=False)]},
              "contents": [{"content_type": "filter", "name": "gpu_plan"}, {"content_type": "filter", "name": "plan"}]}
    problems = publish_check.result_problems(result)
    assert "filter plan has no documentation in the importer result" in problems
    assert "role cuda_toolkit has no README in the importer result" in problems
    assert len(problems) == 2


def test_a_filter_listed_twice_fails():
    # sidecar plugins/filter/<name>.yml docs made the importer list every filter twice
    result = {"docs_blob": {"contents": []},
              "contents": [{"content_type": "filter", "name": "gpu_plan"}, {"content_type": "filter", "name": "gpu_plan"}]}
    assert publish_check.result_problems(result) == [
        "filter gpu_plan is listed more than once (a plugin file not named as its plugin?)"]


def test_docs_lint_fails_on_any_message():
    out = ("plugins/filter/gpu_plan.py:0:0: DOCUMENTATION -> description[4]: O(strict=true): option name does not "
           "reference to an existing option of the filter plugin gpuops.dlserver.gpu_plan\n")
    assert publish_check.docs_lint_problems(out, 3) == [out.strip()]
    assert publish_check.docs_lint_problems("", 0) == []
    assert publish_check.docs_lint_problems("", 2) == ["antsibull-docs exited with 2"]


def test_introspect_must_see_every_declared_requirement_and_nothing_else():
    data = {"python": [], "system": ["openssh-client [platform:dpkg]  # from collection gpuops.dlserver",
                                     "rsync  # from collection community.general"]}
    assert publish_check.introspect_problems(data, system=["openssh-client [platform:dpkg]"]) == []
    problems = publish_check.introspect_problems(data, python=["kubernetes>=24.2.0"],
                                                 system=["openssh-client [platform:dpkg]", "sshpass"])
    assert len(problems) == 2 and "kubernetes" in problems[0] and "sshpass" in problems[1]
    assert publish_check.introspect_problems(data, system=[]) == [
        "introspect: system requirement 'openssh-client [platform:dpkg]' of gpuops.dlserver is not in its file"]


def test_the_declared_files_are_what_meta_execution_environment_names():
    import yaml
    with open(os.path.join(REPO, "meta", "execution-environment.yml")) as handle:
        meta = yaml.safe_load(handle)
    assert meta["dependencies"] == {"python": "requirements.txt", "system": "bindep.txt"}
    assert publish_check._declared(os.path.join(REPO, "bindep.txt")) == [
        "openssh-client [platform:dpkg]", "openssh-clients [platform:rpm]"]


# what ansible-lint (run by the importer) printed for a private plugin (docs/public-surface.md)
PRIVATE_DEEP = ("WARNING: plugins/modules/__private/os_tuning_host.py:1: fqcn[deep][/]: Deep plugins directory is "
                "discouraged. Move 'plugins/modules/__private/os_tuning_host.py' directly under 'plugins/modules' "
                "folder. (warning)")


def test_the_deep_directory_warning_of_a_private_plugin_passes_and_no_other():
    assert publish_check.importer_problems(CLEAN.replace("Collection loading", PRIVATE_DEEP + "\nCollection loading"), 0) == []
    for other in (PRIVATE_DEEP.replace("__private/", "extra/", 1),            # another deep directory
                  PRIVATE_DEEP.replace("/__private/", "/__private/sub/"),     # deeper than the private directory
                  PRIVATE_DEEP.replace("fqcn[deep][/]", "fqcn[action][/]"),   # another rule on a private file
                  PRIVATE_DEEP + " and more",
                  PRIVATE_DEEP.replace("os_tuning_host.py:1", "os_tuning_host.py\n:1")):
        problems = publish_check.importer_problems(CLEAN.replace("Collection loading", other + "\nCollection loading"), 0)
        assert problems, other


def test_a_private_plugin_needs_no_docs_in_the_result_but_a_public_one_does():
    result = {"docs_blob": {"contents": [_content("module", "__private.os_tuning_host", doc=False),
                                         _content("filter", "__private.probe_report", doc=False),
                                         _content("module", "os_tuning_host", doc=False),
                                         _content("module", "sub.__private.x", doc=False)]},
              "contents": []}
    assert publish_check.result_problems(result) == ["module os_tuning_host has no documentation in the importer result",
                                                     "module sub.__private.x has no documentation in the importer result"]
