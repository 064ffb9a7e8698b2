"""The fleet's HTML report (module_utils/validate/report_html.py): failures first, every value
escaped, nothing fetched - and what headless Chromium (Debian's chromium; make setup installs it)
shows of it: the rows in that order, the bars and the data path."""
import os
import re
import shutil
import subprocess

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.validate import data_path, report_html

EVIL = '<script>alert("x")</script>&'


def _reports():
    data_checks = data_path.checks(
        {"jobs": {"sequential": {"rw": "read", "bs": "1M", "read_mbps": 1800.5, "runtime_ms": 3000},
                  "random": {"rw": "randread", "bs": "128k", "read_mbps": 420.0, "runtime_ms": 3000}}},
        {"images": 128, "mean_image_bytes": 30000, "workers": 2, "batch": 32, "loose_images_per_s": 310.2,
         "lmdb_images_per_s": 355.9}, data_path.demand([], 0))
    healthy = {"verdict": "pass", "device": "cpu", "summary": "pass (device: cpu)",
               "checks": [dict(c, group="data") for c in data_checks], "data": data_path.record(data_checks)}
    failing = {"verdict": "fail", "device": "cuda", "summary": "fail: matmul GPU1 " + EVIL,
               "checks": [{"group": "performance", "check": "matmul", "subject": "GPU1", "status": "fail",
                           "fraction": 0.404, "threshold": 0.6},
                          {"group": "performance", "check": "memory_copy", "subject": "GPU1", "status": "pass",
                           "fraction": 0.91, "threshold": 0.7}]}
    warned = {"verdict": "warn", "device": "cuda", "summary": "warn: nic_speed host", "checks": []}
    return {"a-pass": healthy, "b-fail": failing, "c-warn": warned, "d-missing": None}


def test_failures_first_then_not_run_warn_pass():
    page = report_html.render(["a-pass", "b-fail", "c-warn", "d-missing"], _reports())
    assert re.findall(r'data-node="([^"]+)"', page) == ["b-fail", "d-missing", "c-warn", "a-pass"]
    assert "4 node(s): 1 fail, 1 not run, 1 warn, 1 pass" in page


def test_every_value_is_escaped_and_nothing_is_fetched():
    reports = _reports()
    reports[EVIL] = dict(reports["b-fail"], device=EVIL)
    page = report_html.render(["a-pass", EVIL], reports, generated=EVIL)
    assert "<script" not in page and 'alert("x")' not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in page
    assert not re.search(r'(src|href)\s*=|@import|url\(', page, re.I)


def test_bars_and_data_path():
    page = report_html.render(["a-pass", "b-fail"], _reports())
    assert '<div class="bar" data-check="matmul GPU1" data-fraction="0.404">' in page
    assert '<line x1="132"' in page  # the 60 % threshold of a 220 px bar
    assert 'data-figure="lmdb_images_per_s">LMDB: 355.9 images/s' in page
    assert 'data-figure="demand_images_per_s">GPUs need: unknown' in page
    assert "no GPU demand to compare" in page
    assert '<div class="load" data-source="loose" data-share="0.872">' in page  # of the best source (LMDB)


def test_from_hostvars():
    hv = {"a": {"gpu_validate_report": _reports()["a-pass"]}, "b": {"gpu_validate_report": "garbage"}}
    page = report_html.from_hostvars(["a", "b"], hv)
    assert re.findall(r'data-node="([^"]+)" data-verdict="([^"]+)"', page) == [("b", "not run"), ("a", "pass")]


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(not CHROMIUM, reason="Debian's chromium is not installed (make setup installs it)")
def test_chromium_renders_the_page(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(report_html.render(["a-pass", "b-fail", "c-warn", "d-missing"], _reports(), "made now"))
    profile = tmp_path / "profile"
    profile.mkdir()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--user-data-dir=%s" % profile]
    dom = subprocess.run([CHROMIUM] + flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    # what the browser built: the rows in order, failures first, with their bars and the data path
    assert re.findall(r'<tr class="node" data-node="([^"]+)"', dom) == ["b-fail", "d-missing", "c-warn", "a-pass"]
    assert re.findall(r'<div class="bar" data-check="([^"]+)"', dom) == ["matmul GPU1", "memory_copy GPU1"]
    assert re.findall(r'<div class="load" data-source="([^"]+)" data-share="([^"]+)"', dom) == [
        ("loose", "0.872"), ("LMDB", "1.0")]
    assert "<title>gpu_validate fleet report</title>" in dom
    assert "LMDB: 355.9 images/s" in dom and "no GPU demand to compare" in dom
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM] + flags + ["--screenshot=%s" % shot, "--window-size=1200,800", page.as_uri()],
                   capture_output=True, text=True, timeout=120, check=True)
    with open(str(shot), "rb") as handle:
        head = handle.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(head[16:20], "big") == 1200 and int.from_bytes(head[20:24], "big") == 800
    assert os.path.getsize(str(shot)) > 10000
