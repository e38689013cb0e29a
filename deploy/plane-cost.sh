#!/usr/bin/env bash
# What the teleoperation data plane costs the remote's control loop: the seed's door in
# shared control (the delayed-link set-up, as deploy/link-table.sh runs it) on loopback,
# RUNS sessions on each plane, alternating datagram and stream so that drifts of the
# machine fall on both, the loop's every cycle recorded (`tether record --decimation 1`
# beside the session). Per run: the loop's compute time p50 / p99 / max over the session's
# cycles and its overruns; then the medians of each plane and their ratios. Informational
# (a 2-core VM's noise is of the order of the difference); no target.
# Usage: deploy/plane-cost.sh [BUILD_DIR] [RUNS]   (defaults build/release 5)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
runs=${2:-5}
work=$(mktemp -d)
remote_pid=""
cleanup() {
  [ -n "$remote_pid" ] && kill "$remote_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
bash deploy/make-pki.sh init "$work/pki" >/dev/null
export TETHER_DATA_DIR="$PWD/common"
client=(--config "$work/pki/people/operator.conf" --server-name localhost)
task=door_shared_delayed

# one PLANE RUN: prints "PLANE compute_p50_us compute_p99_us compute_max_us overruns"
one() {
  local plane=$1 run=$2
  rm -f "$work/port" "$work/cycles.csv"
  "$build/remote_site/apps/tether-remote" --serve 127.0.0.1:0 --scene door \
    --port-file "$work/port" --config "$work/pki/sites/remote.conf" >"$work/remote.log" 2>&1 &
  remote_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  local addr=127.0.0.1:$(cat "$work/port")
  "$build/local_site/apps/tether" --remote "$addr" "${client[@]}" upload \
    "remote_site/tasks/$task.textproto" --no-preview >/dev/null
  "$build/local_site/apps/tether" --remote "$addr" "${client[@]}" record "$work/cycles.csv" \
    --duration 6 --decimation 1 >/dev/null 2>&1 &
  local record=$!
  "$build/local_site/apps/tether-ground" --site remote="$addr" "${client[@]}" --start "$task" \
    --device sim:local_site/scripts/rotate_door.hcscript --predict iiwa7:door \
    --reflect-from model --data-plane "$plane" >"$work/ground_${plane}_$run.log" 2>&1 || true
  wait "$record" 2>/dev/null || true
  kill -TERM "$remote_pid" 2>/dev/null || true
  wait "$remote_pid" 2>/dev/null || true
  remote_pid=""
  # The running task's cycles only (state column), compute_s and overruns by header name.
  local columns='NR == 1 { for (i = 1; i <= NF; ++i) { if ($i == "compute_s") c = i; if ($i == "overruns") o = i; if ($i == "state") s = i }; next }'
  awk -F, "$columns"' $s == "running" { printf "%.3f\n", $c * 1e6 }' "$work/cycles.csv" |
    sort -g >"$work/compute"
  local n overruns
  n=$(wc -l <"$work/compute")
  overruns=$(awk -F, "$columns"' $s == "running" { if (first == "") first = $o; last = $o } END { print last - first }' "$work/cycles.csv")
  printf '%s %s %s %s %s\n' "$plane" "$(sed -n "$((n / 2 + 1))p" "$work/compute")" \
    "$(sed -n "$((n * 99 / 100 + 1))p" "$work/compute")" "$(tail -1 "$work/compute")" "$overruns"
}

results=$work/results
for r in $(seq "$runs"); do
  one datagram "$r" | tee -a "$results"
  one stream "$r" | tee -a "$results"
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { awk -v p="$1" -v k="$2" '$1 == p { print $k }' "$results" | median; }
echo
echo "| plane | compute p50 | compute p99 | compute max | overruns (running task) |"
echo "|---|---|---|---|---|"
for plane in datagram stream; do
  printf '| %s | %.2f µs | %.2f µs | %.1f µs | %s |\n' "$plane" "$(col "$plane" 2)" \
    "$(col "$plane" 3)" "$(col "$plane" 4)" "$(col "$plane" 5)"
done
awk -v a="$(col datagram 3)" -v b="$(col stream 3)" -v oa="$(col datagram 5)" -v ob="$(col stream 5)" \
  'BEGIN { printf "datagram / stream: compute p99 %.3f×, overruns %s against %s (medians of %d runs each)\n", a / b, oa, ob, '"$runs"' }'
