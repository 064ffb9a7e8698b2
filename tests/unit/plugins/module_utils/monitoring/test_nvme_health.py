"""NVMe wear and media errors for the textfile collector (plugins/module_utils/monitoring/nvme_health.py):
the parser on real published `nvme smart-log -o json` outputs of several nvme-cli versions
(data/nvme_smart_log/, a SOURCE line each), the rendering (promtool checks it in make promtool),
the program's run on a fake sysfs with no, good and failing drives, and that the program the
role installs is this very file."""
import os
import stat

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import node_exporter_storage
from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import nvme_health

HERE = os.path.dirname(os.path.dirname(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
DATA = os.path.join(HERE, "data")
with open(os.path.join(DATA, "nvme_health_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


def fixture(name):
    with open(os.path.join(DATA, "nvme_smart_log", name)) as fh:
        text = fh.read()
    first, rest = text.split("\n", 1)
    assert first.startswith("# SOURCE: ")
    return rest


def test_every_fixture_is_in_the_case_table():
    names = sorted(os.listdir(os.path.join(DATA, "nvme_smart_log")))
    assert names == sorted(c["fixture"] for c in CASES["parse"])


@pytest.mark.parametrize("case", CASES["parse"], ids=[c["fixture"] for c in CASES["parse"]])
def test_parse_real_outputs(case):
    assert nvme_health.parse(fixture(case["fixture"])) == case["expect"]


@pytest.mark.parametrize("case", CASES["number"], ids=[repr(c["value"]) for c in CASES["number"]])
def test_number(case):
    if "error" in case:
        with pytest.raises(ValueError, match=case["error"]):
            nvme_health.number(case["value"], "media_errors")
    else:
        assert nvme_health.number(case["value"], "media_errors") == case["expect"]


@pytest.mark.parametrize("case", CASES["parse_errors"], ids=[c["error"] for c in CASES["parse_errors"]])
def test_parse_errors(case):
    with pytest.raises(ValueError, match=case["error"]):
        nvme_health.parse(case["text"])


def sysfs(tmp_path, names):
    root = tmp_path / "sys"
    (root / "class" / "nvme").mkdir(parents=True)
    for name in names:
        (root / "class" / "nvme" / name).mkdir()
    return str(root)


def test_controllers_in_numeric_order_without_subsystems(tmp_path):
    root = sysfs(tmp_path, ["nvme10", "nvme2", "nvme0", "nvme-subsys0", "nvme-fabrics", "nvme1n1"])
    assert nvme_health.controllers(root) == ["nvme0", "nvme2", "nvme10"]
    assert nvme_health.controllers(str(tmp_path / "absent")) == []


def test_no_nvme_drive_says_so():
    text = nvme_health.render(False, [])
    assert "gpuops_nvme_devices 0\n" in text and "gpuops_nvme_cli_available 0\n" in text
    assert "device=" not in text


def run_with(outputs):
    def run(argv):
        assert argv[1:3] == ["smart-log", argv[2]] and argv[3:] == ["-o", "json"]
        return outputs[argv[2]]
    return run


def test_program_run_writes_the_textfile(tmp_path):
    """Three controllers: one worn (real fixture), one that fails, one whose output is not a smart-log."""
    root = sysfs(tmp_path, ["nvme0", "nvme1", "nvme2"])
    out = tmp_path / "textfile"
    out.mkdir()
    outputs = {"/dev/nvme0": (0, fixture("nvme-cli-1x-spaced-worn.txt"), ""),
               "/dev/nvme1": (1, "", "NVMe status: Invalid Log Page(0x109)"),
               "/dev/nvme2": (0, "{}", "")}
    assert nvme_health.main(["--textfile-dir", str(out), "--sysfs-root", root], run=run_with(outputs),
                            which=lambda name: "/usr/sbin/nvme") == 0
    text = (out / "gpuops_nvme.prom").read_text()
    assert stat.S_IMODE(os.stat(str(out / "gpuops_nvme.prom")).st_mode) == 0o644
    assert "gpuops_nvme_devices 3\n" in text and "gpuops_nvme_cli_available 1\n" in text
    assert 'gpuops_nvme_smart_log_ok{device="nvme0"} 1\n' in text
    assert 'gpuops_nvme_percentage_used_percent{device="nvme0"} 15\n' in text
    assert 'gpuops_nvme_available_spare_threshold_percent{device="nvme0"} 5\n' in text
    assert 'gpuops_nvme_smart_log_ok{device="nvme1"} 0\n' in text
    assert 'gpuops_nvme_smart_log_ok{device="nvme2"} 0\n' in text
    # A failed read invents no values.
    assert 'device="nvme1"} ' not in text.replace('gpuops_nvme_smart_log_ok{device="nvme1"} 0', '')
    assert os.listdir(str(out)) == ["gpuops_nvme.prom"]


def test_program_without_nvme_cli_marks_each_drive_unread(tmp_path):
    root = sysfs(tmp_path, ["nvme0"])
    out = tmp_path / "tf"
    out.mkdir()
    nvme_health.main(["--textfile-dir", str(out), "--sysfs-root", root], run=None, which=lambda name: None)
    text = (out / "gpuops_nvme.prom").read_text()
    assert "gpuops_nvme_cli_available 0\n" in text and 'gpuops_nvme_smart_log_ok{device="nvme0"} 0\n' in text


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    out = tmp_path / "tf"
    out.mkdir()

    def boom(src, dst):
        raise OSError("read-only")
    monkeypatch.setattr(nvme_health.os, "rename", boom)
    with pytest.raises(OSError):
        nvme_health.write(str(out), "x\n")
    assert os.listdir(str(out)) == []


def test_the_installed_program_is_this_file():
    """One source: the role copies plugins/module_utils/monitoring/nvme_health.py itself, and the
    fast path compares the installed program with the same text (node_exporter_storage.program_source)."""
    path = os.path.join(REPO, "plugins", "module_utils", "monitoring", "nvme_health.py")
    with open(path) as fh:
        assert node_exporter_storage.program_source() == fh.read()
    with open(os.path.join(REPO, "roles", "node_exporter", "tasks", "storage.yml")) as fh:
        tasks = yaml.safe_load(fh)
    copies = [t for t in _walk(tasks) if "nvme_health.py" in str((t.get("ansible.builtin.copy") or {}).get("src"))]
    assert len(copies) == 1
    src = copies[0]["ansible.builtin.copy"]["src"]
    assert src == "{{ role_path }}/../../plugins/module_utils/monitoring/nvme_health.py"
    resolved = os.path.normpath(os.path.join(REPO, "roles", "node_exporter", "../../plugins/module_utils/monitoring/nvme_health.py"))
    assert resolved == path
    assert copies[0]["ansible.builtin.copy"]["dest"] == "{{ __node_exporter_plan.storage.program }}"


def _walk(tasks):
    for task in tasks:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _walk(task.get(key) or [])


def test_units_quote_the_textfile_directory():
    lay = node_exporter_storage.layout({"textfile_dir": "/var/lib/node exporter/tf", "storage_health": True})
    assert 'ExecStart=/usr/bin/python3 /usr/local/libexec/gpuops/nvme_health.py --textfile-dir "/var/lib/node exporter/tf"\n' \
        in lay["service_content"]
    assert 'ReadWritePaths="/var/lib/node exporter/tf"\n' in lay["service_content"]
    assert "OnUnitActiveSec=5min\n" in lay["timer_content"] and "Unit=gpuops-nvme-health.service\n" in lay["timer_content"]
