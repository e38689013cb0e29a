#!/usr/bin/env bash
# What the browser operator console needs beyond the C++ build: Node.js and npm (to build
# local_site/web with its pinned packages), Debian's chromium (the browser tests drive it
# headless) and Xvfb with xauth (xvfb-run: tests/browser/render-rate.sh also measures a
# headed chromium). Installs with apt only what is missing: a machine whose node and npm come
# from elsewhere keeps them. Runs as root or through sudo.
set -euo pipefail
need=()
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  need+=(nodejs npm)
fi
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v xvfb-run >/dev/null || need+=(xvfb)
command -v xauth >/dev/null || need+=(xauth)
if [ ${#need[@]} -eq 0 ]; then
  echo "install-web-deps.sh: node $(node --version), npm $(npm --version), $(/usr/bin/chromium --version 2>/dev/null | head -1), xvfb-run"
  exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
echo "install-web-deps.sh: installing ${need[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${need[@]}"
# Debian 12's Node is 18: the front end's pinned packages all allow it (local_site/web).
node --version
