# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fail on ansible-core deprecation warnings in ansible-playbook output.

    python tools/deprecations.py [--allow FILE] [--root DIR] OUTPUT...

OUTPUT is what ansible-playbook printed (its stdout and stderr, `-` for standard input) or the
log it wrote (ANSIBLE_LOG_PATH: every ansible-playbook of a run, nested ones included, which is
what `make molecule-one SCENARIO=NAME@newest` hands over). Every `[DEPRECATION WARNING]` is read
with its `Origin:` (the file, line and column ansible-core names, when it names one) and is one
of:

- the collection's own: its origin lies in the collection (under --root, the checkout, or in
  any `ansible_collections/gpuops/dlserver/` tree) or its message names `gpuops.dlserver`.
  Always a failure: the allow-list cannot excuse it.
- third-party (ansible-core itself, another collection, a setting of the environment): a failure
  unless an entry of the allow-list matches it; each entry carries the reason it is allowed.

The allow-list (tests/deprecations_allowed.yml) is a YAML list of
`{message: REGEX, reason: TEXT}`: REGEX is searched in the deprecation's message, TEXT must say
why it is not the collection's to fix. Exits 0 when every deprecation is allowed (or there is
none), 1 with the list of the others, 2 on bad input (an unreadable file, a bad allow-list).
The same deprecation seen more than once (per process, per run) is listed once with its count."""

from __future__ import absolute_import, division, print_function

import argparse
import collections
import os
import re
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MARKER = "[DEPRECATION WARNING]:"
ANSI = re.compile(r'\x1b\[[0-9;]*m')
# What precedes a line's own text: `make test`'s lane prefix, molecule's frame around the
# output of its ansible-playbook ("  │ "), and ANSIBLE_LOG_PATH's
# "2026-12-07 06:49:27,320 p=4335 u=root n=ansible INFO| ".
PREFIX = re.compile(r'(?:\[lane [0-9]+\] )?(?:\s*\u2502 ?)?'
                    r'(?:[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:,]+ p=[0-9]+ u=\S+ n=\S+ [A-Z]+\| )?')
ORIGIN = re.compile(r'Origin: (?P<path>.+?)(?::(?P<line>[0-9]+)(?::(?P<column>[0-9]+))?)?')
# A line that starts another record: the deprecation's own lines end before it.
RECORD = re.compile(r'\[(?:DEPRECATION WARNING|WARNING|ERROR)\]:|(?:TASK|PLAY|RUNNING HANDLER|PLAY RECAP) \[|'
                    r'(?:ok|changed|skipping|fatal|failed|included):')
COLLECTION_TREE = "/ansible_collections/gpuops/dlserver/"
COLLECTION_NAME = "gpuops.dlserver"

Deprecation = collections.namedtuple("Deprecation", "message origin")


def _text(line):
    """A line without colours, line end and the lane or log prefix."""
    return PREFIX.sub("", ANSI.sub("", line.rstrip("\r\n")), count=1)


def parse(lines):
    """[Deprecation] in order of appearance, one per warning printed. The message is the
    marker's line and the lines that follow it up to a blank line, its Origin: line or another
    record; origin is "path:line:column" as ansible-core printed it, or None. Output that
    molecule wrapped at its terminal's width is joined again: message lines with a space, an
    origin that starts on the line after "Origin:" without one (the path is cut anywhere)."""
    found = []
    lines = list(lines)
    i = 0
    while i < len(lines):
        text = _text(lines[i])
        at = text.find(MARKER)
        if at < 0:
            i += 1
            continue
        message = [text[at + len(MARKER):].strip()]
        origin = None
        i += 1
        while i < len(lines):
            text = _text(lines[i])
            if not text.strip() or RECORD.match(text):
                break
            if text.strip() == "Origin:":
                wrapped = []
                i += 1
                while i < len(lines) and _text(lines[i]).strip():
                    wrapped.append(_text(lines[i]).strip())
                    i += 1
                if ORIGIN.fullmatch("Origin: " + "".join(wrapped)):
                    origin = "".join(wrapped)
                break
            match = ORIGIN.fullmatch(text.strip())
            if match:
                origin = text.strip()[len("Origin: "):]
                i += 1
                break
            message.append(text.strip())
            i += 1
        found.append(Deprecation(" ".join(m for m in message if m), origin))
    return found


def origin_path(origin):
    """The file of an origin ("path:line:column"), or None: also for what is not an absolute
    path, such as ansible-core's `<unknown>` (a template whose source it lost)."""
    if origin is None:
        return None
    match = ORIGIN.fullmatch("Origin: " + origin)
    if not match or not os.path.isabs(match.group("path")):
        return None
    return match.group("path")


def is_own(deprecation, roots):
    """(own, reason): whether the collection's code caused it, and why that is decided."""
    path = origin_path(deprecation.origin)
    if path is not None:
        real = os.path.realpath(path)
        for root in roots:
            root = os.path.realpath(root)
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                return True, "its origin %s lies in the collection (%s)" % (path, root)
        if COLLECTION_TREE in path or COLLECTION_TREE in real:
            return True, "its origin %s lies in a tree of the collection" % path
    if COLLECTION_NAME in deprecation.message:
        return True, "its message names %s" % COLLECTION_NAME
    if path is None:
        return False, ("ansible-core names no file as its origin (%s): not attributed to the collection"
                       % (deprecation.origin or "none"))
    return False, "its origin %s lies outside the collection" % path


def load_allow(path):
    """[(compiled regex, reason)] from the allow-list file; ValueError when an entry is not a
    mapping of a valid regex `message` and a non-empty `reason` (nothing else)."""
    if path is None:
        return []
    with open(path) as fh:
        data = yaml.safe_load(fh)
    if data is None:
        return []
    if not isinstance(data, list):
        raise ValueError("%s: the allow-list is a YAML list of {message, reason}, not %s" % (path, type(data).__name__))
    entries = []
    for n, entry in enumerate(data, 1):
        if not isinstance(entry, dict) or set(entry) != {"message", "reason"}:
            raise ValueError("%s: entry %d must have exactly the keys message and reason: %r" % (path, n, entry))
        if not isinstance(entry["reason"], str) or not entry["reason"].strip():
            raise ValueError("%s: entry %d has no reason: say why the deprecation is not the collection's to fix" % (path, n))
        if not isinstance(entry["message"], str) or not entry["message"]:
            raise ValueError("%s: entry %d: message must be a non-empty regular expression" % (path, n))
        try:
            entries.append((re.compile(entry["message"]), entry["reason"].strip()))
        except re.error as exc:
            raise ValueError("%s: entry %d: message is not a regular expression: %s" % (path, n, exc))
    return entries


def judge(deprecations, allow, roots):
    """{"failures": [...], "allowed": [...], "unused": [reason...]}: each deprecation once, in
    order of first appearance, as a dict of message, origin, count, own, why."""
    counts = collections.Counter(deprecations)
    failures, allowed, used = [], [], set()
    for dep in dict.fromkeys(deprecations):
        own, why = is_own(dep, roots)
        entry = dict(message=dep.message, origin=dep.origin, count=counts[dep], own=own, why=why)
        match = None if own else next(((n, r) for n, (rx, r) in enumerate(allow) if rx.search(dep.message)), None)
        if match is None:
            if own and any(rx.search(dep.message) for rx, _r in allow):
                entry["why"] = why + "; the allow-list cannot excuse the collection's own code"
            failures.append(entry)
        else:
            used.add(match[0])
            entry["why"] = "allowed: %s" % match[1]
            allowed.append(entry)
    unused = [reason for n, (_rx, reason) in enumerate(allow) if n not in used]
    return {"failures": failures, "allowed": allowed, "unused": unused}


def report(result, sources):
    """The lines printed: a verdict, then each failure and each allowed deprecation."""
    failures, allowed = result["failures"], result["allowed"]
    own = sum(1 for f in failures if f["own"])
    total = sum(f["count"] for f in failures)
    out = []
    if failures:
        out.append("deprecations: FAILED: %d deprecation warning(s), %d printed in all, in %s (%d the collection's own, "
                   "%d third-party not on the allow-list)" % (len(failures), total, ", ".join(sources), own, len(failures) - own))
    else:
        out.append("deprecations: passed: no deprecation warning in %s outside the allow-list (%d allowed)"
                   % (", ".join(sources), len(allowed)))
    for entry in failures + allowed:
        mark = "" if entry in failures else "(allowed) "
        out.append("  - %s%s [%dx] %s" % (mark, entry["origin"] or "(no origin)", entry["count"], entry["message"]))
        out.append("      %s" % entry["why"])
    for reason in result["unused"]:
        out.append("  allow-list entry not seen in this output (keep it only while it is needed): %s" % reason)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--allow", help="the allow-list of third-party deprecations (YAML)")
    parser.add_argument("--root", action="append",
                        help="the collection's tree (repeatable; default: this checkout)")
    parser.add_argument("outputs", nargs="+", help="ansible-playbook output or log files, - for standard input")
    args = parser.parse_args(argv)
    roots = args.root or [ROOT]
    try:
        allow = load_allow(args.allow)
        deprecations = []
        for source in args.outputs:
            if source == "-":
                deprecations.extend(parse(sys.stdin))
            else:
                with open(source, encoding="utf-8", errors="replace") as fh:
                    deprecations.extend(parse(fh))
    except (OSError, ValueError, yaml.YAMLError) as exc:
        print("deprecations: %s" % exc, file=sys.stderr)
        return 2
    result = judge(deprecations, allow, roots)
    print("\n".join(report(result, args.outputs)))
    return 1 if result["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
