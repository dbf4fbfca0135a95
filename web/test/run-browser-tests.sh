#!/usr/bin/env bash
# The dashboard's browser tests: builds web/dist if needed, then runs test/*.test.mjs with
# node's test runner. They start the real daemon (`colltune serve`) on a free loopback port
# with sim campaigns, drive headless Chromium (/usr/bin/chromium, Debian's package) through
# Playwright, and save screenshots and the daemon's log in ARTIFACTS.
#
#   web/test/run-browser-tests.sh [COLLTUNE_BINARY [ARTIFACTS_DIR]]
#   (defaults: build/cli/colltune and build/web-artifacts)
#
# Set WEB_UPDATE_DOCS=1 to copy the screenshots into web/docs/ (the README shows them) and
# docs/images/ (docs/report-html.md).
set -euo pipefail
web="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$web/.." && pwd)"
colltune="${1:-$repo/build/cli/colltune}"
artifacts="${2:-$repo/build/web-artifacts}"
chromium="${CHROMIUM:-/usr/bin/chromium}"

missing=""
command -v node >/dev/null 2>&1 || missing="node"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
[ -x "$chromium" ] || missing="$missing chromium"
if [ -n "$missing" ]; then
  echo "run-browser-tests: missing:$missing (install with: scripts/install-deps web)" >&2
  # On CI a missing browser is a failure, not a skip.
  if [ "${CI:-}" = "true" ]; then exit 1; fi
  exit 77
fi
if [ ! -x "$colltune" ]; then
  echo "run-browser-tests: no colltune binary at $colltune (build it first)" >&2
  exit 1
fi

"$web/build.sh"
mkdir -p "$artifacts"
export COLLTUNE_BIN="$(cd "$(dirname "$colltune")" && pwd)/$(basename "$colltune")"
export WEB_ARTIFACTS="$(cd "$artifacts" && pwd)"
export WEB_DIST="$web/dist"
export CHROMIUM="$chromium"
cd "$web"
exec node --test --test-concurrency=1 --test-reporter=spec test/units.test.mjs test/dashboard.test.mjs test/report.test.mjs
