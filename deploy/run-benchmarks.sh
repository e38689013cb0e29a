#!/usr/bin/env bash
# Builds and runs the benchmarks against their peers on this machine (KDL for
# kinematics) and prints the time ratios. Exit code 1 if a ratio misses its target.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target kinematics_benchmark
build/release/tests/benchmarks/kinematics_benchmark --benchmark_color=false "$@"
