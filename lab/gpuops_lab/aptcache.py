"""The lab's package cache: an HTTP proxy on the lab gateway (run by lab.py, like the mirror)
that every node's apt goes through and that keeps every package it passes on, so a package is
downloaded once per machine, not once per node and scenario.

It forwards only URLs under the Debian mirrors the lab uses (the host's Debian mirror and its
security archive, named on its command line): the nodes get no way through it to any other
address, the host's own services included.
"""

import functools
import http.server
import os
import shutil
import signal
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from .common import gateway
from .images import host_debian_mirror
from .services import Service

APT_CACHE_CONF = "/etc/apt/apt.conf.d/00gpuops-lab-apt-cache"


def allowed_mirrors():
    """The URL prefixes the cache forwards: the host's Debian mirror and its security archive."""
    mirror = host_debian_mirror()
    allowed = [mirror]
    if mirror.endswith("/debian"):
        allowed.append(mirror[: -len("/debian")] + "/debian-security")
    return allowed


def url_allowed(url, allowed):
    """Whether apt may fetch `url` through the cache: plain http, no user info, query or
    fragment, no `.`/`..` segment (encoded or not), and under one of the `allowed` prefixes
    (same host and port, path below the prefix's path)."""
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme != "http" or "@" in parts.netloc or parts.query or parts.fragment or "?" in url or "#" in url:
        return False
    segments = parts.path.split("/")
    if any(urllib.parse.unquote(seg) in (".", "..") or "/" in urllib.parse.unquote(seg) for seg in segments):
        return False
    for prefix in allowed:
        want = urllib.parse.urlsplit(prefix)
        if (want.hostname or "").lower() != (parts.hostname or "").lower() or (want.port or 80) != (port or 80):
            continue
        base = want.path.rstrip("/")
        if parts.path.startswith(base + "/"):
            return True
    return False


def apt_cache_url(cfg, host=None):
    return "http://%s:%d" % (host or gateway(cfg), cfg.apt_cache_port)


def apt_cache_argv(cfg):
    return [sys.executable, cfg.lab_py, "_serve-apt-cache", "--dir", os.path.realpath(cfg.apt_cache_dir),
            "--bind", "%s:%d" % (gateway(cfg), cfg.apt_cache_port), "--allow", ",".join(allowed_mirrors())]


def apt_cache_service(cfg):
    return Service(cfg, "package cache", "_serve-apt-cache", functools.partial(apt_cache_argv, cfg),
                   cfg.apt_cache_port, "GPUOPS_LAB_APT_CACHE_PORT")


def cache_path(cache_dir, url):
    """Where a cacheable download lives in the cache, or None when it is not cacheable:
    packages (.deb, their names carry the version) and by-hash index files are immutable;
    Release files and indexes by name change and always go to the origin."""
    if not url.startswith("http://"):
        return None
    rest = url[len("http://"):].split("?", 1)[0]
    parts = [p for p in rest.split("/") if p]
    if len(parts) < 2 or any(p in (".", "..") for p in parts):
        return None
    if not (parts[-1].endswith((".deb", ".udeb")) or "by-hash" in parts[:-1]):
        return None
    return os.path.join(cache_dir, *parts)


class AptCacheHandler(http.server.BaseHTTPRequestHandler):
    """An HTTP proxy for apt that keeps every package it passes on (see cache_path)."""

    cache_dir = None
    allowed = ()
    protocol_version = "HTTP/1.1"
    timeout = 120
    PASS_HEADERS = ("If-Modified-Since", "If-None-Match", "Range", "If-Range", "Cache-Control")

    def _reply_file(self, path, head):
        size = os.path.getsize(path)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        if not head:
            with open(path, "rb") as fh:
                shutil.copyfileobj(fh, self.wfile, 1 << 20)

    def _relay(self, head):
        url = self.path
        if not url.startswith("http://"):
            self.send_error(400, "apt proxy: absolute http:// URLs only")
            return
        if not url_allowed(url, self.allowed):
            self.send_error(403, "apt proxy: only the lab's Debian mirrors (%s)" % ", ".join(self.allowed))
            return
        target = cache_path(self.cache_dir, url)
        if target and os.path.isfile(target):
            self._reply_file(target, head)
            return
        headers = {k: self.headers[k] for k in self.PASS_HEADERS if self.headers.get(k) and not target}
        req = urllib.request.Request(url, headers=headers, method="HEAD" if head else "GET")
        try:
            resp = urllib.request.urlopen(req, timeout=60)  # pylint: disable=consider-using-with
        except urllib.error.HTTPError as exc:
            resp = exc
        except OSError as exc:
            self.send_error(502, "apt proxy: %s" % exc)
            return
        with resp:
            code = resp.getcode() if hasattr(resp, "getcode") else resp.code
            body_len = resp.headers.get("Content-Length")
            self.send_response(code)
            for key in ("Content-Type", "Last-Modified", "ETag", "Content-Range", "Accept-Ranges"):
                if resp.headers.get(key):
                    self.send_header(key, resp.headers[key])
            if head or code in (204, 304) or body_len is None:
                data = b"" if head or code in (204, 304) else resp.read()
                self.send_header("Content-Length", body_len if head and body_len else str(len(data)))
                self.end_headers()
                if data:
                    self.wfile.write(data)
                return
            self.send_header("Content-Length", body_len)
            self.end_headers()
            keep = target and code == 200
            tmp = None
            if keep:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                tmp = tempfile.NamedTemporaryFile(dir=os.path.dirname(target), delete=False)  # pylint: disable=consider-using-with
            try:
                while True:
                    chunk = resp.read(1 << 20)
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    if tmp:
                        tmp.write(chunk)
                if tmp:
                    tmp.close()
                    if os.path.getsize(tmp.name) == int(body_len):
                        os.chmod(tmp.name, 0o644)
                        os.replace(tmp.name, target)
            finally:
                if tmp and os.path.exists(tmp.name):
                    tmp.close()
                    os.remove(tmp.name)

    def do_GET(self):  # noqa: N802
        self._relay(head=False)

    def do_HEAD(self):  # noqa: N802
        self._relay(head=True)

    def log_message(self, format, *args):  # pylint: disable=redefined-builtin
        sys.stderr.write("%s %s\n" % (self.log_date_time_string(), format % args))


def serve_apt_cache(directory, bind, allow):
    host, port = bind.rsplit(":", 1)
    os.makedirs(directory, exist_ok=True)
    allowed = tuple(a for a in (allow or "").split(",") if a)
    handler = type("BoundAptCacheHandler", (AptCacheHandler,), {"cache_dir": directory, "allowed": allowed})
    httpd = http.server.ThreadingHTTPServer((host, int(port)), handler)
    httpd.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    httpd.serve_forever()


def ensure_apt_cache(cfg, service):
    """The lab's package cache on the gateway; returns its URL, or None when off."""
    if cfg.apt_cache == "off":
        return None
    service.ensure()
    return apt_cache_url(cfg)


def apt_proxy_conf(cfg):
    """The apt configuration of a node that uses the lab's package cache. The mirror on the
    lab gateway is reached directly."""
    gw = gateway(cfg)
    return ("// gpuops lab (lab/lab.py): packages come through the lab's package cache.\n"
            "Acquire::http::Proxy \"%s\";\n"
            "Acquire::http::Proxy::%s \"DIRECT\";\n" % (apt_cache_url(cfg, gw), gw))
