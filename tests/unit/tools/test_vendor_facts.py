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
