#!/usr/bin/env bash
# Reproduces the extended-task-space patent's door-opening experiment (FIGS. 4-10) on the MuJoCo-simulated arm and
# writes the seed-style plots — door angle vs time, force and torque magnitude vs time — for
# force control, the spring trajectory and shared control, as PNG (plus CSV) in
# build/plots/: at 1 ms (door_VARIANT) and at the seed's own 20 ms with its M, B and K
# (door_VARIANT_20ms), both on the simulated arm's default wrist compliance. Assumes
# deploy/install-deps.sh has run; builds tether-remote (Release).
set -euo pipefail
cd "$(dirname "$0")/.."

cmake --preset release >/dev/null
cmake --build --preset release --target tether-remote
out=build/plots
mkdir -p "$out"
remote=build/release/remote_site/apps/tether-remote
export TETHER_DATA_DIR="$PWD/common"

for suffix in "" _20ms; do
  "$remote" --batch --scene door --duration 4s --task "remote_site/tasks/door_force$suffix.textproto" \
    --plot "$out/door_force$suffix.png" --csv "$out/door_force$suffix.csv"
  "$remote" --batch --scene door --duration 60s --task "remote_site/tasks/door_spring$suffix.textproto" \
    --plot "$out/door_spring$suffix.png" --csv "$out/door_spring$suffix.csv"
  "$remote" --batch --scene door --duration 4s --hand-controller rotate-x:15:3 \
    --task "remote_site/tasks/door_shared$suffix.textproto" \
    --plot "$out/door_shared$suffix.png" --csv "$out/door_shared$suffix.csv"
done
echo
echo "door experiment plots: $(cd "$out" && pwd)/door_{force,spring,shared}{,_20ms}.png"
