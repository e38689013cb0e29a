#!/usr/bin/env bash
# The link's latency figure (issue 4, deliverable 8), on loopback with real processes:
# tether-remote --serve with the embedded MuJoCo door, tether-ground streaming scripted
# hand-controller increments at 1 kHz for 30 s (local_site/scripts/door_swing.hcscript, the
# door swung back and forth in shared control). Each increment is timed from the moment it
# was sampled to the first force-reflection sample that reports it applied by the executor.
# Prints p50/p99/max, lost and duplicated counts; exit 1 if p99 > 2 ms or any was lost.
# Usage: deploy/link-latency.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
seconds=${2:-30}
work=$(mktemp -d)
remote_pid=""
trap '[ -n "$remote_pid" ] && kill $remote_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

"$build/remote_site/apps/tether-remote" --serve 127.0.0.1:0 --scene door \
  --port-file "$work/port" >"$work/remote.log" 2>&1 &
remote_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
addr=127.0.0.1:$(cat "$work/port")
"$build/local_site/apps/tether" --remote "$addr" --operator latency upload \
  remote_site/tasks/door_shared.textproto --no-preview >/dev/null
"$build/local_site/apps/tether-ground" --site remote="$addr" --operator latency \
  --start door_shared --device script:local_site/scripts/door_swing.hcscript \
  --duration "$seconds" --report "$work/report"
field() { awk -v k="$1" '$1 == k { print $2 }' "$work/report"; }
p50=$(field latency_p50_ms) p99=$(field latency_p99_ms) max=$(field latency_max_ms)
lost=$(field lost) dup=$(field duplicates) sent=$(field sent) applied=$(field applied)
echo
echo "link latency (sample -> applied -> reflected), ${seconds} s at 1 kHz on loopback:"
printf '  p50 %s ms   p99 %s ms (target <= 2 ms)   max %s ms\n' "$p50" "$p99" "$max"
printf '  %s sent, %s applied, %s lost, %s duplicated\n' "$sent" "$applied" "$lost" "$dup"
awk -v p="$p99" -v l="$lost" -v d="$dup" 'BEGIN { exit !(p <= 2.0 && l == 0 && d == 0) }' \
  || { echo "link latency: target missed"; exit 1; }
