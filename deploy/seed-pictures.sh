#!/usr/bin/env bash
# Every seed picture, with one command: runs tether-seed-pictures (the scenarios the seed
# documents describe: SHAKE's three problems, the configuration-control elbow plane, the
# constrained-optimisation guidance into the joint limits, the spheres-of-influence pass)
# and writes one PNG per picture into OUT_DIR, each with a title, axes in metres, a legend
# and time as a colour scale. Prints the figures of each run.
#
# Checks every picture it was told about: written by this run, a PNG file (signature), at
# least 640 × 400 pixels and 20 kB (a picture, not an empty canvas). Exit 1 if any check
# fails.
#
# Usage: deploy/seed-pictures.sh [BUILD_DIR] [OUT_DIR]
#   defaults: build/release build/seed-pictures; relative paths are from the source tree's
#   top (docs/seeds.md's pictures: deploy/seed-pictures.sh build/release docs/seed-pictures)
# TETHER_DATA_DIR defaults to the source tree's common/ (the arms' URDFs).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=${2:-build/seed-pictures}
tool=$build/remote_site/apps/tether-seed-pictures
export TETHER_DATA_DIR=${TETHER_DATA_DIR:-$PWD/common}
if [[ ! -x $tool ]]; then
  echo "seed-pictures: $tool not found (build the tether-seed-pictures target)" >&2
  exit 1
fi

mkdir -p "$out"
# The tool's lines (one per picture, "PATH: figures") and a marker older than every picture
# it writes, so a stale file left in OUT_DIR from an earlier run does not pass.
log=$(mktemp)
marker=$(mktemp)
trap 'rm -f "$log" "$marker"' EXIT
"$tool" --out "$out" | tee "$log"

failures=0
count=0
while IFS= read -r line; do
  path=${line%%: *}
  [[ $path == *.png ]] || continue
  count=$((count + 1))
  if [[ ! -f $path ]] || [[ ! $path -nt $marker ]]; then
    echo "FAIL $path: not written"
    failures=$((failures + 1))
    continue
  fi
  size=$(stat -c %s "$path")
  signature=$(od -An -tx1 -N8 "$path" | tr -d ' \n')
  # IHDR: width and height as big-endian 32-bit integers at bytes 16 and 20.
  width=$((16#$(od -An -tx1 -j16 -N4 "$path" | tr -d ' \n')))
  height=$((16#$(od -An -tx1 -j20 -N4 "$path" | tr -d ' \n')))
  if [[ $signature != 89504e470d0a1a0a ]]; then
    echo "FAIL $path: not a PNG"
    failures=$((failures + 1))
  elif ((size < 20000 || width < 640 || height < 400)); then
    echo "FAIL $path: ${width}x${height}, $size bytes: too small to be the picture"
    failures=$((failures + 1))
  else
    echo "ok   $path: ${width}x${height}, $((size / 1024)) kB"
  fi
done <"$log"

if ((failures > 0 || count == 0)); then
  echo "FAIL seed pictures: $failures of $count failed"
  exit 1
fi
echo "PASS seed pictures: $count written to $out"
