#!/usr/bin/env bash
# The wrist-compliance sweep behind the simulated arm's default (README "Door experiment"):
# the extended-task-space patent's three door variants at the seed's own 20 ms sample time
# with its M, B and K (remote_site/tasks/door_*_20ms.textproto), on the embedded MuJoCo arm
# with the gripper on each wrist stiffness K_T [N/m] : K_R [N·m/rad] (tether-remote
# --wrist-stiffness; dampings keep the default's damping ratio), then the 1 ms tasks on the
# chosen default. An admittance loop of period Δt and mass M against a spring k, with the
# force read one period after the command (the servo's interpolation), is stable below
# k ≈ 0.7 M/Δt² (17.5 kN/m, 4 kN·m/rad for the seed's door at 20 ms; see the README).
#
# A run is stable when it ends without a bound breach; the table gives the door angle at the
# end (force control 4 s, spring trajectory 60 s, shared control 4 s with the hand turning
# 15°/s for 3 s) and the peak force and torque at the MOTION origin after the first 0.5 s
# (the start's transient excluded: what is left rings if the loop is near its edge), or the
# breach. Writes OUT/sweep.md and prints it.
#
# Usage: deploy/compliance-sweep.sh [BUILD_DIR] [OUT_DIR] ["K_T:K_R ..."]
#   defaults: build/release build/compliance "1000:100 2000:200 5000:500 7000:700
#   10000:1000 20000:2000 30000:3000 50000:5000 rigid"
# Builds tether-remote in BUILD_DIR when it is the default build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=${2:-build/compliance}
stiffnesses=${3:-1000:100 2000:200 5000:500 7000:700 10000:1000 20000:2000 30000:3000 50000:5000 rigid}
if [ "$build" = build/release ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target tether-remote >/dev/null
fi
remote=$build/remote_site/apps/tether-remote
[ -x "$remote" ] || { echo "compliance-sweep: no $remote (build it first)" >&2; exit 1; }
export TETHER_DATA_DIR="$PWD/common"
mkdir -p "$out"

# One run: prints "angle|peak force|peak torque|outcome".
run() {
  local task=$1 duration=$2 wrist=$3
  shift 3
  local log status=0 csv="$out/${task}_$wrist.csv"
  log=$("$remote" --batch --scene door --duration "$duration" --wrist-stiffness "$wrist" \
    --task "remote_site/tasks/$task.textproto" --csv "$csv" "$@" 2>&1) || status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne 3 ]; then
    echo "compliance-sweep: $task on $wrist failed (exit $status):" >&2
    echo "$log" >&2
    exit 1
  fi
  local angle force torque outcome
  angle=$(awk '$1 == "door" && $2 == "angle" { print $3 }' <<<"$log")
  # Columns time_s, aux0, force_n, torque_nm (tether-remote --csv).
  read -r force torque < <(awk -F, 'NR > 1 && $1 > 0.5 {
      if ($3 > f) f = $3; if ($4 > t) t = $4 } END { printf "%.2f %.2f\n", f, t }' "$csv")
  outcome=stable
  if [ "$status" -eq 3 ]; then
    outcome="breach: $(sed -n 's/^  stopped by *//p' <<<"$log")"
  fi
  echo "$angle°|$force N|$torque N·m|$outcome"
}

cell() {  # angle, peaks and outcome as one table cell
  IFS='|' read -r angle force torque outcome <<<"$1"
  if [ "$outcome" = stable ]; then
    echo "$angle, $force, $torque"
  else
    echo "**unstable** ($angle, $force, $torque; ${outcome#breach: })"
  fi
}

table=$out/sweep.md
{
  echo "| wrist K_T : K_R | force control, 18 N·m, 4 s | spring trajectory to 35°, 60 s | shared control, hand 45°, 4 s |"
  echo "|---|---|---|---|"
  for k in $stiffnesses; do
    force=$(run door_force_20ms 4s "$k")
    spring=$(run door_spring_20ms 60s "$k")
    shared=$(run door_shared_20ms 4s "$k" --hand-controller rotate-x:15:3)
    echo "| $k (20 ms) | $(cell "$force") | $(cell "$spring") | $(cell "$shared") |"
  done
  force=$(run door_force 4s default)
  spring=$(run door_spring 60s default)
  shared=$(run door_shared 4s default --hand-controller rotate-x:15:3)
  echo "| default (1 ms) | $(cell "$force") | $(cell "$spring") | $(cell "$shared") |"
  force=$(run door_force 4s rigid)
  spring=$(run door_spring 60s rigid)
  shared=$(run door_shared 4s rigid --hand-controller rotate-x:15:3)
  echo "| rigid (1 ms) | $(cell "$force") | $(cell "$spring") | $(cell "$shared") |"
} >"$table"
echo "cells: door angle at the end, peak force and torque after 0.5 s"
cat "$table"
