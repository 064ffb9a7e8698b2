# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Table-driven tests of the artifact mirror's index (plugins/module_utils/packages/mirror.py).

Cases live in data/mirror_cases.yml; {A}, {B}, {C} stand for 64-hex digests.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import mirror

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data', 'mirror_cases.yml')
SUBST = {'{A}': 'a' * 64, '{B}': 'b' * 64, '{C}': 'c' * 64, '{A_UPPER}': 'A' * 64}


def expand(value):
    if isinstance(value, str):
        for key, digest in SUBST.items():
            value = value.replace(key, digest)
        return value
    if isinstance(value, list):
        return [expand(v) for v in value]
    if isinstance(value, dict):
        return {expand(k): expand(v) for k, v in value.items()}
    return value


with open(DATA) as _handle:
    CASES = expand(yaml.safe_load(_handle))


@pytest.mark.parametrize('case', CASES['paths'], ids=lambda c: repr(c['path']))
def test_relative_paths(case):
    ok, reason = mirror.check_relative_path(case['path'])
    assert ok is case['ok'], reason
    if 'reason' in case:
        assert case['reason'] in reason


@pytest.mark.parametrize('case', CASES['checksums'], ids=lambda c: repr(c['value'])[:20])
def test_checksums(case):
    digest, reason = mirror.parse_checksum(case['value'])
    assert digest == case['digest'], reason


@pytest.mark.parametrize('case', CASES['artifacts'], ids=lambda c: c['name'])
def test_artifact_lists(case):
    problems = mirror.check_artifacts(case['artifacts'], need_url=case.get('need_url', True))
    assert len(problems) == len(case['problems']), problems
    for got, want in zip(problems, case['problems']):
        assert want in got


@pytest.mark.parametrize('case', CASES['merge'], ids=lambda c: c['name'])
def test_merge(case):
    text, changes = mirror.merge_sums(case['old'], case['updates'], case.get('replace_under', ()))
    assert text == case['text']
    assert changes == case['changes']


def _tree(tmp_path, files):
    for rel, content in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return {rel: hashlib.sha256(content).hexdigest() for rel, content in files.items()}


def test_scan_hashes_every_file_but_the_index_and_hidden_ones(tmp_path):
    sums = _tree(tmp_path, {'apt/cuda/a.deb': b'a', 'apt/cuda/sub/b': b'b', 'files/c': b'c'})
    (tmp_path / 'apt' / 'cuda' / '.tmp').write_bytes(b'x')
    (tmp_path / 'SHA256SUMS').write_text('')
    assert mirror.scan_tree(str(tmp_path), 'apt/cuda') == {k: v for k, v in sums.items() if k.startswith('apt/')}
    assert mirror.sha256_file(str(tmp_path / 'files' / 'c')) == sums['files/c']


def test_index_mirror_records_fetched_files_and_rescans(tmp_path):
    sums = _tree(tmp_path, {'apt/cuda/a.deb': b'a', 'files/c': b'c'})
    (tmp_path / 'SHA256SUMS').write_text('%s  apt/cuda/gone.deb\n%s  other/kept\n' % ('d' * 64, 'e' * 64))
    old, new, changes, problems = mirror.index_mirror(
        str(tmp_path), [{'path': 'files/c', 'checksum': 'sha256:' + sums['files/c']}], ['apt/cuda'])
    assert problems == []
    assert old.endswith('other/kept\n')
    assert new == '%s  apt/cuda/a.deb\n%s  files/c\n%s  other/kept\n' % (sums['apt/cuda/a.deb'], sums['files/c'], 'e' * 64)
    assert changes['removed'] == ['apt/cuda/gone.deb'] and changes['kept'] == 1
    mirror.write_index(str(tmp_path), new)
    assert (tmp_path / 'SHA256SUMS').read_text() == new
    assert mirror.index_mirror(str(tmp_path), [], ['apt/cuda'])[1] == new


@pytest.mark.parametrize('artifacts, scan, want', [
    ([{'path': 'files/c', 'checksum': 'sha256:' + '0' * 64}], [], 'files/c: sha256 is'),
    ([{'path': 'files/missing', 'checksum': 'sha256:' + '0' * 64}], [], 'files/missing: missing from the mirror'),
    ([], ['nowhere'], 'scan: nowhere is not a directory'),
    ([], ['../up'], "scan: path '../up' must not contain"),
    ([{'path': '/abs', 'checksum': 'sha256:' + '0' * 64}], [], 'must be relative'),
])
def test_index_mirror_refuses(tmp_path, artifacts, scan, want):
    _tree(tmp_path, {'files/c': b'c'})
    old, new, dummy, problems = mirror.index_mirror(str(tmp_path), artifacts, scan)
    assert any(want in p for p in problems), problems
