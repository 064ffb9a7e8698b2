"""The collection builds with ansible-galaxy, installs offline and works from the install."""
import os
import subprocess
import sys

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.dirname(sys.executable)


def run(args, **kw):
    env = dict(os.environ)
    env.update(kw.pop("env", {}))
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env, check=False, **kw)


def test_build_install_and_use(tmp_path):
    cfg = tmp_path / "ansible.cfg"
    cfg.write_text("[defaults]\n")
    env_no_checkout = {"ANSIBLE_COLLECTIONS_PATH": str(tmp_path / "coll"), "ANSIBLE_CONFIG": str(cfg)}
    res = run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), REPO])
    assert res.returncode == 0, res.stderr
    tarball = tmp_path / "gpuops-dlserver-0.1.0.tar.gz"
    assert tarball.exists()

    res = run([os.path.join(BIN, "ansible-galaxy"), "collection", "install", "-p", str(tmp_path / "coll"),
               str(tarball)], env=env_no_checkout, cwd=str(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    installed = tmp_path / "coll" / "ansible_collections" / "gpuops" / "dlserver"
    assert (installed / "plugins" / "modules" / "gpu_facts.py").exists()
    assert not (installed / ".ci").exists() and not (installed / ".cache").exists()

    res = run([os.path.join(BIN, "ansible-doc"), "-l", "gpuops.dlserver"], env=env_no_checkout, cwd=str(tmp_path))
    assert "gpuops.dlserver.gpu_facts" in res.stdout, res.stdout + res.stderr
    res = run([os.path.join(BIN, "ansible-doc"), "-t", "filter", "-l", "gpuops.dlserver"], env=env_no_checkout,
              cwd=str(tmp_path))
    for name in ("gpu_plan", "parse_nvidia_topo", "render_nvidia_topo"):
        assert "gpuops.dlserver." + name in res.stdout, res.stdout + res.stderr

    # The installed copy runs: probe the HGX fixture on localhost and plan it.
    sysfs = tmp_path / "sys"
    res = run([sys.executable, os.path.join(REPO, "tests", "fixtures", "build_sysfs.py"),
               os.path.join(REPO, "tests", "fixtures", "hosts", "hgx-h100-8gpu"), str(sysfs)])
    assert res.returncode == 0, res.stderr
    playbook = tmp_path / "pb.yml"
    playbook.write_text(
        "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
        "    - gpuops.dlserver.gpu_facts: {sysfs_root: '%s', nvml: disabled}\n"
        "    - ansible.builtin.assert:\n        that:\n"
        "          - ansible_facts.gpuops_gpu.gpu_count == 8\n"
        "          - (ansible_facts.gpuops_gpu | gpuops.dlserver.gpu_plan).fabric_manager.required\n" % sysfs)
    res = run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook),
               "-e", "ansible_python_interpreter=%s" % sys.executable], env=env_no_checkout, cwd=str(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr


# What a user of the collection needs, at the top of the tarball; everything else is development.
SHIPPED_TOP = {"MANIFEST.json", "FILES.json", "README.md", "COPYING", "CHANGELOG.rst", "roles", "plugins",
               "playbooks", "docs", "meta", "changelogs", "inventories", "execution-environment",
               "requirements.txt", "bindep.txt"}
DEVELOPMENT = ("lab/", "molecule/", "tests/", "bench/", "tools/", "requirements/", "inventories/lab/", ".cache/",
               ".venv/", ".ci/", ".config/", ".git/", "Makefile", "ansible.cfg", ".ansible-lint", ".yamllint",
               ".gitignore", "CONTRIBUTING.md")


def test_tarball_ships_the_collection_and_not_the_development_tree(tmp_path):
    import tarfile
    res = run([os.path.join(BIN, "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), REPO])
    assert res.returncode == 0, res.stderr
    with tarfile.open(str(tmp_path / "gpuops-dlserver-0.1.0.tar.gz")) as tar:
        members = [m.name + ("/" if m.isdir() else "") for m in tar.getmembers()]
    dev = [m for m in members if m.startswith(DEVELOPMENT) or "__pycache__" in m or m.endswith(".pyc")]
    assert dev == [], "development paths in the tarball (galaxy.yml build_ignore): %s" % dev
    unexpected = sorted(set(m.split("/")[0] for m in members) - SHIPPED_TOP)
    assert unexpected == [], "top-level paths that are neither shipped on purpose nor ignored: %s" % unexpected
    for wanted in ("README.md", "COPYING", "meta/runtime.yml", "meta/execution-environment.yml", "bindep.txt",
                   "requirements.txt", "execution-environment/execution-environment.yml",
                   "inventories/example/hosts.yml", "changelogs/changelog.yaml", "playbooks/site.yml"):
        assert wanted in members, wanted
    for role in os.listdir(os.path.join(REPO, "roles")):
        assert "roles/%s/README.md" % role in members, role
        assert "roles/%s/meta/argument_specs.yml" % role in members, role


def _yaml(*parts):
    import yaml
    with open(os.path.join(REPO, *parts)) as handle:
        return yaml.safe_load(handle)


def test_galaxy_yml_has_no_placeholder_url_and_only_used_dependencies():
    import re
    galaxy = _yaml("galaxy.yml")
    for key in ("repository", "documentation", "issues", "homepage"):
        value = galaxy.get(key)
        assert value is None or not re.search(r"example\.|\.invalid|localhost", value), (key, value)
    used = set()
    # roles and playbooks: every FQCN (modules, filters, tests, lookups); plugins: module calls in examples
    # do not count, so only the code of roles and playbooks decides
    for top in ("roles", "playbooks"):
        for root, _dirs, files in os.walk(os.path.join(REPO, top)):
            for name in files:
                if name.endswith((".yml", ".yaml", ".j2")):
                    with open(os.path.join(root, name)) as handle:
                        used.update(re.findall(r"\b([a-z][a-z0-9_]*\.[a-z][a-z0-9_]*)\.[a-z][a-z0-9_]*\b",
                                               handle.read()))
    used = {u for u in used if u != "gpuops.dlserver" and not u.startswith("ansible.builtin")
            and u.split(".")[0] in ("ansible", "community", "kubernetes", "containers", "prometheus")}
    assert set(galaxy.get("dependencies") or {}) == used, (
        "galaxy.yml dependencies must be exactly the collections the content uses: %s" % sorted(used))


def test_execution_environment_installs_the_version_galaxy_yml_builds():
    galaxy = _yaml("galaxy.yml")
    ee = _yaml("execution-environment", "execution-environment.yml")
    assert ee["version"] == 3 and ee["dependencies"]["galaxy"] == "requirements.yml"
    reqs = _yaml("execution-environment", "requirements.yml")
    # the release tarball, never a name a collection server is asked for (issue 34 item 7: not on Galaxy)
    tarball = "gpuops-dlserver-%s.tar.gz" % galaxy["version"]
    assert reqs["collections"] == [{"name": "collections/" + tarball, "type": "file"}], (
        "execution-environment/requirements.yml installs %s, galaxy.yml builds %s" % (reqs, tarball))
    assert {"src": tarball, "dest": "collections"} in ee["additional_build_files"]
    assert "gpuops-dlserver-ee:%s" % galaxy["version"] in ee["options"]["tags"]
