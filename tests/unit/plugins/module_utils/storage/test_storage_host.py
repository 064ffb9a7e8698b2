"""What __private.storage_host reads on the host and how verify compares it (storage/host.py), with the
edges (commands, files) faked."""
import json

from ansible_collections.gpuops.dlserver.plugins.module_utils.storage import host, plan

# /proc/self/mountinfo of a lab node: the overlay root, a bind mount of the host's disk, a loop volume
MOUNTINFO = """\
612 540 0:52 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
640 612 254:1 /var/lib/docker/containers/x/hosts /etc/hosts rw,relatime - ext4 /dev/vda1 rw
700 612 7:3 / /data/ds rw,noatime,nodiratime - ext4 /dev/loop3 rw
"""
LSBLK = json.dumps({"blockdevices": [
    {"name": "vda", "type": "disk", "size": 21474836480, "rota": False, "children": [
        {"name": "vda1", "type": "part", "size": 21473787904, "fstype": "ext4", "mountpoints": [None]}]},
    {"name": "loop3", "type": "loop", "size": 335544320, "rota": False, "mountpoints": [None]},
    {"name": "loop4", "type": "loop", "size": 335544320, "rota": False, "mountpoints": [None]}]})


def _fake(files, blkid, lsblk_rc=0):
    calls = []

    def run(argv):
        calls.append(argv)
        if argv[0] == "lsblk":
            return (lsblk_rc, LSBLK if lsblk_rc == 0 else "", "" if lsblk_rc == 0 else "lsblk: not found")
        if argv[0] == "blkid":
            text = blkid.get(argv[-1])
            return (0, text, "") if text else (2, "", "")
        raise AssertionError(argv)

    def listdir(path):
        return {"/sys/block": ["loop3", "vda"], "/sys/block/vda": ["vda1", "queue"]}.get(path, [])
    return run, files.get, lambda p: p in files or p in ("/dev/loop3", "/dev/loop4"), lambda p: p, listdir, calls


FILES = {
    "/proc/self/mountinfo": MOUNTINFO,
    "/etc/machine-id": "0123456789abcdef0123456789abcdef\n",
    "/sys/block/loop3/queue/scheduler": "none [mq-deadline] kyber \n",
    "/sys/block/loop3/queue/read_ahead_kb": "4096\n",
    "/sys/block/loop4/queue/scheduler": "[none] mq-deadline kyber \n",
    "/sys/block/loop4/queue/read_ahead_kb": "128\n",
}


def _read(blkid=None, lsblk_rc=0):
    run, read, exists, realpath, listdir, calls = _fake(FILES, blkid or {}, lsblk_rc)
    found = host.read_host(run, read, exists, realpath, listdir, {"mkfs.ext4": "/sbin/mkfs.ext4"}.get,
                           ["/dev/loop3"], in_container=True)
    return found, calls


def test_mountinfo_and_scheduler():
    mounts = host.parse_mountinfo(MOUNTINFO)
    assert mounts[2] == {"mount_point": "/data/ds", "source": "/dev/loop3", "fstype": "ext4",
                         "options": ["rw", "noatime", "nodiratime", "rw"]}
    assert host.parse_scheduler("none [mq-deadline] kyber \n") == ("mq-deadline", ["none", "mq-deadline", "kyber"])
    assert host.parse_scheduler("none\n") == ("none", ["none"])
    assert host.parse_scheduler(None) == (None, [])


def test_read_host_marks_what_the_container_has_and_asks_blkid_of_present_drives_only():
    blkid = {"/dev/loop3": "DEVNAME=/dev/loop3\nLABEL=ds\nUUID=abc\nTYPE=ext4\n"}
    found, calls = _read(blkid)
    drives = dict((d["name"], d) for d in found["drives"])
    assert not drives["vda"]["present"] and drives["vda"]["system"] == []
    assert [k for k, _w in drives["vda"]["contents"]] == ["partitions", "mounted"]  # /etc/hosts of the host
    assert drives["loop3"]["fstype"] == "ext4" and drives["loop3"]["mountpoints"] == ["/data/ds"]
    assert [k for k, _w in drives["loop3"]["contents"]] == ["filesystem", "mounted"]
    assert drives["loop4"]["contents"] == []
    assert [c[-1] for c in calls if c[0] == "blkid"] == ["/dev/loop3", "/dev/loop4"]
    assert found["queues"]["loop3"] == {"scheduler": "mq-deadline", "schedulers": ["none", "mq-deadline", "kyber"],
                                        "read_ahead_kb": "4096"}
    assert found["tools"] == {"mkfs.ext4": True, "mkfs.xfs": False, "mdadm": False}
    assert found["machine_id"] == "0123456789abcdef0123456789abcdef" and not found["md_driver"]
    assert found["source"] == "lsblk"


def test_read_host_falls_back_to_sysfs():
    found, _calls = _read(lsblk_rc=127)
    assert found["source"].startswith("sysfs (lsblk failed: lsblk: not found)")
    assert sorted(d["name"] for d in found["drives"]) == ["loop3", "vda"]


def _planned(found, volumes):
    return plan.decide({"volumes": volumes, "fstrim": True}, found)


def test_verify_holds_and_names_what_does_not():
    machine = "0123456789abcdef0123456789abcdef"
    blkid = {"/dev/loop3": "TYPE=ext4\nUUID=%s\nLABEL=ds\n" % plan.volume_uuid(machine, "ds")}
    found, _calls = _read(blkid)
    decided = _planned(found, [{"name": "ds", "drives": {"paths": ["/dev/loop3"]}, "mount_point": "/data/ds",
                                "mount_options": ["noatime", "nodiratime", "nofail"], "read_ahead_kb": 4096,
                                "scheduler": "mq-deadline"}])
    assert decided["problems"] == [] and not decided["volumes"][0]["format"]["needed"]
    assert host.verify(decided, found) == []
    found["queues"]["loop3"]["read_ahead_kb"] = "128"
    found["mounts"][2]["options"] = ["rw", "relatime"]
    problems = host.verify(decided, found)
    assert problems == ["ds: /data/ds is mounted without noatime, nodiratime (it has rw,relatime)",
                        "loop3: read_ahead_kb is 128, not 4096"]
    found["mounts"] = found["mounts"][:2]
    assert host.verify(decided, found)[0] == "ds: nothing is mounted at /data/ds"


def test_a_drive_of_the_container_host_that_is_not_handed_over_is_missing():
    found, _calls = _read()
    decided = _planned(found, [{"name": "ds", "drives": {"paths": ["/dev/vda"]}, "mount_point": "/data/ds"}])
    assert decided["problems"] == ["storage_volumes[0].drives.paths: /dev/vda is missing on this host (no such "
                                   "whole drive)"]
