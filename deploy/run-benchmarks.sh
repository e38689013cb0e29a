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
# and the ground's MCAP, within 10 %), and what a watched camera costs the site and what
# arrives across a lossy path (deploy/video-cost.sh: TETHER_VIDEO_RUNS, default 3, of 20 s
# without and with the overview camera, then the door at 50 ms and 2 % loss without and
# with it).
# Exit code 1 if any target is missed.
#
# Usage: deploy/run-benchmarks.sh [--write-docs] [BENCHMARK_OPTION ...]
#   --write-docs  also write this run's tables into docs/performance.md (deploy/lib/doc-table.sh):
#                 the control cycle and kinematics (Markdown made from the benchmarks' printed
#                 tables), the resolver comparison (tether-compare-resolvers, run only with
#                 this flag, about a minute), and passes the flag on to deploy/link-latency.sh
#                 and deploy/loop-timing.sh, which write their own.
#   BENCHMARK_OPTION  passed to kinematics_benchmark (e.g. --benchmark_min_time=0.2).
# TETHER_BENCH_PRESET picks the build (default release; CI reuses its ci tree, which has
# the same optimisation and has just been built).
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/lib/doc-table.sh

write_docs=()
bench_args=()
for arg in "$@"; do
  case $arg in
    --write-docs) write_docs=(--write-docs) ;;
    *) bench_args+=("$arg") ;;
  esac
done
preset=${TETHER_BENCH_PRESET:-release}
targets=(kinematics_benchmark control_cycle_benchmark tether-remote tether tether-ground web_load_clients)
[ ${#write_docs[@]} -eq 0 ] || targets+=(tether-compare-resolvers)
bash deploy/install-deps.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" --target "${targets[@]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
"build/$preset"/tests/benchmarks/kinematics_benchmark --benchmark_color=false "${bench_args[@]}" |
  tee "$work/kinematics.txt" || status=1
"build/$preset"/tests/benchmarks/control_cycle_benchmark --benchmark_color=false |
  tee "$work/control-cycle.txt" || status=1
if [ ${#write_docs[@]} -gt 0 ]; then
  # The ratio table RatioReporter prints ("ForwardKinematics iiwa7 133.2 719.0 0.185x 0.35x"),
  # in the page's form: the operation spelt out on its first row.
  awk 'BEGIN { long["ForwardKinematics"] = "forward kinematics (all frames + tool)"
               short["ForwardKinematics"] = "forward kinematics"
               long["Jacobian"] = short["Jacobian"] = "FK + tool Jacobian"
               long["DlsStep"] = "DLS step (FK, Jacobian, solve)"; short["DlsStep"] = "DLS step" }
    ($1 in long) && NF >= 6 && $5 ~ /x$/ {
      if (!rows++) { print "| operation | arm | tether | KDL | ratio | target |"
                     print "|---|---|---|---|---|---|" }
      r = $5; t = $6; sub(/x$/, "", r); sub(/x$/, "", t)
      printf "| %s | %s | %.0f ns | %.0f ns | %.2f× | ≤ %.2f× |\n",
        seen[$1]++ ? short[$1] : long[$1], $2, $3, $4, r, t }' "$work/kinematics.txt" |
    doc_table_write deploy/run-benchmarks.sh:kinematics || status=1
  # The cycle's printed table ("dls/iiwa7 2.45 us 42.20 us 5118.0 us | 2.56 us 41.90 us
  # 90.0 us | 1.01x [1.58x] ok"), DLS rows first.
  awk '$1 ~ /^(dls|co)\// && $3 == "us" && $8 == "|" && $15 == "|" {
      split($1, name, "/"); tail = $16; co = ($17 ~ /x$/) ? $17 : ""
      sub(/x$/, "", tail); sub(/x$/, "", co)
      rows[name[1]] = rows[name[1]] sprintf("| %s / %s | %.2f µs | %.1f µs | %.0f µs | %.2f µs | %.1f µs | %.2f× | %s|\n",
        name[1] == "dls" ? "DLS" : "constrained optimisation", name[2], $2, $4, $6, $9, $11,
        tail, co == "" ? "" : sprintf("%.2f× ", co)) }
    END { if (rows["dls"] rows["co"] == "") exit
      print "| resolver / arm | median | p99.9 | max | floor median | floor p99.9 | p99.9 / floor | median CO / DLS |"
      print "|---|---|---|---|---|---|---|---|"
      printf "%s%s", rows["dls"], rows["co"] }' "$work/control-cycle.txt" |
    doc_table_write deploy/run-benchmarks.sh:control-cycle || status=1
  # The resolver comparison prints its Markdown table itself (progress goes to stderr).
  TETHER_DATA_DIR=${TETHER_DATA_DIR:-$PWD/common} \
    "build/$preset/remote_site/apps/tether-compare-resolvers" --out "$work/resolvers.md" ||
    status=1
  doc_table_write tether-compare-resolvers <"$work/resolvers.md" || status=1
fi
# CI shortens the real-time runs (TETHER_LINK_SECONDS, TETHER_LOOP_SECONDS,
# TETHER_WEB_LOAD_SECONDS, TETHER_RECORDING_SECONDS) to keep its budget; the defaults are
# the figures in docs/performance.md.
bash deploy/link-latency.sh "build/$preset" "${TETHER_LINK_SECONDS:-20}" 3 "${write_docs[@]}" || status=1
bash deploy/loop-timing.sh "build/$preset" "${TETHER_LOOP_SECONDS:-30}" "${write_docs[@]}" || status=1
bash deploy/web-load.sh "build/$preset" "${TETHER_WEB_LOAD_SECONDS:-20}" 3 || status=1
bash deploy/recording-cost.sh "build/$preset" "${TETHER_RECORDING_SECONDS:-20}" 3 || status=1
bash deploy/video-cost.sh "build/$preset" "${TETHER_VIDEO_SECONDS:-20}" "${TETHER_VIDEO_RUNS:-3}" ||
  status=1
exit $status
