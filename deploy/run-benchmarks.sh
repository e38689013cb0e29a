#!/usr/bin/env bash
# Builds and runs the benchmarks on this machine: kinematics against their peer (KDL,
# printed as time ratios) and the executor's full control cycle with every behaviour on
# (median and p99.9 against the brief's targets), then the ground/remote link's round trip
# on loopback, mutual TLS beside plaintext (deploy/link-latency.sh: 3 runs of 20 s each way
# at 1 kHz, the median run's p99 against 2 ms), and the real-time loop against cyclictest
# (deploy/loop-timing.sh: 30 s each, wake-up latency side by side), and what ten browsers on
# the operator console cost the link and the loop (deploy/web-load.sh: 3 runs of 20 s with
# none and with ten WebSocket clients at 60 Hz, within 10 %), and what recording costs the
# loop and weighs (deploy/recording-cost.sh: 3 runs of 20 s without and with the black box
# and the ground's MCAP, within 10 %).
# Exit code 1 if any target is missed.
# TETHER_BENCH_PRESET picks the build (default release; CI reuses its ci tree, which has
# the same optimisation and has just been built).
set -euo pipefail
cd "$(dirname "$0")/.."

preset=${TETHER_BENCH_PRESET:-release}
bash deploy/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target kinematics_benchmark control_cycle_benchmark \
  tether-remote tether tether-ground web_load_clients
status=0
build/$preset/tests/benchmarks/kinematics_benchmark --benchmark_color=false "$@" || status=1
build/$preset/tests/benchmarks/control_cycle_benchmark --benchmark_color=false || status=1
# CI shortens the real-time runs (TETHER_LINK_SECONDS, TETHER_LOOP_SECONDS,
# TETHER_WEB_LOAD_SECONDS, TETHER_RECORDING_SECONDS) to keep its budget; the defaults are the README's figures.
bash deploy/link-latency.sh "build/$preset" "${TETHER_LINK_SECONDS:-20}" 3 || status=1
bash deploy/loop-timing.sh "build/$preset" "${TETHER_LOOP_SECONDS:-30}" || status=1
bash deploy/web-load.sh "build/$preset" "${TETHER_WEB_LOAD_SECONDS:-20}" 3 || status=1
bash deploy/recording-cost.sh "build/$preset" "${TETHER_RECORDING_SECONDS:-20}" 3 || status=1
exit $status
