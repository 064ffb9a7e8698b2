#!/usr/bin/env bash
# Debian's real promtool on the controller, without installing or starting Prometheus: the
# `prometheus` package is downloaded (apt-get download) and unpacked (dpkg-deb -x) into
# .cache/promtool, then tests/promtool/check.py runs its checks with it. Works on a fresh
# Debian 12 machine (runs apt-get update once when the package lists are empty; root).
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR=.cache/promtool
PROMTOOL=$DIR/root/usr/bin/promtool
PYTHON=${PYTHON:-.venv/bin/python}
if [ ! -x "$PROMTOOL" ]; then
  rm -rf "$DIR"; mkdir -p "$DIR"
  if ! (cd "$DIR" && apt-get download prometheus 2>/dev/null); then
    [ "$(id -u)" = 0 ] || { echo "promtool: apt-get download prometheus failed; run apt-get update as root" >&2; exit 2; }
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    (cd "$DIR" && apt-get download prometheus)
  fi
  dpkg-deb -x "$DIR"/prometheus_*.deb "$DIR/root"
fi
echo "promtool: $("$PROMTOOL" --version 2>&1 | head -1) ($(ls "$DIR"/prometheus_*.deb | xargs -n1 basename))"
"$PYTHON" tests/promtool/check.py "$PROMTOOL"
