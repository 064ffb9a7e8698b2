"""Simulated BMCs on the lab network: OpenIPMI's ipmi_sim (Debian package `openipmi`), one process per BMC.

A BMC is given as a JSON object (`lab.py bmc-sim start --spec-file FILE`, a list of them):

    {"name": "bmc-a",            # [a-z0-9-], 1-24: its directory, its lan.conf `name`
     "address": "172.30.99.101", # its own address on the lab network (lower half of the subnet: the
                                 # addresses docker never hands out), added to the lab bridge as /32
     "port": 623,                # UDP port of RMCP/RMCP+ (default 623)
     "user": "labadmin", "password": "...",   # the one admin user (IPMI 2.0 limits: 16 and 20)
     "inlet_c": 24,              # inlet temperature; upper thresholds 42 (non-critical), 47 (critical), 55
     "fan_rpm": 8000,            # fan speed (steps of 100); lower thresholds 2000 (non-critical), 1000 (critical)
     "psu": ["ok", "ok"],        # each power supply: ok (present) or failed (present, failure detected)
     "sel": ["memory_correctable", "memory_uncorrectable"],   # SEL entries logged at start (SEL_EVENTS)
     "node": "ipmi-node-b"}      # optional: a lab node of this checkout whose power this BMC controls

Files of a BMC live in <state>/bmc-sim/<name>/ (mode 0700; lan.conf, which holds the password,
0600) and are rendered here: `lan_conf`, `sdrs` (compiled by OpenIPMI's sdrcomp into the SDR
repository ipmi_sim loads, `persist_sdr`), `emu` (the emulator commands: sensors, values, SEL).
Each start begins with an empty persistence directory, so the SEL holds exactly the entries asked for
(ipmi_sim 2.0.33 stamps them itself: FreeIPMI shows their date and time as PostInit).

Chassis power (a BMC with "node"): lan.conf's `chassis_control` runs `lab.py _bmc-power <bmc>` (`power`),
which answers `get power` from the node container's state and turns `set power 0|1` and `set reset 1`
into `docker kill` / `docker start` / both, for a container that is this checkout's lab node only;
each request is one line of <bmc dir>/power.log.

Bounded: at most MAX_BMCS per checkout, each process runs under `timeout` (ttl seconds, at most
MAX_TTL) so one that is never stopped still ends. `stop` signals only a pid of our pid file whose
/proc/<pid>/cmdline is `timeout ... ipmi_sim -c <this checkout's file>`, removes the address it added
and the directory. Sensor names hold a lower-case letter: sdrcomp packs an all upper-case name as
6-bit ASCII, which FreeIPMI shows garbled.
"""

import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import time

from .common import LabError, checkout, gateway, log, run
from .services import proc_cmdline, terminate

MAX_BMCS = 8
DEFAULT_TTL = 7200
MAX_TTL = 4 * 3600
NAME_RE = re.compile(r'[a-z0-9](?:[a-z0-9-]{0,22}[a-z0-9])?')
# The collection's own rules for a BMC user and password (plugins/module_utils/bmc/credentials.py):
# no blank, quote, backslash or '#', so a value quoted in lan.conf is read back as it is.
USER_RE = re.compile(r'[A-Za-z0-9._-]{1,16}')
PASSWORD_RE = re.compile(r'[A-Za-z0-9._@%+=:,/^-]{1,20}')
PSU_STATES = ("ok", "failed")
# name -> (sensor type code, sensor number, event offset): IPMI 2.0 table 42-3.
SEL_EVENTS = {
    "memory_correctable": (0x0C, 5, 0x00),
    "memory_uncorrectable": (0x0C, 5, 0x01),
    "processor_thermal_trip": (0x07, 6, 0x01),
}
INLET = {"number": 1, "unc": 42, "uc": 47, "unr": 55}
FAN = {"number": 2, "lnc": 2000, "lc": 1000, "step": 100}
PSU_FIRST = 3  # PSU1 is sensor 3, PSU2 4, ...; memory 5, processor 6
MAX_PSUS = 2


def _problem(bmc, what):
    return LabError("bmc-sim %s: %s" % (bmc.get("name") if isinstance(bmc, dict) else bmc, what))


def _int(bmc, key, default, low, high):
    value = bmc.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _problem(bmc, "%s must be a whole number from %d to %d, not %r" % (key, low, high, value))
    return value


def bmc_spec(cfg, raw):
    """One BMC, checked (full matches): LabError names the BMC and the key. The password is never shown."""
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not NAME_RE.fullmatch(raw["name"]):
        raise LabError("bmc-sim: each BMC needs a name of 1-24 lower-case letters, digits and hyphens: %r"
                       % ((raw or {}).get("name") if isinstance(raw, dict) else raw,))
    known = {"name", "address", "port", "user", "password", "inlet_c", "fan_rpm", "psu", "sel", "node"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise _problem(raw, "unknown keys %s (known: %s)" % (", ".join(unknown), ", ".join(sorted(known))))
    net = ipaddress.ip_network(cfg.subnet)
    lower = list(net.subnets(prefixlen_diff=1))[0] if net.prefixlen < 30 else net
    try:
        address = ipaddress.ip_address(raw.get("address"))
    except ValueError:
        raise _problem(raw, "address must be an IPv4 address of %s, not %r" % (lower, raw.get("address")))
    if address not in lower or address in (net.network_address, ipaddress.ip_address(gateway(cfg))):
        raise _problem(raw, "address %s must be a host address of %s (the lower half of the lab subnet, which docker "
                       "never hands out), not its network address or the gateway" % (address, lower))
    user, password = raw.get("user"), raw.get("password")
    if not isinstance(user, str) or not USER_RE.fullmatch(user):
        raise _problem(raw, "user must be 1-16 letters, digits, '.', '_', '-', not %r" % (user,))
    if not isinstance(password, str) or not PASSWORD_RE.fullmatch(password):
        raise _problem(raw, "password must be 1-20 letters, digits and . _ @ %% + = : , / ^ - (not shown)")
    fan = _int(raw, "fan_rpm", 8000, 0, 255 * FAN["step"])
    if fan % FAN["step"]:
        raise _problem(raw, "fan_rpm must be a multiple of %d, not %d" % (FAN["step"], fan))
    psu = raw.get("psu", ["ok", "ok"])
    if not isinstance(psu, list) or not 1 <= len(psu) <= MAX_PSUS or any(p not in PSU_STATES for p in psu):
        raise _problem(raw, "psu must be a list of 1-%d of %s, not %r" % (MAX_PSUS, ", ".join(PSU_STATES), psu))
    sel = raw.get("sel", [])
    if not isinstance(sel, list) or len(sel) > 32 or any(e not in SEL_EVENTS for e in sel):
        raise _problem(raw, "sel must be a list of at most 32 of %s, not %r" % (", ".join(sorted(SEL_EVENTS)), sel))
    node = raw.get("node")
    if node is not None and (not isinstance(node, str) or not re.fullmatch(r'[A-Za-z0-9][A-Za-z0-9_.-]{0,62}', node)):
        raise _problem(raw, "node must be a container name, not %r" % (node,))
    return {"name": raw["name"], "address": str(address), "port": _int(raw, "port", 623, 1, 65535),
            "user": user, "password": password, "inlet_c": _int(raw, "inlet_c", 24, 0, 254), "fan_rpm": fan,
            "psu": list(psu), "sel": list(sel), "node": node}


def specs_from(cfg, text):
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise LabError("bmc-sim: the spec must be a JSON list of BMCs: %s" % exc)
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_BMCS:
        raise LabError("bmc-sim: the spec must be a JSON list of 1 to %d BMCs" % MAX_BMCS)
    bmcs = [bmc_spec(cfg, item) for item in raw]
    for key in ("name", "address"):
        values = [b[key] for b in bmcs]
        if len(set(values)) != len(values):
            raise LabError("bmc-sim: two BMCs share a %s: %s" % (key, ", ".join(sorted(values))))
    return bmcs


def _quoted(value):
    """A lan.conf string: the values are checked to hold no quote, backslash, blank or '#'."""
    if not re.fullmatch(r'[A-Za-z0-9._@%+=:,/^-]+', value):
        raise LabError("bmc-sim: refusing to quote %r for lan.conf" % (value,))
    return '"%s"' % value


def chassis_line(bmc, python, lab_py):
    """lan.conf's chassis_control for a BMC that controls a lab node's power (else None)."""
    if not bmc.get("node"):
        return None
    for path in (python, lab_py):
        if not re.fullmatch(r'/[A-Za-z0-9_./+-]+', path):
            raise LabError("bmc-sim: %r cannot stand in lan.conf's chassis_control (letters, digits, _ . / + - only)"
                           % (path,))
    # ipmi_sim appends the request (get PARM... / set PARM VALUE...) to this command; the MC address is
    # the command's own first argument (OpenIPMI's ipmi_sim_chassiscontrol example takes it the same way)
    return '  chassis_control "%s %s _bmc-power %s 0x20"' % (python, lab_py, bmc["name"])


def lan_conf(bmc, chassis=None):
    """ipmi_lan(5): one LAN channel on the BMC's address, RMCP+ (and 1.5 MD5), one admin user; ``chassis``
    the chassis_control line (chassis_line) where the BMC controls a node's power."""
    return "".join(line + "\n" for line in [
        "# lab BMC simulator %s (lab/gpuops_lab/bmc_sim.py); holds a password: mode 0600" % bmc["name"],
        "name %s" % _quoted(bmc["name"]),
        "set_working_mc 0x20",
        "  startlan 1",
        "    addr %s %d" % (bmc["address"], bmc["port"]),
        "    priv_limit admin",
        "    allowed_auths_callback none",
        "    allowed_auths_user md5",
        "    allowed_auths_operator md5",
        "    allowed_auths_admin md5",
        "    guid %s" % (bmc["name"].encode().hex() + "0" * 32)[:32],
        "  endlan",
        "  user 2 true %s %s admin 10 md5" % (_quoted(bmc["user"]), _quoted(bmc["password"])),
    ] + ([chassis] if chassis else []))


def _sdr(kind, number, entity, sensor_type, reading, name, extra=()):
    if not re.search(r'[a-z]', name):
        raise LabError("bmc-sim: sensor name %r needs a lower-case letter (sdrcomp packs upper case)" % name)
    lines = ["sdr type %d" % kind, "sensor_owner_id 0x20", "sensor_owner_lun 0", "channel_number 0",
             "sensor_number %d" % number, "entity_id %s" % entity, "entity_instance 1",
             "init_scanning true", "init_events true", "init_sensor_type true", "default_event_gen_on true",
             "default_sensor_scan_on true", "sensor_auto_rearm true", "sensor_event_msg_ctrl per_state",
             "sensor_type %s" % sensor_type, "event_reading_type_code %s" % reading]
    return lines + list(extra) + ['id_string "%s"' % name, "endsdr", ""]


def _analog(unit, multiplier, thresholds):
    return (["init_thresholds true", "sensor_threshold_access fixed"]
            + ["%s_thrsh_readable true" % t for t in thresholds]
            + ["analog_data_format unsigned", "rate_unit none", "modifier_unit none", "percentage false",
               "base_unit %s" % unit, "modifier_unit_code unspecified", "linearization linear",
               "m %d" % multiplier, "tolerance 0", "b 0", "accuracy 1", "accuracy_exp 0", "sensor_direction input",
               "r_exp 0", "b_exp 0", "sensor_maximum 255", "sensor_minimum 0"]
            + ["%s_thresh %d" % (t, v) for t, v in thresholds.items()])


def sdrs(bmc):
    """The SDR repository (sdrcomp's text): the BMC, inlet temperature, fan, the PSUs, memory, processor."""
    lines = ["sdr type 18", "device_slave_address 0x20", "device_channel_number 0", "chassis true",
             "ipmb_event_gen false", "ipmb_event_recv false", "fru_inventory false", "sel true", "sdr true",
             "sensor true", "entity_id system_board", "entity_instance 1", 'id_string "lab %s"' % bmc["name"],
             "endsdr", ""]
    lines += _sdr(1, INLET["number"], "system_board", "Temperature", 1, "Inlet Temp",
                  _analog("degrees_C", 1, {"unc": INLET["unc"], "uc": INLET["uc"], "unr": INLET["unr"]}))
    lines += _sdr(1, FAN["number"], "fan_cooling_device", "Fan", 1, "Fan 1",
                  _analog("RPM", FAN["step"], {"lnc": FAN["lnc"] // FAN["step"], "lc": FAN["lc"] // FAN["step"]}))
    for index in range(len(bmc["psu"])):
        lines += _sdr(2, PSU_FIRST + index, "power_supply", "Power_Supply", "0x6f", "PSU%d Status" % (index + 1))
    lines += _sdr(2, SEL_EVENTS["memory_correctable"][1], "memory_device", "Memory", "0x6f", "Memory ECC")
    lines += _sdr(2, SEL_EVENTS["processor_thermal_trip"][1], "processor", "Processor", "0x6f", "Cpu 1")
    return "\n".join(lines)


def emu(bmc, now=None):
    """The emulator commands (ipmi_sim_cmd(5)): the BMC, its sensors at the chosen values, the SEL entries."""
    stamp = int(time.time() if now is None else now)
    lines = ["# lab BMC simulator %s (lab/gpuops_lab/bmc_sim.py)" % bmc["name"],
             "mc_setbmc 0x20",
             "mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr",
             "sel_enable 0x20 64 0x0a",
             "sensor_add 0x20 0 %d 0x01 0x01" % INLET["number"],
             "sensor_set_threshold 0x20 0 %d fixed 111000 %d %d %d 0 0 0" % (
                 INLET["number"], INLET["unr"], INLET["uc"], INLET["unc"]),
             "sensor_set_value 0x20 0 %d %d 0" % (INLET["number"], bmc["inlet_c"]),
             "sensor_add 0x20 0 %d 0x04 0x01" % FAN["number"],
             "sensor_set_threshold 0x20 0 %d fixed 000011 0 0 0 0 %d %d" % (
                 FAN["number"], FAN["lc"] // FAN["step"], FAN["lnc"] // FAN["step"]),
             "sensor_set_value 0x20 0 %d %d 0" % (FAN["number"], bmc["fan_rpm"] // FAN["step"])]
    for index, state in enumerate(bmc["psu"]):
        number = PSU_FIRST + index
        lines += ["sensor_add 0x20 0 %d 0x08 0x6f" % number,
                  "sensor_set_bit_clr_rest 0x20 0 %d 0 1 0" % number]  # offset 0: presence detected
        if state == "failed":
            lines.append("sensor_set_bit 0x20 0 %d 1 1 0" % number)  # offset 1: failure detected
    lines += ["sensor_add 0x20 0 %d 0x0c 0x6f" % SEL_EVENTS["memory_correctable"][1],
              "sensor_add 0x20 0 %d 0x07 0x6f" % SEL_EVENTS["processor_thermal_trip"][1]]
    for offset, event in enumerate(bmc["sel"]):
        sensor_type, number, code = SEL_EVENTS[event]
        when = (stamp + offset).to_bytes(4, "little")
        record = list(when) + [0x20, 0x00, 0x04, sensor_type, number, 0x6F, code, 0xFF, 0xFF]
        lines.append("sel_add 0x20 0x02 " + " ".join("0x%02x" % b for b in record))
    lines.append("mc_enable 0x20")
    return "".join(line + "\n" for line in lines)


# ---- processes ------------------------------------------------------------------------------------------

def root_dir(cfg):
    return os.path.join(cfg.state, "bmc-sim")


def is_our_sim(cfg, argv, name):
    """`timeout <ttl> ipmi_sim -c <this checkout's lan.conf of name> ...`."""
    conf = os.path.join(root_dir(cfg), name, "lan.conf")
    return (bool(argv) and os.path.basename(argv[0]) == "timeout" and "ipmi_sim" in [os.path.basename(a) for a in argv]
            and "-c" in argv and argv.index("-c") + 1 < len(argv) and argv[argv.index("-c") + 1] == conf)


def bridge_of(cfg):
    """The host interface that holds the lab gateway's address (the lab network's bridge)."""
    res = run(["ip", "-o", "-4", "addr", "show"], capture=True)
    for line in res.stdout.splitlines():
        fields = line.split()
        if "inet" in fields and fields[fields.index("inet") + 1].split("/")[0] == gateway(cfg):
            return fields[1]
    raise LabError("bmc-sim: no host interface holds the lab gateway %s; run `lab.py network` first" % gateway(cfg))


def _udp_bound(address, port):
    packed = ipaddress.ip_address(address).packed
    want = "%s:%04X" % ("".join("%02X" % b for b in reversed(packed)), port)
    try:
        with open("/proc/net/udp") as fh:
            return any(line.split()[1] == want for line in list(fh)[1:])
    except OSError:
        return False


def need_tools():
    missing = [tool for tool in ("ipmi_sim", "sdrcomp") if not shutil.which(tool)]
    if missing:
        raise LabError("bmc-sim: %s missing: install Debian's openipmi (`lab.py engine` does)" % ", ".join(missing))


def start(cfg, bmcs, ttl=DEFAULT_TTL):
    """Start one ipmi_sim per BMC (a running one of the same name is replaced). A BMC that powers a
    node needs a node with a fixed address: a container stopped and started again gets an address
    from the dynamic range, and meanwhile another node (another lane's) may have been given its old one."""
    if not 1 <= ttl <= MAX_TTL:
        raise LabError("bmc-sim: --ttl must be 1 to %d seconds" % MAX_TTL)
    from .nodes import fixed_address  # pylint: disable=import-outside-toplevel
    for bmc in bmcs:
        if bmc.get("node") and not fixed_address(cfg, bmc["node"]):
            raise LabError("bmc-sim %s: its chassis power is node %s, which has no fixed address: a node powered "
                           "off and on may come back on another address, and another node may have its old one. "
                           "Give the node `ip:` (the lower half of the lab subnet) in the scenario's platforms"
                           % (bmc["name"], bmc["node"]))
    need_tools()
    present = [n for n in running(cfg) if n not in {b["name"] for b in bmcs}]
    if len(present) + len(bmcs) > MAX_BMCS:
        raise LabError("bmc-sim: %d simulators run already (%s); at most %d: stop some first"
                       % (len(present), ", ".join(present), MAX_BMCS))
    iface = bridge_of(cfg)
    stop(cfg, [b["name"] for b in bmcs])
    for bmc in bmcs:
        folder = os.path.join(root_dir(cfg), bmc["name"])
        state = os.path.join(folder, "state", "ipmi_sim", bmc["name"])
        os.makedirs(state, mode=0o700)
        os.chmod(folder, 0o700)
        chassis = chassis_line(bmc, sys.executable, cfg.lab_py)
        for filename, text in (("lan.conf", lan_conf(bmc, chassis)), ("sim.sdrs", sdrs(bmc)), ("sim.emu", emu(bmc)),
                               ("bmc.json", json.dumps(dict(bmc, password=None, iface=iface)))):
            fd = os.open(os.path.join(folder, filename), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(text)
        run(["sdrcomp", "-o", os.path.join(state, "sdr.20.main"), os.path.join(folder, "sim.sdrs")], capture=True)
        run(["ip", "addr", "replace", bmc["address"] + "/32", "dev", iface], capture=True)
        argv = ["timeout", "--signal=TERM", str(ttl), shutil.which("ipmi_sim"), "-c", os.path.join(folder, "lan.conf"),
                "-f", os.path.join(folder, "sim.emu"), "-s", os.path.join(folder, "state"), "-n"]
        with open(os.path.join(folder, "sim.log"), "ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,  # pylint: disable=consider-using-with
                                    start_new_session=True)
        with open(os.path.join(folder, "pid"), "w") as fh:
            fh.write("%d\n" % proc.pid)
        for _attempt in range(100):
            if proc.poll() is not None or _udp_bound(bmc["address"], bmc["port"]):
                break
            time.sleep(0.1)
        if proc.poll() is not None or not _udp_bound(bmc["address"], bmc["port"]):
            raise LabError("bmc-sim %s: ipmi_sim did not bind %s:%d; see %s"
                           % (bmc["name"], bmc["address"], bmc["port"], os.path.join(folder, "sim.log")))
        log("bmc-sim %s at %s:%d (pid %d, ends within %d s)" % (bmc["name"], bmc["address"], bmc["port"], proc.pid, ttl))


def _our_pid(cfg, name):
    try:
        with open(os.path.join(root_dir(cfg), name, "pid")) as fh:
            pid = int(fh.read().strip() or 0)
    except (OSError, ValueError):
        return None
    return pid if pid > 0 and is_our_sim(cfg, proc_cmdline(pid), name) else None


def running(cfg):
    """Names of this checkout's simulators whose process runs."""
    folder = root_dir(cfg)
    names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    return [n for n in names if NAME_RE.fullmatch(n) and _our_pid(cfg, n)]


def stop(cfg, names=None):
    """Stop this checkout's simulators (the named ones, else every one), remove their addresses and files."""
    folder = root_dir(cfg)
    present = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    for name in [n for n in present if NAME_RE.fullmatch(n) and (not names or n in names)]:
        pid = _our_pid(cfg, name)
        if pid:
            terminate(pid, "bmc-sim %s" % name)
        try:
            with open(os.path.join(folder, name, "bmc.json")) as fh:
                saved = json.load(fh)
            run(["ip", "addr", "del", saved["address"] + "/32", "dev", saved["iface"]], check=False, capture=True)
        except (OSError, ValueError, KeyError):
            pass
        shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def status(cfg):
    folder = root_dir(cfg)
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        pid = _our_pid(cfg, name)
        try:
            with open(os.path.join(folder, name, "bmc.json")) as fh:
                saved = json.load(fh)
            where = "%s:%s" % (saved["address"], saved["port"])
        except (OSError, ValueError, KeyError):
            where = "?"
        print("bmc-sim %s %s: %s" % (name, where, "running (pid %d)" % pid if pid else "stopped"))


# ---- chassis power (lan.conf's chassis_control) ---------------------------------------------------------

def power(cfg, name, args):
    """ipmi_sim's chassis control for BMC ``name``: ``<mc> get power|boot ...`` prints ``power:1`` (the node
    runs) or ``power:0``; ``<mc> set power 0|1``, ``set reset 1``, ``set boot X`` act on the node container.
    Returns the exit code; an error is printed on stdout (ipmi_sim captures it)."""
    from .nodes import container_state  # pylint: disable=import-outside-toplevel
    folder = os.path.join(root_dir(cfg), name) if NAME_RE.fullmatch(name or "") else None
    try:
        with open(os.path.join(folder, "bmc.json")) as fh:
            node = json.load(fh)["node"]
    except (TypeError, OSError, ValueError, KeyError):
        print("no simulated BMC %r of this checkout" % (name,))
        return 1
    state = container_state(node) if node else None
    if state is None or state[1] is None or state[2] != checkout(cfg):
        print("%r is not a lab node of this checkout" % (node,))
        return 1
    if len(args) < 2 or args[1] not in ("get", "set", "check"):
        print("usage: <mc> get PARM... | set PARM VALUE...")
        return 1
    with open(os.path.join(folder, "power.log"), "a") as fh:
        fh.write("%s %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), " ".join(args[1:])))
    if args[1] == "check":
        return 1
    if args[1] == "get":
        answers = {"power": "1" if state[0] else "0", "boot": "default"}
        if any(parm not in answers for parm in args[2:]):
            print("Invalid parameter: %s" % " ".join(args[2:]))
            return 1
        print("\n".join("%s:%s" % (parm, answers[parm]) for parm in args[2:]))
        return 0
    pairs = args[2:]
    if len(pairs) % 2:
        print("No value present for parameter %s" % pairs[-1])
        return 1
    for parm, value in zip(pairs[::2], pairs[1::2]):
        steps = {("power", "0"): [["kill"]], ("power", "1"): [["start"]],
                 ("reset", "1"): [["kill"], ["start"]]}.get((parm, value), [] if parm in ("boot", "identify") else None)
        if steps is None:
            print("Invalid parameter: %s %s" % (parm, value))
            return 1
        for step in steps:
            run(["docker"] + step + [node], check=False, capture=True)
    return 0
