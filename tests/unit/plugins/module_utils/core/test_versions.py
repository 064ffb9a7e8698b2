"""core/versions.py: one parser for dotted numeric versions, driver branches and driver versions
(the driver cases: data/driver_versions_cases.yml)."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.core import versions

CASES = [
    ('580.95.05', None, (580, 95, 5)),
    ('v1.30.4-eks-1', None, (1, 30, 4)),
    ('1.30', 3, (1, 30, 0)),
    ('12.4.1', 2, (12, 4)),
    (' 535.261.03 ', None, (535, 261, 3)),
    ('1.17.8+gpuops.testdouble', None, (1, 17, 8)),
    (580, None, (580,)),
]


@pytest.mark.parametrize('text,parts,expected', CASES)
def test_numeric(text, parts, expected):
    assert versions.numeric(text, parts=parts) == expected


@pytest.mark.parametrize('text', ['', 'abc', 'R580', None, True, '1.2\nrm -rf /', '.1', '1..2'])
def test_numeric_refuses_what_is_no_version(text):
    with pytest.raises(ValueError, match='kubernetes_version'):
        versions.numeric(text, what='kubernetes_version')
    assert versions.numeric_or_none(text) is None


def test_branch_and_dotted():
    assert versions.branch('580.95.05') == 580
    assert versions.branch('nonsense') is None
    assert versions.dotted((12, 4)) == '12.4'


# --------------------------------------------------------------------------- driver branches and versions

def _driver_cases():
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), 'data', 'driver_versions_cases.yml')
    with open(path) as handle:
        return yaml.safe_load(handle)


DRIVER = _driver_cases()


@pytest.mark.parametrize('case', DRIVER['branches']['valid'], ids=lambda c: repr(c['value']))
def test_driver_branch(case):
    assert versions.driver_branch(case['value']) == case['branch']
    assert versions.driver_branch_or_none(case['value']) == case['branch']


@pytest.mark.parametrize('case', DRIVER['branches']['invalid'], ids=lambda c: repr(c['value']))
def test_driver_branch_refuses(case):
    with pytest.raises(ValueError, match='nvidia_driver_branch must be a driver branch number') as exc:
        versions.driver_branch(case['value'])
    assert repr(case['value']) in str(exc.value)
    with pytest.raises(ValueError, match='the branch option'):
        versions.driver_branch(case['value'], what='the branch option')
    assert versions.driver_branch_or_none(case['value']) is None


@pytest.mark.parametrize('case', DRIVER['versions']['valid'], ids=lambda c: repr(c['value']))
def test_driver_version(case):
    parsed = versions.driver_version(case['value'])
    assert parsed == {'upstream': case['upstream'], 'branch': case['branch'], 'epoch': case['epoch'],
                      'revision': case['revision'], 'numbers': tuple(case['numbers'])}
    assert versions.driver_version_or_none(case['value']) == parsed
    assert versions.branch(case['value']) == case['branch']


@pytest.mark.parametrize('case', DRIVER['versions']['invalid'], ids=lambda c: repr(c['value']))
def test_driver_version_refuses(case):
    with pytest.raises(ValueError, match='nvidia_driver_version must be a driver version') as exc:
        versions.driver_version(case['value'])
    assert repr(case['value']) in str(exc.value)
    assert versions.driver_version_or_none(case['value']) is None
    assert versions.branch(case['value']) is None
