"""meta/runtime.yml's requires_ansible states exactly the ansible-core range make test runs: from
the oldest end's pin (requirements/constraints.txt, every stage) to below the minor after the
newest end's pin (requirements/newest.txt: sanity, the unit stage, nvidia_driver@newest). This
file runs in both venvs (make unit, make unit-newest): each must hold one of the two ends."""
import os
import re

import ansible.release
import pytest
import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PIN = re.compile(r'ansible-core==(?P<version>[0-9]+\.[0-9]+\.[0-9]+)')


def pin_in(name):
    """The ansible-core version a requirements file pins (exactly one pin)."""
    with open(os.path.join(ROOT, "requirements", name)) as fh:
        pins = [m.group("version") for m in (PIN.fullmatch(line.strip()) for line in fh) if m]
    assert len(pins) == 1, "requirements/%s must pin ansible-core exactly once: %r" % (name, pins)
    return Version(pins[0])


def requires_ansible(text=None):
    if text is None:
        with open(os.path.join(ROOT, "meta", "runtime.yml")) as fh:
            text = fh.read()
    return yaml.safe_load(text)["requires_ansible"]


def expected_range(oldest, newest):
    return ">=%s,<%d.%d.0" % (oldest, newest.major, newest.minor + 1)


def test_requires_ansible_is_the_tested_range():
    oldest, newest = pin_in("constraints.txt"), pin_in("newest.txt")
    assert oldest < newest
    assert requires_ansible() == expected_range(oldest, newest)
    spec = SpecifierSet(requires_ansible())
    assert oldest in spec and newest in spec


@pytest.mark.parametrize("claimed, oldest, newest, holds", [
    (">=2.19.14,<2.22.0", "2.19.14", "2.21.5", True),
    # the old claim: a lower end that no stage runs
    (">=2.19.0,<2.22.0", "2.19.14", "2.21.5", False),
    # an upper bound past the newest's minor
    (">=2.19.14,<2.23.0", "2.19.14", "2.21.5", False),
    (">=2.19.14", "2.19.14", "2.21.5", False),
])
def test_the_rule_tells_a_claim_apart(claimed, oldest, newest, holds):
    assert (requires_ansible('requires_ansible: "%s"\n' % claimed)
            == expected_range(Version(oldest), Version(newest))) is holds


def test_this_venv_is_one_of_the_two_ends():
    running = Version(ansible.release.__version__)
    assert running in (pin_in("constraints.txt"), pin_in("newest.txt")), (
        "ansible-core %s runs the unit tests; make setup / make setup-newest install the two ends" % running)
