"""docs/vendor-facts.md is generated from the vendor tables (tools/vendor_facts.py): a page that
drifts from the tables, or a registered table with a row lacking its source or read date, fails here."""
import importlib.util
import os

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("vendor_facts", os.path.join(REPO, "tools", "vendor_facts.py"))
vendor_facts = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(vendor_facts)


def test_the_page_is_what_the_generator_writes(capsys):
    rc = vendor_facts.main(["--check"])
    assert rc == 0, "docs/vendor-facts.md out of step (run `make vendor-facts`):\n" + capsys.readouterr().err


def test_every_row_of_every_registered_table_has_source_and_read():
    for entry in vendor_facts.registered():
        rows = vendor_facts.table_rows(entry)
        assert rows, entry[0]
        for key, _values, source, read in rows:
            assert source and vendor_facts.DATE_RE.fullmatch(read), (entry[0], key)


def test_a_changed_row_is_reported_as_drift(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "vendor-facts.md"
    page.write_text(vendor_facts.render())
    assert vendor_facts.main(["--check"], repo=str(tmp_path)) == 0
    page.write_text(vendor_facts.render().replace("| CUDA 12.8 | driver: 570.26;", "| CUDA 12.8 | driver: 570.86.10;"))
    assert vendor_facts.main(["--check"], repo=str(tmp_path)) == 1
    assert "docs/vendor-facts.md differs from what tools/vendor_facts.py writes" in capsys.readouterr().err


def test_a_row_without_read_date_or_source_fails_naming_it(tmp_path, capsys):
    rows = [("A", {"v": 1}, "https://example.invalid/a", "2026-12-07"),
            ("B", {"v": 2}, "https://example.invalid/b", None),
            ("C", {"v": 3}, "", "2026-12-07"),
            ("D", {"v": 4}, "s", "2026-12-07\n")]
    table = ("Fake", "plugins/module_utils/fake.py", "FAKE", "nothing", lambda: rows)
    with pytest.raises(vendor_facts.VendorFactsError) as raised:
        vendor_facts.render(tables=(table,))
    text = str(raised.value)
    assert "Fake, row B: no read date" in text
    assert "Fake, row C: no source" in text
    assert "Fake, row D: no read date" in text
    assert "row A" not in text and text.count("Fake, row") == 3
    original = vendor_facts.TABLES
    vendor_facts.TABLES = (table,)
    try:
        (tmp_path / "docs").mkdir()
        assert vendor_facts.main(["--check"], repo=str(tmp_path)) == 1
    finally:
        vendor_facts.TABLES = original
    assert "Fake, row B: no read date" in capsys.readouterr().err


def test_a_table_this_checkout_lacks_is_named_as_not_listed_and_one_it_has_is_listed():
    original = vendor_facts.OPTIONAL
    present = ("Volcano again", "plugins/module_utils/kubernetes/volcano_tables.py", "COMPATIBILITY_ROWS", "x",
               vendor_facts._volcano)
    absent = ("Missing", "plugins/module_utils/kubernetes/volcano_tables.py", "NO_SUCH_TABLE", "y", lambda: [])
    vendor_facts.OPTIONAL = (("kubernetes.volcano_tables", "COMPATIBILITY_ROWS", present),
                             ("kubernetes.volcano_tables", "NO_SUCH_TABLE", absent),
                             ("python_env.no_such_module", "ROWS", absent))
    try:
        assert present in vendor_facts.registered() and absent not in vendor_facts.registered()
        names = [row[1] for row in vendor_facts.pending()]
        assert names.count("NO_SUCH_TABLE") == 2
        assert "COMPATIBILITY_ROWS" not in names
    finally:
        vendor_facts.OPTIONAL = original


# Issue 36: every vendor table listed row by row.
NAMED_IN_ISSUE_36 = {
    ("plugins/module_utils/python_env/cuda_match.py", "TORCH_CUDA_TAG_ROWS"),
    ("plugins/module_utils/python_env/cuda_match.py", "MINOR_COMPAT_ROWS"),
    ("plugins/module_utils/hardware/precision.py", "NATIVE_PRECISION"),
    ("plugins/module_utils/monitoring/dcgm.py", "CUDA_MIN_BRANCH_ROWS"),
    ("plugins/module_utils/hardware/gpu_models.py", "KNOWN_GPUS"),
    ("plugins/module_utils/hardware/gpu_models.py", "DRIVER_FLOORS"),
    ("plugins/module_utils/hardware/gpu_models.py", "NVSWITCHES"),
    ("plugins/module_utils/hardware/capabilities.py", "ARCHITECTURES"),
    ("plugins/module_utils/packages/driver_branches.py", "BRANCH_ROWS"),
    ("plugins/module_utils/packages/cuda_repos.py", "REPOSITORIES"),
    ("plugins/module_utils/cuda/toolkit.py", "DISTRO_TOOLKIT_ROWS"),
}


NAMED_IN_ISSUE_36 |= {
    ("plugins/module_utils/python_env/cuda_match.py", "TF_AND_CUDA_ROWS"),
    ("plugins/module_utils/python_env/cuda_match.py", "DALI_FLAVOUR_ROWS"),
    ("plugins/module_utils/cuda/toolkit.py", "TOOLKIT_PACKAGE_ROWS"),
    ("plugins/module_utils/cuda/toolkit.py", "CUDNN_PACKAGE_ROWS"),
    ("plugins/module_utils/cuda/toolkit.py", "NCCL_PACKAGE_ROWS"),
    ("plugins/module_utils/hardware/gpu_models.py", "CHIP_ARCH_ROWS"),
    ("plugins/module_utils/hardware/gpu_models.py", "CC_ARCH_ROWS"),
    ("plugins/module_utils/hardware/gpu_models.py", "MIG_CHIP_ROWS"),
    ("plugins/module_utils/python_env/torch_builds.py", "ARCH_CAPABILITY_ROWS"),
}


# Issue 36, the last PENDING tables of Volcano/Kubernetes, node_exporter, distribution names and containerd:
# each listed row by row (as its *_ROWS, the shape the code reads DERIVED from it), none pending.
_KUBE = "plugins/module_utils/kubernetes/volcano_tables.py"
NAMED_IN_ISSUE_36 |= {
    ("plugins/module_utils/engines/container_engines.py", "CONTAINERD_CRI_ROWS"), (_KUBE, "SCHEDULER_VOCABULARY"),
    (_KUBE, "HIERARCHY_ROWS"), (_KUBE, "JOB_PHASE_ROWS"), (_KUBE, "JOB_DONE_PHASE_ROWS"),
    (_KUBE, "JOB_POLICY_EVENT_ROWS"), (_KUBE, "JOB_POLICY_ACTION_ROWS"), (_KUBE, "CORE_RESOURCE_ROWS"),
    (_KUBE, "RESOURCE_PATTERN_ROWS"), (_KUBE, "FOREIGN_LABEL_PREFIX_ROWS"),
    ("plugins/module_utils/monitoring/node_exporter_sources.py", "COLLECTOR_ROWS"),
    ("plugins/module_utils/monitoring/node_exporter_sources.py", "PINNED_SHA256_ROWS"),
    ("plugins/module_utils/monitoring/node_exporter_sources.py", "GOARCH_ROWS"),
    ("plugins/module_utils/packages/cuda_repos.py", "CODENAME_ROWS"),
    ("plugins/module_utils/packages/cuda_repos.py", "EL_LIKE_ROWS"),
    ("plugins/module_utils/packages/held_updates.py", "SECURITY_LABEL_ROWS"),
    ("plugins/module_utils/probe/packages.py", "DISTRO_ORIGIN_ROWS"),
    ("plugins/module_utils/host/os_tuning_sources.py", "RELEASE_PACKAGE_ROWS"),
    ("plugins/module_utils/host/os_tuning_sources.py", "KERNEL_SAMPLE_ROWS"),
}
ONCE_PENDING = {(_KUBE, name) for name in (
    "SCHEDULER_VOCABULARY", "HIERARCHY_MIN_VERSION", "JOB_PHASES", "JOB_DONE_PHASES", "JOB_POLICY_EVENTS",
    "JOB_POLICY_ACTIONS", "CORE_RESOURCES", "RESOURCE_PATTERNS", "FOREIGN_LABEL_PREFIXES")} | {
    ("plugins/module_utils/engines/container_engines.py", "CONTAINERD_CRI"),
    ("plugins/module_utils/monitoring/node_exporter.py", "KNOWN_COLLECTORS"),
    ("plugins/module_utils/monitoring/node_exporter.py", "PINNED_SHA256"),
    ("plugins/module_utils/monitoring/node_exporter.py", "GOARCH"),
    ("plugins/module_utils/packages/cuda_repos.py", "CODENAMES"), ("plugins/module_utils/packages/cuda_repos.py", "EL_LIKE"),
    ("plugins/module_utils/packages/held_updates.py", "SECURITY_LABELS"),
    ("plugins/module_utils/probe/packages.py", "DISTRO_ORIGINS"),
    ("plugins/module_utils/host/os_tuning.py", "RELEASE_PACKAGES"), ("plugins/module_utils/host/os_tuning.py", "KERNEL_SAMPLES")}


def test_the_once_pending_tables_are_listed_or_built_from_listed_rows():
    pending = set((entry[0], entry[1]) for entry in vendor_facts.pending())
    assert not ONCE_PENDING & pending
    listed = set((entry[1], entry[2]) for entry in vendor_facts.registered())
    for key in ONCE_PENDING:
        assert key in listed or vendor_facts.derived_from(key) in listed, key


def test_every_table_named_in_issue_36_is_listed_row_by_row_and_none_is_pending():
    listed = set((entry[1], entry[2]) for entry in vendor_facts.registered())
    assert NAMED_IN_ISSUE_36 <= listed, NAMED_IN_ISSUE_36 - listed
    pending = set((entry[0], entry[1]) for entry in vendor_facts.pending())
    assert not NAMED_IN_ISSUE_36 & pending


def test_pending_tables_are_named_on_the_page_with_why(monkeypatch):
    """Every pending table is named with why; a fake one is added, so that the check holds once PENDING is empty
    (and the page then has no such section)."""
    fake = ("plugins/module_utils/fake.py", "FAKE_TABLE", "nothing", "a test's own entry")
    monkeypatch.setattr(vendor_facts, "PENDING", tuple(vendor_facts.PENDING) + (fake,))
    page = vendor_facts.render()
    assert "## Not listed row by row yet" in page
    for path, symbol, decides, why in vendor_facts.pending():
        assert decides.strip() and why.strip(), symbol
        assert "| `%s` | `%s` |" % (path, symbol) in page
    monkeypatch.setattr(vendor_facts, "PENDING", ())
    monkeypatch.setattr(vendor_facts, "OPTIONAL", ())
    assert "## Not listed row by row yet" not in vendor_facts.render()


def test_no_sourced_table_in_module_utils_is_left_unregistered():
    assert vendor_facts.unregistered_tables() == []


def test_every_module_level_table_of_module_utils_is_judged():
    """Registered, DERIVED from a registered table, PENDING or NOT_VENDOR: nothing else."""
    assert vendor_facts.unclassified_tables() == []
    assert len(vendor_facts.module_tables()) > 250


def test_no_judgement_names_a_table_that_is_gone_and_none_is_judged_twice():
    assert vendor_facts.stale_judgements() == []
    pending = set((entry[0], entry[1]) for entry in vendor_facts.PENDING)
    derived, not_vendor = set(vendor_facts.DERIVED), set(vendor_facts.NOT_VENDOR)
    assert not (pending & derived or pending & not_vendor or derived & not_vendor)
    assert len(pending) == len(vendor_facts.PENDING)


def test_every_derived_table_is_built_from_a_registered_table_and_every_exemption_says_why():
    listed = set((entry[1], entry[2]) for entry in vendor_facts.registered())
    for key in vendor_facts.DERIVED:
        assert vendor_facts.derived_from(key) in listed, key
    for key, reason in vendor_facts.NOT_VENDOR.items():
        assert len(reason) > 20, key


@pytest.mark.parametrize("registry, key", [
    ("NOT_VENDOR", ("plugins/module_utils/probe/pci.py", "_DENIED")),
    ("DERIVED", ("plugins/module_utils/python_env/cuda_match.py", "DALI_FLAVOURS")),
])
def test_a_table_nobody_judged_is_caught(monkeypatch, registry, key):
    """Drop one judgement: the scan names that table (file and name)."""
    table = dict(getattr(vendor_facts, registry))
    del table[key]
    monkeypatch.setattr(vendor_facts, registry, table)
    assert vendor_facts.unclassified_tables() == [key]


def test_a_vendor_table_without_sources_is_caught_once_it_leaves_pending(monkeypatch):
    """A table judged PENDING is named on the page; once it leaves PENDING without a source per row (no longer
    DERIVED from its rows), the scan names it and the page does not. Built here, so that it holds while
    PENDING empties."""
    key = ("plugins/module_utils/monitoring/node_exporter.py", "PINNED_SHA256")
    derived = dict(vendor_facts.DERIVED)
    del derived[key]
    monkeypatch.setattr(vendor_facts, "DERIVED", derived)
    monkeypatch.setattr(vendor_facts, "PENDING", tuple(vendor_facts.PENDING) + (key + ("sha256", "why"),))
    assert vendor_facts.unclassified_tables() == []
    assert "`PINNED_SHA256`" in vendor_facts.render()
    monkeypatch.setattr(vendor_facts, "PENDING", tuple(e for e in vendor_facts.PENDING if (e[0], e[1]) != key))
    assert vendor_facts.unclassified_tables() == [key]
    assert "`PINNED_SHA256`" not in vendor_facts.render()


def test_the_scan_reads_what_a_module_binds_not_what_it_imports():
    tables = set(vendor_facts.module_tables())
    assert ("plugins/module_utils/cuda/toolkit.py", "CUDNN_PACKAGE_ROWS") in tables
    assert ("plugins/module_utils/cuda/toolkit.py", "MINOR_COMPAT_DRIVER") not in tables  # imported there
    assert ("plugins/module_utils/hardware/gpu_models.py", "_CC_ARCH") in tables  # private names too


def test_gpu_models_architectures_are_the_chip_rows_architectures():
    from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware import gpu_models
    assert list(gpu_models.ARCHITECTURES) == [row["architecture"] for row in gpu_models.CHIP_ARCH_ROWS]


def test_a_new_sourced_table_nobody_registered_is_found():
    """Drop one registered table from the registry: the scan names it (file and table)."""
    entries = tuple(e for e in vendor_facts.registered() if e[2] != "DISTRO_TOOLKIT_ROWS")
    assert vendor_facts.unregistered_tables(registered_tables=entries) == [
        ("plugins/module_utils/cuda/toolkit.py", "DISTRO_TOOLKIT_ROWS")]


def test_a_registered_row_that_loses_its_source_fails_the_page(monkeypatch):
    from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware import gpu_models
    row = dict(gpu_models.KNOWN_GPUS[0x2330])
    del row["source"]
    monkeypatch.setitem(gpu_models.KNOWN_GPUS, 0x2330, row)
    with pytest.raises(vendor_facts.VendorFactsError, match="GPU models by PCI device id, row 0x2330: no source"):
        vendor_facts.render()


def test_ci_on_debian_claims_are_backed_by_the_file_they_name():
    for name, (path, text, _what) in vendor_facts.CI_ON_DEBIAN.items():
        with open(os.path.join(REPO, path)) as handle:
            assert text in handle.read(), (name, path)


@pytest.mark.parametrize("evidence, ci, verdict", [
    ("listed", None, "checked against Ubuntu's index"),
    ("listed", "molecule x", "checked against Ubuntu's index; the Debian package of that name run on a node in CI"),
    ("related", "molecule x", "run on a node in CI (Debian's package of that name), not checked against Ubuntu's index"),
    ("related", None, "neither"),
    ("none", None, "neither"),
])
def test_ubuntu_verdicts(evidence, ci, verdict):
    assert vendor_facts.ubuntu_verdict(evidence, ci) == verdict


def test_every_ubuntu_fixture_name_is_on_the_page_and_in_the_support_matrix():
    page = vendor_facts.render()
    with open(os.path.join(REPO, "docs", "support-matrix.md")) as handle:
        matrix = [line for line in handle if line.startswith("| Ubuntu package names")]
    assert len(matrix) == 1
    for release, name, evidence, _source, _read, ci in vendor_facts.ubuntu_claims():
        assert "| %s | `%s` | %s |" % (release, name, vendor_facts.ubuntu_verdict(evidence, ci)) in page
        assert "`%s`" % name in matrix[0], name


def test_a_malformed_ubuntu_fixture_line_fails(tmp_path):
    (tmp_path / vendor_facts.UBUNTU_INDEX).mkdir(parents=True)
    for _release, code in vendor_facts.UBUNTU_RELEASES:
        (tmp_path / vendor_facts.UBUNTU_INDEX / (code + ".txt")).write_text(
            'python3-venv | listed | SOURCE: x, read 2026-12-07: "python3-venv/noble"\n'
            'python3-pip | listed | SOURCE: x, read 2026-12-07: "python3-pip/noble"\nextra\n')
    with pytest.raises(vendor_facts.VendorFactsError, match="not an entry"):
        vendor_facts.ubuntu_claims(repo=str(tmp_path))
