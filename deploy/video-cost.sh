#!/usr/bin/env bash
# What a watched camera costs the site, and what arrives across a real IP path
# (docs/performance.md, "Cameras"). Real processes, mutual TLS.
#
# 1. Loopback: tether-remote --serve with the embedded MuJoCo door (real-time loop) and
#    tether-ground teleoperating it with the scripted shared-control session of
#    deploy/web-load.sh (door_swing.hcscript at 1 kHz). Runs alternate between no camera
#    watched (off) and one (on: `tether camera overview`, 640×480 at 15 Hz, VP9 at the site's
#    1 Mbit/s target). Per run, as deploy/web-load.sh measures them: the loop's overruns and
#    compute time while the task ran; the remote's CPU over the session (all its threads),
#    and with the camera, its render thread's (tether-video: render, read back, VP9 encode,
#    cut and seal) over the watch; the bit rate received, frames per second and the frames'
#    age on arrival (capture to complete on the ground). The table sets the medians side by
#    side.
# 2. With root: across the packet-level link emulator (deploy/lib/netns-link.sh) at LINK_MS
#    one way (default 50, ±10 % jitter) and LINK_LOSS % independent loss (default 2), the
#    door table's passivity row (deploy/delay-scenarios.sh: door_shared with time-domain
#    passivity, the simulated hand turning the handle 45°, torque scale 0.01, the hand
#    feeling the local model) without and with the overview camera watched from the ground
#    side, alternating, RUNS of each: the medians of the door's angle, the peak interaction
#    torque and breaches side by side, and the share of the camera's frames decoded intact
#    and shown.
# Exit 1 if the camera raises the loop's overruns (beyond 3, the VM's floor) or its compute
# p99 by more than 10 %, its render thread takes more than half a core, it exceeds
# 1.5 Mbit/s, fewer than 80 % of its frames are shown across the lossy path, or the door
# moves more than 3° or its peak torque more than 1.5× with the camera on.
# Usage: deploy/video-cost.sh [BUILD_DIR] [SECONDS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
seconds=${2:-20}
runs=${3:-3}
link_ms=${LINK_MS:-50}
link_loss=${LINK_LOSS:-2}
work=$(mktemp -d)
remote_pid="" record_pid="" camera_pid=""
source deploy/lib/netns-link.sh
cleanup() {
  for p in $camera_pid $record_pid $remote_pid; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  netns_teardown >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
for tool in remote_site/apps/tether-remote local_site/apps/tether local_site/apps/tether-ground; do
  [ -x "$build/$tool" ] || { echo "video cost: $build/$tool not built" >&2; exit 1; }
done
bash deploy/make-pki.sh init "$work/pki" --person viewer=operator >/dev/null
client=(--config "$work/pki/people/viewer.conf")
export TETHER_DATA_DIR="$PWD/common"
sed 's/^  stall_timeout_s: .*/  stall_timeout_s: 1.0/' remote_site/tasks/door_shared.textproto \
  >"$work/door_shared.textproto"
# field FILE KEY and loop_figures RUN (deploy/lib/loop-figures.sh).
source deploy/lib/loop-figures.sh
fail() { echo "video cost: $1"; [ -f "${2:-}" ] && tail -20 "$2"; exit 1; }
ticks=$(getconf CLK_TCK)
# CPU ticks (user + system) of process PID, or of its threads named NAME.
cpu_ticks() {
  local pid=$1 name=${2:-}
  if [ -z "$name" ]; then
    awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat"
    return
  fi
  local total=0 t
  for t in /proc/"$pid"/task/*; do
    [ "$(cat "$t/comm" 2>/dev/null)" = "$name" ] || continue
    total=$((total + $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$t/stat")))
  done
  echo "$total"
}
now() { date +%s.%N; }

# session MODE N: one loopback run without (off) or with (on) the camera; files $work/MODE.N.*
session() {
  local mode=$1 n=$2 out="$work/$1.$2" addr t0 c0 v0 t1 c1 v1
  rm -f "$work/port"
  "$build/remote_site/apps/tether-remote" --serve 127.0.0.1:0 --scene door \
    --port-file "$work/port" --config "$work/pki/sites/remote.conf" >"$out.remote" 2>&1 &
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
  t0=$(now) c0=$(cpu_ticks "$remote_pid")
  if [ "$mode" = on ]; then
    "$build/local_site/apps/tether" --remote "$addr" "${client[@]}" camera overview \
      --duration "$seconds" >"$out.camera" 2>&1 &
    camera_pid=$!
  fi
  "$build/local_site/apps/tether-ground" --site remote="$addr" "${client[@]}" \
    --start door_shared --device script:local_site/scripts/door_swing.hcscript \
    --duration "$seconds" --report "$out.report" >"$out.ground" 2>&1 ||
    fail "the session failed ($mode run $n)" "$out.ground"
  t1=$(now) c1=$(cpu_ticks "$remote_pid")
  if [ -n "$camera_pid" ]; then
    wait "$camera_pid" || fail "the camera view failed ($mode run $n)" "$out.camera"
    camera_pid=""
    # The render thread starts with the first watch and idles after the last: its life's
    # CPU is the watch's.
    v1=$(cpu_ticks "$remote_pid" tether-video)
    awk -v v="$v1" -v k="$ticks" -v s="$(field "$out.camera" seconds)" \
      'BEGIN { printf "video_thread_cores %.3f\n", v / k / s }' >"$out.video"
    cat "$out.camera" >>"$out.video"
  fi
  awk -v c="$((c1 - c0))" -v k="$ticks" -v t0="$t0" -v t1="$t1" \
    'BEGIN { printf "remote_cores %.3f\n", c / k / (t1 - t0) }' >"$out.cpu"
  kill -TERM "$remote_pid"
  wait "$remote_pid" || true
  remote_pid=""
  wait "$record_pid" || grep -q 'the remote site is shutting down' "$out.record" ||
    fail "the telemetry recording failed ($mode run $n)" "$out.record"
  record_pid=""
}

for n in $(seq "$runs"); do
  if [ $((n % 2)) = 1 ]; then order="off on"; else order="on off"; fi
  for mode in $order; do
    session "$mode" "$n"
    { cat "$work/$mode.$n.report"; loop_figures "$work/$mode.$n"; cat "$work/$mode.$n.cpu"
      [ -f "$work/$mode.$n.video" ] && cat "$work/$mode.$n.video"; } >"$work/$mode.$n.all"
  done
done

echo "video cost: ${seconds} s door sessions at 1 kHz on loopback with mutual TLS;"
echo "no camera against the overview camera watched (640x480, 15 Hz, VP9), $runs runs of each"
echo
printf '  %-40s %12s %12s %8s\n' "" "off" "camera" "ratio"
row() {  # LABEL KEY FORMAT
  awk -v l="$1" -v a="$(median off "$2")" -v b="$(median on "$2")" -v f="$3" \
    'BEGIN { r = a > 0 ? sprintf("%.2f", b / a) : "-"
      printf "  %-40s %12s %12s %8s\n", l, sprintf(f, a), sprintf(f, b), r }'
}
row "loop overruns while the task ran" overruns "%d"
row "loop compute p50" compute_p50_us "%.1f us"
row "loop compute p99" compute_p99_us "%.1f us"
row "period jitter p99 (whole life)" jitter_p99_us "%.1f us"
row "link round trip p99" latency_p99_ms "%.3f ms"
row "remote CPU (all threads)" remote_cores "%.3f cores"
only() { printf '  %-40s %12s %12s\n' "$1" "" "$(printf "$3" "$(median on "$2")")"; }
only "render + encode thread (tether-video)" video_thread_cores "%.3f cores"
only "frames per second arriving" fps "%.1f"
only "bit rate received" kbit_per_s "%.0f kbit/s"
only "capture to complete, p50" age_p50_ms "%.1f ms"
only "capture to complete, p99" age_p99_ms "%.1f ms"
only "site's encode time per frame" encode_ms "%.2f ms"

status=0
over_off=$(median off overruns) over_on=$(median on overruns)
if [ "$over_on" -gt 3 ] && ! awk -v a="$over_off" -v b="$over_on" 'BEGIN { exit !(b <= 1.10 * a) }'; then
  echo "video cost: the camera raises the loop's overruns by more than 10 %"; status=1
fi
awk -v a="$(median off compute_p99_us)" -v b="$(median on compute_p99_us)" \
  'BEGIN { exit !(b <= 1.10 * a + 1.0) }' ||
  { echo "video cost: the camera raises the loop's compute p99 by more than 10 %"; status=1; }
awk -v v="$(median on video_thread_cores)" 'BEGIN { exit !(v <= 0.5) }' ||
  { echo "video cost: the render thread takes more than half a core"; status=1; }
awk -v v="$(median on kbit_per_s)" 'BEGIN { exit !(v <= 1500) }' ||
  { echo "video cost: the camera exceeds 1.5 Mbit/s"; status=1; }

# 2. Across the packet-level emulator.
if ! netns_need_root 2>/dev/null; then
  echo
  echo "video cost: not root: the lossy path is skipped"
  exit $status
fi
netns_setup tvideo
sed "s/^  stall_timeout_s: \(.*\)/  stall_timeout_s: \1\n  reflection { method: REFLECTION_METHOD_PASSIVITY }/" \
  remote_site/tasks/door_shared.textproto >"$work/door_passive.textproto"
sed -i 's/^name: .*/name: "door_passive"/' "$work/door_passive.textproto"
grep -q REFLECTION_METHOD_PASSIVITY "$work/door_passive.textproto"
# lossy MODE N: the door across the path, without (off) or with (on) the camera.
lossy() {
  local mode=$1 out="$work/lossy.$1.$2" addr=$REMOTE_IP:50051
  local wan=(--config "$work/pki/people/viewer.conf" --server-name localhost)
  rm -f "$work/port"
  link_up "$build" "$out" "$link_ms" "$link_loss" 1
  ip netns exec "$NETNS_R" "$build/remote_site/apps/tether-remote" --serve "$addr" \
    --scene door --port-file "$work/port" --config "$work/pki/sites/remote.conf" \
    >"$out.remote" 2>&1 &
  remote_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || fail "the remote did not start (lossy $mode)" "$out.remote"
  in_ground "$build/local_site/apps/tether" --remote "$addr" "${wan[@]}" upload \
    "$work/door_passive.textproto" --no-preview >"$out.upload" 2>&1 ||
    fail "upload failed (lossy $mode)" "$out.upload"
  if [ "$mode" = on ]; then
    in_ground "$build/local_site/apps/tether" --remote "$addr" "${wan[@]}" camera overview \
      --duration "$seconds" >"$out.camera" 2>&1 &
    camera_pid=$!
  fi
  in_ground "$build/local_site/apps/tether-ground" --site remote="$addr" "${wan[@]}" \
    --start door_passive --device sim:local_site/scripts/rotate_door.hcscript \
    --torque-scale 0.01 --predict iiwa7:door --reflect-from model \
    --report "$out.report" >"$out.ground" 2>&1 || true
  [ -s "$out.report" ] || fail "no report (lossy $mode)" "$out.ground"
  if [ -n "$camera_pid" ]; then
    wait "$camera_pid" || fail "the camera view failed (lossy $mode)" "$out.camera"
    camera_pid=""
  fi
  kill -TERM "$remote_pid" 2>/dev/null || true
  wait "$remote_pid" 2>/dev/null || true
  remote_pid=""
  link_down
}
for n in $(seq "$runs"); do
  if [ $((n % 2)) = 1 ]; then order="off on"; else order="on off"; fi
  for mode in $order; do lossy "$mode" "$n"; done
done
lossy_median() {
  for f in "$work"/lossy."$1".*.report; do field "$f" "$2"; done | sort -g |
    awk -v m=$(( (runs + 1) / 2 )) 'NR == m { print }'
}
# The camera's frames over every lossy run with it.
cat "$work"/lossy.on.*.camera >"$work/lossy.cameras"
total() { awk -v k="$1" '$1 == k { t += $2 } END { print t + 0 }' "$work/lossy.cameras"; }
decoded=$(total decoded)
spanned=$(( decoded + $(total lost) + $(total held_back) + $(total undecodable) ))
shown=$(awk -v d="$decoded" -v t="$spanned" 'BEGIN { printf "%.3f", (t > 0 ? d / t : 0) }')
echo
echo "across the packet-level emulator: ${link_ms} ms one way (±10 % jitter), ${link_loss} % loss;"
echo "the door with passivity (torque scale 0.01), medians of $runs runs each"
printf '  %-40s %12s %12s\n' "" "off" "camera"
printf '  %-40s %12s %12s\n' "door angle (the hand turns 45°)" \
  "$(printf '%.1f°' "$(lossy_median off aux0_deg)")" "$(printf '%.1f°' "$(lossy_median on aux0_deg)")"
printf '  %-40s %12s %12s\n' "peak interaction torque" \
  "$(printf '%.1f N·m' "$(lossy_median off peak_torque_nm)")" \
  "$(printf '%.1f N·m' "$(lossy_median on peak_torque_nm)")"
printf '  %-40s %12s %12s\n' "runs with a bound breach" \
  "$(cat "$work"/lossy.off.*.report | awk '$1 == "breached" { t += $2 } END { print t + 0 }')" \
  "$(cat "$work"/lossy.on.*.report | awk '$1 == "breached" { t += $2 } END { print t + 0 }')"
printf '  %-40s %12s %12s\n' "camera frames shown intact" "" "$decoded of $spanned ($shown)"
printf '  %-40s %12s %12s\n' "fragments rebuilt from parity" "" "$(total repaired)"
printf '  %-40s %12s %12s\n' "camera bit rate received (median)" "" \
  "$(for f in "$work"/lossy.on.*.camera; do field "$f" kbit_per_s; done | sort -g |
     awk -v m=$(( (runs + 1) / 2 )) 'NR == m { printf "%.0f kbit/s", $1 }')"
printf '  %-40s %12s %12s\n' "capture to complete, p50 (median)" "" \
  "$(for f in "$work"/lossy.on.*.camera; do field "$f" age_p50_ms; done | sort -g |
     awk -v m=$(( (runs + 1) / 2 )) 'NR == m { printf "%.1f ms", $1 }')"
awk -v s="$shown" 'BEGIN { exit !(s >= 0.8) }' ||
  { echo "video cost: fewer than 80 % of the frames were shown across the lossy path"; status=1; }
awk -v a="$(lossy_median off aux0_deg)" -v b="$(lossy_median on aux0_deg)" \
  -v p="$(lossy_median off peak_torque_nm)" -v q="$(lossy_median on peak_torque_nm)" \
  'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 3 && q <= 1.5 * p) }' ||
  { echo "video cost: the door's figures change with the camera on"; status=1; }
exit $status
