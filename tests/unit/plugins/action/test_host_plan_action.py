"""gpuops.dlserver.host_plan through a real ansible-playbook run: every role's inputs checked, one plan."""
import json

import pytest

from ansible_collections.gpuops.dlserver.plugins.action.host_plan import public_roles


PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - gpuops.dlserver.host_plan:
        probe: {ansible_facts: {gpuops_gpu: "{{ facts }}"}}
        in_container: true
      register: result
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ result.plan | to_json }}"
"""


@pytest.fixture
def run(tmp_path, run_play):
    return lambda fixture, *extra: run_play(tmp_path, PLAY, fixture, *extra)


def test_a_bad_input_of_a_role_the_plan_skips_fails_naming_it(run, tmp_path):
    # a CPU-only host: the plan skips the container toolkit, its inputs are checked all the same
    res = run("plan_cpu_only.yml", json.dumps({"nvidia_container_toolkit_engines": ["no-such-engine"]}),
              "os_tuning_reboot=maybe")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "nvidia_container_toolkit_engines: no-such-engine not allowed" in out
    assert "os_tuning_reboot must be a boolean" in out
    assert not (tmp_path / "out.json").exists()


def test_the_driver_checks_the_spec_cannot_make_fail_on_every_host(run, tmp_path):
    # a CPU-only host, where the plan installs no driver: a version of another branch and a URL
    # that is none are still refused here (the registry of input checks, core/input_checks.py), before any change
    res = run("plan_cpu_only.yml", "nvidia_driver_version=535.183.01", "nvidia_driver_branch=580",
              "nvidia_driver_debian_mirror=ftp://mirror.example/debian")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "nvidia_driver_version 535.183.01 belongs to branch 535, not to nvidia_driver_branch 580" in out
    assert 'nvidia_driver_debian_mirror must be an http(s):// or file:// URL (or ""), got "ftp://' in out
    assert not (tmp_path / "out.json").exists()


def test_the_plan_comes_from_the_typed_inputs(run, tmp_path):
    res = run("plan_cpu_only.yml", "nvidia_driver_force=true", "node_exporter_listen_address=:9111")
    assert res.returncode == 0, res.stdout + res.stderr
    plan = json.loads((tmp_path / "out.json").read_text())
    assert plan["driver"]["required"] is True
    assert plan["roles"]["nvidia_container_toolkit"]["run"] is True
    assert plan["exporters"]["node_exporter"]["listen_address"] == ":9111"
    assert plan["host"]["scrape_address"] == "localhost"


def test_a_conflict_with_the_hardware_fails_naming_the_variable(run, tmp_path):
    res = run("plan_cpu_only.yml", "nvidia_driver_mig_mode=enabled", "nvidia_driver_force=true")
    assert res.returncode != 0
    assert "nvidia_driver_mig_mode" in res.stdout + res.stderr


def test_a_variable_that_cannot_be_evaluated_is_named(run, tmp_path):
    res = run("plan_cpu_only.yml", "python_stack_prefix={{ no_such_variable }}")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "python_stack_prefix cannot be evaluated" in out


def test_a_target_address_that_is_no_address_fails_naming_it(run, tmp_path):
    # the address this host publishes for Prometheus's file_sd targets (issue 19)
    res = run("plan_cpu_only.yml", json.dumps({"prometheus_target_address": "10.9.9.9\n- targets: [x:1]"}))
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "prometheus_target_address" in out and "is not a host name" in out
    assert not (tmp_path / "out.json").exists()


def refused_before_any_change(run, tmp_path, extra, words):
    """plan_cpu_only.yml with ``extra`` fails, its output holds every one of ``words``, and no plan
    was written."""
    res = run("plan_cpu_only.yml", *extra)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert all(w in out for w in words), out[-3000:]
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("variable,value,words", [
    ("node_exporter_listen_address", "9100", ["node_exporter_listen_address", "is not a listen address"]),
    # dcgm_exporter's own value checks (dcgm_inputs, run on every host by value_kinds) name the newline first
    ("dcgm_exporter_listen_address", ":9400\n", ["dcgm_exporter_listen_address", "control character"]),
    ("dcgm_exporter_listen_address", ":70000", ["dcgm_exporter_listen_address", "[HOST]:PORT"]),
])
def test_a_listen_address_the_plan_publishes_is_checked_first(run, tmp_path, variable, value, words):
    # Prometheus reads the exporters' listen addresses from each host's plan: a bad one fails on its
    # own host, before the plan is published (issue 19)
    res = run("plan_cpu_only.yml", json.dumps({variable: value}))
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert all(w in out for w in words), out[-2000:]
    assert not (tmp_path / "out.json").exists()


def test_a_cpu_only_host_refuses_the_cuda_key_identities_naming_each(run, tmp_path):
    """Issue 37: the CUDA repository's key variables (common's cuda_repo entry point) are checked on
    every host, also where no role uses the repository: a CPU-only host refuses an 0x-prefixed key id
    and an md5 checksum, naming the variable, the problem and what would be accepted."""
    res = run("plan_cpu_only.yml", "gpuops_cuda_repo_key_fingerprint=0xDEADBEEF",
              "gpuops_cuda_repo_key_checksum=md5:d41d8cd98f00b204e9800998ecf8427e")
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "gpuops_cuda_repo_key_fingerprint: '0xDEADBEEF' is an 0x-prefixed key id" in out
    assert "40 hex digits without 0x" in out
    assert "gpuops_cuda_repo_key_checksum: 'md5:d41d8cd98f00b204e9800998ecf8427e' is a md5 checksum; " \
           "only sha256 is accepted" in out
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("extra,words", [
    (["gpuops_cuda_repo_base_url=ftp://mirror.example/cuda"],
     ["gpuops_cuda_repo_base_url: ftp:// cannot be used for an apt repository"]),
    (["gpuops_cuda_repo_key_url=http://mirror.example/k.pub", "gpuops_cuda_repo_key_fingerprint="],
     ["gpuops_cuda_repo_key_url", "comes over plain http and nothing pins it", "gpuops_cuda_repo_key_fingerprint"]),
    (["node_exporter_binary_url=http://m.example/ne-{version}.tar.gz",
      "node_exporter_checksums_url=http://m.example/sha256sums.txt"],
     ["node_exporter_binary_url: a binary download", "node_exporter_checksums_url: a checksum list",
      "node_exporter_sha256"]),
    (["volcano_chart_repo_url=http://m.example/helm"], ["volcano_chart_repo_url", "Helm chart repository"]),
    ([json.dumps({"gpuops_insecure_http_hosts": ["http://m.example"]})],
     ["gpuops_insecure_http_hosts: 'http://m.example' is not a host[:port]"]),
])
def test_a_url_that_nothing_verifies_fails_on_every_host(run, tmp_path, extra, words):
    refused_before_any_change(run, tmp_path, extra, words)


@pytest.mark.parametrize("extra", [
    # a key over plain http whose fingerprint is pinned: verified by it, no checksum needed
    ["gpuops_cuda_repo_key_url=http://mirror.example/k.pub",
     "gpuops_cuda_repo_key_fingerprint=EB693B3035CD5710E231E123A4B469963BF863CC"],
    # a plain-http mirror: repositories and the table's keys (fingerprints) are fine; the binary
    # and chart nothing pins are opted into by host, the Python indexes by python_stack's own opt-in
    ["gpuops_mirror_url=http://mirror.example:8099", json.dumps({"gpuops_insecure_http_hosts": ["mirror.example:8099"],
                                                                 "python_stack_insecure_index_hosts": ["mirror.example:8099"]})],
])
def test_a_url_that_something_verifies_is_accepted(run, tmp_path, extra):
    res = run("plan_cpu_only.yml", *extra)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    assert (tmp_path / "out.json").exists()


SETTINGS_PLAY = """- hosts: localhost
  gather_facts: false
  tasks:
    - gpuops.dlserver.host_plan:
        probe: {ansible_facts: {gpuops_gpu: "{{ facts }}"}}
        in_container: true
        settings_checks: true
      register: result
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ result.settings | to_json }}"
"""


def test_settings_checks_report_the_roles_settings_and_bad_ones_fail_every_host(run_play, tmp_path):
    """Issue 34: the read-only probe asks host_plan for the roles' own settings checks and reports
    them. Issue 38: those checks are the registry's (core/input_checks.py), which host_plan runs on
    every host before any change, so a bad setting is refused there, naming the variable."""
    res = run_play(tmp_path, SETTINGS_PLAY, "plan_cpu_only.yml")
    assert res.returncode == 0, res.stdout + res.stderr
    settings = json.loads((tmp_path / "out.json").read_text())
    assert settings["nvidia_container_toolkit"]["checked"] is True
    assert settings["nvidia_container_toolkit"]["problems"] == []
    # every role: the registry's result for it (plan/settings_checks.py runs no check of its own)
    assert settings["node_exporter"] == {"checked": True, "problems": [],
                                         "reason": "the registry of input checks, core/input_checks.py"}
    assert sorted(settings) == sorted(public_roles())
    assert settings["os_tuning"]["checked"] is True and settings["os_tuning"]["problems"] == []
    res = run_play(tmp_path, SETTINGS_PLAY, "plan_cpu_only.yml", "nvidia_container_toolkit_version=latest")
    assert res.returncode != 0
    assert "bad input, nothing was changed: nvidia_container_toolkit_version must be a version" in res.stdout


# Issue 34 item 8: `-e nvidia_driver_brnach=535 -e os_tuning_swapiness=10` ran with rc 0 and was ignored.
TYPOS = ("nvidia_driver_brnach=535", "os_tuning_swapiness=10")


def test_a_mistyped_variable_is_named_with_the_closest_declared_one(run, tmp_path):
    res = run("plan_cpu_only.yml", *TYPOS)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]                 # a warning by default: the run goes on
    assert "nvidia_driver_brnach is not a variable of the role nvidia_driver" in out, out[-3000:]
    assert "did you mean nvidia_driver_branch?" in out
    # os_tuning has no swappiness variable (vm.swappiness is a key of os_tuning_sysctl_overwrite)
    assert "os_tuning_swapiness is not a variable of the role os_tuning" in out
    assert "os_tuning_swapiness is not a variable of the role os_tuning (its argument spec does not declare it); " \
           "no declared name is close" in out
    assert (tmp_path / "out.json").exists()


def test_unknown_variables_fail_every_host_before_any_change_on_request(run, tmp_path):
    res = run("plan_cpu_only.yml", "gpuops_unknown_variables=error", *TYPOS)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "bad input, nothing was changed" in out and "did you mean nvidia_driver_branch?" in out
    assert "os_tuning_swapiness is not a variable of the role os_tuning" in out
    assert not (tmp_path / "out.json").exists()


def test_declared_names_outputs_and_other_prefixes_are_not_reported(run, tmp_path):
    # declared (nvidia_driver_branch), a role's output (nvidia_driver_status), the collection's own
    # gpuops_* names and names of no role's prefix (k8s_*) are no typos
    res = run("plan_cpu_only.yml", "gpuops_unknown_variables=error", "nvidia_driver_branch=580",
              json.dumps({"nvidia_driver_status": {}, "gpuops_rolling_version": "1", "k8s_thing": 1,
                          "nvidia_container_toolkit_engines": ["docker"]}))
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    assert "is not a variable of the role" not in out


@pytest.mark.parametrize("value", ["loud", "warn\n"])
def test_a_bad_unknown_variables_mode_fails_naming_it(run, tmp_path, value):
    res = run("plan_cpu_only.yml", json.dumps({"gpuops_unknown_variables": value}))
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "gpuops_unknown_variables must be one of warn, error, ignore" in out


PLAY_WITH_FACTS = """- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.setup:
        gather_subset: ['!all']
    - gpuops.dlserver.host_plan:
        probe: {ansible_facts: {gpuops_gpu: "{{ facts }}"}}
        in_container: true
      register: result
    - ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'plan': result.plan, 'distribution': ansible_facts.distribution,
                      'major': ansible_facts.distribution_major_version} | to_json }}"
"""


@pytest.mark.parametrize("source", ["distro", "cuda_repo"])
def test_the_branch_is_decided_in_one_pass_from_the_host_facts(run_play, tmp_path, source):
    """The action passes ansible_facts.distribution and distribution_major_version: a host without a
    driver gets the newest branch of packages/driver_branches.py's row in the first plan (no second pass)."""
    from ansible_collections.gpuops.dlserver.plugins.module_utils.packages import driver_branches

    res = run_play(tmp_path, PLAY_WITH_FACTS, "plan_dgx_a100.yml", "nvidia_driver_source=%s" % source)
    assert res.returncode == 0, res.stdout + res.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    plan, branch = out["plan"], out["plan"]["driver"]["branch"]
    assert plan["options"]["distribution"] == out["distribution"]
    assert plan["options"]["distribution_major"] == out["major"]
    expected = driver_branches.default_branch(out["distribution"], out["major"], source)
    if expected is None:  # a machine of a platform the table has no row for: left open, and said why
        assert (branch["value"], branch["from"]) == (None, "source"), branch
    else:
        assert (branch["value"], branch["from"]) == (expected, "newest_supported"), branch
        assert "nvidia_driver_source %s on %s %s" % (source, out["distribution"], out["major"]) in branch["reason"]


@pytest.mark.parametrize("extra,words", [
    # the play's inventory (localhost,) has only all and ungrouped: a group named there is a typo
    (["prometheus_dcgm_exporter_group=gpu_nodez"],
     ["prometheus_dcgm_exporter_group: group 'gpu_nodez' is not in the inventory", "(none but all)"]),
    (["gpuops_rolling_k8s_group=k8s_workers"], ["gpuops_rolling_k8s_group: group 'k8s_workers' is not in the inventory"]),
    (["node_exporter_user=root"], ["node_exporter_user: user 'root' grants privilege",
                                   "gpuops_allow_privileged_service_accounts"]),
    (["volcano_smoke_image=nvcr.io/nvidia/cuda:latest"], ["volcano_smoke_image: 'nvcr.io/nvidia/cuda:latest' is a "
                                                          "moving tag (latest)"]),
    ([json.dumps({"nvidia_container_toolkit_engines": ["crio", "crio"]})],
     ["nvidia_container_toolkit_engines: container engine 'crio' is listed twice"]),
    (["prometheus_node_exporter_basic_auth_username=p", "prometheus_node_exporter_basic_auth_password=x"],
     ["prometheus_node_exporter_scheme is http but prometheus_node_exporter_basic_auth_username and "
      "prometheus_node_exporter_basic_auth_password are set"]),
    (["gpuops_allow_moving_image_tags=maybe"], ["gpuops_allow_moving_image_tags must be a boolean"]),
])
def test_a_value_of_the_wrong_meaning_or_posture_fails_on_every_host(run, tmp_path, extra, words):
    """Issue 37 (value_posture.py): a CPU-only host, where none of these roles runs, still refuses
    each value, naming the variable, the problem and what would be accepted."""
    refused_before_any_change(run, tmp_path, extra, words)


@pytest.mark.parametrize("extra", [
    # the default dcgm group (gpu_nodes) absent from the inventory: the feature is unused, not a typo
    ["prometheus_dcgm_exporter_group=gpu_nodes", "prometheus_node_exporter_group=ungrouped"],
    # each risk accepted by its documented opt-in
    ["volcano_smoke_image=nvcr.io/nvidia/cuda:latest", "gpuops_allow_moving_image_tags=true"],
    ["node_exporter_user=root", "node_exporter_group=root", "gpuops_allow_privileged_service_accounts=true"],
    ["prometheus_node_exporter_basic_auth_username=p", "prometheus_node_exporter_basic_auth_password=x",
     "gpuops_allow_basic_auth_over_http=true"],
])
def test_a_value_its_opt_in_or_the_inventory_accepts_passes(run, tmp_path, extra):
    res = run("plan_cpu_only.yml", *extra)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    assert (tmp_path / "out.json").exists()


def test_paths_numbers_and_file_values_are_refused_on_every_host(run, tmp_path):
    """Issue 37 (module_utils/core/value_kinds.py): on a CPU-only host, where none of these roles
    runs, a / environment prefix, a 0s scrape interval, a negative sysctl value, two exporters on one
    port and a batch of no host (a playbook variable) are each refused, naming the variable."""
    res = run("plan_cpu_only.yml", json.dumps({
        "python_stack_prefix": "/", "prometheus_scrape_interval": "0s",
        "os_tuning_sysctl_overwrite": {"vm.swappiness": -5},
        "node_exporter_listen_address": "0.0.0.0:9400", "gpuops_rolling_serial": 0}))
    out = res.stdout + res.stderr
    assert res.returncode != 0
    for words in ("python_stack_prefix: '/' is the root directory",
                  "prometheus_scrape_interval: '0s' is below one second",
                  "os_tuning_sysctl_overwrite[vm.swappiness]: -5 is outside what vm.swappiness takes (0 to 200)",
                  "dcgm_exporter_listen_address: port 9400 is also node_exporter_listen_address's on this host",
                  "gpuops_rolling_serial: 0 is not a batch size"):
        assert words in out, (words, out[-3000:])
    assert not (tmp_path / "out.json").exists()


def _rtx4090_facts(max_clocks):
    import os
    import yaml
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "module_utils", "data", "plan_rtx4090.yml")) as handle:
        facts = yaml.safe_load(handle)["facts"]
    for gpu in facts["gpus"]:
        if max_clocks is not None:
            gpu["max_clocks"] = max_clocks
    return json.dumps({"facts": facts})


def test_a_clock_above_the_maximum_the_probe_read_fails_naming_the_gpu(run, tmp_path):
    # the maxima of published nvidia-smi output (tests/fixtures/nvidia-smi-settings/max-clocks-*.csv)
    clocks = json.dumps({"nvidia_driver_application_clocks": {"graphics_mhz": 3500, "memory_mhz": 10001}})
    res = run(None, _rtx4090_facts({"graphics_mhz": 3105, "memory_mhz": 10501}), clocks)
    out = res.stdout + res.stderr
    assert res.returncode != 0
    assert "nvidia_driver_application_clocks.graphics_mhz: 3500 MHz is above the maximum graphics clock of GPU 0 (" in out
    assert "): 3105 MHz (from the probe)" in out
    assert not (tmp_path / "out.json").exists()


def test_a_clock_the_probe_has_no_maximum_for_is_said_not_checked(run, tmp_path):
    clocks = json.dumps({"nvidia_driver_application_clocks": {"graphics_mhz": 2500, "memory_mhz": 10501}})
    res = run(None, _rtx4090_facts(None), clocks)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "[WARNING]: nvidia_driver_application_clocks.graphics_mhz: 2500 MHz not checked: maximum unknown for GPU 0" in out
    assert "nvidia_driver_application_clocks.memory_mhz: 10501 MHz not checked: maximum unknown" in out


@pytest.mark.parametrize("extra,words", [
    ({"gpuops_bmc_recovery": True, "bmc_address": "10.0.40.7\nx", "gpuops_bmc_user": "ad min",
      "gpuops_bmc_password": "pw$(id)x"},
     ["bmc_address must be the BMC's IPv4 or IPv6 address or DNS name", "gpuops_bmc_user must be a BMC user name",
      "gpuops_bmc_password holds a character outside"]),
    ({"gpuops_bmc_recovery": True, "gpuops_bmc_password": "pw\n'x' y"},
     ["bmc_address is required where gpuops_bmc_recovery is true", "gpuops_bmc_user is required",
      "gpuops_bmc_password holds"]),
    ({"gpuops_bmc_recovery": False, "gpuops_bmc_password": "a" * 300}, ["gpuops_bmc_password is 300 characters long"]),
])
def test_the_bmc_inputs_are_refused_on_every_host_the_password_never_shown(run, tmp_path, extra, words):
    # issue 39: the power cycle after a failed reboot needs them only then, they are checked before any change
    res = run("plan_cpu_only.yml", json.dumps(extra))
    out = res.stdout + res.stderr
    refused_before_any_change(run, tmp_path, [json.dumps(extra)], words)
    assert extra["gpuops_bmc_password"] not in out


def test_good_bmc_inputs_pass_and_the_password_is_not_in_the_plan(run, tmp_path):
    password = "Zq9-unique.Pw"
    res = run("plan_cpu_only.yml", json.dumps({"gpuops_bmc_recovery": True, "bmc_address": "bmc-07.example.org",
                                               "gpuops_bmc_user": "gpuops", "gpuops_bmc_password": password}))
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-3000:]
    plan = (tmp_path / "out.json").read_text()
    assert plan and password not in plan and password not in out
