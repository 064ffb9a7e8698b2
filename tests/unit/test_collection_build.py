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
        "          - gpuops_gpu.gpu_count == 8\n"
        "          - (gpuops_gpu | gpuops.dlserver.gpu_plan).fabric_manager.required\n" % sysfs)
    res = run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook),
               "-e", "ansible_python_interpreter=%s" % sys.executable], env=env_no_checkout, cwd=str(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
