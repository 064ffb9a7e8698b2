#!/usr/bin/env bash
# Print the path of a Python interpreter of the version asked for (e.g. 3.12), or of the nearest
# newer one up to 3.14: python3.N on PATH or in pyenv's versions, each tried (a pyenv shim of a
# version not selected does not run). Exits 1, saying how to get one, when there is none. Used by
# the Makefile for the newest tested ansible-core's controller.
set -euo pipefail
want=${1:?usage: find_python.sh MAJOR.MINOR}
case $want in 3.[0-9]|3.[0-9][0-9]) ;; *) echo "find_python.sh: not a version: $want" >&2; exit 2 ;; esac
root=${PYENV_ROOT:-$HOME/.pyenv}
for m in $(seq "${want#3.}" 14); do
  for p in $(command -v "python3.$m" 2>/dev/null) $(ls -1d "$root"/versions/3."$m".*/bin/python3."$m" 2>/dev/null | sort -rV); do
    if [ -x "$p" ] && "$p" -c 'import sys, venv, ensurepip' >/dev/null 2>&1; then echo "$p"; exit 0; fi
  done
done
echo "find_python.sh: no Python $want (or newer up to 3.14) with venv on PATH or in pyenv; the newest tested" \
  "ansible-core needs one (Debian 13 and Ubuntu 24.04 ship python3.12 or newer; elsewhere: pyenv install $want)" >&2
exit 1
