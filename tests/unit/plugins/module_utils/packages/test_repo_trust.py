"""Key trust of every repository the collection adds (plugins/module_utils/packages/repo_trust.py):
the URL and checksum rules from data/repo_trust_cases.yml, and the key export with real gpg (a
two-key file)."""
import hashlib
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import repo_trust

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(HERE, "data", "repo_trust_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)
NAMES = {"url_var": "KEY_URL", "checksum_var": "KEY_CHECKSUM", "fingerprint_var": "KEY_FINGERPRINT"}


@pytest.mark.parametrize("case", CASES["key_problems"], ids=[c["id"] for c in CASES["key_problems"]])
def test_key_problems(case):
    problems = " | ".join(repo_trust.key_problems(dict(NAMES, **case["spec"])))
    if not case["expect"]:
        assert problems == ""
    for part in case["expect"]:
        assert part in problems, (part, problems)


def test_two_key_file_exports_only_the_wanted_key(two_key_file, gpg_host, fingerprints_in, tmp_path):
    path, fprs = two_key_file
    spec = dict(NAMES, url="file://%s" % path, sha256="", fingerprint=fprs[0])
    keyring, info = repo_trust.fetch_key(gpg_host, spec, str(tmp_path))
    assert info["fingerprints"] == [fprs[0]] and info["dropped"] == [fprs[1]]
    assert fingerprints_in(keyring)[:1] == [fprs[0]] and fprs[1] not in fingerprints_in(keyring)


def test_two_key_file_without_a_fingerprint_is_refused(two_key_file, gpg_host, tmp_path):
    path, fprs = two_key_file
    spec = dict(NAMES, url="file://%s" % path, sha256=hashlib.sha256(path.read_bytes()).hexdigest(), fingerprint="")
    with pytest.raises(repo_trust.Failure) as err:
        repo_trust.fetch_key(gpg_host, spec, str(tmp_path))
    assert "carries 2 keys" in err.value.msg and fprs[1] in err.value.msg and "KEY_FINGERPRINT" in err.value.msg


def test_wrong_checksum_is_refused_naming_the_variable(two_key_file, gpg_host, tmp_path):
    path, fprs = two_key_file
    spec = dict(NAMES, url="file://%s" % path, sha256="sha256:" + "0" * 64, fingerprint=fprs[0])
    with pytest.raises(repo_trust.Failure, match="KEY_CHECKSUM"):
        repo_trust.fetch_key(gpg_host, spec, str(tmp_path))


def test_missing_file_url_gives_the_roles_error_not_a_bare_errno(gpg_host, tmp_path):
    spec = dict(NAMES, url="file://%s/absent.asc" % tmp_path, sha256="", fingerprint="A" * 40)
    with pytest.raises(repo_trust.Failure) as err:
        repo_trust.fetch_key(gpg_host, spec, str(tmp_path))
    assert "cannot read the repository key" in err.value.msg and "KEY_URL" in err.value.msg
    assert "No such file or directory" in err.value.msg


def test_untrustworthy_spec_is_refused_before_any_download(gpg_host, tmp_path):
    # plain http with nothing pinned (a fingerprint alone verifies the key since issue 37)
    spec = dict(NAMES, url="http://mirror.example/gpgkey", sha256="", fingerprint="")
    with pytest.raises(repo_trust.Failure, match="plain http"):
        repo_trust.fetch_key(gpg_host, spec, str(tmp_path))
