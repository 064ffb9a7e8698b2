# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpuops_mirror_url repoints every vendor URL of the roles' defaults (packages/mirror_urls.py).

Cases live in data/mirror_urls_cases.yml. The roles' defaults are read from the tree, so a new
URL default that the table does not know fails here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.filter.mirror_urls import mirror_urls, role_defaults
from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import mirror_urls as mu

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..', '..', '..', '..'))
with open(os.path.join(HERE, '..', 'data', 'mirror_urls_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)
DEFAULTS = role_defaults(os.path.join(REPO, 'roles'))


def url_defaults():
    """Every role variable whose default (defaults/main.yml or an argument spec) is an http(s) URL."""
    found = {}
    for path in glob.glob(os.path.join(REPO, 'roles', '*', 'defaults', 'main.yml')):
        with open(path) as handle:
            for name, value in (yaml.safe_load(handle) or {}).items():
                if isinstance(value, str) and re.match(r'https?://', value):
                    found[name] = value
    for name, value in DEFAULTS.items():
        if isinstance(value, str) and re.match(r'https?://', value):
            found[name] = value
    return found


def test_every_url_default_is_in_the_table():
    urls = url_defaults()
    assert urls, 'no URL defaults found: the test reads the wrong tree'
    unknown = sorted(set(urls) - set(mu.MIRRORED) - set(mu.NOT_MIRRORED))
    assert not unknown, 'URL defaults the mirror table does not know: %s' % unknown
    assert set(CASES['expected']) == set(mu.MIRRORED)


@pytest.mark.parametrize('name', sorted(mu.MIRRORED))
def test_each_default_takes_the_mirror(name):
    options = {name: {'type': 'str', 'default': DEFAULTS[name]}}
    out, problems = mu.apply_mirror(options, {}, CASES['mirror'])
    assert problems == []
    assert out[name] == CASES['expected'][name]
    # the same through the values the play gives: the role's default as its defaults file has it
    out, problems = mu.apply_mirror(options, {name: DEFAULTS[name]}, CASES['mirror'])
    assert problems == [] and out[name] == CASES["expected"][name]


@pytest.mark.parametrize('name', sorted(mu.MIRRORED))
def test_a_value_the_inventory_set_is_kept(name):
    options = {name: {'type': 'str', 'default': DEFAULTS[name]}}
    mine = 'http://172.30.99.1:8099/doubles/%s' % name
    out, problems = mu.apply_mirror(options, {name: mine}, CASES['mirror'])
    assert problems == [] and out[name] == mine
    value, reason = mu.mirrored(name, mine, DEFAULTS[name], 'http://m')
    assert value == mine and 'kept' in reason


@pytest.mark.parametrize('name', sorted(mu.MIRRORED))
def test_no_mirror_changes_nothing(name):
    options = {name: {'type': 'str', 'default': DEFAULTS[name]}}
    assert mu.apply_mirror(options, {}, '') == ({}, [])
    assert mu.apply_mirror(options, {name: DEFAULTS[name]}, None) == ({name: DEFAULTS[name]}, [])


def test_other_variables_are_left_alone():
    options = {'node_exporter_version': {'type': 'str', 'default': '1.9.1'}}
    assert mu.apply_mirror(options, {}, 'http://m') == ({}, [])
    assert mu.mirrored('node_exporter_version', '1.9.1', '1.9.1', 'http://m')[0] == '1.9.1'


@pytest.mark.parametrize('case', CASES['mirror_urls'], ids=lambda c: repr(c['value']))
def test_mirror_url_checks(case):
    url, problem = mu.check_mirror_url(case['value'])
    if 'problem' in case:
        assert problem and problem.startswith(case['problem']) and url == ''
        out, problems = mu.apply_mirror({'volcano_chart_repo_url': {'default': 'https://x'}}, {}, case['value'])
        assert problems == [problem] and out == {}
    else:
        assert problem is None and url == case['url']


def test_filter_rows_are_the_roles_defaults():
    rows = mirror_urls(CASES['mirror'])
    assert [r['variable'] for r in rows] == sorted(mu.MIRRORED)
    for row in rows:
        assert row['vendor_url'] == (DEFAULTS[row['variable']] or '')
        assert row['url'] == CASES['expected'][row['variable']]
    assert all(r['url'] is None for r in mirror_urls(''))


def test_filter_refuses_a_bad_mirror_url():
    from ansible.errors import AnsibleFilterError
    with pytest.raises(AnsibleFilterError, match='gpuops_mirror_url must be'):
        mirror_urls('http://a b')


def test_table_row_without_a_role_fails():
    with pytest.raises(ValueError, match='no role declares'):
        mu.mirror_table({}, '')
