"""The artifact mirror: MIRROR_DIR served over HTTP on the lab gateway.

The layout and its index come from playbooks/mirror.yml (the same playbook an air-gapped site
runs) and the doubles' builders; both index with the collection's mirror module_utils.
"""

import functools
import http.server
import json
import os
import signal
import sys
import urllib.error
import urllib.request

from .common import gateway
from .services import Service

IDENTITY_PATH = "/.gpuops-lab-mirror"


def mirror_url(cfg):
    return "http://%s:%d" % (gateway(cfg), cfg.mirror_port)


def mirror_argv(cfg):
    """The command line of this checkout's mirror: /proc/<pid>/cmdline must match it (the
    interpreter aside) for a pid to count as this mirror."""
    return [sys.executable, cfg.lab_py, "_serve-mirror", "--dir", os.path.realpath(cfg.mirror_dir),
            "--bind", "%s:%d" % (gateway(cfg), cfg.mirror_port)]


def mirror_service(cfg):
    return Service(cfg, "mirror", "_serve-mirror", functools.partial(mirror_argv, cfg), cfg.mirror_port,
                   "GPUOPS_LAB_MIRROR_PORT")


def mirror_identity(cfg):
    """What the mirror address answers at IDENTITY_PATH ({"dir": ...} from a lab mirror,
    {} from another HTTP server, None when nothing answers). Shown by `status`; never
    used to choose a process to stop."""
    try:
        with urllib.request.urlopen(mirror_url(cfg) + IDENTITY_PATH, timeout=2) as resp:
            return json.loads(resp.read().decode())
    except urllib.error.HTTPError:
        return {}
    except (OSError, ValueError):
        return None


def ensure_mirror(cfg, service):
    """Serve the mirror directory on the lab gateway (an empty SHA256SUMS when there is none)."""
    os.makedirs(cfg.mirror_dir, exist_ok=True)
    sums = os.path.join(cfg.mirror_dir, "SHA256SUMS")
    if not os.path.exists(sums):
        with open(sums, "w"):
            pass
    return service.ensure()


class MirrorHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a mirror directory, and at IDENTITY_PATH which directory and process serve it
    (for `status` and for the lab.py of older checkouts; this file never acts on it)."""

    mirror_dir = None

    def do_GET(self):  # noqa: N802
        if self.path == IDENTITY_PATH:
            body = json.dumps({"dir": self.mirror_dir, "pid": os.getpid()}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), format % args))


def serve_mirror(directory, bind):
    host, port = bind.rsplit(":", 1)
    handler_cls = type("BoundMirrorHandler", (MirrorHandler,), {"mirror_dir": directory})
    handler = functools.partial(handler_cls, directory=directory)
    httpd = http.server.ThreadingHTTPServer((host, int(port)), handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    httpd.serve_forever()
