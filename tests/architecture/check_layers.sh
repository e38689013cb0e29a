#!/usr/bin/env bash
# Fails when a layer reaches past what it may depend on (see tests/architecture/tests.cmake).
# Usage: check_layers.sh LINKS_DIR CONTROL_ARCHIVE COMMON_ARCHIVE SOURCE_DIR
set -uo pipefail
links_dir=$1 control_archive=$2 common_archive=$3 source_dir=$4
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 1. Declared link closures.
forbidden_for_core='grpc|protobuf|mujoco|spdlog|tether_proto|tether_sim|tether_remote|tether_arm_link|tether_camera_link|tether_tools'
for layer in common cli control; do
  if bad=$(grep -Ei "$forbidden_for_core" "$links_dir/tether_$layer.links"); then
    fail "tether::$layer links $(echo "$bad" | tr '\n' ' ')"
  fi
done
if grep -qx 'tether_remote\|tether::remote' "$links_dir/tether_local.links"; then
  fail "tether::local links the remote site's service (tether::remote)"
fi
for needed in tether_control tether_sim; do
  grep -qx "$needed" "$links_dir/tether_local.links" ||
    fail "tether::local should reuse $needed for its preview"
done

# 2. What the compiled core actually refers to: no gRPC, protobuf, MuJoCo or spdlog symbol.
for archive in "$control_archive" "$common_archive"; do
  if bad=$(nm -C -u "$archive" 2>/dev/null | grep -E 'grpc|google::protobuf|\bmj_|\bmjv_|spdlog' | sort -u | head -5); then
    [ -n "$bad" ] && fail "$(basename "$archive") refers to: $bad"
  fi
done

# 3. Includes in the core's sources and headers.
if bad=$(grep -rnE '#include [<"](grpc|google/protobuf|mujoco|spdlog|tether/proto|tether/v1|tether/remote/(sim|server|arm_link|camera_link|report|comparison)/)' \
    "$source_dir/common/include" "$source_dir/common/src" \
    "$source_dir/remote_site/control"); then
  fail "the core includes outside its layer:"$'\n'"$bad"
fi

if [ "$failures" -eq 0 ]; then
  echo "layers: control and common link only Eigen, fmt and each other; local reuses control and sim, not the service"
fi
exit $((failures > 0))
