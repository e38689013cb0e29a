#!/usr/bin/env bash
# Real processes on loopback: tether-remote --serve (embedded MuJoCo door), the `tether`
# console and tether-ground.
# Usage: teleop_pair_test.sh CASE TETHER_REMOTE TETHER TETHER_GROUND SOURCE_DIR
#   teleop   a scripted teleoperation session turns the door; every increment is applied
#            once, none lost, and force reflection arrives at the ground
#   stall    tether-ground is frozen (SIGSTOP) mid-session: the remote stops the arm on the
#            stalled stream within one control period of the 100 ms deadline
#   lost     tether-ground is killed (SIGKILL): the remote stops the arm on the lost link
#            well before the stall deadline
#   console  `tether teleop` with the simulated 6R hand controller: the arm follows and the
#            session ends cleanly
#   delayed  through tether-linkem's byte-stream proxy at 250 ms one way ±25 ms (the gRPC
#            stream alone: a TCP proxy carries no datagrams), the door in shared control
#            with the passivity channel, the hand feeling the local model: no breach, both
#            ports passive, the door within ±3° of the local model's (what the hand turned),
#            the link's delay estimated, and the session's end an end rather than a stall
#   silent   through the same link, the ground frozen (SIGSTOP): the remote stops by itself
#            one stall bound after the last increment arrived, a one-way delay later
#   keyboard `tether teleop --device keyboard --start door_shared` in a real terminal
#            (tmux): nothing starts until space enables, the task then runs, space again
#            disables without a stop, and Ctrl-C ends the session with a clean stop
set -euo pipefail
case_name=$1 remote_bin=$2 console_bin=$3 ground_bin=$4 src=$5
linkem_bin=${6:-}
linkem_pid=""
work=$(mktemp -d)
remote_pid="" ground_pid=""
cleanup() {
  [ -n "$linkem_pid" ] && kill "$linkem_pid" 2>/dev/null
  tmux -L "tether-$$" kill-server 2>/dev/null || true
  [ -n "$ground_pid" ] && kill -CONT "$ground_pid" 2>/dev/null && kill -9 "$ground_pid" 2>/dev/null
  if [ -n "$remote_pid" ] && kill "$remote_pid" 2>/dev/null; then
    # A remote that outlives SIGTERM by 5 s is reported, then killed, so the case's own
    # verdict stands (one hung after a stall case on a VM whose host stole CPU).
    for _ in $(seq 50); do kill -0 "$remote_pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$remote_pid" 2>/dev/null; then
      echo "WARNING: tether-remote still running 5 s after SIGTERM; killed" >&2
      kill -9 "$remote_pid" 2>/dev/null
    fi
    wait "$remote_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- remote log"; cat "$work/remote.log"; echo "--- ground log";
         cat "$work/ground.log" 2>/dev/null; exit 1; }

# Over mutual TLS, as shipped: the test PKI (CTest fixture test_pki, TETHER_TEST_PKI) or,
# run by hand, a fresh one made with deploy/make-pki.sh.
pki=${TETHER_TEST_PKI:-}
if [ -z "$pki" ]; then
  pki=$work/pki
  bash "$src/deploy/make-pki.sh" init "$pki" >/dev/null
fi
"$remote_bin" --serve 127.0.0.1:0 --scene door --port-file "$work/port" \
  --config "$pki/sites/remote.conf" >"$work/remote.log" 2>&1 &
remote_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || fail "tether-remote did not report its port"
addr=127.0.0.1:$(cat "$work/port")
console() { "$console_bin" --remote "$addr" --config "$pki/people/operator.conf" "$@"; }

# The subject here is the link and the console, not the grasp: a VM pause under the welded
# door grasp with the simulated operator's hand spikes the wrench past the shipped 60 N·m
# now and then, so the torque bound is widened in this copy of the task.
sed 's/max_torque_nm: 60/max_torque_nm: 200/' "$src/remote_site/tasks/door_shared.textproto" \
  >"$work/door_shared.textproto"
# Under a sanitizer (TETHER_SANITIZER, set by the asan and tsan test presets) every process
# runs several times slower and a 1 kHz round trip takes 200+ ms on two cores: the cases
# whose subject is not the stall get the longest stall bound validation allows, and more
# tolerance for missed deadlines; the stall case keeps its subject (a stop within one
# control period of the deadline) with a 0.5 s deadline, since the ground's first
# increments alone can take longer than 0.1 s to arrive. A lost link is detected when the
# stream closes, whatever the bound.
stall_bound=0.1
if [ -n "${TETHER_SANITIZER:-}" ]; then
  stall_bound=0.5
  [ "$case_name" != stall ] && stall_bound=1.0
  sed -i -e "s/stall_timeout_s: [0-9.]*/stall_timeout_s: $stall_bound/" \
    -e 's/max_consecutive_overruns: [0-9]*/max_consecutive_overruns: 1000/' \
    "$work/door_shared.textproto"
fi
console upload "$work/door_shared.textproto" --no-preview >/dev/null || fail "upload refused"

field() { awk -v k="$1" '$1 == k { print $2 }' "$work/report"; }

case "$case_name" in
teleop)
  "$ground_bin" --site door="$addr" --config "$pki/people/operator.conf" --start door_shared \
    --device "script:$src/local_site/scripts/rotate_door.hcscript" --report "$work/report" \
    >"$work/ground.log" 2>&1 || fail "tether-ground exit $?"
  cat "$work/ground.log"
  sent=$(field sent) applied=$(field applied) lost=$(field lost) dup=$(field duplicates)
  reflections=$(field reflections) torque=$(field peak_torque_nm) door=$(field aux0_deg)
  [ "$lost" = 0 ] || fail "$lost increments lost"
  [ "$dup" = 0 ] || fail "$dup duplicates"
  # Every increment after the task started was applied exactly once.
  [ "$applied" -ge $((sent - 100)) ] && [ "$applied" -le "$sent" ] \
    || fail "applied $applied of $sent"
  [ "$reflections" -ge 1000 ] || fail "only $reflections reflections"
  awk -v t="$torque" 'BEGIN { exit !(t > 0.5) }' || fail "no reflected torque ($torque)"
  awk -v d="$door" 'BEGIN { exit !(d > 25 && d < 60) }' || fail "door at $door deg"
  grep -q "operator stop" <(console status) || fail "the session did not end with a clean stop"
  ;;
console)
  console teleop --device sim:"$src/local_site/scripts/rotate_door.hcscript" \
    --start door_shared >"$work/ground.log" 2>&1 || fail "tether teleop exit $?"
  cat "$work/ground.log"
  grep -q " 0 lost, 0 duplicates" "$work/ground.log" || fail "increments lost or duplicated"
  door=$(awk '/door\/aux angle/ { print $3 }' "$work/ground.log")
  awk -v d="$door" 'BEGIN { exit !(d > 15) }' || fail "door at $door deg"
  ;;
stall|lost)
  "$ground_bin" --site door="$addr" --config "$pki/people/operator.conf" --start door_shared \
    --device "script:$src/local_site/scripts/door_swing.hcscript" >"$work/ground.log" 2>&1 &
  ground_pid=$!
  for _ in $(seq 100); do console status | grep -q "running" && break; sleep 0.05; done
  console status | grep -q "running" || fail "the task never ran"
  sleep 1
  if [ "$case_name" = stall ]; then kill -STOP "$ground_pid"; else kill -9 "$ground_pid"; fi
  # The stop ramps over the task's stop time in task cycles; a VM whose host steals CPU
  # runs fewer cycles per second, so wait for the state rather than a fixed time.
  for _ in $(seq 60); do console status | grep -Eq "^state +stopped" && break; sleep 0.05; done
  status=$(console status)
  echo "$status"
  if [ "$case_name" = stall ]; then
    echo "$status" | grep -q "teleoperation stream stalled" || fail "no stall stop"
    # The breach reports the silence when the stop began and the bound in force (the
    # task's timeout, or more if the arrivals were jittery): the deadline plus at most one
    # control period (1 ms) and the frozen process's last in-flight increments.
    silence=$(echo "$status" | grep -o "stalled [0-9.]*" | awk '{ print $2 }')
    bound=$(echo "$status" | grep -o "bound [0-9.]*" | awk '{ print $2 }')
    awk -v s="$silence" -v b="$bound" -v t="$stall_bound" \
      'BEGIN { exit !(b >= t && s >= b && s <= b + 0.0015) }' \
      || fail "stall detected after $silence s (bound $bound s)"
  else
    echo "$status" | grep -q "ground link lost" || fail "no lost-link stop"
  fi
  echo "$status" | grep -qi "stopped" || fail "arm not stopped"
  ;;
delayed|silent)
  # The link of a WAN: 250 ms one way, ±25 ms uniform jitter, order kept.
  "$linkem_bin" --listen 127.0.0.1:0 --target "$addr" --delay 250ms --jitter 25ms \
    --port-file "$work/lport" >"$work/linkem.log" 2>&1 &
  linkem_pid=$!
  for _ in $(seq 100); do [ -s "$work/lport" ] && break; sleep 0.05; done
  far=127.0.0.1:$(cat "$work/lport")
  # The shipped task for delayed links (the passivity channel), with this file's wider
  # torque bound and sanitizer allowances.
  sed -e 's/max_torque_nm: 60/max_torque_nm: 200/' \
    -e "s/stall_timeout_s: [0-9.]*/stall_timeout_s: $stall_bound/" \
    "$src/remote_site/tasks/door_shared_delayed.textproto" >"$work/door_shared_delayed.textproto"
  [ -n "${TETHER_SANITIZER:-}" ] &&
    sed -i 's/max_consecutive_overruns: [0-9]*/max_consecutive_overruns: 1000/' \
      "$work/door_shared_delayed.textproto"
  console upload "$work/door_shared_delayed.textproto" --no-preview >/dev/null ||
    fail "upload refused"
  if [ "$case_name" = delayed ]; then
    "$ground_bin" --site door="$far" --server-name localhost --config "$pki/people/operator.conf" \
      --data-plane stream --start door_shared_delayed --device "sim:$src/local_site/scripts/rotate_door.hcscript" \
      --predict iiwa7:door --reflect-from model --report "$work/report" \
      >"$work/ground.log" 2>&1 || fail "tether-ground exit $?"
    cat "$work/ground.log"
    [ "$(field breached)" = 0 ] || fail "a bound was breached"
    [ "$(field lost)" = 0 ] && [ "$(field duplicates)" = 0 ] || fail "increments lost or duplicated"
    awk -v m="$(field min_master_observed_j)" -v r="$(field min_slave_observed_j)" \
      'BEGIN { exit !(m >= -0.01 && r >= -0.01) }' || fail "a port was not passive"
    door=$(field aux0_deg) predicted=$(field predicted_aux0_deg)
    awk -v d="$door" -v p="$predicted" 'BEGIN { exit !(d > 38 && d < 50 && d - p < 3 && p - d < 3) }' \
      || fail "door at $door deg, the local model at $predicted deg"
    # The display predicted the remote better than its delayed view, once corrected by
    # the remote's own telemetry.
    awk -v n="$(field prediction_samples)" -v c="$(field prediction_corrected_rms_deg)" \
      -v d="$(field prediction_delayed_rms_deg)" 'BEGIN { exit !(n >= 20 && c < d) }' ||
      fail "prediction: corrected RMS $(field prediction_corrected_rms_deg) deg against the \
delayed view's $(field prediction_delayed_rms_deg) deg"
    delay=$(field one_way_delay_ms)
    awk -v d="$delay" 'BEGIN { exit !(d > 200 && d < 300) }' || fail "one-way delay estimated $delay ms"
    # The session ended with the ground's stop, not the stall guard.
    grep -q "operator stop" <(console status) || fail "the session did not end with a clean stop"
  else
    "$ground_bin" --site door="$far" --server-name localhost --config "$pki/people/operator.conf" \
      --data-plane stream --start door_shared_delayed --device "script:$src/local_site/scripts/door_swing.hcscript" \
      >"$work/ground.log" 2>&1 &
    ground_pid=$!
    for _ in $(seq 200); do console status | grep -q "running" && break; sleep 0.05; done
    console status | grep -q "running" || fail "the task never ran"
    sleep 1.5
    kill -STOP "$ground_pid"
    frozen=$(date +%s%N)
    for _ in $(seq 200); do console status | grep -Eq "^state +(stopping|stopped)" && break; sleep 0.01; done
    after_ms=$(( ($(date +%s%N) - frozen) / 1000000 ))
    status=$(console status)
    echo "$status"
    echo "stop seen $after_ms ms after the ground froze"
    echo "$status" | grep -q "teleoperation stream stalled" || fail "no stall stop"
    silence=$(echo "$status" | grep -o "stalled [0-9.]*" | awk '{ print $2 }')
    bound=$(echo "$status" | grep -o "bound [0-9.]*" | awk '{ print $2 }')
    # The in-flight quarter second still arrives; then silence for one bound, which the
    # jitter of the link (arrival gaps up to ~50 ms) may have raised above 0.1 s.
    awk -v s="$silence" -v b="$bound" 'BEGIN { exit !(b >= 0.1 && b <= 0.5 && s <= b + 0.0015) }' \
      || fail "stall after $silence s with bound $bound s"
    [ "$after_ms" -ge 250 ] && [ "$after_ms" -le 1500 ] || fail "stopped $after_ms ms after the freeze"
  fi
  ;;
keyboard)
  # A real terminal: tmux gives the console a pty, and keys arrive as a user types them.
  tmux_cmd() { tmux -L "tether-$$" "$@"; }
  tmux_cmd new-session -d -x 160 -y 50 \
    "$console_bin --remote $addr --config $pki/people/operator.conf teleop --device keyboard \
       --start door_shared >$work/ground.log 2>&1; echo exit \$? >>$work/ground.log; sleep 30"
  sleep 1.5
  console status | grep -Eq "^state +idle" || fail "the task started before the operator enabled"
  tmux_cmd send-keys " "  # enable
  for _ in $(seq 100); do console status | grep -q "running" && break; sleep 0.05; done
  console status | grep -q "running" || { cat "$work/ground.log"; fail "enabling did not start the task"; }
  tmux_cmd send-keys "w"  # a key that drives while enabled
  sleep 0.5
  tmux_cmd send-keys " "  # disable: the arm holds, nothing latches
  sleep 0.5
  status=$(console status)
  echo "$status" | grep -q "running" || fail "disabling stopped the task: $status"
  tmux_cmd send-keys " "  # enable again: resumes without a reset
  sleep 0.3
  console status | grep -q "running" || fail "re-enabling did not resume"
  tmux_cmd send-keys C-c
  for _ in $(seq 100); do grep -q "^exit" "$work/ground.log" && break; sleep 0.05; done
  cat "$work/ground.log"
  grep -q "^exit 0" "$work/ground.log" || fail "tether teleop did not end cleanly"
  grep -q "operator stop" <(console status) || fail "the session did not end with a clean stop"
  ;;
*) echo "unknown case $case_name"; exit 2 ;;
esac

# Every case ends the remote as an operator would: SIGTERM stops the arm and the process is
# gone within 1 s of that, with exit status 0 (a sanitizer report would make it 66 or abort),
# whatever the case left open: a frozen or vanished ground, ended or live streams.
if [ -n "$ground_pid" ]; then kill -CONT "$ground_pid" 2>/dev/null || true; fi
kill -TERM "$remote_pid"
term_start=$(date +%s%N)
for _ in $(seq 300); do kill -0 "$remote_pid" 2>/dev/null || break; sleep 0.01; done
kill -0 "$remote_pid" 2>/dev/null && fail "tether-remote still running 3 s after SIGTERM"
remote_status=0
wait "$remote_pid" || remote_status=$?
remote_pid=""
took_ms=$(( ($(date +%s%N) - term_start) / 1000000 ))
echo "tether-remote ended $took_ms ms after SIGTERM, exit $remote_status"
[ "$remote_status" = 0 ] || fail "tether-remote exit $remote_status after SIGTERM"
# The task's stop time is 0.3 s at most here; the process must be gone 1 s after it (2 s
# more under a sanitizer).
limit_ms=1500
[ -n "${TETHER_SANITIZER:-}" ] && limit_ms=3500
[ "$took_ms" -le "$limit_ms" ] || fail "tether-remote took $took_ms ms to end after SIGTERM"
if grep -lE "WARNING: ThreadSanitizer|ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer" \
     "$work"/*.log >/dev/null 2>&1; then
  fail "a sanitizer reported a finding (logs above)"
fi
echo "PASS $case_name"
