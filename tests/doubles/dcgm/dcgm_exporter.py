# TEST DOUBLE of NVIDIA's dcgm-exporter for the gpuops.dlserver lab; not NVIDIA software. Packaged
# by tests/doubles/build_repo.py (spec cuda) into the double of datacenter-gpu-manager-exporter.
#
# It takes the real exporter's options (an unknown one is refused, exit 2), reads the collectors
# file given with -f in the real format ("DCGM_FI_..., gauge|counter|label, help"; a malformed line
# or an unknown type fails, exit 1), and serves every field of it on -a (default :9400) at /metrics,
# one sample per GPU with the real exporter's labels. The GPUs come from the host engine named by
# -r (the nv-hostengine double); without -r the real exporter starts an embedded host engine,
# which needs the NVIDIA driver: the double fails there unless /dev/nvidiactl exists.
import argparse
import json
import os
import socket
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TYPES = ("gauge", "counter", "label")


def fail(message):
    sys.stderr.write("TEST DOUBLE of dcgm-exporter: %s\n" % message)
    sys.exit(1)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="dcgm-exporter", description="TEST DOUBLE of dcgm-exporter", allow_abbrev=False)
    p.add_argument("-f", "--collectors", default="/etc/dcgm-exporter/default-counters.csv")
    p.add_argument("-a", "--address", default=":9400")
    p.add_argument("-c", "--collect-interval", type=int, default=30000)
    p.add_argument("-k", "--kubernetes", action="store_true")
    p.add_argument("-o", "--use-old-namespace", action="store_true")
    p.add_argument("-p", "--cpu-devices", default="f")
    p.add_argument("-m", "--configmap-data")
    p.add_argument("-r", "--remote-hostengine-info")
    p.add_argument("-d", "--devices", default="f")
    p.add_argument("-n", "--no-hostname", action="store_true")
    p.add_argument("-s", "--switch-devices", default="f")
    p.add_argument("-x", "--xid-count-window-size", type=int)
    p.add_argument("--kubernetes-gpu-id-type")
    p.add_argument("--fake-gpus", action="store_true")
    p.add_argument("--web-config-file")
    p.add_argument("--replace-blanks-in-model-name", action="store_true")
    p.add_argument("--debug", action="store_true")
    p.add_argument("--clock-events-count-window-size", type=int)
    p.add_argument("--enable-dcgm-log", action="store_true")
    p.add_argument("--dcgm-log-level")
    p.add_argument("--log-format", choices=["text", "json"])
    p.add_argument("--pod-resources-kubelet-socket")
    p.add_argument("--hpc-job-mapping-dir")
    p.add_argument("--disable-startup-validate", action="store_true")
    p.add_argument("--web-systemd-socket", action="store_true")
    return p.parse_args(argv)


def read_collectors(path):
    fields = []
    try:
        with open(path) as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        fail("cannot read the collectors file %s: %s" % (path, exc))
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        parts = [part.strip() for part in text.split(",")]
        if len(parts) < 3 or not parts[0].startswith("DCGM_FI_"):
            fail("%s:%d: malformed line %r (want: DCGM field, type, help)" % (path, number, line))
        if parts[1] not in TYPES:
            fail("%s:%d: could not find Prometheus metric type %r" % (path, number, parts[1]))
        fields.append((parts[0], parts[1], ",".join(parts[2:])))
    if not fields:
        fail("%s lists no field" % path)
    return fields


def hostengine_gpus(info):
    if "://" in info:
        info = info.split("://", 1)[1]
    host, dummy, port = info.rpartition(":")
    host = host.strip("[]") or "localhost"
    last = None
    for _attempt in range(10):
        try:
            with socket.create_connection((host, int(port)), timeout=5) as conn:
                conn.sendall(b"GPUS\n")
                data = conn.makefile().readline()
            return json.loads(data)["gpus"]
        except (OSError, ValueError, KeyError) as exc:
            last = exc
            time.sleep(1)
    fail("could not connect to the host engine at %s: %s" % (info, last))


def main(argv):
    args = parse_args(argv)
    fields = read_collectors(args.collectors)
    if args.remote_hostengine_info:
        gpus = hostengine_gpus(args.remote_hostengine_info)
    elif os.path.exists("/dev/nvidiactl"):
        gpus = []
    else:
        fail("embedded host engine: DCGM could not start (no NVIDIA driver, /dev/nvidiactl is missing); "
             "point the exporter at a running nv-hostengine with -r")
    hostname = socket.gethostname()
    body = ["# TEST DOUBLE of dcgm-exporter (gpuops.dlserver lab): values are not measurements"]
    for name, kind, text in fields:
        body.append("# HELP %s %s" % (name, text))
        body.append("# TYPE %s %s" % (name, "gauge" if kind == "label" else kind))
        for index, gpu in enumerate(gpus):
            labels = 'gpu="%d",UUID="GPU-testdouble-%s",pci_bus_id="%s",device="nvidia%d",' \
                     'modelName="TEST DOUBLE 10de:%s"' % (index, gpu["pci_bus_id"].replace(":", "-"),
                                                          gpu["pci_bus_id"], index, gpu["device_id"][2:])
            if not args.no_hostname:
                labels += ',Hostname="%s"' % hostname
            body.append("%s{%s} 0" % (name, labels))
    page = ("\n".join(body) + "\n").encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server API)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    host, dummy, port = args.address.rpartition(":")
    server = ThreadingHTTPServer((host.strip("[]") or "0.0.0.0", int(port)), Handler)
    print("TEST DOUBLE of dcgm-exporter: %d field(s), %d GPU(s), listening on %s"
          % (len(fields), len(gpus), args.address), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
