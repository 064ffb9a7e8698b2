# TEST DOUBLE of NVIDIA's nv-hostengine (DCGM host engine) for the gpuops.dlserver lab; not NVIDIA
# software. Packaged by tests/doubles/build_repo.py (spec cuda) into the double of
# datacenter-gpu-manager-4-core. It listens where the real one does (127.0.0.1:5555 unless -b/-p
# say otherwise) and answers one request, "GPUS", with the NVIDIA GPUs of the host's PCI tree (the
# lab's sysfs fixture at /opt/gpuops-fixture/sys when present), so that the dcgm-exporter double
# can only serve metrics when it is pointed at a running host engine. Unknown options are refused.
import argparse
import json
import os
import socketserver
import sys

FIXTURE = "/opt/gpuops-fixture/sys"


def gpus():
    root = FIXTURE if os.path.isdir(FIXTURE) else "/sys"
    base = os.path.join(root, "bus", "pci", "devices")
    found = []
    for bus in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        def read(name):
            try:
                with open(os.path.join(base, bus, name)) as handle:
                    return handle.read().strip().lower()
            except OSError:
                return ""
        if read("vendor") == "0x10de" and read("class")[:6] in ("0x0300", "0x0302"):
            found.append({"pci_bus_id": bus, "device_id": read("device")})
    return found


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().decode("ascii", "replace").strip()
        if line == "GPUS":
            reply = {"double": "TEST DOUBLE of nv-hostengine", "gpus": gpus()}
        else:
            reply = {"error": "TEST DOUBLE of nv-hostengine: unknown request %r" % line}
        self.wfile.write((json.dumps(reply) + "\n").encode())


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main():
    parser = argparse.ArgumentParser(prog="nv-hostengine", description="TEST DOUBLE of nv-hostengine")
    parser.add_argument("-n", "--no-daemon", action="store_true")
    parser.add_argument("-b", "--bind-interface", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, default=5555)
    parser.add_argument("--service-account")
    parser.add_argument("--log-level")
    parser.add_argument("-f", "--log-filename")
    args = parser.parse_args()
    if not args.no_daemon:
        sys.exit("TEST DOUBLE of nv-hostengine: only -n (foreground, as nvidia-dcgm.service runs it) is implemented")
    host = "0.0.0.0" if args.bind_interface == "ALL" else args.bind_interface
    print("TEST DOUBLE of nv-hostengine listening on %s:%d with %d GPU(s)" % (host, args.port, len(gpus())),
          flush=True)
    Server((host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
