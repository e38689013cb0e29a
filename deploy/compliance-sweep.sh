#!/usr/bin/env bash
# The wrist-compliance sweep behind the simulated arm's default (docs/task-authoring.md,
# "Why the wrist is compliant"; the measured tables are in docs/performance.md):
# the extended-task-space patent's three door variants at the seed's own 20 ms sample time
# with its M, B and K (remote_site/tasks/door_*_20ms.textproto), on the embedded MuJoCo arm
# with the gripper on each wrist stiffness K_T [N/m] : K_R [N·m/rad] (tether-remote
# --wrist-stiffness; dampings keep the default's damping ratio), then the 1 ms tasks on the
# chosen default. An admittance loop of period Δt and mass M against a spring k, with the
# force read one period after the command (the servo's interpolation), is stable below
# k ≈ 0.7 M/Δt² (17.5 kN/m, 4 kN·m/rad for the seed's door at 20 ms; see
# docs/task-authoring.md).
#
# A run is stable when it ends without a bound breach; the table gives the door angle at the
# end (force control 4 s, spring trajectory 60 s, shared control 4 s with the hand turning
# 15°/s for 3 s) and the peak force and torque at the MOTION origin after the first 0.5 s
# (the start's transient excluded: what is left rings if the loop is near its edge), or the
# breach. Writes OUT/sweep.md and prints it. Also writes docs/performance.md's two tables in
# the page's layout (cells to 0.1, the default wrist's row in bold, a breach in bold with its
# reason): OUT/docs-door.md (the three variants on the default wrist at 20 ms, which runs it
# if the list lacks 5000:500, and at 1 ms, and on a rigid grasp at 1 ms) and
# OUT/docs-sweep.md (the 20 ms rows).
#
# Usage: deploy/compliance-sweep.sh [BUILD_DIR] [OUT_DIR] ["K_T:K_R ..."] [--write-docs]
#   defaults: build/release build/compliance "1000:100 2000:200 5000:500 7000:700
#   10000:1000 20000:2000 30000:3000 50000:5000 rigid"
#   --write-docs  also writes those two tables into docs/performance.md (deploy/lib/doc-table.sh,
#                 markers deploy/compliance-sweep.sh:door and deploy/compliance-sweep.sh:sweep)
# Builds tether-remote in BUILD_DIR when it is the default build/release.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/lib/doc-table.sh
doc_table_take_flag "$@"
set -- "${doc_table_args[@]}"
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

# The page's form of a cell: angle, peaks to 0.1 (– if missing); a breach in bold with its reason.
tenth() { if [[ $1 =~ ^-?[0-9]+(\.[0-9]*)?$ ]]; then LC_ALL=C printf '%.1f' "$1"; else printf '–'; fi; }
doc_cell() {
  local angle force torque outcome cell
  IFS='|' read -r angle force torque outcome <<<"$1"
  cell="$(tenth "${angle%°}")°, $(tenth "${force% N}") N, $(tenth "${torque% N·m}") N·m"
  if [ "$outcome" = stable ]; then echo "$cell"; else echo "**$cell; ${outcome#breach: }**"; fi
}

default_wrist=5000:500  # WristComplianceParameters' defaults (remote_site/sim/.../scene.h)
declare -A force20 spring20 shared20
table=$out/sweep.md
{
  echo "| wrist K_T : K_R | force control, 18 N·m, 4 s | spring trajectory to 35°, 60 s | shared control, hand 45°, 4 s |"
  echo "|---|---|---|---|"
  for k in $stiffnesses; do
    force20[$k]=$(run door_force_20ms 4s "$k")
    spring20[$k]=$(run door_spring_20ms 60s "$k")
    shared20[$k]=$(run door_shared_20ms 4s "$k" --hand-controller rotate-x:15:3)
    echo "| $k (20 ms) | $(cell "${force20[$k]}") | $(cell "${spring20[$k]}") | $(cell "${shared20[$k]}") |"
  done
  force1=$(run door_force 4s default)
  spring1=$(run door_spring 60s default)
  shared1=$(run door_shared 4s default --hand-controller rotate-x:15:3)
  echo "| default (1 ms) | $(cell "$force1") | $(cell "$spring1") | $(cell "$shared1") |"
  force_rigid=$(run door_force 4s rigid)
  spring_rigid=$(run door_spring 60s rigid)
  shared_rigid=$(run door_shared 4s rigid --hand-controller rotate-x:15:3)
  echo "| rigid (1 ms) | $(cell "$force_rigid") | $(cell "$spring_rigid") | $(cell "$shared_rigid") |"
} >"$table"
echo "cells: door angle at the end, peak force and torque after 0.5 s"
cat "$table"

k=$default_wrist
if [ -z "${force20[$k]:-}" ]; then
  force20[$k]=$(run door_force_20ms 4s "$k")
  spring20[$k]=$(run door_spring_20ms 60s "$k")
  shared20[$k]=$(run door_shared_20ms 4s "$k" --hand-controller rotate-x:15:3)
fi
{
  echo "| variant | 20 ms (the seed's) | 1 ms | 1 ms, rigid grasp |"
  echo "|---|---|---|---|"
  echo "| force control, 18 N·m, 4 s | $(doc_cell "${force20[$k]}") | $(doc_cell "$force1") | $(doc_cell "$force_rigid") |"
  echo "| spring trajectory to 35°, 60 s | $(doc_cell "${spring20[$k]}") | $(doc_cell "$spring1") | $(doc_cell "$spring_rigid") |"
  echo "| shared control, hand turns 45°, 4 s | $(doc_cell "${shared20[$k]}") | $(doc_cell "$shared1") | $(doc_cell "$shared_rigid") |"
} >"$out/docs-door.md"
{
  echo "| wrist K_T : K_R | force control | spring trajectory | shared control |"
  echo "|---|---|---|---|"
  for k in $stiffnesses; do
    label="$k (20 ms)"
    if [ "$k" = "$default_wrist" ]; then label="**$k (20 ms), the default**"; fi
    echo "| $label | $(doc_cell "${force20[$k]}") | $(doc_cell "${spring20[$k]}") | $(doc_cell "${shared20[$k]}") |"
  done
} >"$out/docs-sweep.md"
if [ "$write_docs" = 1 ]; then
  doc_table_write deploy/compliance-sweep.sh:door <"$out/docs-door.md"
  doc_table_write deploy/compliance-sweep.sh:sweep <"$out/docs-sweep.md"
fi
