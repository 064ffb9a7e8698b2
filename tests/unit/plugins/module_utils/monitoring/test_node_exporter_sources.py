# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36: node_exporter's collector names, pinned sha256 and release architecture words row by row
(monitoring/node_exporter_sources.py), and the tables node_exporter.py builds from them."""
import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_sources as sources

DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
ALL = [("COLLECTOR_ROWS", sources.COLLECTOR_ROWS), ("PINNED_SHA256_ROWS", sources.PINNED_SHA256_ROWS),
       ("GOARCH_ROWS", sources.GOARCH_ROWS)]


@pytest.mark.parametrize("name, rows", ALL, ids=[a[0] for a in ALL])
def test_every_row_has_a_source_and_a_read_date(name, rows):
    for row in rows:
        assert DATE.fullmatch(row["read"]) and row["source"].strip(), (name, row)
        assert row.get("unconfirmed") is None or row["unconfirmed"].strip(), (name, row)


def test_the_tables_node_exporter_decides_by_are_built_from_the_rows():
    assert node_exporter.KNOWN_COLLECTORS == frozenset(r["collector"] for r in sources.COLLECTOR_ROWS)
    assert node_exporter.PINNED_SHA256 == {(r["version"], r["goarch"]): r["sha256"] for r in sources.PINNED_SHA256_ROWS}
    assert node_exporter.GOARCH == {"x86_64": "amd64", "aarch64": "arm64", "ppc64le": "ppc64le"}


@pytest.mark.parametrize("row", sources.COLLECTOR_ROWS, ids=lambda row: row["collector"])
def test_each_collector_row_names_the_file_that_registers_it(row):
    assert re.fullmatch(r"[a-z][a-z0-9_]*", row["collector"])
    assert re.search(r'v1\.9\.1:collector/[a-z0-9_]+\.go registers "%s"' % row["collector"], row["source"])
    assert row["from"] in ("1.5.0", "1.6.0", "1.7.0", "1.8.0")


# SOURCE (prometheus/node_exporter v1.9.1): registerCollector("devstat", ...) only in collector/devstat_freebsd.go
# and devstat_dragonfly.go; registerCollector("xfrm", ...) in collector/xfrm.go (//go:build !noxfrm) from v1.8.0.
@pytest.mark.parametrize("name, known", [("devstat", False), ("xfrm", True), ("cpu_vulnerabilities", True),
                                         ("thermal", False), ("netisr", False), ("cpu\n", False)])
def test_a_collector_linux_builds_lack_is_refused_and_one_they_have_is_accepted(name, known):
    assert (name in node_exporter.KNOWN_COLLECTORS) is known
    if not known:
        with pytest.raises(ValueError, match="unknown collector"):
            node_exporter.collector_flags([name], [])


@pytest.mark.parametrize("row", sources.PINNED_SHA256_ROWS, ids=lambda row: row["goarch"])
def test_pinned_digest_is_the_one_its_source_quotes_and_says_the_published_file_was_not_read(row):
    assert re.fullmatch(r"[0-9a-f]{64}", row["sha256"])
    assert row["sha256"] in row["source"]
    assert "sha256sums.txt" in row["unconfirmed"] and "v1.9.1" in row["unconfirmed"]
