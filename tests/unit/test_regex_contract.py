"""Validation patterns match the whole value (issue 19): a pattern that ends in ``$`` matches
before a trailing newline, so ``"quiet\\n"`` passes a check meant for one kernel parameter and
the newline reaches a file, a unit or a command line.

The contract: no ``re.match/compile/search`` pattern in ``plugins/`` ends in ``$`` (use
``re.fullmatch`` or ``\\Z``); and the validators of the files fixed here refuse the newline case
of every pattern they check.
"""
import os
import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.engines import container_toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning_inputs

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# A call of re.match / re.compile / re.search whose (raw) string literal ends in $ before its quote.
DOLLAR_CALL = re.compile(r"""re\.(match|compile|search)\(\s*r?(?P<q>['"])(?:(?!(?P=q)).)*\$(?P=q)""")

# With re.M, $ is a line anchor on purpose (parsers of multi-line text): not a validation.
MULTILINE = re.compile(r"re\.(M|MULTILINE)\b")


def _python_files():
    for top, _dirs, files in os.walk(os.path.join(REPO, "plugins")):
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.relpath(os.path.join(top, name), REPO)


PY_FILES = sorted(_python_files())


def dollar_patterns(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as handle:
        return ["%s:%d: %s" % (path, number, line.strip())
                for number, line in enumerate(handle, 1)
                if DOLLAR_CALL.search(line) and not MULTILINE.search(line)]


def test_the_scanner_sees_what_it_must():
    assert DOLLAR_CALL.search("X = re.compile(r'^[a-z]+$')")
    assert DOLLAR_CALL.search('if re.match(r"^[0-9a-f]{40}$", v):')
    assert not DOLLAR_CALL.search("X = re.compile(r'^[a-z]+\\Z')")
    assert not DOLLAR_CALL.search("re.fullmatch(r'[a-z]+', v)")
    assert MULTILINE.search("X = re.compile(r'^version = 1$', re.M)")


@pytest.mark.parametrize("path", PY_FILES)
def test_no_validation_pattern_ends_in_dollar(path):
    found = dollar_patterns(path)
    assert not found, "patterns ending in $ accept a trailing newline; use re.fullmatch or \\Z:\n" + "\n".join(found)


OS_TUNING_BASE = {
    "sysctl_defaults": {}, "sysctl_group": {}, "sysctl_overwrite": {}, "limits": [], "limits_extra": [],
    "systemd_limits": {}, "kernel_cmdline": [], "unattended_blacklist": [], "reboot_timeout": 900,
    "sysctl_file": "/etc/sysctl.d/90-gpuops.conf", "limits_file": "/etc/security/limits.d/90-gpuops.conf",
    "systemd_limits_file": "/etc/systemd/system.conf.d/90-gpuops.conf", "status_file": "/etc/gpuops/os_tuning.json",
}

OS_TUNING_NEWLINE = [
    ("kernel_cmdline", {"kernel_cmdline": ["quiet\n"]}),
    ("sysctl key", {"sysctl_overwrite": {"vm.swappiness\n": 10}}),
    ("limits domain", {"limits": [{"domain": "*\n", "type": "soft", "item": "nofile", "value": 1}]}),
    ("limits value", {"limits": [{"domain": "*", "type": "soft", "item": "nofile", "value": "1\n"}]}),
    ("systemd limit key", {"systemd_limits": {"DefaultLimitNOFILE\n": 1024}}),
    ("systemd limit value", {"systemd_limits": {"DefaultLimitNOFILE": "1024\n"}}),
    ("blacklist glob", {"unattended_blacklist": ["nvidia-*\n"]}),
    ("sysctl_file", {"sysctl_file": "/etc/sysctl.d/90-gpuops.conf\n"}),
    ("limits_file", {"limits_file": "/etc/security/limits.d/90-gpuops.conf\n"}),
    ("systemd_limits_file", {"systemd_limits_file": "/etc/systemd/system.conf.d/90-gpuops.conf\n"}),
    ("status_file", {"status_file": "/etc/gpuops/os_tuning.json\n"}),
]


def test_os_tuning_base_is_clean():
    assert os_tuning_inputs.problems(dict(OS_TUNING_BASE)) == []


@pytest.mark.parametrize("name,override", OS_TUNING_NEWLINE, ids=[c[0] for c in OS_TUNING_NEWLINE])
def test_os_tuning_refuses_a_trailing_newline(name, override):
    assert os_tuning_inputs.problems(dict(OS_TUNING_BASE, **override)), name


CTK_BASE = {
    "version": "1.17.8", "repo_url": "https://nvidia.github.io/libnvidia-container/stable/deb",
    "keyring_url": "https://nvidia.github.io/libnvidia-container/gpgkey", "keyring_checksum": "",
    "keyring_fingerprint": "C95B321B61E88C1809C4F759DDCAE044F796ECB0", "engines": [], "accept_cves": [],
    "runtime_settings": {}, "status_file": "/etc/gpuops/nvidia_container_toolkit.json",
    "smoke_test_image": "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04",
}

CTK_NEWLINE = [
    ("version", {"version": "1.17.8\n"}),
    ("repo_url", {"repo_url": "https://nvidia.github.io/libnvidia-container/stable/deb\n"}),
    ("keyring_url", {"keyring_url": "https://nvidia.github.io/libnvidia-container/gpgkey\n"}),
    ("keyring_checksum", {"keyring_checksum": "sha256:" + "a" * 64 + "\n"}),
    ("accept_cves", {"accept_cves": ["CVE-2025-23266\n"]}),
    ("status_file", {"status_file": "/etc/gpuops/nvidia_container_toolkit.json\n"}),
    ("smoke_test_image", {"smoke_test_image": "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04\n"}),
]


def test_container_toolkit_base_is_clean():
    assert container_toolkit.input_problems(dict(CTK_BASE)) == []


@pytest.mark.parametrize("name,override", CTK_NEWLINE, ids=[c[0] for c in CTK_NEWLINE])
def test_container_toolkit_refuses_a_trailing_newline(name, override):
    assert container_toolkit.input_problems(dict(CTK_BASE, **override)), name
