"""Verify gpuops.dlserver.storage on a lab node with six loop devices (molecule/storage): the volumes
made, mounted with their options, read-ahead and scheduler set live and kept by the udev rule, the
RAID 0 planned only, and the drive with data left as it was."""

import json

import pytest

STATUS = "/etc/gpuops/storage.json"
RULE = "/etc/udev/rules.d/60-gpuops-storage.rules"


@pytest.fixture(name="loops")
def fixture_loops(host):
    return host.file("/etc/gpuops-lab/loop-devices").content_string.split()


@pytest.fixture(name="status")
def fixture_status(host):
    return json.loads(host.file(STATUS).content_string)


def _mount(host, point):
    for line in host.file("/proc/self/mountinfo").content_string.splitlines():
        left, _sep, right = line.partition(" - ")
        fields = left.split()
        if fields[4] == point:
            tail = right.split()
            return {"source": tail[1], "fstype": tail[0], "options": fields[5].split(",") + tail[2].split(",")}
    return None


def _queue(host, loop, attribute):
    return host.file("/sys/block/%s/queue/%s" % (loop.rsplit("/", 1)[-1], attribute)).content_string.strip()


def test_ext4_volume_mounted_with_its_options(host, loops, status):
    mount = _mount(host, "/data/ds")
    assert mount and mount["fstype"] == "ext4" and mount["source"] == loops[0], mount
    assert "noatime" in mount["options"] and "nodiratime" in mount["options"], mount
    ds = [v for v in status["volumes"] if v["name"] == "ds"][0]
    blkid = host.run("blkid -p -o export %s" % loops[0]).stdout
    assert "UUID=%s" % ds["uuid"] in blkid and "LABEL=ds" in blkid, blkid
    fstab = host.file("/etc/fstab").content_string
    assert "UUID=%s /data/ds ext4 noatime,nodiratime" % ds["uuid"] in fstab, fstab


def test_xfs_volume_mounted(host, loops):
    mount = _mount(host, "/raid")
    assert mount and mount["fstype"] == "xfs" and mount["source"] == loops[2], mount
    assert "noatime" in mount["options"], mount
    assert host.package("xfsprogs").is_installed


def test_read_ahead_and_scheduler_live_and_in_the_udev_rule(host, loops):
    assert _queue(host, loops[0], "read_ahead_kb") == "4096"
    assert "[mq-deadline]" in _queue(host, loops[0], "scheduler")
    assert _queue(host, loops[2], "read_ahead_kb") == "2048"
    assert "[kyber]" in _queue(host, loops[2], "scheduler")
    rule = host.file(RULE).content_string
    name0, name2 = loops[0].rsplit("/", 1)[-1], loops[2].rsplit("/", 1)[-1]
    assert ('KERNEL=="%s", ATTR{queue/read_ahead_kb}="4096", ATTR{queue/scheduler}="mq-deadline"' % name0) in rule
    assert ('KERNEL=="%s", ATTR{queue/read_ahead_kb}="2048", ATTR{queue/scheduler}="kyber"' % name2) in rule


def test_raid0_is_planned_not_run_in_a_container(host, loops, status):
    fast = status["arrays"]["fast"]
    assert not fast["run"] and "planned only" in fast["reason"], fast
    assert fast["command"].startswith("mdadm --create /dev/md/fast --run --metadata=1.2 --level=0 --raid-devices=2")
    assert fast["command"].endswith("%s %s" % (loops[4], loops[5])), fast
    assert _mount(host, "/datasets/fast") is None
    for loop in loops[4:6]:
        assert host.run("blkid -p %s" % loop).rc == 2, "an array member was written to"


def test_the_drive_with_data_and_the_check_mode_drive_are_untouched(host, loops):
    assert "LABEL=userdata" in host.run("blkid -p -o export %s" % loops[1]).stdout
    assert host.run("blkid -p %s" % loops[3]).rc == 2
    assert _mount(host, "/data/mine") is None and _mount(host, "/data/checked") is None


def test_fstrim_timer_enabled(host):
    assert host.service("fstrim.timer").is_enabled
