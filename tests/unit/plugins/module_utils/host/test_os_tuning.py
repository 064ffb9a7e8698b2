"""os_tuning decisions (plugins/module_utils/host/os_tuning.py), from the case tables in data/os_tuning_*.yml."""
import copy
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.host import os_tuning, os_tuning_files, os_tuning_inputs
from ansible_collections.gpuops.dlserver.plugins.module_utils.core.systemd import parse_unit_states

HERE = os.path.dirname(os.path.dirname(__file__))
ROLE = os.path.join(HERE, "..", "..", "..", "..", "roles", "os_tuning")


def _load(name):
    with open(os.path.join(HERE, "data", name)) as handle:
        return yaml.safe_load(handle)


def _defaults():
    """The role's defaults, keyed as role_inputs publishes them (without os_tuning_)."""
    with open(os.path.join(ROLE, "defaults", "main.yml")) as handle:
        data = yaml.safe_load(handle)
    return dict((k[len("os_tuning_"):], v) for k, v in data.items())


def _platform(name):
    path = os.path.join(ROLE, "vars", {"debian": "Debian.yml", "el": "RedHat.yml"}[name])
    with open(path) as handle:
        return yaml.safe_load(handle)["__os_tuning_platform"]


def _get(data, dotted):
    for part in dotted.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


PROBLEMS = _load("os_tuning_problems.yml")
DECISIONS = _load("os_tuning_decisions.yml")
SIMULATIONS = _load("os_tuning_apt_simulation.yml")


@pytest.mark.parametrize("case", PROBLEMS, ids=[c["id"] for c in PROBLEMS])
def test_problems_table(case):
    inputs = _defaults()
    inputs.update(copy.deepcopy(case["set"]))
    found = os_tuning_inputs.problems(inputs)
    assert len(found) == case["count"], found
    for needle in case.get("problems", []):
        assert any(needle in problem for problem in found), (needle, found)


@pytest.mark.parametrize("case", DECISIONS, ids=[c["id"] for c in DECISIONS])
def test_decisions_table(case):
    inputs = _defaults()
    inputs.update(copy.deepcopy(case.get("set", {})))
    assert os_tuning_inputs.problems(inputs) == []
    context = {"in_container": False, "virtualization_type": "kvm", "virtualization_role": "host",
               "driver_required": False, "kernel": "6.1.0-18-amd64", "check_mode": False}
    context.update(case.get("context", {}))
    host = {"cmdline": "", "boot_text": None, "grub_tool": True, "cpufreq_driver": False, "units": {},
            "packages": {}, "simulation": None, "sysctl_live": {}}
    host.update(copy.deepcopy(case.get("host", {})))
    if case.get("platform", "debian") == "debian" and host["simulation"] is None:
        host["simulation"] = []
    decisions = os_tuning.decide(inputs, _platform(case.get("platform", "debian")), context, host)
    for path, value in case.get("expect", {}).items():
        assert _get(decisions, path) == value, path
    for path, value in case.get("contains", {}).items():
        assert value in _get(decisions, path), (path, _get(decisions, path))


@pytest.mark.parametrize("case", SIMULATIONS, ids=[c["id"] for c in SIMULATIONS])
def test_apt_simulation_table(case):
    assert os_tuning.parse_apt_simulation(case["text"]) == case["expect"]


def test_status_record_is_complete_and_json_ready():
    import json
    decisions = os_tuning.decide(_defaults(), _platform("debian"),
                                 {"in_container": True, "virtualization_type": "docker", "virtualization_role": "guest"},
                                 {"cmdline": "", "units": {}, "grub_tool": True, "simulation": []})
    status = json.loads(json.dumps(decisions["status"]))
    assert sorted(status) == ["apply_live", "container", "cpufreq", "kernel_cmdline", "limits", "live",
                              "package_holds", "reason", "role", "sysctl", "thp", "virtualization"]
    assert status["reason"] == status["sysctl"]["reason"] == status["thp"]["reason"]
    assert "drift" not in status["sysctl"]
    assert status["package_holds"]["kernel_updates_held_back"]["reason"] == "no kernel package is kept back on this host"


@pytest.mark.parametrize("glob,kernel", [
    ("linux-image-*", True), ("linux-headers-*", True), ("linux-modules-*", True), ("kernel", True),
    ("kernel-*", True), ("linux-*", True), ("*", True), ("nvidia-*", False), ("libnvidia-*", False),
    ("cuda-*", False), ("linux-base", False), ("kernelshark", False),
])
def test_kernel_globs(glob, kernel):
    assert os_tuning.is_kernel_glob(glob) is kernel


@pytest.mark.parametrize("needed,marker,record", [
    (True, "", True),
    (False, "", False),
    (False, "nvidia_driver: driver 550 installed, 535 loaded\n", False),
    (False, "nvidia_driver: x\nos_tuning: kernel command line parameters not active until reboot: iommu=pt\n", True),
    (True, "os_tuning: old reason\n", True),
])
def test_reboot_record(needed, marker, record):
    """The marker line is written when a reboot is needed, cleared when one is left; else nothing to do."""
    assert os_tuning.reboot_record({"needed": needed}, marker) is record


# ---- the converged fast path ----------------------------------------------------------
FILES_DIR = os.path.join(HERE, "data", "os_tuning_files")
FILE_CASES = _load(os.path.join("os_tuning_files", "cases.yml"))
FILE_NAMES = {"sysctl": "sysctl.conf", "limits": "limits.conf", "systemd_limits": "systemd-limits.conf",
              "thp_unit": "gpuops-thp.service", "cpufreq_script": "cpufreq-governor.sh",
              "cpufreq_unit": "gpuops-cpufreq.service", "grub_dropin": "grub.cfg", "unattended": "unattended-upgrades"}


@pytest.mark.parametrize("case,key", [(c, k) for c in sorted(FILE_CASES) for k in os_tuning_files.FILE_KEYS])
def test_render_is_byte_for_byte_what_the_templates_wrote(case, key):
    spec = FILE_CASES[case]
    inputs = spec["inputs"]
    decisions = {"sysctl": {"settings": spec["sysctl_settings"]},
                 "limits": {"entries": inputs["limits"] + inputs["limits_extra"]},
                 "unattended": {"patterns": spec["patterns"]}}
    with open(os.path.join(FILES_DIR, case, FILE_NAMES[key])) as handle:
        assert os_tuning_files.render(key, inputs, decisions) == handle.read()


def test_decide_gives_each_file_to_write_its_text():
    decisions = os_tuning.decide(_defaults(), _platform("debian"), {"driver_required": True},
                                 {"cmdline": "", "units": {}, "grub_tool": True, "simulation": []})
    by_key = dict((entry["key"], entry) for entry in decisions["files"]["write"])
    assert by_key["sysctl"]["content"].endswith("vm.max_map_count = 1048576\nvm.swappiness = 1\n")
    assert '    "nvidia-.*$";  // nvidia-*\n' in by_key["unattended"]["content"]


CONVERGED = _load("os_tuning_converged.yml")


@pytest.mark.parametrize("case", CONVERGED, ids=[c["id"] for c in CONVERGED])
def test_converged_table(case):
    inputs = _defaults()
    inputs.update(copy.deepcopy(case.get("set", {})))
    context = {"in_container": False, "virtualization_type": "kvm", "virtualization_role": "host",
               "driver_required": False, "kernel": "6.1.0-18-amd64", "check_mode": False}
    context.update(case.get("context", {}))
    host = {"cmdline": "", "boot_text": None, "grub_tool": True, "cpufreq_driver": False, "units": {},
            "packages": {}, "simulation": [], "sysctl_live": {}}
    host.update(copy.deepcopy(case.get("host", {})))
    decisions = os_tuning.decide(inputs, _platform(case.get("platform", "debian")), context, host)
    drift = case.get("drift", {})
    stale = drift.get("stale", [])
    found = decisions["files"]
    for entry in found["write"]:
        entry["current"] = entry["key"] not in stale
    for entry in found["directories"] + found["absent"]:
        entry["current"] = entry["path"] not in stale
    assert all(any(e.get("key") == s or e.get("path") == s for e in found["write"] + found["directories"]
                   + found["absent"]) for s in stale), "the case names a file the decisions do not have"
    states = dict((u["name"], {"UnitFileState": "enabled", "ActiveState": "active"}) for u in decisions["units"]["enable"])
    states.update(drift.get("units", {}))
    result = os_tuning.converged(decisions, states, drift.get("unattended_current", True))
    assert result["converged"] is case["converged"], result["reasons"]
    for needle in case.get("reasons", []):
        assert any(needle in reason for reason in result["reasons"]), (needle, result["reasons"])


def test_unit_states_parse_systemctl_show():
    text = ("Id=gpuops-thp.service\nActiveState=active\nUnitFileState=enabled\n\n"
            "Id=gpuops-cpufreq.service\nActiveState=inactive\nUnitFileState=disabled\n")
    assert parse_unit_states(text) == {
        "gpuops-thp.service": {"Id": "gpuops-thp.service", "ActiveState": "active", "UnitFileState": "enabled"},
        "gpuops-cpufreq.service": {"Id": "gpuops-cpufreq.service", "ActiveState": "inactive",
                                   "UnitFileState": "disabled"}}


@pytest.mark.parametrize("text,globs,current", [
    (None, [], True),
    (None, ["kernel*"], False),
    ("[commands]\napply_updates = yes\n[base]\nexclude = kernel* nvidia-*\n", ["kernel*", "nvidia-*"], True),
    ("[base]\nexclude = kernel*\n", ["kernel*", "nvidia-*"], False),
    ("[base]\nexclude = kernel*\n", [], False),
    ("[commands]\nexclude = kernel*\n", [], True),
    ("[base]\n# exclude = kernel*\n", ["kernel*"], False),
])
def test_dnf_automatic_current(text, globs, current):
    assert os_tuning.dnf_automatic_current(text, globs) is current
