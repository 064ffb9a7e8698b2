"""Package version ordering, dpkg's and RPM's (plugins/module_utils/packages/pkgversion.py), from
the case table data/pkgversion_cases.yml."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import pkgversion

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "data", "pkgversion_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


def sign(value):
    return (value > 0) - (value < 0)


def ids(rows):
    return ["%s_vs_%s" % (r[0], r[1]) for r in rows]


@pytest.mark.parametrize("first,second,expect", CASES["rpmvercmp"], ids=ids(CASES["rpmvercmp"]))
def test_rpmvercmp(first, second, expect):
    assert pkgversion.rpmvercmp(first, second) == expect
    assert pkgversion.rpmvercmp(second, first) == -expect


@pytest.mark.parametrize("left,right,expect", CASES["rpm"], ids=ids(CASES["rpm"]))
def test_rpm_epoch_version_release(left, right, expect):
    assert sign(pkgversion.compare(left, right, "dnf")) == expect
    assert sign(pkgversion.compare(right, left, "dnf")) == -expect


@pytest.fixture(params=[True, False], ids=["apt_pkg-if-present", "fallback"])
def dpkg_impl(request, monkeypatch):
    if not request.param:
        monkeypatch.setattr(pkgversion, "HAS_APT_PKG", False)
    elif not pkgversion.HAS_APT_PKG:
        pytest.skip("python3-apt is not importable here")


@pytest.mark.parametrize("left,right,expect", CASES["dpkg"], ids=ids(CASES["dpkg"]))
def test_dpkg(dpkg_impl, left, right, expect):
    assert sign(pkgversion.compare(left, right, "apt")) == expect
    assert sign(pkgversion.compare(right, left, "apt")) == -expect


@pytest.mark.parametrize("case", CASES["differ"], ids=[c["left"] for c in CASES["differ"]])
def test_the_two_orderings_differ(dpkg_impl, case):
    assert sign(pkgversion.compare(case["left"], case["right"], "dnf")) == case["rpm"]
    assert sign(pkgversion.compare(case["left"], case["right"], "apt")) == case["dpkg"]


def test_sort_desc_uses_the_backends_ordering():
    versions = ["1.0.1", "1.0^20160101", "1.0.1"]
    assert pkgversion.sort_desc(versions, "dnf") == ["1.0.1", "1.0^20160101"]
    assert pkgversion.sort_desc(versions, "apt") == ["1.0^20160101", "1.0.1"]


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError):
        pkgversion.compare("1", "2", "zypper")
