"""One error convention for every filter of the collection: bad input raises AnsibleFilterError
(naming the variable or argument), it is never returned for YAML to assert.

BAD lists one bad call per filter; a filter added to plugins/filter/ (public, or private in __private/) without a row here fails
test_every_filter_has_a_bad_input_case, so the convention holds for new filters too.
"""
import glob
import importlib
import os

import pytest
from ansible.errors import AnsibleFilterError

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
# every filter file, public (plugins/filter/<name>.py) or private (plugins/filter/__private/<name>.py), as a
# module path under plugins.filter
NAMES = sorted([os.path.basename(p)[:-3] for p in glob.glob(os.path.join(REPO, "plugins", "filter", "*.py"))
                if os.path.basename(p) != "__init__.py"]
               + ["__private." + os.path.basename(p)[:-3]
                  for p in glob.glob(os.path.join(REPO, "plugins", "filter", "__private", "*.py"))])


def _filters():
    found = {}
    for name in NAMES:
        module = importlib.import_module("ansible_collections.gpuops.dlserver.plugins.filter." + name)
        found.update(module.FilterModule().filters())
    return found


FILTERS = _filters()

# filter name -> (args, a word the message must hold)
BAD = {
    "bmc_recovery": (("rebooted\n",), "must be a dict"),
    "bmc_recovery_report": (("cycle\n", None, None), "must be a dict"),
    "cuda_repository": (({"gpuops_cuda_repo_base_url": "http://x/\nSigned-By: /tmp/k"},
                         {"distribution": "Debian", "distribution_major_version": "12", "architecture": "x86_64"}),
                        "gpuops_cuda_repo"),
    "cuda_toolkit_plan": (({"source": "cuda_repo", "versions": ["12.4\n"], "default": "", "driver_compat": "minor",
                            "status_file": "/etc/gpuops/cuda_toolkit.json"}, {}, {}, []), "cuda_toolkit_versions"),
    "cuda_toolkit_nccl": (("libnccl2:\n  Installed: (none)\n", {"packages": ["libnccl2"], "cuda": "12.4\n"}),
                          "cuda_toolkit_nccl"),
    "canary": ((["gpu-01"], {"gpu-01": {"gpuops_plan": {"roles": "x"}}}, []), "gpuops_plan"),
    "cuda_toolkit_verify": (("not registered results", {}), "cuda_toolkit_verify"),
    "download_failure": (("not a result", {}, "left alone"), "download_failure"),
    "driver_rollback": (("580.95.05", "580.105.08\nreboot", "fail", []), "target driver version"),
    "dcgm_exporter_config": ((["not", "a", "dict"], {}), "inputs"),
    "dcgm_exporter_verify": (("DCGM_FI_DEV_GPU_TEMP 1\n", "DCGM_FI_DEV_GPU_TEMP"), "expected"),
    "dcgm_exporter_verify_when": (({"unit": "changed"}, True), "dcgm_exporter_verify_when"),
    "gpu_plan": (("not facts",), "gpu_plan"),
    "ipmi_exporter_plan": (({"listen_address": ":9290", "remote": True, "local": "never", "module": "default",
                             "modules": {"default": {"user": "mon", "password": "pa ss\nword"}},
                             "local_collectors": ["ipmi"], "user": "ipmi-exporter", "group": "ipmi-exporter",
                             "config_dir": "/etc/ipmi_exporter"}, {"name": "Rocky 9", "package": ""}, {}),
                           "Rocky 9 has no prometheus-ipmi-exporter package"),
    "ipmi_exporter_verify": (("not results",), "ipmi_exporter_verify"),
    "mirror_urls": (("http://mirror.example.internal/gpuops\n",), "gpuops_mirror_url"),
    "node_exporter_plan": (({"listen_address": "9100"}, {}, "gpu-01", "x86_64"), "node_exporter"),
    "parse_nvidia_topo": (("this is not a topology matrix\n",), "GPU"),
    "prometheus_config": (("not a dict",), "prometheus"),
    "prometheus_targets": (("not hostvars", ["gpu1"], "gpu_nodes"), "prometheus_targets"),
    "probe_fleet": (({}, "gpu-01"), "probe_fleet"),
    "probe_report": ((None, "gpu-01"), "probe_report"),
    "python_stack_status": (("not a plan",), "python_stack_status"),
    "reboot_lab_container": (({"needed": True, "action": "skipped", "reason": "x", "timeout": 60}, "20\n", True, True),
                             "gpuops_lab_container_reboot"),
    "reboot_request": (({}, "os_tuning", {"action": "later"}), "reboot_request"),
    "reboot_served": (("not a request",), "reboot_served"),
    "render_nvidia_topo": (("not a topology",), "render_nvidia_topo"),
    "rolling_k8s_node": (("gpu-07\n", "gpu-07", True), "gpuops_k8s_node_name"),
    "rolling_k8s_nodes": ((["gpu-07"], {"gpu-07": {"gpuops_k8s_drain": "no\n", "ansible_facts": {}}}, {}, ""),
                          "gpuops_k8s_drain"),
    "role_status": (({}, "no_such_role"), "no_such_role"),
    "volcano_manifest_objects": (("kind: ConfigMap", "volcano-system", True), "volcano_manifest_objects"),
    "volcano_plan": (("not inputs", {}), "volcano_plan"),
    "validate_fleet_table": (("gpu-01", {}), "validate_fleet_table"),
    "validate_html_report": (("gpu-01", {}), "validate_html_report"),
    "validate_peers": ((["gpu-01"], {"gpu-01": {"gpu_validate_address": "10.0.0.1\nx"}}), "gpu_validate_address"),
    "volcano_smoke_result": (({"resources": []}, "four", 600), "volcano_smoke_result"),
}


def test_every_filter_has_a_bad_input_case():
    assert sorted(FILTERS) == sorted(BAD), "add a bad-input case for each new filter"


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises(name):
    args, word = BAD[name]
    with pytest.raises(AnsibleFilterError) as info:
        FILTERS[name](*args)
    assert word in str(info.value), str(info.value)
