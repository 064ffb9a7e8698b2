"""lab/gpuops_lab/bmc_sim.py: the checks of a simulated BMC and the files rendered for ipmi_sim (no process)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "lab")))

from gpuops_lab import bmc_sim, common  # noqa: E402  pylint: disable=wrong-import-position

CFG = common.settings_from_env("/repo/lab/lab.py", {"GPUOPS_LAB_STATE": "/state"})
GOOD = {"name": "bmc-a", "address": "172.30.99.101", "user": "labadmin", "password": "Lab.pw-1"}


def spec(**changes):
    raw = dict(GOOD, **changes)
    return bmc_sim.bmc_spec(CFG, {k: v for k, v in raw.items() if v is not None})


def test_defaults_are_a_healthy_bmc():
    bmc = spec()
    assert (bmc["port"], bmc["inlet_c"], bmc["fan_rpm"], bmc["psu"], bmc["sel"]) == (623, 24, 8000, ["ok", "ok"], [])


@pytest.mark.parametrize("changes, words", [
    ({"password": "pw\nuser 3 true"}, "password must be"),
    ({"password": 'pw"x'}, "password must be"),
    ({"password": "pw x"}, "password must be"),
    ({"password": "p#w"}, "password must be"),
    ({"password": "a" * 21}, "password must be"),
    ({"password": None}, "password must be"),
    ({"user": "lab\nadmin"}, "user must be"),
    ({"user": 'lab"'}, "user must be"),
    ({"name": "BMC_A"}, "needs a name"),
    ({"name": "bmc-a\n"}, "needs a name"),
    ({"address": "172.30.99.200"}, "lower half"),   # docker's dynamic range
    ({"address": "172.30.99.1"}, "gateway"),
    ({"address": "10.0.0.5"}, "lower half"),
    ({"address": "172.30.99.101\n"}, "IPv4 address"),
    ({"port": 0}, "port must be"),
    ({"port": True}, "port must be"),
    ({"fan_rpm": 150}, "multiple of 100"),
    ({"fan_rpm": 30000}, "fan_rpm must be"),
    ({"inlet_c": "hot"}, "inlet_c must be"),
    ({"psu": ["ok", "ok", "ok"]}, "psu must be"),
    ({"psu": ["broken"]}, "psu must be"),
    ({"sel": ["memory_ok"]}, "sel must be"),
    ({"node": "n; rm -rf /"}, "node must be"),
    ({"colour": "red"}, "unknown keys colour"),
])
def test_bad_values_are_refused_naming_the_key(changes, words):
    with pytest.raises(common.LabError) as err:
        spec(**changes)
    assert words in str(err.value)
    assert "Lab.pw-1" not in str(err.value)
    if "password" in changes and isinstance(changes["password"], str):
        assert changes["password"] not in str(err.value)


def test_a_spec_list_is_bounded_and_unique():
    with pytest.raises(common.LabError, match="1 to 8"):
        bmc_sim.specs_from(CFG, "[]")
    with pytest.raises(common.LabError, match="share a address"):
        bmc_sim.specs_from(CFG, '[%s, %s]' % (
            '{"name": "a", "address": "172.30.99.101", "user": "u", "password": "p"}',
            '{"name": "b", "address": "172.30.99.101", "user": "u", "password": "p"}'))
    with pytest.raises(common.LabError, match="JSON list"):
        bmc_sim.specs_from(CFG, "{nope")


def test_lan_conf_quotes_the_credentials_and_binds_the_address():
    text = bmc_sim.lan_conf(spec(port=6230))
    lines = text.splitlines()
    assert 'name "bmc-a"' in lines
    assert "    addr 172.30.99.101 6230" in lines
    assert '  user 2 true "labadmin" "Lab.pw-1" admin 10 md5' in lines
    assert "    allowed_auths_admin md5" in lines
    assert text.count("Lab.pw-1") == 1


def test_quoting_refuses_what_lan_conf_would_misread():
    for value in ('a"b', "a b", "a\\b", "a\nb", "a#b", ""):
        with pytest.raises(common.LabError):
            bmc_sim._quoted(value)  # pylint: disable=protected-access


def test_emu_sets_the_chosen_sensor_values():
    text = bmc_sim.emu(spec(fan_rpm=0, inlet_c=50, psu=["ok", "failed"]), now=0)
    lines = text.splitlines()
    assert "sensor_set_value 0x20 0 2 0 0" in lines            # fan 0 RPM: below lower critical (1000)
    assert "sensor_set_threshold 0x20 0 2 fixed 000011 0 0 0 0 10 20" in lines
    assert "sensor_set_value 0x20 0 1 50 0" in lines           # inlet 50 C: at/above upper critical (47)
    assert "sensor_set_threshold 0x20 0 1 fixed 111000 55 47 42 0 0 0" in lines
    assert "sensor_set_bit 0x20 0 4 1 1 0" in lines            # PSU2: failure detected
    assert "sensor_set_bit 0x20 0 3 1 1 0" not in lines        # PSU1 present only
    assert lines[-1] == "mc_enable 0x20"
    assert "password" not in text.lower() and "Lab.pw-1" not in text


def test_emu_logs_the_sel_entries_in_order():
    text = bmc_sim.emu(spec(sel=["memory_correctable", "memory_uncorrectable"]), now=0x69761000)
    records = [line for line in text.splitlines() if line.startswith("sel_add")]
    assert records == [
        "sel_add 0x20 0x02 0x00 0x10 0x76 0x69 0x20 0x00 0x04 0x0c 0x05 0x6f 0x00 0xff 0xff",
        "sel_add 0x20 0x02 0x01 0x10 0x76 0x69 0x20 0x00 0x04 0x0c 0x05 0x6f 0x01 0xff 0xff",
    ]


def test_sdrs_name_every_sensor_with_a_lower_case_letter():
    text = bmc_sim.sdrs(spec(psu=["ok", "ok"]))
    names = [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith("id_string")]
    assert names == ['"lab bmc-a"', '"Inlet Temp"', '"Fan 1"', '"PSU1 Status"', '"PSU2 Status"', '"Memory ECC"', '"Cpu 1"']
    assert "lc_thresh 10" in text and "uc_thresh 47" in text
    with pytest.raises(common.LabError, match="lower-case"):
        bmc_sim._sdr(2, 9, "processor", "Processor", "0x6f", "CPU 2")  # pylint: disable=protected-access


def test_only_our_own_simulator_is_ours():
    conf = "/state/bmc-sim/bmc-a/lan.conf"
    ours = ["timeout", "--signal=TERM", "600", "/usr/bin/ipmi_sim", "-c", conf, "-f", "x", "-s", "y", "-n"]
    assert bmc_sim.is_our_sim(CFG, ours, "bmc-a")
    assert not bmc_sim.is_our_sim(CFG, ours, "bmc-b")
    assert not bmc_sim.is_our_sim(CFG, ["/usr/bin/ipmi_sim", "-c", conf], "bmc-a")
    assert not bmc_sim.is_our_sim(CFG, ["timeout", "600", "/usr/bin/ipmi_sim", "-c", "/other/lan.conf"], "bmc-a")
    assert not bmc_sim.is_our_sim(CFG, None, "bmc-a")


def test_chassis_control_only_for_a_bmc_with_a_node():
    assert bmc_sim.chassis_line(spec(), "/usr/bin/python3", "/repo/lab/lab.py") is None
    line = bmc_sim.chassis_line(spec(node="ipmi-node-b"), "/usr/bin/python3", "/repo/lab/lab.py")
    assert line == '  chassis_control "/usr/bin/python3 /repo/lab/lab.py _bmc-power bmc-a 0x20"'
    assert bmc_sim.lan_conf(spec(node="ipmi-node-b"), line).splitlines()[-1] == line
    with pytest.raises(common.LabError, match="chassis_control"):
        bmc_sim.chassis_line(spec(node="n"), "/usr/bin/python3", "/my repo/lab.py")


@pytest.fixture
def powered(tmp_path, monkeypatch):
    """A simulated BMC of node ipmi-node-b in a state directory; docker's answers and calls are stand-ins."""
    cfg = common.settings_from_env("/repo/lab/lab.py", {"GPUOPS_LAB_STATE": str(tmp_path)})
    folder = tmp_path / "bmc-sim" / "bmc-b"
    folder.mkdir(parents=True)
    (folder / "bmc.json").write_text('{"node": "ipmi-node-b"}')
    calls, state = [], {"ipmi-node-b": (True, "molecule", common.checkout(cfg))}
    monkeypatch.setattr(bmc_sim, "run", lambda argv, **kw: calls.append(argv))
    from gpuops_lab import nodes  # pylint: disable=import-outside-toplevel
    monkeypatch.setattr(nodes, "container_state", state.get)
    return cfg, calls, state, folder


def test_power_get_answers_from_the_container(powered, capsys):
    cfg, calls, state, folder = powered
    assert bmc_sim.power(cfg, "bmc-b", ["0x20", "get", "power"]) == 0
    assert capsys.readouterr().out == "power:1\n"
    state["ipmi-node-b"] = (False, "molecule", common.checkout(cfg))
    assert bmc_sim.power(cfg, "bmc-b", ["0x20", "get", "power", "boot"]) == 0
    assert capsys.readouterr().out == "power:0\nboot:default\n"
    assert calls == []
    assert [line.split(" ", 1)[1] for line in (folder / "power.log").read_text().splitlines()] == [
        "get power", "get power boot"]


def test_power_set_stops_and_starts_the_node(powered):
    cfg, calls, _state, _folder = powered
    assert bmc_sim.power(cfg, "bmc-b", ["0x20", "set", "power", "0"]) == 0
    assert bmc_sim.power(cfg, "bmc-b", ["0x20", "set", "power", "1", "boot", "default"]) == 0
    assert bmc_sim.power(cfg, "bmc-b", ["0x20", "set", "reset", "1"]) == 0
    assert calls == [["docker", "kill", "ipmi-node-b"], ["docker", "start", "ipmi-node-b"],
                     ["docker", "kill", "ipmi-node-b"], ["docker", "start", "ipmi-node-b"]]


def test_power_refuses_what_is_not_ours(powered, capsys):
    cfg, calls, state, _folder = powered
    assert bmc_sim.power(cfg, "bmc-b", ["0x20", "set", "power", "7"]) == 1
    assert bmc_sim.power(cfg, "bmc-b", ["0x20", "set", "power"]) == 1
    assert bmc_sim.power(cfg, "bmc-b", ["0x20", "get", "voltage"]) == 1
    assert bmc_sim.power(cfg, "no-such", ["0x20", "get", "power"]) == 1
    assert bmc_sim.power(cfg, "../x", ["0x20", "get", "power"]) == 1
    state["ipmi-node-b"] = (True, "molecule", "/another/checkout")
    assert bmc_sim.power(cfg, "bmc-b", ["0x20", "set", "power", "0"]) == 1
    assert "not a lab node of this checkout" in capsys.readouterr().out
    assert calls == []


class _Res:
    def __init__(self, rc, out):
        self.returncode, self.stdout = rc, out


@pytest.mark.parametrize("rc, out, expected", [
    (0, "172.30.99.94\n", "172.30.99.94"),   # started with --ip
    (0, "\n", ""),                           # from the dynamic range (no IPAMConfig address)
    (1, "", ""),                              # no such container
])
def test_fixed_address_of_a_node(monkeypatch, rc, out, expected):
    from gpuops_lab import nodes  # pylint: disable=import-outside-toplevel
    seen = []
    monkeypatch.setattr(nodes, "run", lambda argv, **kw: seen.append(argv) or _Res(rc, out))
    assert nodes.fixed_address(CFG, "ipmi-node-b") == expected
    assert '.NetworkSettings.Networks "%s"' % CFG.network in seen[0][3] and seen[0][4] == "ipmi-node-b"


def test_a_bmc_that_powers_a_node_without_a_fixed_address_is_refused_before_anything_starts(monkeypatch):
    from gpuops_lab import nodes  # pylint: disable=import-outside-toplevel
    monkeypatch.setattr(nodes, "run", lambda argv, **kw: _Res(0, "\n"))
    monkeypatch.setattr(bmc_sim, "need_tools", lambda: pytest.fail("went on past the check"))
    with pytest.raises(common.LabError, match="node ipmi-node-b, which has no fixed address.*`ip:`"):
        bmc_sim.start(CFG, [spec(node="ipmi-node-b")])
