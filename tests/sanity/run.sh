#!/usr/bin/env bash
# ansible-test sanity for the collection, run in a local virtualenv (--local): ansible-test
# cannot pull its test containers here, and it downloads a pip bootstrap script from a host
# CI cannot reach. We seed that script's cache with an equivalent built on ensurepip, then
# run sanity on a copy of the tracked tree laid out as ansible_collections/gpuops/dlserver
# (ansible-test insists on that path). The copy lives outside this checkout and gets its own
# git index, so ansible-test lists exactly the files git would ship.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=${VENV:-$repo/.venv}
case $venv in /*) ;; *) venv=$PWD/$venv ;; esac  # a relative VENV is relative to where make ran
py=${SANITY_PYTHON:-3.11}
"$venv/bin/python" "$repo/tests/sanity/seed_get_pip.py"
# One work directory per checkout, so two checkouts (worktrees, CI beside a session) never share one.
work=${SANITY_WORKDIR:-${TMPDIR:-/tmp}/gpuops-dlserver-sanity-$(printf %s "$repo" | cksum | cut -d" " -f1)}
dest="$work/ansible_collections/gpuops/dlserver"
rm -rf "$work" && mkdir -p "$dest"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -c) | tar -x -C "$dest"
cd "$dest"
git init -q . && git add -A && git -c user.name=sanity -c user.email=sanity@localhost commit -qm sanity
export PATH="$venv/bin:$PATH"
exec ansible-test sanity --local --python "$py" --color no "$@"
