"""The README's commands stay runnable and the front-door documents' links stay true (issue 38).

Every command line of a fenced ``sh`` block of README.md is either run in a harmless mode or
checked to name what exists:

- ``ansible-playbook -i inventory gpuops.dlserver.<playbook> ...``: run with ``--syntax-check`` and
  with ``--list-hosts`` against ``inventories/example`` (the directory the README copies to
  ``inventory``), so the playbook, the inventory and every ``--limit`` must resolve;
- ``ansible-doc ...``: run as written;
- ``ansible-galaxy collection install -p DIR TARBALL``: the tarball's name must match what
  ``ansible-galaxy collection build`` names this collection, and ``install --help`` must offer ``-p``;
- ``cp`` and ``pip install -r`` of a path inside the installed collection: that path exists in the
  checkout and is shipped in the tarball (not in galaxy.yml's ``build_ignore``);
- ``make <target>``: the target is a rule of the Makefile; the README's test command is exactly
  what ``.ci/run`` runs.

A command no rule knows fails the test: add a rule for it here, never a skip. The links of
README.md, CONTRIBUTING.md, bench/README.md and docs/*.md point at files that exist (and at
headings that exist, where they name one), and the README stays under 200 lines with one row per
public role.
"""
import fnmatch
import os
import re
import shlex
import subprocess
import sys

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
README = os.path.join(REPO, "README.md")
CONTRIBUTING = os.path.join(REPO, "CONTRIBUTING.md")
BIN = os.path.dirname(sys.executable)
INSTALLED = "collections/ansible_collections/gpuops/dlserver/"
LINKED_DOCS = [README, CONTRIBUTING, os.path.join(REPO, "bench", "README.md")] + sorted(
    os.path.join(REPO, "docs", n) for n in os.listdir(os.path.join(REPO, "docs")) if n.endswith(".md"))


def read(path):
    with open(path) as handle:
        return handle.read()


def sh_commands(path):
    """Every command line of the file's ``sh`` blocks, comments removed, in order."""
    commands = []
    for block in re.findall(r"^ *```sh\n(.*?)^ *```", read(path), flags=re.M | re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                commands.append(words)
    return commands


def galaxy():
    with open(os.path.join(REPO, "galaxy.yml")) as handle:
        return yaml.safe_load(handle)


def shipped(relpath):
    """Whether ansible-galaxy collection build puts this checkout path into the tarball."""
    parts = relpath.strip("/").split("/")
    for pattern in galaxy().get("build_ignore") or []:
        # ansible-galaxy matches each file's and directory's path relative to the root
        for depth in range(1, len(parts) + 1):
            if fnmatch.fnmatch("/".join(parts[:depth]), pattern):
                return False
    return True


def make_targets():
    return set(re.findall(r"^([A-Za-z0-9_.-]+):(?!=)", read(os.path.join(REPO, "Makefile")), flags=re.M))


def ci_command():
    lines = [ln.strip() for ln in read(os.path.join(REPO, ".ci", "run")).splitlines()
             if ln.strip() and not ln.strip().startswith("#")]
    execs = [ln for ln in lines if ln.startswith("exec ")]
    assert len(execs) == 1 and lines[-1] == execs[0], ".ci/run should end in one exec of the test command: %s" % lines
    return shlex.split(execs[0])[1:]


def env():
    out = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    out.update(ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="false", PATH=BIN + os.pathsep + out.get("PATH", ""))
    return out


def run(args, cwd=REPO):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env(), cwd=cwd, check=False)


# --- how each kind of command is checked; each returns a list of problems ---------------------

def check_ansible_playbook(words):
    problems = []
    args = list(words[1:])
    if "-i" not in args or args[args.index("-i") + 1] != "inventory":
        return ["%s: the README's playbook commands use '-i inventory' (the copied inventories/example)" % words]
    args[args.index("-i") + 1] = os.path.join(REPO, "inventories", "example")
    playbooks = [a for a in args if re.fullmatch(r"gpuops\.dlserver\.[a-z_]+", a)]
    if len(playbooks) != 1:
        return ["%s: names no gpuops.dlserver playbook" % words]
    if not os.path.exists(os.path.join(REPO, "playbooks", playbooks[0].split(".")[-1] + ".yml")):
        problems.append("%s: playbooks/%s.yml does not exist" % (words, playbooks[0].split(".")[-1]))
    harmless = [a for a in args if a not in ("--check", "--diff")]
    for mode in ("--syntax-check", "--list-hosts"):
        res = run(["ansible-playbook"] + harmless + [mode])
        if res.returncode != 0:
            problems.append("%s %s failed:\n%s%s" % (" ".join(words), mode, res.stdout, res.stderr))
        elif mode == "--list-hosts" and not re.search(r"hosts \([1-9]", res.stdout):
            problems.append("%s: no play has a host in inventories/example (--limit?)" % words)
    return problems


def check_ansible_doc(words):
    res = run(list(words))
    return [] if res.returncode == 0 and res.stdout.strip() else ["%s failed:\n%s%s" % (words, res.stdout, res.stderr)]


def check_ansible_galaxy(words):
    if words[1:4] != ["collection", "install", "-p"] or len(words) != 6:
        return ["%s: only 'ansible-galaxy collection install -p DIR TARBALL' is known here" % words]
    meta = galaxy()
    built = "%s-%s-%s.tar.gz" % (meta["namespace"], meta["name"], meta["version"])
    problems = [] if fnmatch.fnmatch(built, words[5]) else ["%s: %s is not the built tarball's name" % (words, words[5])]
    if words[4] != INSTALLED.split("/", maxsplit=1)[0]:
        problems.append("%s: installs into %s, but the other commands read %s" % (words, words[4], INSTALLED))
    res = run(["ansible-galaxy", "collection", "install", "--help"])
    if res.returncode != 0 or "-p COLLECTIONS_PATH" not in res.stdout:
        problems.append("ansible-galaxy collection install --help offers no -p:\n%s%s" % (res.stdout, res.stderr))
    return problems


def check_installed_path(words, path):
    if not path.startswith(INSTALLED):
        return ["%s: %s is not a path of the installed collection (%s...)" % (words, path, INSTALLED)]
    rel = path[len(INSTALLED):]
    if not os.path.exists(os.path.join(REPO, rel)):
        return ["%s: %s does not exist in the collection" % (words, rel)]
    if not shipped(rel):
        return ["%s: %s is left out of the tarball (galaxy.yml build_ignore)" % (words, rel)]
    return []


def check_cp(words):
    sources = [w for w in words[1:-1] if not w.startswith("-")]
    if len(sources) != 1:
        return ["%s: one source expected" % words]
    return check_installed_path(words, sources[0])


def check_pip(words):
    if "-r" not in words:
        return ["%s: only 'pip install -r <collection file>' is known here" % words]
    return check_installed_path(words, words[words.index("-r") + 1])


def check_make(words):
    targets = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    missing = [t for t in targets if t not in make_targets()]
    return ["%s: no Makefile rule for %s" % (words, missing)] if missing or not targets else []


CHECKS = {"ansible-playbook": check_ansible_playbook, "ansible-doc": check_ansible_doc,
          "ansible-galaxy": check_ansible_galaxy, "cp": check_cp, "make": check_make}


def check(words):
    if words[:4] == ["python3", "-m", "pip", "install"]:
        return check_pip(words)
    if words[0] not in CHECKS:
        return ["%s: no rule in tests/unit/test_docs.py says how to check this command" % words]
    return CHECKS[words[0]](words)


# --- the tests -----------------------------------------------------------------------------------

def test_readme_is_short():
    lines = read(README).count("\n")
    assert lines < 200, "README.md has %d lines: keep it under 200 (details go to docs/ or CONTRIBUTING.md)" % lines


def test_readme_has_commands():
    commands = [w[0] for w in sh_commands(README)]
    for needed in ("ansible-galaxy", "ansible-playbook", "make"):
        assert needed in commands, needed


@pytest.mark.parametrize("words", sh_commands(README), ids=lambda w: " ".join(w)[:60])
def test_readme_command_runs(words):
    problems = check(words)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("words", [w for w in sh_commands(CONTRIBUTING) if w[0] == "make"], ids=" ".join)
def test_contributing_make_targets_exist(words):
    assert not check_make(words)


def test_readme_test_command_is_what_ci_runs():
    section = read(README).split("\n## Testing\n", 1)
    assert len(section) == 2, "README.md has no '## Testing' section"
    in_section = [w for w in sh_commands(README) if " ".join(w) in section[1].split("\n## ", 1)[0]]
    assert in_section == [ci_command()], "README's test command %s, .ci/run runs %s" % (in_section, ci_command())


def test_readme_lists_every_public_role_with_its_page():
    text = read(README)
    roles = sorted(r for r in os.listdir(os.path.join(REPO, "roles")) if r != "common")
    for role in roles:
        row = re.search(r"^\| \[`%s`\]\(docs/roles/%s\.md\) \| .+ \|$" % (role, role), text, flags=re.M)
        assert row, "README.md: no row '| [`%s`](docs/roles/%s.md) | ... |'" % (role, role)


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", read(path), flags=re.M)}


def links(path):
    text = re.sub(r"^ *```.*?^ *```", "", read(path), flags=re.M | re.S)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("path", LINKED_DOCS, ids=lambda p: os.path.relpath(p, REPO))
def test_links_point_at_what_exists(path):
    broken = []
    for link in links(path):
        if re.match(r"[a-z]+:", link):
            continue
        target, _sep, anchor = link.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
        if not os.path.exists(full):
            broken.append("%s: no such file" % link)
        elif anchor and full.endswith(".md") and anchor not in anchors(full):
            broken.append("%s: no heading with that anchor in %s" % (link, os.path.relpath(full, REPO)))
    assert not broken, "%s:\n%s" % (os.path.relpath(path, REPO), "\n".join(broken))


def test_the_checks_catch_drift(tmp_path):
    """The rules fail on what they must catch, so a passing run means something."""
    assert check(["ansible-playbook", "-i", "inventory", "gpuops.dlserver.no_such_play"])
    assert check(["ansible-playbook", "-i", "inventory", "gpuops.dlserver.site", "--limit", "no_such_group"])
    assert check(["ansible-playbook", "-i", "inventories/example", "gpuops.dlserver.site"])
    assert check(["make", "no-such-target"])
    assert check(["cp", INSTALLED + "docs/project/inventory.yml", "."])
    assert check(["cp", INSTALLED + "molecule/_shared", "."]), "molecule/ is not shipped"
    assert check(["cp", INSTALLED + "inventories/lab", "."]), "inventories/lab is not shipped"
    assert shipped("docs/project/ansible.cfg") and not shipped("ansible.cfg") and not shipped("bench/README.md")
    assert check(["ansible-galaxy", "collection", "install", "-p", "collections", "other-name-*.tar.gz"])
    assert check(["curl", "-O", "http://example.invalid/x"])
    assert not check(["make", "test"])
    assert slug("fleet: current figures (three configurations, 1, 4 and 8 nodes)") == \
        "fleet-current-figures-three-configurations-1-4-and-8-nodes"
    assert slug("ansible.cfg for fleets") == "ansiblecfg-for-fleets"
    page = tmp_path / "page.md"
    page.write_text("# Title\n[a](missing.md) [b](#title) [c](#nope)\n```sh\n[d](in-code.md)\n```\n")
    assert links(str(page)) == ["missing.md", "#title", "#nope"]
