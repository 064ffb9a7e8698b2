"""GPU settings decision (module_utils/driver/gpu_settings.py): case table and real nvidia-smi output."""
import os

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.driver.gpu_settings import (
    FIELDS,
    SettingsError,
    decide,
    parse_query,
    query_args,
    reading,
)

HERE = os.path.dirname(__file__)
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "nvidia-smi-settings")

with open(os.path.join(HERE, "..", "data", "gpu_settings_cases.yml")) as _fh:
    CASES = yaml.safe_load(_fh)

# What nvidia-smi prints above the rows with --format=csv,nounits (units stay in the header).
HEADER_WITH_UNITS = ("pci.bus_id, persistence_mode, power.limit [W], power.min_limit [W], power.max_limit [W], "
                     "clocks.applications.memory [MHz], clocks.applications.graphics [MHz], mig.mode.current, "
                     "mig.mode.pending\n")


def fixture(name):
    """(query fields or None, text without the # lines) of a fixture; every fixture names its SOURCE."""
    with open(os.path.join(FIXTURES, name)) as handle:
        lines = handle.read().splitlines()
    comments = [line for line in lines if line.startswith("# ")]
    assert any(line.startswith("# SOURCE: ") for line in comments), name
    query = [line[len("# QUERY: "):].split(",") for line in comments if line.startswith("# QUERY: ")]
    return (query[0] if query else None), "\n".join(line for line in lines if not line.startswith("# ")) + "\n"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_decide_table(case):
    if case.get("source"):
        assert os.path.exists(os.path.join(ROOT, case["source"])), case["source"]
    result = decide(parse_query(HEADER_WITH_UNITS + case["rows"]), case["wanted"])
    expect = case["expect"]
    by_bus = dict((gpu["pci_bus_id"], gpu) for gpu in result["gpus"])
    for bus, settings in expect.get("actions", {}).items():
        for setting, action in settings.items():
            assert by_bus[bus][setting]["action"] == action, (bus, setting, by_bus[bus][setting])
    for bus, settings in expect.get("record_reason", {}).items():
        for setting, text in settings.items():
            assert text in by_bus[bus][setting]["reason"], by_bus[bus][setting]
    assert [c["argv"] for c in result["commands"]] == expect["commands"]
    assert len(result["errors"]) == len(expect.get("errors", []))
    for text in expect.get("errors", []):
        assert any(text in error for error in result["errors"]), result["errors"]
    if "reason" in expect:
        assert expect["reason"] in result["reason"]
    for gpu in result["gpus"]:
        for setting in ("persistence", "power_limit", "application_clocks", "mig"):
            record = gpu[setting]
            assert record["reason"], (gpu["pci_bus_id"], setting)
            assert (record["argv"] is not None) == (record["action"] == "set")


def test_query_is_one_read_with_header_and_no_units():
    args = query_args("/usr/bin/nvidia-smi")
    assert args == ["/usr/bin/nvidia-smi", "--query-gpu=" + ",".join(FIELDS), "--format=csv,nounits"]


def test_real_mig_output_with_header():
    fields, text = fixture("mig-4gpu-dra-driver-852.csv")
    rows = parse_query(text, fields)
    assert [row["mig.mode.current"] for row in rows] == ["Enabled", "Disabled", "Disabled", "Disabled"]
    assert rows[0]["uuid"] == "GPU-ec845691-fb46-e16d-abfb-b135308cb39f"
    assert all(row["mig.mode.pending"] == row["mig.mode.current"] for row in rows)


@pytest.mark.parametrize("name, kinds", [
    ("mig-current-rtx-na-nvtop-470.csv", ["unsupported"]),
    ("mig-current-a100-nvtop-470.csv", ["value", "value"]),
])
def test_real_mig_current_readings(name, kinds):
    fields, text = fixture(name)
    assert [reading(row["mig.mode.current"])[0] for row in parse_query(text, fields)] == kinds


def test_real_power_limits_without_header():
    fields, text = fixture("power-limits-rtx2080-440-gpu-utils-83.csv")
    (row,) = parse_query(text, fields)
    assert (row["power.limit"], row["power.min_limit"], row["power.max_limit"]) == ("200.00", "105.00", "292.00")
    assert reading(row["temperature.memory"]) == ("unsupported", "N/A")
    assert row["name"] == "GeForce RTX 2080"


def test_real_header_with_units_and_unknown_error():
    fields, text = fixture("power-default-limit-unknown-error-mindminer-627.csv")
    assert fields is None
    (row,) = parse_query(text)
    assert row["power.limit"] == "210.00"
    assert reading(row["power.default_limit"]) == ("unreadable", "[Unknown Error]")


def test_real_deprecated_application_clocks():
    text = fixture("app-clocks-deprecated-rtx-pro-6000-595.txt")[1]
    cells = [cell.strip() for cell in text.strip().split(",")]
    kinds = [reading(cell)[0] for cell in cells]
    assert kinds.count("deprecated") == 2
    assert cells[2] == "595.71.05"


def test_bad_rows_are_refused():
    header = ", ".join(FIELDS) + "\n"
    with pytest.raises(SettingsError, match="fields, expected"):
        parse_query(header + "00000000:1B:00.0, Enabled\n")
    with pytest.raises(SettingsError, match="not a PCI address"):
        parse_query(header + "-pl 1, Enabled, 1, 1, 1, 1, 1, x, x\n")


def test_a_bus_id_with_a_newline_never_reaches_an_argv():
    header = ", ".join(FIELDS) + "\n"
    # The newline splits the row: the first half has too few fields.
    with pytest.raises(SettingsError):
        parse_query(header + "00000000:1B:00.0\n, Enabled, 200, 100, 300, 1, 1, [N/A], [N/A]\n")


@pytest.mark.parametrize("wanted, word", [
    ({"power_limit_watts": 20}, "nvidia_driver_power_limit_watts"),
    ({"power_limit_watts": "300\n"}, "nvidia_driver_power_limit_watts"),
    ({"power_limit_watts": True}, "nvidia_driver_power_limit_watts"),
    ({"application_clocks": {"memory_mhz": 877}}, "nvidia_driver_application_clocks"),
    ({"application_clocks": {"memory_mhz": "877\n", "graphics_mhz": 1380}}, "nvidia_driver_application_clocks"),
    ({"application_clocks": "877,1380"}, "nvidia_driver_application_clocks"),
    ({"mig": {"apply": True, "mode": "auto"}}, "nvidia_driver_mig_mode"),
    ({"persistence": "yes"}, "persistence"),
])
def test_bad_wanted_values_name_the_variable(wanted, word):
    with pytest.raises(SettingsError, match=word):
        decide([], wanted)


def test_numbers_that_are_not_plain_decimals_are_unreadable():
    header = ", ".join(FIELDS) + "\n"
    rows = parse_query(header + "00000000:1B:00.0, Enabled, inf, 100, 300, 1, 1, [N/A], [N/A]\n")
    result = decide(rows, {"power_limit_watts": 250})
    assert result["gpus"][0]["power_limit"]["action"] == "unreadable"
    assert result["commands"] == []
