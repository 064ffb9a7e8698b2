"""core/versions.py: one parser for dotted numeric versions."""
import pytest

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
