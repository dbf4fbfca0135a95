#!/usr/bin/env bash
# Builds the web dashboard into web/dist (served by `colltune serve` at /): installs the npm
# packages pinned by package-lock.json (npm ci, only when node_modules is missing or older than
# the lockfile), type-checks (tsc) and bundles with esbuild (scripts/build.mjs). Nothing is
# fetched at run time: the bundle holds every script and style, so the dashboard works offline.
set -euo pipefail
cd "$(dirname "$0")"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "web/build.sh: '$tool' not found; install it with: scripts/install-deps web" >&2
    exit 2
  fi
done

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
npm run --silent build
