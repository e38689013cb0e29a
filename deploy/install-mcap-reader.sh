#!/usr/bin/env bash
# The independent MCAP reader the tests check recordings with (tests/mcap_reader: @mcap/core,
# @mcap/support's wasm decompressors and protobufjs, pinned in its package-lock.json; all of
# them run on Debian 12's Node 18). Installs Node.js and npm with apt if either is missing,
# as deploy/install-web-deps.sh does (but without chromium, which the reader does not need),
# then `npm ci` in tests/mcap_reader. Idempotent: skipped while node_modules holds what this
# package-lock.json describes (a stamp of the lock's sha256 inside node_modules, which npm ci
# wipes and this script rewrites only after a successful install).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$src/tests/mcap_reader

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "install-mcap-reader.sh: installing nodejs npm"
  $sudo apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends nodejs npm >/dev/null
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "install-mcap-reader.sh: node $(node --version) is too old (the reader needs >= 18)" >&2
  exit 1
fi

stamp=$dir/node_modules/.tether-lock-sha256
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "install-mcap-reader.sh: up to date (node $(node --version))"
  exit 0
fi
# --ignore-scripts: no package in the lock needs an install script (the decompressors ship
# their .wasm; protobufjs's postinstall only prints version advice), so Debian's npm 9 and a
# newer npm, which asks before running scripts, install the same tree.
# The lock names no tarball URLs (npm's omit-lockfile-registry-resolved, as the project's other
# locks), so npm ci reads each package's registry metadata: --prefer-offline takes npm's cache's
# copy, which can be older than a pinned version (seen here: @types/node) and then fails with
# ETARGET; once more with fresh metadata (whose errors are shown) before giving up.
ci() { (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts "$@"); }
if ! ci --prefer-offline 2>/dev/null; then
  echo "install-mcap-reader.sh: npm ci with cached metadata failed; again with fresh metadata" >&2
  ci --prefer-online
fi
echo "$want" >"$stamp.tmp" && mv "$stamp.tmp" "$stamp"
echo "install-mcap-reader.sh: installed (node $(node --version), npm $(npm --version))"
