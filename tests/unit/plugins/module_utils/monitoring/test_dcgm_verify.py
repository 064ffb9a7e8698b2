# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dcgm_exporter's verify decision (plugins/module_utils/monitoring/dcgm_verify.py) from its case
table, through the filter gpuops.dlserver.__private.dcgm_exporter_verify_when too."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuops.dlserver.plugins.filter.__private.dcgm_exporter_verify_when import dcgm_exporter_verify_when
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import dcgm_verify

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data')
with open(os.path.join(DATA, 'dcgm_verify_cases.yml')) as _handle:
    CASES = yaml.safe_load(_handle)


@pytest.mark.parametrize('case', CASES['cases'], ids=[c['id'] for c in CASES['cases']])
def test_verify_when(case):
    got = dcgm_verify.verify_when(case['results'], case['check_mode'])
    assert got['run'] is case['expect']['run']
    assert got['changed'] == case['expect']['changed']
    assert case['expect'].get('reason', '') in got['reason']
    assert dcgm_exporter_verify_when(case['results'], case['check_mode']) == got


@pytest.mark.parametrize('case', CASES['bad'], ids=[c['id'] for c in CASES['bad']])
def test_bad_results_fail_naming_the_filter(case):
    with pytest.raises(dcgm_verify.VerifyError, match=case['error']):
        dcgm_verify.verify_when(case['results'], case['check_mode'])
    with pytest.raises(AnsibleFilterError, match='dcgm_exporter_verify_when'):
        dcgm_exporter_verify_when(case['results'], case['check_mode'])
