#!/usr/bin/env bash
# Installs what is missing, builds everything with warnings as errors and runs every
# test with CTest. Exit code: CTest's.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci
ctest --preset ci --parallel 2 "$@"
