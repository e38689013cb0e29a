#!/usr/bin/env bash
# From a joint-limit stop to a restarted task, through the real pair over mutual TLS
# (docs/stops-and-recovery.md): a remote site on the embedded simulated arm (free scene)
# runs remote_site/tasks/reach_down.textproto until its joint-limit margin stops it; the reset
# is refused while the breach persists; a jog towards the limit is refused naming the
# direction; the jog away moves the arm out at the site's recovery speed; the reset is then
# accepted and a task starts again. Each step is checked; the last line is "PASS recovery".
# Usage: deploy/recovery-demo.sh [BUILD_DIR]   (default build/release, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
if [ "$build" = build/release ]; then
  bash deploy/install-deps.sh
  cmake --preset release >/dev/null
  cmake --build --preset release --target tether-remote tether
fi
export TETHER_DATA_DIR="$PWD/common"
remote_bin=$build/remote_site/apps/tether-remote
console_bin=$build/local_site/apps/tether
work=$(mktemp -d)
remote_pid=""
cleanup() {
  [ -n "$remote_pid" ] && kill "$remote_pid" 2>/dev/null && wait "$remote_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; echo "-- site log:" >&2; cat "$work/remote.log" >&2; exit 1; }

bash deploy/make-pki.sh init "$work/pki" --site lab --person demo=operator >/dev/null
"$remote_bin" --serve 127.0.0.1:0 --site lab --scene free --port-file "$work/port" \
  --config "$work/pki/sites/lab.conf" >"$work/remote.log" 2>&1 &
remote_pid=$!
for _ in $(seq 300); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || fail "the site did not start"
tether() {
  echo "\$ tether $*"
  "$console_bin" --remote "127.0.0.1:$(cat "$work/port")" --config "$work/pki/people/demo.conf" \
    "$@" 2>&1 | tee "$work/out"
  return "${PIPESTATUS[0]}"
}
expect() {  # expect CODE TEXT: the last command's exit code and a line of its output
  [ "$status" -eq "$1" ] || fail "exit $status, expected $1"
  grep -q -- "$2" "$work/out" || fail "expected '$2' in the output"
}

tether upload remote_site/tasks/reach_down.textproto --no-preview >/dev/null
tether upload remote_site/tasks/hold_here.textproto --no-preview >/dev/null
status=0; tether start reach_down --wait-seconds 8 || status=$?
expect 1 "joint-limit margin (joint 4)"
status=0; tether reset || status=$?
expect 3 "persists; move out of it first"
status=0; tether recover --joint 4 --by -0.1 || status=$?
expect 3 "would deepen the joint-limit margin breach: jog it +"
status=0; tether recover --joint 4 --by 0.1 --reset || status=$?
expect 0 "reset accepted"
status=0; tether status || status=$?
expect 0 "recovery     done"
status=0; tether start hold_here --wait-seconds 1 || status=$?
expect 0 "'hold_here' is running"
status=0; tether audit --last 6 || status=$?
expect 0 "Recover"
echo "PASS recovery"
