# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every name of the SEL decoding (bmc/sel.py) is the string FreeIPMI publishes for the IPMI 2.0
table row it decodes (bmc/sel_sources.py), so docs/vendor-facts.md's source of each row is true."""

import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import sel, sel_sources


def _norm(text):
    """Without FreeIPMI's explanations (a parenthesis after the name, the text after a full stop),
    case, spaces and punctuation."""
    text = re.sub(r'\s*\([^)]*\)', '', text)  # "(CPU didn't start)", "(used hang is ...)", on both sides
    text = re.split(r'\.\s', text)[0]
    return re.sub(r'[^a-z0-9]', '', text.lower())


@pytest.mark.parametrize('key', sorted(sel.OFFSETS), ids=lambda k: '0x%02X-0x%02X' % k)
def test_each_offset_is_freeipmis_string(key):
    code, offset = key
    name = sel.OFFSETS[key][1]
    quoted = sel_sources.SENSOR_SPECIFIC[code][1][offset]
    assert _norm(name) == _norm(quoted), (name, quoted)


@pytest.mark.parametrize('offset', sorted(sel.THRESHOLDS))
def test_each_threshold_is_freeipmis_string(offset):
    assert _norm(sel.THRESHOLDS[offset]) == _norm(sel_sources.THRESHOLD[1][offset])


@pytest.mark.parametrize('offset', sorted(sel.REDUNDANCY))
def test_each_redundancy_state_is_freeipmis_string(offset):
    assert _norm(sel.REDUNDANCY[offset]) == _norm(sel_sources.REDUNDANCY[1][offset])


@pytest.mark.parametrize('name', sorted(sel.TYPE_NAMES))
def test_each_sensor_type_code_is_freeipmis(name):
    assert sel_sources.SENSOR_TYPES[sel.TYPE_NAMES[name]] == name


def test_a_wrong_offset_would_be_caught():
    assert _norm('Uncorrectable ECC / other uncorrectable memory error') != _norm(
        sel_sources.SENSOR_SPECIFIC[sel.MEMORY][1][0x00])


def test_every_row_quotes_its_string():
    assert 'ipmi_sensor_type_memory[0x01] = "Uncorrectable ECC/other uncorrectable memory error"' in \
        sel_sources.quote('offset', sel.MEMORY, 0x01)
    assert sel_sources.quote('type', 0x04).endswith('[0x04] = "Fan"')
