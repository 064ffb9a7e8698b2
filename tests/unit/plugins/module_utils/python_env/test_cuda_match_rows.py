# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rows of python_env/cuda_match.py say what their source says: each torch row's tags are the CUDA
versions its quoted matrix row names (stable and experimental), each minor-version row's driver is the
branch its quoted Table 1 row names. A tag or driver edited without its source fails here."""
import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import cuda_match


@pytest.mark.parametrize("row", cuda_match.TORCH_CUDA_TAG_ROWS, ids=lambda row: row["torch"])
def test_torch_row_tags_are_the_cuda_versions_its_source_names(row):
    quoted = row["source"].split("): ", 1)[1].split(" (read in", 1)[0]
    versions = re.findall(r"(?<![0-9.])(1[0-9])\.([0-9])(?![0-9.])", quoted)
    assert sorted("cu%s%s" % v for v in versions) == sorted(row["tags"]), (row["torch"], quoted)
    assert re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", row["read"])


def test_torch_rows_and_the_lookup_table_agree():
    assert [row["torch"] for row in cuda_match.TORCH_CUDA_TAG_ROWS] == ["2.%d" % n for n in range(15)]
    for row in cuda_match.TORCH_CUDA_TAG_ROWS:
        assert cuda_match.TORCH_CUDA_TAGS[tuple(int(p) for p in row["torch"].split("."))] == row["tags"]


@pytest.mark.parametrize("row", cuda_match.MINOR_COMPAT_ROWS, ids=lambda row: str(row["cuda_major"]))
def test_minor_compat_driver_is_the_branch_its_source_names(row):
    match = re.search(r'"CUDA (\d+)\.x >= (\d+)"', row["source"])
    assert match and int(match.group(1)) == row["cuda_major"]
    assert cuda_match.MINOR_COMPAT_DRIVER[row["cuda_major"]][0] == int(match.group(2))
