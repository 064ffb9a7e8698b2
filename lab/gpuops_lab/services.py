"""Long-running HTTP services of a checkout (the mirror, the package cache).

Each runs as `<python> <checkout>/lab/lab.py <command> ...`, its pid kept in a pid file under
the checkout's state directory. A process is signalled only when it is one of this checkout's
own: the pid of our pid file AND a /proc/<pid>/cmdline that runs this checkout's lab.py with
this service's command. A process holding the port that is anything else (another checkout's
lab service included) is left alone and named in the error. Nothing an HTTP answer says is
ever used to pick a process to signal.
"""

import ipaddress
import os
import signal
import socket
import subprocess
import time

from .common import LabError, gateway, log


def proc_cmdline(pid):
    """argv of a live process, or None."""
    try:
        with open("/proc/%d/cmdline" % int(pid), "rb") as fh:
            raw = fh.read()
    except (OSError, ValueError):
        return None
    if not raw:
        return None  # a zombie, or a kernel thread
    return [part.decode("utf-8", "replace") for part in raw.rstrip(b"\0").split(b"\0")]


def is_lab_service_argv(argv, command):
    """A lab service of any checkout: `<python> <dir>/lab/lab.py <command> ...`."""
    return (bool(argv) and len(argv) >= 3 and os.path.basename(argv[1]) == "lab.py"
            and os.path.basename(os.path.dirname(argv[1])) == "lab" and argv[2] == command)


def _hex_addr(host, port):
    packed = ipaddress.ip_address(host).packed
    return "%s:%04X" % ("".join("%02X" % b for b in reversed(packed)), port)


def listener_pids(host, port):
    """Pids of the processes that hold a listening TCP socket on host:port (or on any
    address, port), read from /proc: who really holds the port, not who says so."""
    wanted = {_hex_addr(host, port), _hex_addr("0.0.0.0", port)}
    inodes = set()
    try:
        with open("/proc/net/tcp") as fh:
            next(fh)
            for line in fh:
                fields = line.split()
                if len(fields) > 9 and fields[3] == "0A" and fields[1] in wanted:
                    inodes.add("socket:[%s]" % fields[9])
    except OSError:
        return []
    pids = []
    if not inodes:
        return pids
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fd_dir = "/proc/%s/fd" % entry
        try:
            for fd in os.listdir(fd_dir):
                try:
                    if os.readlink(os.path.join(fd_dir, fd)) in inodes:
                        pids.append(int(entry))
                        break
                except OSError:
                    continue
        except OSError:
            continue
    return sorted(pids)


def port_in_use(host, port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex((host, port)) == 0


def terminate(pid, what):
    log("stopping %s (pid %d)" % (what, pid))
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _attempt in range(150):
        if proc_cmdline(pid) is None:
            return
        time.sleep(0.1)
    log("%s (pid %d) did not stop within 15 s of SIGTERM; killing it" % (what, pid))
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    for _attempt in range(50):
        if proc_cmdline(pid) is None:
            return
        time.sleep(0.1)


class Service:
    """A long-running HTTP service of the lab, tracked by a pid file of this checkout and the
    process's /proc/<pid>/cmdline. `argv` builds the command line that starts it."""

    def __init__(self, cfg, name, command, argv, port, env_port):
        self.cfg, self.name, self.command, self._argv = cfg, name, command, argv
        self.port, self.env_port = port, env_port

    def argv(self):
        return self._argv()

    @property
    def pidfile(self):
        return os.path.join(self.cfg.state, self.command.strip("_").replace("serve-", "") + ".pid")

    def is_ours(self, argv):
        """This service with this configuration (command, directory, address): started by
        this checkout or by another one with the same settings, whichever Python runs it.
        Such a service is used as it is; it is not therefore ours to signal (is_own)."""
        return is_lab_service_argv(argv, self.command) and argv[2:] == self.argv()[2:]

    def is_own(self, argv):
        """This service run by this checkout's lab.py (whatever its settings)."""
        return (is_lab_service_argv(argv, self.command)
                and os.path.realpath(argv[1]) == os.path.realpath(self.cfg.lab_py))

    def our_pid(self):
        """The pid in our pid file when /proc shows it is this checkout's service, else None.
        A pid file that names any other process (a stale pid the system reused, another
        checkout's service) is dropped."""
        try:
            with open(self.pidfile) as fh:
                pid = int(fh.read().strip() or 0)
        except (OSError, ValueError):
            return None
        if pid > 0 and self.is_own(proc_cmdline(pid)):
            return pid
        try:
            os.remove(self.pidfile)
        except OSError:
            pass
        return None

    def running_pid(self):
        """The pid that holds the service's address when it is this service with this
        configuration, else None."""
        for pid in listener_pids(gateway(self.cfg), self.port):
            if self.is_ours(proc_cmdline(pid)):
                return pid
        return None

    def alive(self):
        return self.running_pid() is not None

    def free_port(self):
        """Make the address free for our service. Only this checkout's own service (our pid
        file and /proc agree) is stopped; anything else holding the port, another checkout's
        lab service included, is left alone and named in the error."""
        url = "%s:%d" % (gateway(self.cfg), self.port)
        own = self.our_pid()
        for pid in listener_pids(gateway(self.cfg), self.port):
            argv = proc_cmdline(pid)
            if pid == own:
                terminate(pid, "this checkout's %s" % self.name)
            elif is_lab_service_argv(argv, self.command):
                raise LabError(
                    "pid %d, the lab %s of %s (%s), listens on %s; the lab stops only this checkout's "
                    "services: stop it from that checkout (`python3 %s mirror-stop` or `make lab-down` there) "
                    "or set %s" % (pid, self.name, os.path.dirname(os.path.dirname(argv[1])),
                                   " ".join(argv[2:])[:200], url, argv[1], self.env_port))
            else:
                raise LabError("pid %d (%s) listens on %s and is not a gpuops lab %s; stop it or set %s"
                               % (pid, " ".join(argv or ["?"])[:200], url, self.name, self.env_port))
        for _attempt in range(30):
            if not port_in_use(gateway(self.cfg), self.port):
                return
            time.sleep(0.1)
        raise LabError("something this user cannot see listens on %s (not a process of the lab); stop it "
                       "or set %s" % (url, self.env_port))

    def ensure(self):
        running = self.running_pid()
        if running:
            return running
        stale = self.our_pid()
        if stale:
            terminate(stale, "this checkout's %s, which does not hold its port" % self.name)
        self.free_port()
        os.makedirs(self.cfg.state, exist_ok=True)
        logfile = os.path.join(self.cfg.state, os.path.basename(self.pidfile)[:-4] + ".log")
        log("%s at %s:%d (log: %s)" % (self.name, gateway(self.cfg), self.port, logfile))
        with open(logfile, "ab") as out:
            proc = subprocess.Popen(self.argv(), stdout=out, stderr=subprocess.STDOUT,  # pylint: disable=consider-using-with
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        with open(self.pidfile, "w") as fh:
            fh.write("%d\n" % proc.pid)
        # Up to 30 s: on a loaded two-CPU machine (a playbook and a test suite beside it) a
        # Python service can take seconds to import and bind.
        for _attempt in range(300):
            if proc.poll() is not None:
                break
            if proc.pid in listener_pids(gateway(self.cfg), self.port):
                return proc.pid
            time.sleep(0.1)
        raise LabError("the %s did not start; see %s" % (self.name, logfile))

    def stop(self):
        pid = self.our_pid()
        if pid:
            terminate(pid, "the %s" % self.name)
        try:
            os.remove(self.pidfile)
        except OSError:
            pass
