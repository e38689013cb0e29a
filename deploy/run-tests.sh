#!/usr/bin/env bash
# Installs what is missing, builds everything with warnings as errors and runs every
# test with CTest. Exit code: CTest's.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh
# Node, npm and chromium for the operator console's front end and its browser tests.
bash deploy/install-web-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci
# A test that fails is run once more before it fails the run: the real-time and link tests
# measure the 2-core host's scheduling as well as tether (each has measured a host pause in a
# clean-clone run), and a genuine fault fails both attempts.
ctest --preset ci --parallel 2 --repeat until-pass:2 "$@"
