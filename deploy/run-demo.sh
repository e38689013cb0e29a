#!/usr/bin/env bash
# The main job: installs what is missing, builds tether (Release) and runs the remote-site
# executor on the embedded MuJoCo-simulated arm: the seed's door-opening experiment by force
# control in real time (1 kHz loop, period jitter reported), then all three variants of the
# experiment with their plots (deploy/door-plots.sh). The ground station joins it next.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tether-remote tether-arm
export TETHER_DATA_DIR="$PWD/common"

echo "== remote site: door opening by force control (18 N·m about the hinge), real time =="
build/release/remote_site/apps/tether-remote --realtime --scene door --duration 4s \
  --task remote_site/tasks/door_force.textproto
echo
echo "== the door experiment's three variants, with plots =="
bash deploy/door-plots.sh
