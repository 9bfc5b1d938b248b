#!/usr/bin/env bash
# Installs the npm consumers pinned in package-lock.json (speedscope, ajv,
# the Firefox Profiler's CLI) into DEST/node_modules, once per build tree:
# again only when the lock file changes. npm's own cache (~/.npm) serves
# later builds. Without npm this does nothing and the tests that need a
# consumer skip (or fail in CI).
set -uo pipefail
src=$(cd "$(dirname "$0")" && pwd)
dest=$1
command -v npm >/dev/null || { echo "npm not found: npm consumers skipped"; exit 0; }
mkdir -p "$dest"
if cmp -s "$src/package-lock.json" "$dest/package-lock.json" && [[ -d $dest/node_modules ]]; then
  exit 0
fi
cp "$src/package.json" "$src/package-lock.json" "$dest/"
cd "$dest"
# profiler-cli declares node >= 24; it runs on Debian's and NodeSource's 20.
if ! npm ci --no-audit --no-fund --loglevel=error --engine-strict=false >npm.log 2>&1; then
  echo "npm ci failed: $(tail -5 npm.log)"
  rm -f package-lock.json  # try again next time
  exit 1
fi
