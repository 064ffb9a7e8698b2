"""The storage role's decisions (plugins/module_utils/storage/): lsblk parsing on published output,
the controller's input checks and the host plan, from the case tables in data/storage_*.yml."""
import copy
import os
import re

import pytest
import yaml

from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import inputs, lsblk, plan

HERE = os.path.dirname(os.path.dirname(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "..", "fixtures", "lsblk")


def _load(name):
    with open(os.path.join(HERE, "data", name)) as handle:
        return yaml.safe_load(handle)


def fixture_text(name):
    """The fixture's JSON, without its # SOURCE / # NOTE lines."""
    with open(os.path.join(FIXTURES, name)) as handle:
        lines = handle.read().splitlines()
    assert lines[0].startswith("# SOURCE: https://"), "%s has no SOURCE line" % name
    return "\n".join(line for line in lines if not line.startswith("#"))


LSBLK = _load("storage_lsblk_cases.yml")
INPUTS = _load("storage_input_cases.yml")
PLAN = _load("storage_plan_cases.yml")


def test_every_fixture_has_a_case():
    assert sorted(c["fixture"] for c in LSBLK) == sorted(os.listdir(FIXTURES))


@pytest.mark.parametrize("case", LSBLK, ids=[c["fixture"] for c in LSBLK])
def test_lsblk_drives(case):
    found = lsblk.drives(lsblk.parse_lsblk(fixture_text(case["fixture"])))
    assert len(found) == len(case["drives"])
    for drive, want in zip(found, case["drives"]):
        for key, value in want.items():
            got = [list(c) for c in drive[key]] if key == "contents" else drive[key]
            assert got == value, (case["fixture"], key)


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"blockdevices": {}}', '{"blockdevices": [1]}',
                                  '{"blockdevices": [{"size": 1}]}'])
def test_lsblk_refuses_what_is_not_its_json(text):
    with pytest.raises(lsblk.LsblkError):
        lsblk.parse_lsblk(text)


def test_lsblk_reads_digit_strings_and_old_mountpoint():
    # util-linux 2.38 printed sizes as digit strings with -b (util-linux#1636), older versions "mountpoint"
    devices = lsblk.parse_lsblk('{"blockdevices": [{"name": "sdb", "type": "disk", "size": "1339809792", '
                                '"rota": "0", "mountpoint": null, "children": [{"name": "sdb1", "type": "part", '
                                '"fstype": "LVM2_member", "mountpoint": "/srv"}]}]}')
    drive = lsblk.drives(devices)[0]
    assert drive["size"] == 1339809792 and drive["rotational"] is False
    assert [k for k, _w in drive["contents"]] == ["partitions", "mounted"]


def test_blkid_fills_what_lsblk_had_no_udev_for():
    found = lsblk.parse_blkid_export("DEVNAME=/dev/loop0\nLABEL=t\nUUID=7751f89a\nTYPE=ext4\nUSAGE=filesystem\n")
    merged = lsblk.merge_blkid({"fstype": None, "label": None, "uuid": None, "pttype": None}, found)
    assert (merged["fstype"], merged["label"], merged["uuid"]) == ("ext4", "t", "7751f89a")


def test_sysfs_fallback_lists_partitions_and_holders():
    devices = lsblk.sysfs_devices({"nvme0n1": {"size_sectors": "7501476528", "rotational": "0", "model": "X",
                                               "serial": "S1", "partitions": ["nvme0n1p1"], "holders": []},
                                   "nvme1n1": {"size_sectors": "100", "rotational": "0", "partitions": [],
                                               "holders": ["md127"]}})
    drives = lsblk.drives(devices)
    assert drives[0]["size"] == 7501476528 * 512 and drives[0]["nvme"]
    assert [k for k, _w in drives[0]["contents"]] == ["partitions"]
    assert [k for k, _w in drives[1]["contents"]] == ["holder"]


@pytest.mark.parametrize("case", INPUTS, ids=[c["id"] for c in INPUTS])
def test_input_problems(case):
    found = inputs.input_problems({"volumes": case["volumes"]})
    assert len(found) == len(case["problems"]), found
    for problem, want in zip(found, case["problems"]):
        assert want in problem, (want, found)


def _host(case):
    base = copy.deepcopy(PLAN["host"])
    fixture = base.pop("fixture")
    drives = lsblk.drives(lsblk.parse_lsblk(fixture_text(fixture))) + base.pop("drives")
    overrides = copy.deepcopy(case.get("host") or {})
    patch = overrides.pop("patch", {})
    base.update(overrides)
    ours = {"OURS": plan.volume_uuid(base["machine_id"], (case["volumes"] or [{}])[0].get("name")),
            "OURS_ARRAY": plan.volume_uuid(base["machine_id"], (case["volumes"] or [{}])[0].get("name"), "array")}
    for drive in drives:
        drive.update(patch.get(drive["name"]) or {})
        drive["uuid"] = ours.get(drive.get("uuid"), drive.get("uuid"))
        drive.setdefault("present", True)
    base["drives"] = drives
    return base, ours


def _fill(text, ours):
    return re.sub(r"OURS_ARRAY|OURS", lambda m: ours[m.group(0)], text)


@pytest.mark.parametrize("case", PLAN["cases"], ids=[c["id"] for c in PLAN["cases"]])
def test_plan(case):
    host, ours = _host(case)
    assert inputs.input_problems({"volumes": case["volumes"]}) == []
    decided = plan.decide({"volumes": case["volumes"], "fstrim": True}, host)
    want = case["expect"]
    assert len(decided["problems"]) == len(want["problems"]), decided["problems"]
    for problem, text in zip(decided["problems"], want["problems"]):
        assert text in problem, (text, decided["problems"])
    volumes = decided["volumes"]
    checks = {
        "drives": lambda: [v["drives"] for v in volumes],
        "format_needed": lambda: [v["format"]["needed"] for v in volumes],
        "format_opts": lambda: [v["format"]["opts"] for v in volumes],
        "array_run": lambda: [v["array"]["run"] for v in volumes],
        "array_exists": lambda: [v["array"]["exists"] for v in volumes],
        "array_command": lambda: [v["array"]["command"] for v in volumes],
        "size_bytes": lambda: [v["size_bytes"] for v in volumes],
        "mount_opts": lambda: [v["mount"]["opts"] for v in volumes],
        "apply": lambda: [v["name"] for v in decided["apply"]],
        "packages": lambda: decided["packages"],
        "udev_rule": lambda: decided["udev_rule"],
    }
    for key, value in want.items():
        if key in checks:
            expected = [_fill(v, ours) if isinstance(v, str) else v for v in value] if isinstance(value, list) \
                else value
            assert checks[key]() == expected, key
    if "udev_rule_has" in want:
        for line in want["udev_rule_has"]:
            assert line in decided["udev_rule"], decided["udev_rule"]
    if "reason_has" in want:
        assert want["reason_has"] in decided["reason"], decided["reason"]


def test_mdadm_command_line_is_quoted():
    volume = {"name": "raid", "raid_level": 10}
    argv = plan.mdadm_argv(volume, ["/dev/disk/by-id/nvme-A B", "/dev/nvme2n1"], "u")
    line = plan.command_line(argv)
    assert line.endswith("'/dev/disk/by-id/nvme-A B' /dev/nvme2n1")
    assert "--level=10 --raid-devices=2" in line


def test_volume_uuid_is_stable_per_host_and_name():
    assert plan.volume_uuid("m1", "ds") == plan.volume_uuid("m1", "ds")
    assert len({plan.volume_uuid("m1", "ds"), plan.volume_uuid("m2", "ds"), plan.volume_uuid("m1", "ds", "array"),
                plan.volume_uuid("m1", "db")}) == 4


def test_array_sizes():
    sizes = [4, 4, 6, 4]
    assert [plan.array_size(level, sizes) for level in (0, 1, 5, 6, 10)] == [18, 4, 12, 8, 8]
    assert plan.array_size(0, [4, None]) is None


@pytest.mark.parametrize("case", _load("storage_contents_cases.yml"), ids=lambda c: c["words"][0])
def test_contents_words(case):
    assert [words for _kind, words in lsblk.contents(case["drive"], [])] == case["words"]
