"""Contracts every public role keeps (docs/architecture.md §1, §7 and §9).

- every public variable sits in defaults/main.yml AND in meta/argument_specs.yml (main entry
  point), with the same default, a type and a description;
- public variables carry the role's prefix;
- a role's tasks never read another role's private variables.
"""
import os
import re

import pytest
import yaml

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROLES_DIR = os.path.join(REPO, "roles")
PUBLIC_ROLES = sorted(r for r in os.listdir(ROLES_DIR) if r != "common" and  # common: the private helper
                      os.path.isdir(os.path.join(ROLES_DIR, r)))


def load(path):
    with open(path) as fh:
        return yaml.safe_load(fh) or {}


@pytest.mark.parametrize("role", PUBLIC_ROLES)
def test_defaults_and_argument_specs_agree(role):
    defaults = load(os.path.join(ROLES_DIR, role, "defaults", "main.yml"))
    specs = load(os.path.join(ROLES_DIR, role, "meta", "argument_specs.yml"))["argument_specs"]["main"]["options"]
    assert sorted(defaults) == sorted(specs), "defaults/main.yml and meta/argument_specs.yml list different variables"
    for name, spec in specs.items():
        assert spec.get("type"), "%s: no type in argument_specs" % name
        assert spec.get("description"), "%s: no description in argument_specs" % name
        if spec.get("required"):
            continue
        assert "default" in spec, "%s: no default in argument_specs" % name
        assert spec["default"] == defaults[name], "%s: argument_specs default %r != defaults/main.yml %r" % (
            name, spec["default"], defaults[name])


@pytest.mark.parametrize("role", PUBLIC_ROLES)
def test_public_variables_are_prefixed(role):
    defaults = load(os.path.join(ROLES_DIR, role, "defaults", "main.yml"))
    bad = [v for v in defaults if not v.startswith(role + "_")]
    assert not bad, "variables without the %s_ prefix: %s" % (role, bad)


@pytest.mark.parametrize("role", PUBLIC_ROLES)
def test_no_reads_of_other_roles_private_vars(role):
    others = [r for r in PUBLIC_ROLES if r != role]
    pattern = re.compile(r"__(%s)_" % "|".join(map(re.escape, others))) if others else None
    if pattern is None:
        return
    for root, _dirs, files in os.walk(os.path.join(ROLES_DIR, role)):
        for name in files:
            if name.endswith((".yml", ".yaml", ".j2")):
                with open(os.path.join(root, name)) as fh:
                    hit = pattern.search(fh.read())
                assert not hit, "%s uses another role's private variable %s" % (os.path.join(root, name), hit.group(0))


ALL_ROLES = sorted(r for r in os.listdir(ROLES_DIR) if os.path.isfile(os.path.join(ROLES_DIR, r, "meta", "argument_specs.yml")))
PLUGINS = sorted(os.path.join(kind, f) for kind in ("modules", "filter", "callback", "action")
                 for f in os.listdir(os.path.join(REPO, "plugins", kind)) if f.endswith(".py") and f != "__init__.py")


@pytest.mark.parametrize("role", ALL_ROLES)
def test_every_role_says_when_it_was_added(role):
    """A release lists a role as new only from version_added in its main entry point (docs/release.md)."""
    main = load(os.path.join(ROLES_DIR, role, "meta", "argument_specs.yml"))["argument_specs"]["main"]
    assert main.get("version_added"), "roles/%s/meta/argument_specs.yml: the main entry point has no version_added" % role


@pytest.mark.parametrize("plugin", PLUGINS)
def test_every_plugin_says_when_it_was_added(plugin):
    with open(os.path.join(REPO, "plugins", plugin)) as fh:
        text = fh.read()
    if "DOCUMENTATION" not in text:
        # the action plugin role_inputs is documented by its module stub (plugins/modules/__private/role_inputs.py)
        assert plugin.startswith("action/"), "plugins/%s has no DOCUMENTATION" % plugin
        return
    assert re.search(r"^version_added: ", text, re.M), "plugins/%s: DOCUMENTATION has no version_added" % plugin


# ------------------------------------------------------------------ role pattern v3 (docs/role-pattern.md)
# Tags, typed inputs, hostvars: the contracts of one plan per host (issue 17).

import subprocess  # noqa: E402
import sys  # noqa: E402

PLAYBOOKS_DIR = os.path.join(REPO, "playbooks")
JINJA_KEYS = ("when", "that", "changed_when", "failed_when", "until", "loop")
_STRING = re.compile(r"'[^']*'|\"[^\"]*\"")
_BLOCK = re.compile(r"{{(.*?)}}|{%(.*?)%}", re.S)


def _yaml_files(*dirs):
    for top in dirs:
        for root, _dirs, files in os.walk(top):
            for name in files:
                if name.endswith((".yml", ".yaml")):
                    yield os.path.join(root, name)


def _tasks(node):
    """Every mapping in a YAML document that is a task (or a block, a play)."""
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers"):
            yield from _tasks(node.get(key))


def _common_includes(path):
    for task in _tasks(load(path)):
        for action in ("ansible.builtin.include_role", "include_role"):
            args = task.get(action)
            if isinstance(args, dict) and args.get("name") in ("gpuops.dlserver.common", "common"):
                yield task, args


def test_every_include_of_common_applies_tags():
    """An include_role without apply: tags runs its tasks untagged: under --tags they are skipped."""
    missing = []
    for path in _yaml_files(ROLES_DIR, PLAYBOOKS_DIR):
        for task, args in _common_includes(path):
            if not (args.get("apply") or {}).get("tags"):
                missing.append("%s: %s" % (os.path.relpath(path, REPO), task.get("name")))
    assert not missing, "include_role of common without apply: tags: %s" % missing


ALWAYS_STEPS = ("preflight.yml", "gpu.yml", "cuda_repo.yml", "status.yml")


def test_every_import_of_common_is_private_and_tagged_always():
    """common's preflight, probe-and-plan and status steps are imported (static: no include to
    evaluate per host and run): each import runs under every tag and keeps common's variables
    to common's own tasks (public: false; an import would export them to the whole play)."""
    wrong, found = [], 0
    for path in _yaml_files(ROLES_DIR, PLAYBOOKS_DIR):
        for task in _tasks(load(path)):
            args = task.get("ansible.builtin.import_role")
            if not (isinstance(args, dict) and args.get("name") == "gpuops.dlserver.common"):
                continue
            found += 1
            tags = task.get("tags") or []
            # the start and the record of a role run under every tag; a phase's step (the
            # repository of the container toolkit, of DCGM) under the phase's tags
            wanted = "always" in tags if args.get("tasks_from") in ALWAYS_STEPS else bool(tags)
            if args.get("public") is not False or not wanted:
                wrong.append("%s: %s" % (os.path.relpath(path, REPO), task.get("name")))
    assert found >= 20 and not wrong, wrong


def test_every_role_of_site_is_included_with_its_name_as_tag():
    for name in ("site.yml", "monitoring.yml"):
        for play in load(os.path.join(PLAYBOOKS_DIR, name)):
            for task in _tasks(play.get("tasks")):
                args = task.get("ansible.builtin.include_role")
                if not isinstance(args, dict) or args.get("name") == "gpuops.dlserver.common":
                    continue
                role = args["name"].split(".")[-1]
                assert role in (task.get("tags") or []), "%s: %s has no tag %s" % (name, task.get("name"), role)
                assert role in ((args.get("apply") or {}).get("tags") or []), \
                    "%s: %s does not apply the tag %s to the role's tasks" % (name, task.get("name"), role)
                # the plan of the first play stands for every role (role_inputs says so: plan_current);
                # no playbook steers it with a flag of its own
                assert not [k for k in (task.get("vars") or {}) if k.startswith("__common_plan")], \
                    "%s: %s steers the plan with a flag" % (name, task.get("name"))
                # host_plan (first play) and role_inputs (each role's first task) check the
                # variables by the argument spec: Ansible's own check would be one more task
                assert args.get("rolespec_validate") is False, \
                    "%s: %s lets Ansible check the argument spec a third time" % (name, task.get("name"))


def _list(*args):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".cache", "collections"), ANSIBLE_NOCOLOR="1")
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
           os.path.join(REPO, "inventories", "lab"), os.path.join(PLAYBOOKS_DIR, "site.yml")] + list(args)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=REPO, check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def _listed_tasks(out):
    return [line.strip().split("\tTAGS:")[0] for line in out.splitlines()
            if line.startswith("      ") and "TAGS:" in line]


PROBE_TASKS = ["Probe the hardware, check the inputs and plan the host",
               "Record the plan on the host (/etc/gpuops/plan.json)",
               "Publish hardware and plan for the run summary (fleet_summary callback)",
               # the canary of the rebooting play, chosen and named under every tag (issue 34 item 3)
               "Name the canary (the first batch of the rebooting play, alone)",
               "Put the canary first (group gpuops_canary, in this run's inventory only)"]


@pytest.mark.parametrize("tag, roles", [
    ("nvidia_driver", ["nvidia_driver"]),
    ("cuda_toolkit", ["cuda_toolkit"]),
    ("python_stack", ["python_stack"]),
    ("monitoring", ["dcgm_exporter", "node_exporter", "ipmi_exporter", "prometheus"]),
])
def test_tags_through_site_run_the_probe_and_that_role_only(tag, roles):
    tasks = _listed_tasks(_list("--tags", tag, "--list-tasks"))
    assert tasks == PROBE_TASKS + ["Apply %s" % r for r in roles], tasks


def test_list_tags_shows_every_role_and_monitoring():
    out = _list("--list-tags")
    for tag in ["always", "monitoring"] + list(PUBLIC_ROLES):
        assert re.search(r"\b%s\b" % tag, out), "--list-tags does not show %s: %s" % (tag, out)


def _declared():
    """Every public variable of every role (and common's own gpuops_* inputs) -> its role."""
    names = {}
    for role in ALL_ROLES:
        for entry in load(os.path.join(ROLES_DIR, role, "meta", "argument_specs.yml"))["argument_specs"].values():
            for name in entry.get("options") or {}:
                if not name.startswith("__"):
                    names[name] = role
    return names


def _expressions(path):
    """The Jinja expressions of a task file, template or handler file (string literals removed)."""
    if path.endswith(".j2"):
        with open(path) as fh:
            found = [a or b for a, b in _BLOCK.findall(fh.read())]
    else:
        found = []

        def walk(node, key=None):
            if isinstance(node, dict):
                for k, v in node.items():
                    walk(v, k)
            elif isinstance(node, list):
                for item in node:
                    walk(item, key)
            elif isinstance(node, str):
                if key in JINJA_KEYS and "{{" not in node:
                    found.append(node)
                found.extend(a or b for a, b in _BLOCK.findall(node))
        walk(load(path))
    return [_STRING.sub("''", text) for text in found]


def test_roles_read_only_their_typed_inputs():
    """No task, template or handler reads a public variable raw: roles read __<role>.* (and gpuops_plan)."""
    declared = _declared()
    pattern = re.compile(r"(?<![\w.])(%s)\b" % "|".join(sorted(map(re.escape, declared), key=len, reverse=True)))
    hits = []
    for role in ALL_ROLES:
        for sub in ("tasks", "templates", "handlers"):
            top = os.path.join(ROLES_DIR, role, sub)
            for root, _dirs, files in os.walk(top):
                for name in files:
                    path = os.path.join(root, name)
                    for expr in _expressions(path):
                        for match in pattern.finditer(expr):
                            hits.append("%s reads %s (%s's) raw"
                                        % (os.path.relpath(path, REPO), match.group(1), declared[match.group(1)]))
    assert not hits, hits


# What roles may read of another host: facts the collection publishes, and Ansible's own variables.
HOSTVARS_KEYS = {"gpuops_plan", "__common_probe", "ansible_host", "ansible_facts", "group_names", "inventory_hostname"}


def test_no_hostvars_key_that_no_role_declares_in_yaml():
    pattern = re.compile(r"hostvars\[[^\]]+\](?:\.(\w+)|\[\s*'(\w+)'\s*\]|\[\s*\"(\w+)\"\s*\])")
    declared = _declared()
    bad = []
    for path in _yaml_files(ROLES_DIR, PLAYBOOKS_DIR):
        with open(path) as fh:
            for match in pattern.finditer(fh.read()):
                key = next(g for g in match.groups() if g)
                if key not in HOSTVARS_KEYS and key not in declared:
                    bad.append("%s: hostvars[...].%s" % (os.path.relpath(path, REPO), key))
    assert not bad, bad


class _Recording(dict):
    """hostvars of one host that records every key a filter reads."""

    def __init__(self, data, seen):
        super(_Recording, self).__init__(data)
        self.seen = seen

    def get(self, key, default=None):
        self.seen.add(key)
        return super(_Recording, self).get(key, default)

    def __getitem__(self, key):
        self.seen.add(key)
        return super(_Recording, self).__getitem__(key)


def test_filters_given_hostvars_read_only_published_keys():
    from ansible_collections.gpuops.dlserver.plugins.filter.__private.prometheus_targets import prometheus_targets
    from ansible_collections.gpuops.dlserver.plugins.module_utils.kubernetes.volcano import hosts_view

    seen = set()
    data = {"ansible_host": "10.0.0.1", "group_names": ["gpu_nodes"], "dcgm_exporter_port": 9500,
            "node_exporter_listen_address": "1.2.3.4:1", "prometheus_target_address": "9.9.9.9",
            "gpuops_plan": {"host": {"scrape_address": None}, "exporters": {}, "roles": {}},
            "__common_probe": {"ansible_facts": {"gpuops_gpu": {"gpus": []}}}, "ansible_facts": {"hostname": "gpu1"}}
    hostvars = {"gpu1": _Recording(data, seen)}
    prometheus_targets(hostvars, ["gpu1"], "gpu_nodes")
    hosts_view(["gpu1"], hostvars)
    assert seen <= HOSTVARS_KEYS, "hostvars keys no role publishes: %s" % sorted(seen - HOSTVARS_KEYS)
