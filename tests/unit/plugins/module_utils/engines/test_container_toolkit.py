"""Versions, the known-vulnerability table and inputs of nvidia_container_toolkit
(module_utils/container_toolkit.py), from data/container_toolkit_cases.yml."""
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_toolkit as ctk

with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "container_toolkit_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)

GOOD = {"version": "1.19.1", "accept_cves": [], "repo_url": "https://nvidia.github.io/libnvidia-container/stable/deb/$(ARCH)",
        "keyring_url": "https://nvidia.github.io/libnvidia-container/gpgkey", "keyring_checksum": "",
        "keyring_fingerprint": "C95B321B61E88C1809C4F759DDCAE044F796ECB0", "engines": [], "runtime_settings": {},
        "status_file": "/etc/gpuops/nvidia_container_toolkit.json",
        "smoke_test_image": "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04"}


def test_every_row_of_the_table_has_a_source_and_a_fix():
    seen = set()
    for row in ctk.VULNERABILITIES:
        assert re.match(r"^CVE-\d{4}-\d{4,}$", row["cve"]) and row["cve"] not in seen
        seen.add(row["cve"])
        assert re.match(r"^https://nvidia\.custhelp\.com/app/answers/detail/a_id/\d+$", row["source"])
        assert re.match(r"^\d+\.\d+\.\d+$", row["fixed"])
        assert row["severity"] in ("low", "medium", "high", "critical") and len(row["summary"]) > 20
    # The ones the issue names, at the releases NVIDIA's bulletins give.
    fixed = dict((r["cve"], r["fixed"]) for r in ctk.VULNERABILITIES)
    assert fixed["CVE-2024-0132"] == "1.16.2" and fixed["CVE-2025-23359"] == "1.17.4"
    assert fixed["CVE-2025-23266"] == "1.17.8" and fixed["CVE-2025-23267"] == "1.17.8"
    # SOURCE: NVIDIA/cloud-native-docs gpu-operator/security.rst ("CVEs": fixed versions, bulletins);
    # severities: the CVSS v3.1 base severity of each CVE record (CVEProject/cvelistV5
    # cves/2024/0xxx/CVE-2024-013[2-7].json, cves/2025/23xxx/CVE-2025-23{359,266,267}.json).
    rows = dict((r["cve"], r) for r in ctk.VULNERABILITIES)
    assert fixed["CVE-2024-0134"] == "1.17.0" and rows["CVE-2024-0134"]["source"].endswith("a_id/5585")
    for cve in ("CVE-2024-0135", "CVE-2024-0136", "CVE-2024-0137"):
        assert fixed[cve] == "1.17.3" and rows[cve]["source"].endswith("a_id/5599")
    severity = dict((r["cve"], r["severity"]) for r in ctk.VULNERABILITIES)
    assert severity == dict(severity, **{
        "CVE-2024-0132": "critical", "CVE-2024-0133": "medium", "CVE-2024-0134": "medium",
        "CVE-2024-0135": "high", "CVE-2024-0136": "high", "CVE-2024-0137": "medium",
        "CVE-2025-23359": "high", "CVE-2025-23266": "critical", "CVE-2025-23267": "high"})


@pytest.mark.parametrize("case", CASES["vulnerable"], ids=[c["version"] for c in CASES["vulnerable"]])
def test_vulnerable_table(case):
    verdict = ctk.vulnerable(case["version"], case["accepted"])
    assert verdict["refused"] is case["refused"]
    assert sorted(r["cve"] for r in verdict["cves"]) == sorted(case["cves"])
    assert verdict["fixed_in"] == case["fixed_in"]
    if case["refused"]:
        text = ctk.refusal_text(case["version"], verdict, "nvidia_container_toolkit_version")
        for cve in verdict["open"]:
            assert cve in text
        assert "nvidia_container_toolkit_version to %s or newer" % case["fixed_in"] in text
        assert "nvidia_container_toolkit_accept_cves" in text and "nvidia.custhelp.com" in text


@pytest.mark.parametrize("case", CASES["inputs"], ids=[str(i) for i in range(len(CASES["inputs"]))])
def test_input_problems(case):
    problems = ctk.input_problems(dict(GOOD, **case["inputs"]))
    if not case["expect"]:
        assert problems == []
    else:
        assert len(problems) == 1, problems
        for text in case["expect"]:
            assert text in problems[0]


@pytest.mark.parametrize("case", CASES["engines"], ids=[str(i) for i in range(len(CASES["engines"]))])
def test_choose_engines(case):
    result = ctk.choose_engines(case["wanted"], case["present"])
    assert result["value"] == case["value"]
    assert case["reason"] in result["reason"]


@pytest.mark.parametrize("case", CASES["cdi"], ids=[str(i) for i in range(len(CASES["cdi"]))])
def test_cdi_decision(case):
    result = ctk.cdi_decision(case["cdi"], case["loaded"], "no driver here", case["in_container"],
                              str(case["version"]))
    assert result["generate"] is case["generate"] and case["reason"] in result["reason"]
    assert result["units"] is case["units"]


@pytest.mark.parametrize("case", CASES["smoke"], ids=[str(i) for i in range(len(CASES["smoke"]))])
def test_smoke_decision(case):
    result = ctk.smoke_decision(case["enabled"], case["loaded"], case["engines"], case["in_container"])
    assert result["run"] is case["run"] and case["reason"] in result["reason"]


@pytest.mark.parametrize("case", CASES["restart"], ids=[str(i) for i in range(len(CASES["restart"]))])
def test_restart_decision(case):
    result = ctk.restart_decision(case["engines"], case["docker"], case["allowed"])
    assert result["ok"] is case["ok"] and case["reason"] in result["reason"], result


@pytest.mark.parametrize("case", CASES["converged"], ids=[c["id"] for c in CASES["converged"]])
def test_converged(case):
    result = ctk.converged(case["state"])
    assert result["current"] is case["current"]
    assert len(result["reasons"]) == len(case["reasons"]), result["reasons"]
    for text, reason in zip(case["reasons"], result["reasons"]):
        assert text in reason
