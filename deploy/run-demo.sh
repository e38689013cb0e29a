#!/usr/bin/env bash
# The main job: installs what is missing, builds tether (Release) and runs it.
# Today the main job loads the shipped 7-DOF arms and prints their forward kinematics,
# arm angle and composite Jacobian; it grows into the ground/remote pair.
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tether-arm

echo "== default arm (KUKA LBR iiwa 7 R800 kinematics) =="
build/release/common/tether-arm --arm iiwa7
echo
echo "== second arm (Franka Panda kinematics, link offsets) =="
build/release/common/tether-arm --arm panda
