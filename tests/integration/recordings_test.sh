#!/usr/bin/env bash
# Recordings with the real processes on loopback over mutual TLS (docs/recordings.md), every
# file they write checked by the independent reader (tests/mcap_reader, @mcap/core).
# Usage: recordings_test.sh CASE TETHER_REMOTE TETHER TETHER_GROUND SOURCE_DIR
#   blackbox  the door task runs while `tether record FILE.mcap` records it; the remote is
#             killed with SIGKILL mid-task. Its black box keeps the cycles up to the last sync
#             before the kill (a segment without a footer, recovered); the restarted site
#             lists and streams the segments (refused to an observer); replaying them, and
#             the console's recording, lands on the recorded joints (1e-6 rad)
#   session   tether-ground --record: a scripted shared-control session on the door; the
#             file holds both ends' views of every increment; its replay lands on the same
#             joints; `tether export --csv` writes the CSV `tether plot` reads
set -euo pipefail
case_name=$1 remote_bin=$2 console_bin=$3 ground_bin=$4 src=$5
work=$(mktemp -d)
remote_pid=""
cleanup() {
  [ -n "$remote_pid" ] && kill -9 "$remote_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.log; do echo "--- $f"; tail -20 "$f"; done; exit 1; }

pki=${TETHER_TEST_PKI:-}
if [ -z "$pki" ]; then
  pki=$work/pki
  bash "$src/deploy/make-pki.sh" init "$pki" --person operator=operator --person observer=observer >/dev/null
fi
bash "$src/deploy/install-mcap-reader.sh" >/dev/null
check() { node "$src/tests/mcap_reader/check-mcap.mjs" "$@"; }

serve() {  # serve LOG [options]: a door site with its black box in $work/bb
  local log=$1
  shift
  rm -f "$work/port"
  "$remote_bin" --serve 127.0.0.1:0 --scene door --port-file "$work/port" \
    --config "$pki/sites/remote.conf" --black-box "$work/bb" --black-box-segment 2 \
    --black-box-sync 0.2 "$@" >"$work/$log.log" 2>&1 &
  remote_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || fail "tether-remote did not report its port"
  addr=127.0.0.1:$(cat "$work/port")
}
console() { "$console_bin" --remote "$addr" --config "$pki/people/operator.conf" "$@"; }
# The verdict line of a replay, and its exit status.
replayed_same() {
  "$console_bin" replay "$1" >"$work/replay.out" 2>&1 || { cat "$work/replay.out"; return 1; }
  cat "$work/replay.out"
  grep -q 'verdict           the same run' "$work/replay.out"
}

case $case_name in
blackbox)
  serve remote1
  console upload "$src/remote_site/tasks/door_force.textproto" --scene door >/dev/null
  console record "$work/console.mcap" --duration 2.5s >"$work/record.log" 2>&1 &
  record_pid=$!
  sleep 0.4
  console start door_force >/dev/null
  sleep 1.8
  killed_ns=$(date +%s%N)
  kill -9 "$remote_pid"
  wait "$remote_pid" 2>/dev/null || true
  remote_pid=""
  # The console's stream ends with the site; its file is closed whole all the same.
  wait "$record_pid" || grep -q 'StreamTelemetry\|UNAVAILABLE\|shutting down' "$work/record.log" ||
    fail "the console's recording failed"
  open_segment=$(ls "$work"/bb/bb-*.mcap | sort | tail -1)
  check --allow-truncated --json "$open_segment" >"$work/open.json" || fail "the killed segment does not read"
  grep -q '"truncated": *true' "$work/open.json" || fail "the killed segment has a footer: was it closed?"
  # The last cycle on disk: within the sync interval (0.2 s) and a margin of the kill.
  last_ns=$(node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const f = Array.isArray(r) ? r[0] : (r.files ? r.files[0] : r);
    process.stdout.write(String(f.endTime ?? f.end_time ?? f.timeRange?.end ?? ""));' "$work/open.json")
  [ -n "$last_ns" ] || fail "the reader gave no end time for $open_segment"
  lag_ms=$(( (killed_ns - last_ns) / 1000000 ))
  echo "the killed segment's last message: ${lag_ms} ms before SIGKILL"
  [ "$lag_ms" -le 700 ] || fail "the black box lost ${lag_ms} ms before the kill (sync every 200 ms)"

  serve remote2
  console blackbox list >"$work/list.out"
  cat "$work/list.out"
  grep -q "$(basename "$open_segment").*(open or recovered)" "$work/list.out" ||
    fail "the restarted site does not list the killed segment as recovered"
  if "$console_bin" --remote "$addr" --config "$pki/people/observer.conf" blackbox fetch --all \
      --out "$work/observer" >"$work/observer.out" 2>&1; then
    fail "an observer fetched the black box"
  fi
  grep -q "PERMISSION_DENIED\|needs the role operator" "$work/observer.out" ||
    fail "the observer's refusal does not say why: $(cat "$work/observer.out")"
  console blackbox fetch --all --out "$work/fetched"
  check --allow-truncated "$work"/fetched/*.mcap || fail "a fetched segment does not validate"
  check "$work/console.mcap" || fail "the console's recording does not validate"
  replayed_same "$work/fetched" || fail "the black box does not replay to the recorded run"
  replayed_same "$work/console.mcap" || fail "the console's recording does not replay to the run"
  ;;
session)
  serve remote1
  sed 's/max_torque_nm: 60/max_torque_nm: 200/' "$src/remote_site/tasks/door_shared.textproto" \
    >"$work/door_shared.textproto"
  console upload "$work/door_shared.textproto" --no-preview >/dev/null
  "$ground_bin" --site remote="$addr" --config "$pki/people/operator.conf" --start door_shared \
    --device "script:$src/local_site/scripts/rotate_door.hcscript" --duration 4 \
    --record "$work/session.mcap" >"$work/ground.log" 2>&1 || fail "the session failed"
  grep 'recording ' "$work/ground.log"
  check --expect-topic /tether/ground/increments --expect-topic /tether/ground/reflections \
    --expect-topic /tether/telemetry --expect-topic /tether/tasks "$work/session.mcap" ||
    fail "the session's recording does not validate"
  replayed_same "$work/session.mcap" || fail "the session does not replay to the recorded run"
  console export "$work/session.mcap" --csv "$work/session.csv" --decimation 10
  console plot "$work/session.csv" "$work/session.png" >/dev/null || fail "the export does not plot"
  ;;
*)
  echo "unknown case $case_name" >&2
  exit 2
  ;;
esac
echo "PASS $case_name"
