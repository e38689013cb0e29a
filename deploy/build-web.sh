#!/usr/bin/env bash
# Builds the browser operator console's front end (local_site/web → local_site/web/dist, which
# tether-ground --web serves and the Debian package installs) from its pinned packages.
# Installs node, npm and chromium first if missing (deploy/install-web-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-web-deps.sh >/dev/null
cd local_site/web
npm ci --prefer-offline --no-audit --no-fund --loglevel=error
npm run build --silent
