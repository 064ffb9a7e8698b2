"""fleet_summary: the per-host lines built from what site.yml publishes."""
import importlib.util
import os

from ansible_collections.gpuops.dlserver.plugins.callback.fleet_summary import CallbackModule
from ansible_collections.gpuops.dlserver.plugins.module_utils.plan import gpu_plan
from ansible_collections.gpuops.dlserver.plugins.module_utils.probe import gpu_probe

HERE = os.path.dirname(__file__)
FIXTURES = os.path.abspath(os.path.join(HERE, "..", "..", "..", "fixtures"))


def _builder():
    spec = importlib.util.spec_from_file_location("build_sysfs", os.path.join(FIXTURES, "build_sysfs.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def published(tmp_path, host):
    builder = _builder()
    root = str(tmp_path / host / "sys")
    builder.build(builder.load_spec(os.path.join(FIXTURES, "hosts", host)), root)
    facts = gpu_probe.probe(sysfs_root=root, procfs_root=str(tmp_path / "noproc"), nvml="disabled",
                            nvidia_smi="disabled")
    return {"gpu": facts, "plan": gpu_plan.build_plan(facts, {"in_container": True})}


def test_hgx_host_lines(tmp_path):
    roles = {"os_tuning": {"ok": 30, "changed": 0, "skipped": 5, "failed": 0}}
    lines = CallbackModule.host_lines("lab-hgx", {"changed": 0}, roles, published(tmp_path, "hgx-h100-8gpu"))
    text = "\n".join(lines)
    assert lines[0] == "lab-hgx: converged, nothing changed"
    assert "8 x " in text and "(hopper)" in text and "NVSwitches: 4" in text
    assert "probe depth: pci" in text
    assert "Fabric Manager" in text
    assert "os_tuning                  converged (30 tasks, 0 changed)" in text
    assert "nvidia_driver              not in this playbook yet (plan: run;" in text
    assert text.count("PCIe Gen") == 8


def test_cpu_host_lines_say_why_gpu_roles_are_skipped(tmp_path):
    lines = CallbackModule.host_lines("lab-cpu", {"changed": 2}, {}, published(tmp_path, "cpu-only"))
    text = "\n".join(lines)
    assert lines[0] == "lab-cpu: 2 changed"
    assert "GPUs: none" in text
    assert "driver: not needed" in text
    for role in ("nvidia_driver", "dcgm_exporter", "gpu_validate"):
        line = [ln for ln in lines if ln.strip().startswith(role + " ")][0]
        assert "skipped: " in line and "GPU" in line


def test_failed_host():
    roles = {"os_tuning": {"ok": 1, "changed": 0, "skipped": 0, "failed": 1}}
    lines = CallbackModule.host_lines("h", {"failures": 1}, roles, None)
    assert lines[0] == "h: FAILED"
    assert "os_tuning" in lines[1] and "FAILED" in lines[1]


def test_kernel_security_updates_held_back_are_shown(tmp_path):
    published_data = published(tmp_path, "hgx-h100-8gpu")
    published_data["os_tuning"] = {"kernel_security_updates_held_back": [
        {"name": "linux-image-amd64", "installed": "6.1.76-1", "candidate": "6.1.85-1",
         "origins": ["Debian-Security:12/stable-security"], "security": True}]}
    lines = CallbackModule.host_lines("lab-hgx", {"changed": 0}, {}, published_data)
    assert "  kernel security updates held back (driver host): linux-image-amd64 6.1.76-1 -> 6.1.85-1" in lines
    plain = CallbackModule.host_lines("lab-hgx", {"changed": 0}, {}, published(tmp_path / "plain", "hgx-h100-8gpu"))
    assert not any("held back" in line for line in plain)


def test_python_stack_verification_is_shown(tmp_path):
    published_data = published(tmp_path, "hgx-h100-8gpu")
    published_data["python_stack"] = [
        {"name": "pytorch", "backend": "venv", "python": "3.11",
         "verification": {"ok": True, "python": "3.11.2", "summary": "torch 2.13.0+cpu CPU (bfloat16 step ok)"}},
        {"name": "tf", "backend": "conda", "python": "3.10",
         "verification": {"ok": False, "problems": ["environment tf: TensorFlow lists no GPU"]}}]
    lines = CallbackModule.host_lines("lab-hgx", {"changed": 0}, {}, published_data)
    assert "  python env pytorch (venv, Python 3.11.2): verified: torch 2.13.0+cpu CPU (bfloat16 step ok)" in lines
    assert "  python env tf (conda, Python 3.10): FAILED: environment tf: TensorFlow lists no GPU" in lines


def test_validation_line_is_shown():
    published_data = {"validate": {"verdict": "fail", "device": "cpu",
                                   "summary": "fail: pcie_link GPU3 (device: cpu)"}}
    lines = CallbackModule.host_lines("lab-a100", {"changed": 0}, {}, published_data)
    assert "  validation: fail: pcie_link GPU3 (device: cpu)" in lines
    assert not [line for line in CallbackModule.host_lines("h", {"changed": 0}, {}, {}) if "validation" in line]
