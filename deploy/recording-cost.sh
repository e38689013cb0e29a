#!/usr/bin/env bash
# What recording costs the site's loop, and what it weighs (docs/recordings.md), on loopback
# with real processes and mutual TLS: tether-remote --serve with the embedded MuJoCo door
# (real-time loop) and tether-ground teleoperating it with the scripted shared-control
# session of deploy/web-load.sh (door_swing.hcscript at 1 kHz). Runs alternate between no
# recording (--black-box none, no --record) and both recorders (the site's black box of every
# cycle, increment and event, and the ground's --record of the session).
#
# Per run, as deploy/web-load.sh measures them: the loop's overruns and compute time while
# the task ran (a `tether record` CSV of every 10th cycle, present in both kinds of run), the
# remote's life-long jitter, and the link's round trip; with recording, the bytes a minute of
# the black box and of the ground's file, and that both files validate with the independent
# reader (tests/mcap_reader). The table sets the medians side by side.
# Then, with TEN_MINUTE_FILE=PATH (a 10-minute black-box segment), the time @mcap/core takes
# to open it and seek into it (tests/mcap_reader/seek-bench.mjs).
# Exit 1 if recording raises the loop's overruns (beyond 3, the VM's floor) or its compute
# p99 by more than 10 %, or a file does not validate.
# Usage: deploy/recording-cost.sh [BUILD_DIR] [SECONDS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
seconds=${2:-20}
runs=${3:-3}
work=$(mktemp -d)
remote_pid="" record_pid=""
cleanup() {
  for p in $record_pid $remote_pid; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
for tool in remote_site/apps/tether-remote local_site/apps/tether local_site/apps/tether-ground; do
  [ -x "$build/$tool" ] || { echo "recording cost: $build/$tool not built" >&2; exit 1; }
done
bash deploy/install-mcap-reader.sh >/dev/null
bash deploy/make-pki.sh init "$work/pki" --person recorder=operator >/dev/null
client=(--config "$work/pki/people/recorder.conf")
sed 's/^  stall_timeout_s: .*/  stall_timeout_s: 1.0/' remote_site/tasks/door_shared.textproto \
  >"$work/door_shared.textproto"
# field FILE KEY and loop_figures RUN (deploy/lib/loop-figures.sh).
source deploy/lib/loop-figures.sh
fail() { echo "recording cost: $1"; [ -f "${2:-}" ] && tail -20 "$2"; exit 1; }

# session MODE N: one run without (off) or with (on) the recorders; its files $work/MODE.N.*
session() {
  local mode=$1 n=$2 out="$work/$1.$2" addr box=none record=()
  if [ "$mode" = on ]; then
    box="$out.bb"
    record=(--record "$out.mcap")
  fi
  rm -f "$work/port"
  "$build/remote_site/apps/tether-remote" --serve 127.0.0.1:0 --scene door \
    --port-file "$work/port" --config "$work/pki/sites/remote.conf" --black-box "$box" \
    >"$out.remote" 2>&1 &
  remote_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || fail "the remote did not start ($mode run $n)" "$out.remote"
  addr=127.0.0.1:$(cat "$work/port")
  "$build/local_site/apps/tether" --remote "$addr" "${client[@]}" upload \
    "$work/door_shared.textproto" --no-preview >"$out.upload" 2>&1 ||
    fail "upload failed ($mode run $n)" "$out.upload"
  "$build/local_site/apps/tether" --remote "$addr" "${client[@]}" record "$out.csv" \
    --duration $((seconds + 120)) --decimation 10 >"$out.record" 2>&1 &
  record_pid=$!
  "$build/local_site/apps/tether-ground" --site remote="$addr" "${client[@]}" \
    --start door_shared --device script:local_site/scripts/door_swing.hcscript \
    --duration "$seconds" --report "$out.report" "${record[@]}" >"$out.ground" 2>&1 ||
    fail "the session failed ($mode run $n)" "$out.ground"
  kill -TERM "$remote_pid"
  wait "$remote_pid" || true
  remote_pid=""
  wait "$record_pid" || grep -q 'the remote site is shutting down' "$out.record" ||
    fail "the telemetry recording failed ($mode run $n)" "$out.record"
  record_pid=""
  if [ "$mode" = on ]; then
    local bb_bytes ground_bytes
    bb_bytes=$(cat "$out.bb"/*.mcap | wc -c)
    ground_bytes=$(wc -c <"$out.mcap")
    node tests/mcap_reader/check-mcap.mjs "$out.bb"/*.mcap "$out.mcap" >"$out.check" 2>&1 ||
      fail "a recording does not validate ($mode run $n)" "$out.check"
    # The remote lived a few seconds beyond the session: its bytes per minute of life.
    awk -v b="$bb_bytes" -v g="$ground_bytes" -v s="$seconds" \
      -v life="$(sed -n 's/.*control loop: \([0-9]*\) cycles.*/\1/p' "$out.remote")" \
      'BEGIN { printf "black_box_mb_per_min %.2f\nground_mb_per_min %.2f\n",
                      b / (life / 1000.0) * 60 / 1e6, g / s * 60 / 1e6 }' >"$out.bytes"
  fi
}

for n in $(seq "$runs"); do
  if [ $((n % 2)) = 1 ]; then order="off on"; else order="on off"; fi
  for mode in $order; do
    session "$mode" "$n"
    { cat "$work/$mode.$n.report"; loop_figures "$work/$mode.$n"
      [ -f "$work/$mode.$n.bytes" ] && cat "$work/$mode.$n.bytes"; } >"$work/$mode.$n.all"
  done
done

echo "recording cost: ${seconds} s door sessions at 1 kHz on loopback with mutual TLS;"
echo "no recording against the black box and the ground's --record, $runs runs of each"
echo
printf '  %-34s %12s %12s %8s\n' "" "off" "recording" "ratio"
row() {  # LABEL KEY FORMAT
  awk -v l="$1" -v a="$(median off "$2")" -v b="$(median on "$2")" -v f="$3" \
    'BEGIN { r = a > 0 ? sprintf("%.2f", b / a) : "-"
      printf "  %-34s %12s %12s %8s\n", l, sprintf(f, a), sprintf(f, b), r }'
}
row "loop overruns while the task ran" overruns "%d"
row "loop compute p50" compute_p50_us "%.1f us"
row "loop compute p99" compute_p99_us "%.1f us"
row "period jitter p99 (whole life)" jitter_p99_us "%.1f us"
row "link round trip p99" latency_p99_ms "%.3f ms"
printf '  %-34s %12s %12s\n' "black box" "" "$(median on black_box_mb_per_min) MB/min"
printf '  %-34s %12s %12s\n' "ground session file" "" "$(median on ground_mb_per_min) MB/min"

status=0
over_off=$(median off overruns) over_on=$(median on overruns)
if [ "$over_on" -gt 3 ] && ! awk -v a="$over_off" -v b="$over_on" 'BEGIN { exit !(b <= 1.10 * a) }'; then
  echo "recording cost: recording raises the loop's overruns by more than 10 %"; status=1
fi
awk -v a="$(median off compute_p99_us)" -v b="$(median on compute_p99_us)" \
  'BEGIN { exit !(b <= 1.10 * a + 1.0) }' ||
  { echo "recording cost: recording raises the loop's compute p99 by more than 10 %"; status=1; }

if [ -n "${TEN_MINUTE_FILE:-}" ]; then
  echo
  echo "@mcap/core on a 10-minute black-box segment ($(($(wc -c <"$TEN_MINUTE_FILE") / 1000000)) MB):"
  node tests/mcap_reader/seek-bench.mjs "$TEN_MINUTE_FILE"
fi
exit $status
