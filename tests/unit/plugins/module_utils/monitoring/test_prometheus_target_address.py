"""prometheus_target_address (issue 19): the address a scraped host publishes for the file_sd
targets, checked by prometheus_config.target_address_error (called by the prometheus role's
check_inputs and by the host_plan action that publishes it), from
data/prometheus_target_address_cases.yml - newline cases included."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.monitoring import prometheus_config

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "data", "prometheus_target_address_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_target_address_error(case):
    error = prometheus_config.target_address_error(case["value"])
    if case["error"] is None:
        assert error is None
    else:
        assert error and case["error"] in error, error


def test_check_inputs_refuses_a_bad_target_address():
    errors = prometheus_config.check_inputs({"target_address": "10.9.9.9\n", "file_sd_dir": "/etc/prometheus/file_sd",
                                             "rules_dir": "/etc/prometheus/rules",
                                             "config_file": "/etc/prometheus/prometheus.yml",
                                             "status_file": "/etc/gpuops/prometheus.json",
                                             "scrape_interval": "30s", "evaluation_interval": "30s",
                                             "node_exporter_group": "gpu_nodes", "dcgm_exporter_group": "gpu_nodes"})
    assert [e for e in errors if "prometheus_target_address" in e], errors
