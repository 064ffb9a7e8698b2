# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 36, the last vendor tables row by row: TensorFlow's and-cuda extra and DALI's flavours
(python_env/cuda_match.py), the CUDA toolkit/Nsight, cuDNN and NCCL package names (cuda/toolkit.py),
chip and compute capability -> architecture and the MIG chips (hardware/gpu_models.py), architecture ->
compute capabilities (python_env/torch_builds.py).

Each row says what its quoted source says (a value edited without its source fails here), every row
has a source and a read date, the shapes the code uses are built from the rows, and the decisions
read from them are unchanged."""
import re

import pytest

from ansible_collections.gpuops.dlserver.plugins.module_utils.cuda import toolkit
from ansible_collections.gpuops.dlserver.plugins.module_utils.hardware import gpu_models
from ansible_collections.gpuops.dlserver.plugins.module_utils.python_env import cuda_match, torch_builds

DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# A Debian package name (Debian Policy 5.6.1), with the %d of a per-version pattern filled in.
PACKAGE = re.compile(r"[a-z0-9][a-z0-9.+-]+")

ALL_ROWS = [
    ("TF_AND_CUDA_ROWS", cuda_match.TF_AND_CUDA_ROWS), ("DALI_FLAVOUR_ROWS", cuda_match.DALI_FLAVOUR_ROWS),
    ("TOOLKIT_PACKAGE_ROWS", toolkit.TOOLKIT_PACKAGE_ROWS), ("CUDNN_PACKAGE_ROWS", toolkit.CUDNN_PACKAGE_ROWS),
    ("NCCL_PACKAGE_ROWS", toolkit.NCCL_PACKAGE_ROWS), ("CHIP_ARCH_ROWS", gpu_models.CHIP_ARCH_ROWS),
    ("CC_ARCH_ROWS", gpu_models.CC_ARCH_ROWS), ("MIG_CHIP_ROWS", gpu_models.MIG_CHIP_ROWS),
    ("ARCH_CAPABILITY_ROWS", torch_builds.ARCH_CAPABILITY_ROWS),
]


@pytest.mark.parametrize("name, rows", ALL_ROWS, ids=[entry[0] for entry in ALL_ROWS])
def test_every_row_has_a_source_naming_a_document_and_a_read_date(name, rows):
    assert rows, name
    for row in rows:
        assert DATE.fullmatch(row["read"]), (name, row)
        assert "http" in row["source"] or "index id" in row["source"], (name, row)
        unconfirmed = row.get("unconfirmed")
        assert unconfirmed is None or unconfirmed.strip(), (name, row)
        for key, value in row.items():
            if key != "source" and isinstance(value, str):
                assert "\n" not in value, (name, key)


# ---- TensorFlow and DALI (cuda_match) --------------------------------------------------------------

def test_tensorflow_rows_build_the_rule_python_stack_reads():
    first, newest = cuda_match.TF_AND_CUDA_ROWS
    assert cuda_match.TF_AND_CUDA_MIN == (2, 14) == tuple(int(p) for p in first["tensorflow"].split("."))
    assert cuda_match.TF_AND_CUDA_CUDA == (12, 0) == tuple(int(p) for p in newest["driver_cuda"].split("."))
    assert '"pip install tensorflow[and-cuda]"' in newest["source"]


def test_tensorflow_rows_need_the_driver_of_the_cuda_their_wheels_and_tested_builds_name():
    """SOURCE (the published wheels' Requires-Dist): 2.14.0 "nvidia-cuda-runtime-cu11 (==11.8.89) ; extra ==
    'and-cuda'", 2.15.0 "nvidia-cublas-cu12 (==12.2.5.6) ; extra == 'and-cuda'"; (Tested build configurations)
    "tensorflow-2.14.0 | ... | 8.7 | 11.8", "tensorflow-2.15.0 | ... | 8.9 | 12.2". The 2.14 row asks for a CUDA
    11.8 driver, not a CUDA 12 one; no row is left unconfirmed."""
    for row in cuda_match.TF_AND_CUDA_ROWS:
        tested = dict(re.findall(r'"tensorflow-(\d+\.\d+)\.0 \| [^"]*\| ([0-9.]+)"', row["source"]))
        wheels = re.search(r"nvidia-[a-z-]+-cu(\d+) \(==", row["source"]).group(1)
        major = row["driver_cuda"].split(".", maxsplit=1)[0]
        assert wheels == major == tested[row["tensorflow"]].split(".", maxsplit=1)[0], row
        assert "unconfirmed" not in row
    assert cuda_match.TF_AND_CUDA_ROWS[0]["driver_cuda"] == "11.8"


@pytest.mark.parametrize("version, exact, row", [
    ((2, 14), True, "2.14"), ((2, 14), False, "2.15"), ((2, 20), True, "2.15"), (None, False, "2.15"),
    ((2, 13), True, None), ((2, 13), False, None)])
def test_tensorflow_rule_of_a_release_exact_pins_take_their_row_bounds_the_newest(version, exact, row):
    got = cuda_match.tf_and_cuda_row(version, exact)
    assert (got["tensorflow"] if got else None) == row


@pytest.mark.parametrize("row", cuda_match.DALI_FLAVOUR_ROWS, ids=lambda row: row["flavour"])
def test_dali_row_is_the_wheel_and_cuda_its_source_names(row):
    quoted = re.search(r'"for CUDA (\d+\.\d+):[^"]*nvidia-dali-(cuda\d+)"', row["source"])
    assert quoted, row["source"]
    assert (quoted.group(1), quoted.group(2)) == (row["driver_cuda"], row["flavour"])


def test_dali_cuda110_row_names_the_last_release_with_a_cuda110_wheel():
    """SOURCE (PyPI's index of nvidia-dali-cuda110, pip index versions): "Available versions: 1.50.0, 1.49.0, ...":
    the flavour stays (a CUDA 11 driver gets the newest cuda110 wheel, 1.50.0); the row says where it ends."""
    row = [r for r in cuda_match.DALI_FLAVOUR_ROWS if r["flavour"] == "cuda110"][0]
    assert "1.37.1" in row["source"] and "Available versions: 1.50.0" in row["source"]
    assert row["last_release"] == "1.50.0" and "unconfirmed" not in row
    assert "end at DALI 1.50.0" in cuda_match.dali_flavour("11.8")["reason"]
    assert "end at DALI" not in cuda_match.dali_flavour("12.8")["reason"]


def test_dali_flavours_are_built_from_the_rows_newest_first():
    assert cuda_match.DALI_FLAVOURS == [((13, 0), "cuda130"), ((12, 0), "cuda120"), ((11, 0), "cuda110")]


@pytest.mark.parametrize("cuda, flavour", [
    ("13.0", "cuda130"), ("13.2", "cuda130"), ("12.9", "cuda120"), ("12.0", "cuda120"), ("11.8", "cuda110"),
    ("10.2", "cuda110"), (None, "cuda120"), ("12.8\n", "cuda120"),
])
def test_dali_flavour_decisions_are_unchanged(cuda, flavour):
    """The newline case: '12.8\\n' is no CUDA version (core/versions.py full match), so the default."""
    assert cuda_match.dali_flavour(cuda)["value"] == flavour


# ---- package names (toolkit, nccl) -----------------------------------------------------------------

def test_package_shapes_are_built_from_the_rows():
    assert toolkit.TOOLKIT_PACKAGE == "cuda-toolkit-%d-%d"
    assert toolkit.NSIGHT_PACKAGES == ("cuda-nsight-systems-%d-%d", "cuda-nsight-compute-%d-%d")
    assert toolkit.CUDNN_PACKAGE == {11: "libcudnn9-dev-cuda-11", 12: "libcudnn9-dev-cuda-12",
                                     13: "libcudnn9-dev-cuda-13"}
    assert toolkit.NCCL_PACKAGES == ("libnccl2", "libnccl-dev")


@pytest.mark.parametrize("row", toolkit.TOOLKIT_PACKAGE_ROWS, ids=lambda row: row["what"])
def test_toolkit_package_pattern_is_the_name_its_source_quotes(row):
    stem = row["package"].replace("-%d-%d", "")
    quoted = re.findall(re.escape(stem) + r"-(\d+)-(\d+)", row["source"])
    assert quoted, row["source"]
    for major, minor in quoted:
        assert PACKAGE.fullmatch(row["package"] % (int(major), int(minor)))


@pytest.mark.parametrize("row", toolkit.CUDNN_PACKAGE_ROWS, ids=lambda row: str(row["cuda_major"]))
def test_cudnn_package_is_built_for_its_cuda_major_and_quoted_or_unconfirmed(row):
    assert row["package"] == "libcudnn9-dev-cuda-%d" % row["cuda_major"] and PACKAGE.fullmatch(row["package"])
    assert row["package"] in row["source"] or row.get("unconfirmed"), row


@pytest.mark.parametrize("row", toolkit.NCCL_PACKAGE_ROWS, ids=lambda row: row["package"])
def test_nccl_package_is_quoted_with_a_cuda_suffixed_version(row):
    assert PACKAGE.fullmatch(row["package"])
    assert re.search(re.escape(row["package"]) + r"=2\.x\.y-1\+cudaX\.Y", row["source"]), row["source"]


def test_a_package_name_with_a_newline_is_not_a_package_name():
    assert not PACKAGE.fullmatch("libnccl2\n") and not PACKAGE.fullmatch("libnccl2 libnccl-dev")


# ---- chip, compute capability, MIG (gpu_models) and architecture capabilities (torch_builds) --------

def test_chip_and_capability_tables_are_built_from_the_rows():
    assert [(r.pattern, a) for r, a in gpu_models._CHIP_ARCH] == [
        (row["pattern"], row["architecture"]) for row in gpu_models.CHIP_ARCH_ROWS]
    assert gpu_models._MIG_CHIPS == ("GA100", "GH100", "GB100", "GB110")
    assert gpu_models._CC_ARCH == {
        (3,): "kepler", (5,): "maxwell", (6,): "pascal", (7, 0): "volta", (7, 2): "volta",
        (7, 5): "turing", (8, 0): "ampere", (8, 6): "ampere", (8, 7): "ampere",
        (8, 9): "ada", (9,): "hopper", (10,): "blackwell", (11,): "blackwell", (12,): "blackwell"}


@pytest.mark.parametrize("row", [r for r in gpu_models.CHIP_ARCH_ROWS if "pci.ids shows it" in r["source"]],
                         ids=lambda row: row["architecture"])
def test_chip_row_example_is_a_known_gpu_whose_chip_matches(row):
    device, chip = re.search(r'"([0-9a-f]{4})  ([A-Z0-9]+) \[', row["source"]).groups()
    known = gpu_models.KNOWN_GPUS[int(device, 16)]
    assert known["chip"] == chip and re.match(row["pattern"], chip)
    assert gpu_models.architecture_from_chip(chip) == row["architecture"]


@pytest.mark.parametrize("chip, arch", [("GK210", "kepler"), ("GM204", "maxwell"), ("GP100", "pascal"),
                                        ("GV100GL", "volta"), ("TU104GL", "turing"), ("GA102", "ampere"),
                                        ("AD104GL", "ada"), ("GH100", "hopper"), ("GB202", "blackwell"),
                                        ("GB110", "blackwell"), ("XY100", None), ("", None)])
def test_architecture_from_chip_is_unchanged(chip, arch):
    assert gpu_models.architecture_from_chip(chip) == arch


def test_cuda_gpus_page_rows_quoted_are_the_capability_of_their_row():
    """SOURCE (NVIDIA "CUDA GPU Compute Capability", developer.nvidia.com/cuda-gpus, and its legacy page
    cuda-legacy-gpus): each quoted row starts with its compute capability; the row's major (and minor,
    where the row is one) match."""
    quoted_rows = 0
    for row in gpu_models.CC_ARCH_ROWS:
        for cc in re.findall(r'"(\d+\.\d+) \| ', row["source"]):
            quoted_rows += 1
            major, minor = row["capability"].split(".")
            assert cc.split(".")[0] == major and (minor == "x" or cc.split(".")[1] == minor), (row, cc)
            assert gpu_models.architecture_from_compute_capability(*cc.split(".")) == row["architecture"]
    assert quoted_rows >= 17


@pytest.mark.parametrize("row", gpu_models.MIG_CHIP_ROWS, ids=lambda row: row["chip"])
def test_mig_chip_row_names_its_chip_and_the_mig_guide(row):
    assert "MIG user guide" in row["source"] and row["chip"] in row["source"]


def test_the_mig_chip_fallback_agrees_with_every_known_data_centre_name():
    """An id KNOWN_GPUS lacks gets MIG from its chip when its name reads as a data-centre part: for every
    known id so named, that fallback says what the table says. (GB202's MIG parts are "RTX PRO ..."
    names, which the fallback reads as workstation: they are MIG-capable only by their KNOWN_GPUS row.)"""
    named = 0
    for device, known in gpu_models.KNOWN_GPUS.items():
        if known["mig_capable"] and gpu_models._DATACENTER_NAME_RE.match(known["name"]):
            named += 1
            assert known["chip"].split("GL")[0] in gpu_models._MIG_CHIPS, hex(device)
    assert named >= 20


def test_arch_capabilities_are_built_from_the_rows_and_agree_with_the_probe():
    assert torch_builds.ARCH_CAPABILITIES == {
        "kepler": (30, 35, 37), "maxwell": (50, 52, 53), "pascal": (60, 61, 62), "volta": (70, 72),
        "turing": (75,), "ampere": (80, 86, 87), "ada": (89,), "hopper": (90,), "blackwell": (100, 103, 120, 121)}
    for arch, capabilities in torch_builds.ARCH_CAPABILITIES.items():
        for cc in capabilities:
            assert gpu_models.architecture_from_compute_capability(cc // 10, cc % 10) == arch, (arch, cc)


def test_blackwell_row_holds_every_capability_its_quoted_rows_name_but_the_jetson_one():
    row = [r for r in torch_builds.ARCH_CAPABILITY_ROWS if r["architecture"] == "blackwell"][0]
    quoted = set(int(cc.replace(".", "")) for cc in re.findall(r'"(\d+\.\d+) \| ', row["source"]))
    assert quoted - set(row["capabilities"]) == {110}
    assert "left out on purpose" in row["source"]
