"""bmc/devices.py: the host's in-band BMC device, read once by the probe (gpu_facts: gpuops_gpu.bmc)."""
from ansible_collections.gpuops.dlserver.plugins.module_utils.bmc import devices, sel


def test_the_first_device_the_host_has():
    assert devices.inband_device(exists=lambda path: path == "/dev/ipmi/0") == "/dev/ipmi/0"
    assert devices.inband_device(exists=lambda path: True) == "/dev/ipmi0"


def test_no_device_is_none():
    assert devices.inband_device(exists=lambda path: False) is None


def test_the_sel_check_reads_the_same_list():
    assert sel.BMC_DEVICES is devices.BMC_DEVICES
