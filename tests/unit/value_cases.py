"""What the value-check tests share (url_trust, value_kinds, value_posture; issue 37): a walk over
every option of every role's argument spec, and the check of one case-table row's outcome."""
import os

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ROLES_DIR = os.path.join(ROOT, "roles")


def spec_options(roles_dir=ROLES_DIR):
    """(role, entry point, name, spec) of every option of every argument spec."""
    for role in sorted(os.listdir(roles_dir)):
        path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
        if not os.path.isfile(path):
            continue
        with open(path) as handle:
            specs = yaml.safe_load(handle)["argument_specs"]
        for entry, body in specs.items():
            for name, spec in ((body or {}).get("options") or {}).items():
                yield role, entry, name, spec or {}


def check_case(case, found):
    """A case-table row's outcome: no problem where ``expect`` is empty (and the row says why the
    value is accepted), else every ``expect`` part among the problems (``count`` of them if given)."""
    if not case["expect"]:
        assert found == [], found
        assert case.get("why"), "an accepted value says why it is accepted"
        return
    text = " | ".join(found)
    for part in case["expect"]:
        assert part in text, (part, text)
    if "count" in case:
        assert len(found) == case["count"], found
