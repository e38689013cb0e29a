#!/usr/bin/env bash
# Usage: build_consumer.sh BUILD_DIR SCRATCH_DIR CONSUMER_SOURCE_DIR
set -euo pipefail
build=$1 scratch=$2 consumer=$3
rm -rf "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$consumer" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/build"
"$scratch/build/my_arm_driver"
