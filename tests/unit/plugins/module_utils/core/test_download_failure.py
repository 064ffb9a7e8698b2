"""The URL a failed download failed on (plugins/module_utils/core/download_failure.py), from
data/download_failure_cases.yml, and the filter gpuops.dlserver.__private.download_failure."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.filter.__private.download_failure import download_failure
from ansible_collections.gpuops.dlserver.plugins.module_utils.core import download_failure as df

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
with open(os.path.join(DATA, "download_failure_cases.yml")) as _handle:
    TABLE = yaml.safe_load(_handle)


@pytest.mark.parametrize("case", TABLE["cases"], ids=[c["name"] for c in TABLE["cases"]])
def test_the_url_that_failed_is_named(case):
    got = df.failed_url(case["result"], TABLE["urls"])
    for key, value in case["expect"].items():
        assert got[key] == value, key
    text = download_failure(case["result"], TABLE["urls"], "nothing changed")
    assert text.startswith(case["message_starts"]), text
    assert text.endswith("; nothing changed")


def test_a_404_on_the_checksums_file_does_not_name_the_tarball():
    text = download_failure(TABLE["cases"][0]["result"], TABLE["urls"], "left alone")
    assert "node_exporter-1.9.1.linux-amd64.tar.gz" not in text
