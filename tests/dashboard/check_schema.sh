#!/usr/bin/env bash
# The Grafana dashboard against Grafana's own dashboard schema: the TypeScript types of the
# npm package @grafana/schema (Grafana's published schema library; no Grafana server can be
# installed from the registries CI reaches), checked by the TypeScript compiler with the
# dashboard as an object literal that must satisfy `Dashboard` - unknown keys, wrong types and
# missing required fields fail. Both packages are pinned and installed into .cache/dashboard-schema.
set -euo pipefail
cd "$(dirname "$0")/../.."
SCHEMA_VERSION=13.2.3
TYPESCRIPT_VERSION=5.9.3
DIR=.cache/dashboard-schema
if ! command -v npm >/dev/null; then
  [ "$(id -u)" = 0 ] || { echo "dashboard schema: npm is missing; install Debian's npm" >&2; exit 2; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
fi
if [ ! -f "$DIR/node_modules/@grafana/schema/package.json" ] || \
   ! grep -q "\"version\": \"$SCHEMA_VERSION\"" "$DIR/node_modules/@grafana/schema/package.json"; then
  mkdir -p "$DIR"
  npm install --prefix "$DIR" --no-audit --no-fund --no-save --loglevel=error \
    "@grafana/schema@$SCHEMA_VERSION" "typescript@$TYPESCRIPT_VERSION"
fi
status=0
for dashboard in roles/prometheus/files/dashboards/*.json; do
  check="$DIR/$(basename "$dashboard" .json).check.ts"
  { echo "import type { Dashboard } from '@grafana/schema';"
    # $(...) drops the trailing newline, which would end the statement before `satisfies`.
    printf 'export const dashboard = %s satisfies Dashboard;\n' "$(cat "$dashboard")"; } > "$check"
  if "$DIR/node_modules/.bin/tsc" --noEmit --strict --skipLibCheck --module nodenext --moduleResolution nodenext \
       --target es2020 "$check"; then
    echo "ok   $dashboard satisfies @grafana/schema $SCHEMA_VERSION Dashboard"
  else
    echo "FAIL $dashboard does not satisfy @grafana/schema $SCHEMA_VERSION Dashboard"; status=1
  fi
done
exit $status
