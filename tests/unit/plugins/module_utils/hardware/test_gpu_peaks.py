"""hardware/gpu_peaks.py: every row of the peak table and of the ResNet-50 table says where its
figures come from (a URL, and either confirmed or what is unconfirmed), and the throughputs are
dense."""
import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware import gpu_models, gpu_peaks

URL_RE = re.compile(r"https://[A-Za-z0-9.-]+\.[a-z]{2,}/\S*")


@pytest.mark.parametrize("device_id", sorted(gpu_peaks.PEAKS), ids=lambda i: "0x%04x" % i)
def test_every_peak_row_names_its_source(device_id):
    row = gpu_peaks.PEAKS[device_id]
    assert row["model"] and row["source"] and row["checked"]
    assert URL_RE.fullmatch(row["url"]), row["url"]
    # confirmed (None), or an explicit note of what could not be confirmed
    assert row["unconfirmed"] is None or (isinstance(row["unconfirmed"], str) and len(row["unconfirmed"]) > 20)
    for key in gpu_peaks.KEYS:
        assert key in row, key


@pytest.mark.parametrize("device_id", sorted(gpu_peaks.PEAKS), ids=lambda i: "0x%04x" % i)
def test_peak_rows_agree_with_the_model_table(device_id):
    known = gpu_models.KNOWN_GPUS.get(device_id)
    assert known is not None, "a peak row for an id the model table does not know"
    row = gpu_peaks.PEAKS[device_id]
    assert row["model"] in known["name"]


def test_dense_figures():
    # the datasheets' "with sparsity" figures halved, nothing else: bf16 equals fp16 where both
    # exist, and tf32 is half of it on every tensor-core generation in the table
    for device_id, row in gpu_peaks.PEAKS.items():
        if row["bf16_tflops"] is not None:
            assert row["bf16_tflops"] == row["fp16_tflops"], hex(device_id)
        if row["tf32_tflops"] is not None:
            assert row["tf32_tflops"] == pytest.approx(row["fp16_tflops"] / 2, abs=0.6), hex(device_id)
    assert gpu_peaks.PEAKS[0x2331]["bf16_tflops"] == 756.5  # 1,513 with sparsity
    assert gpu_peaks.PEAKS[0x2335]["memory_gbps"] == 4800.0


def test_resnet50_published_figures():
    for device_id, row in gpu_peaks.RESNET50_TRAINING.items():
        assert URL_RE.fullmatch(row["url"]) and row["what"] and row["images_per_s"] > 0, hex(device_id)
        assert device_id in gpu_models.KNOWN_GPUS
    a100 = gpu_peaks.resnet50_published("0x20b2")
    assert a100["images_per_s"] == 2470.0 and "DGX A100" in a100["what"]
    assert gpu_peaks.resnet50_published("0x2330") is None  # no one-GPU figure published: no verdict
    assert gpu_peaks.resnet50_published("nonsense") is None
