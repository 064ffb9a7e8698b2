"""Verify playbooks/rolling_driver_upgrade.yml after side_effect: roll-a upgraded to 580.105.08,
validated, uncordoned and resumed; roll-b failed validation (GPU3 trained at x8 in its fixture),
was rolled back to 580.95.05 and held, and stays cordoned in the TEST DOUBLE of the Kubernetes
API (the lab has no cluster); the run stopped at roll-b and said why. Then the injected failures
on roll-a (issue 34): a pin that cannot be written leaves everything as it was, a version the
repository lacks is refused before any change, and an install
that fails after the pin was rewritten and the holds released is restored and read back; they
leave roll-a as it was (read by side_effect before and after them) and drained, and say exactly
that. Last, a reboot that does not come back (the TEST-ONLY lab switch gpuops_lab_container_reboot
stops roll-a's container): the run stops at roll-a saying the packages were changed before the
reboot and what it runs is unknown, roll-b is not touched, and roll-a, started again by
side_effect, has what the upgrade left (read here).

Expectations are written here, never read from the playbook's own records."""

import json
import os
import urllib.request

import pytest

OLD, NEW = "580.95.05", "580.105.08"
PIN = "/etc/apt/preferences.d/gpuops-nvidia-driver.pref"
# what side_effect read on roll-a before the injected runs (the same command)
STATE = ("dpkg-query -W -f '${Package} ${Version} ${db:Status-Abbrev}\\n' '*nvidia*' 'libcuda*' | sort; "
         "cat %s /etc/gpuops/nvidia_driver.json" % PIN)
SUFFIX = "-1+gpuops.testdouble"
EPH = os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "")


def read(name):
    with open(os.path.join(EPH, name)) as handle:
        return handle.read()


def api(path):
    with urllib.request.urlopen(read("kube-url").strip() + path, timeout=10) as answer:
        return json.load(answer)


def node_name(host):
    return host.backend.get_hostname()


def test_the_run_stopped_at_roll_b_and_said_why():
    out = read("rolling.out")
    assert "rolling driver upgrade stopped at roll-b" in out
    assert "validation failed on driver %s" % NEW in out
    assert "PCIe Gen4 x8, expected Gen4 x16" in out
    assert "rolled back to the previous version %s" % OLD in out
    assert "Kubernetes node roll-b stays cordoned" in out
    assert "roll-a: uncordon - driver %s validated" % NEW in out
    assert "finished: every host passed validation" not in out


def test_driver_version_and_hold(host):
    # roll-a: the rolling run left NEW (read by side_effect before the injected runs), then the
    # injected reboot run changed it to OLD before its reboot did not come back
    if node_name(host) == "roll-a":
        assert "nvidia-driver-cuda %s%s hi" % (NEW, SUFFIX) in read("roll-a-before.txt")
    want = OLD
    pkg = host.package("nvidia-driver-cuda")
    assert pkg.is_installed and pkg.version == want + SUFFIX
    held = host.check_output("dpkg --get-selections nvidia-driver-cuda")
    assert held.split() == ["nvidia-driver-cuda", "hold"]


def test_status_file_names_the_version_and_what_the_repository_carries(host):
    status = json.loads(host.file("/etc/gpuops/nvidia_driver.json").content_string)
    # roll-a: the injected reboot failed inside the role, before its status step, so the file still
    # says what the run before it wrote - as that run's message says
    assert status["version"] == (NEW if node_name(host) == "roll-a" else OLD)
    assert set(status["repository_versions"]) >= {OLD, NEW}


def test_cordon_in_the_api_double(host):
    # roll-b: its failed validation; roll-a: drained again by the injected runs, which left it
    # cordoned (both said so)
    node = api("/api/v1/nodes/%s" % node_name(host))
    assert node["spec"].get("unschedulable") is True


def test_injected_pin_write_failure_changed_nothing_and_said_so():
    out = read("inject-pin_write.out")
    assert "The NVIDIA driver change to %s failed at" % OLD in out
    assert "Write the repository files, the keyring and the version pin" in out
    # the module's one line names the file and its directory (core/files.put_file), not a traceback
    assert ("%s: Destination /etc/apt/preferences.d not writable (Read-only file system)" % PIN) in out
    assert "Restored to driver %s (" % NEW in out
    assert "read back: the pins, holds and packages are as before the change" in out
    assert "roll-a: restored - the upgrade to driver %s failed at" % OLD in out
    assert "Kubernetes node roll-a stays cordoned" in out
    assert "rolling driver upgrade stopped at roll-a" in out
    assert "nothing to roll back to" not in out
    assert "did NOT complete" not in out
    assert "validation did not run after the upgrade" not in out


def test_injected_resolution_failure_was_refused_before_any_change():
    out = read("inject-resolution.out")
    assert "rolling driver upgrade stopped at roll-a" in out
    assert "the upgrade to driver 580.99.01 was refused before any change of the driver" in out
    assert "has no version that every one of" in out
    assert "the node still has driver %s" % NEW in out
    assert "Kubernetes node roll-a stays cordoned" in out
    # the false claims
    assert "validation did not run after the upgrade" not in out
    assert "rolled back" not in out
    assert "Restored to" not in out


def test_injected_install_failure_was_restored_and_said_so():
    out = read("inject-install.out")
    assert "The NVIDIA driver change to %s failed at" % OLD in out
    assert "Install the driver at its pinned version (apt)" in out
    assert "Restored to driver %s (rewrote %s as it was (Pin: version %s-*)" % (NEW, PIN, NEW) in out
    assert "held nvidia-driver-cuda again" in out
    assert "read back: the pins, holds and packages are as before the change" in out
    assert "The node now has " in out and "nvidia-driver-cuda %s%s held" % (NEW, SUFFIX) in out
    assert "roll-a: restored - the upgrade to driver %s failed at" % OLD in out
    assert "its change was undone: restored to driver %s" % NEW in out
    assert "Kubernetes node roll-a stays cordoned" in out
    assert "rolling driver upgrade stopped at roll-a" in out
    assert "nothing to roll back to" not in out
    assert "did NOT complete" not in out


def test_injected_runs_left_the_node_as_before(host):
    if node_name(host) == "roll-a":
        # read on roll-a by side_effect before the injected runs and after them (before the reboot run)
        before, after = read("roll-a-before.txt"), read("roll-a-after-injections.txt")
        assert "Pin: version %s-*" % NEW in before
        assert after.strip() == before.strip()
        assert not host.file("/etc/apt/apt.conf.d/99gpuops-test-double-fail-install").exists
        # the TEST-ONLY read-only bind mount of the pin-write run is gone
        assert "/etc/apt/preferences.d" not in host.check_output("findmnt -rn -o TARGET")
    else:
        # roll-b was not in the injected runs: still on its rollback
        assert "Pin: version %s-*" % OLD in host.file(PIN).content_string


def test_injected_reboot_did_not_return_and_said_so():
    out = read("inject-reboot.out")
    # the collection's handler announced a real reboot, by the TEST-ONLY switch, and timed out
    assert "gpuops.dlserver reboot for nvidia_driver: " in out
    assert "TEST-ONLY switch gpuops_lab_container_reboot (`systemctl reboot` stops the container" in out
    assert "Timed out waiting for last boot time check (timeout=20)" in out
    assert "roll-a: hold - the host was rebooted to load driver %s and did not come back within the reboot " \
           "timeout at " % OLD in out
    assert "whether it comes back, and which driver it then runs, is unknown to this run" in out
    assert "the reboot came after the driver's one-step change to %s had finished: its pins, holds and packages " \
           "were changed (the node is not as before) and were not rolled back" % OLD in out
    assert "the role's status file was not rewritten by this run" in out
    assert "Kubernetes node roll-a stays cordoned; no rollback was tried" in out
    assert "rolling driver upgrade stopped at roll-a" in out
    assert "Hosts after this batch were not touched" in out
    # nothing beyond what is known: not restored, not rolled back, not validated, no outcome for roll-b
    for claim in ("restored to", "Restored to", "rolling back to", "rolled back to", "nothing to roll back to",
                  "validation did not run", "validated (", "finished: every host passed", "roll-b: hold",
                  "roll-b: uncordon", "roll-b: rollback", "roll-b: restored"):
        assert claim not in out, claim


def test_injected_reboot_stopped_the_container_and_left_the_upgrade(host):
    if node_name(host) != "roll-a":
        return
    # side_effect read it before `docker start`: the reboot really stopped it
    assert read("inject-reboot-container.txt").strip() == "running=false"
    pkg = host.package("nvidia-driver-cuda")
    assert pkg.version == OLD + SUFFIX
    assert host.check_output("dpkg --get-selections nvidia-driver-cuda").split() == ["nvidia-driver-cuda", "hold"]
    assert "Pin: version %s-*" % OLD in host.file(PIN).content_string


def test_injected_reboot_fleet_summary_says_no_more_than_it_knows():
    summary = json.loads(read("inject-reboot-summary.json"))
    out = read("inject-reboot.out")
    assert summary["failed"] == ["roll-a"]
    assert summary["hosts"]["roll-a"]["changed"] > 0
    # the later batch: probed and planned, never changed, and never reached by the upgrade's play
    assert summary["hosts"]["roll-b"]["changed"] == 0
    assert summary["hosts"]["roll-b"]["state"] == "not reached"
    assert summary["not_reached"] == ["roll-b"]
    assert "roll-b: NOT REACHED by play" in out and "roll-b: converged" not in out
    assert "Failed: roll-a." in out
    assert "already converged" not in out and "is converged" not in out


def test_drain_evicted_the_workload_and_left_the_daemonset_pod(host):
    name = node_name(host)
    pods = api("/api/v1/pods?fieldSelector=spec.nodeName%3D" + name)["items"]
    assert [p["metadata"]["name"] for p in pods] == ["dcgm-exporter-" + name]


@pytest.mark.parametrize("mark", ["/var/lib/gpuops-scenario-drained", "/var/lib/gpuops-scenario-resumed"])
def test_hooks(host, mark):
    expected = node_name(host) == "roll-a" or mark.endswith("drained")
    assert host.file(mark).exists is expected


def test_the_first_play_named_the_drains_and_the_canary():
    # issue 34 items 2 and 3: every host mapped (roll-a by k8s_nodes, roll-b by gpuops_k8s_node_name),
    # and the canary chosen on purpose (both are GPU hosts with driver work: the first by name)
    out = " ".join(read("rolling.out").split())
    assert "a Kubernetes cluster is configured (gpuops_rolling_kubeconfig is set; the group k8s_nodes has 1 " \
           "host(s); gpuops_k8s_node_name is set for roll-b). Drained: roll-a -> roll-a, roll-b -> roll-b" in out
    assert "canary (the first batch, alone): roll-a - the first GPU host by name that the plan gives driver work" \
        in out
