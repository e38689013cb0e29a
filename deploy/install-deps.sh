#!/usr/bin/env bash
# Installs every build, run and test dependency of tether from Debian 12 packages.
# Idempotent and non-interactive; runs as root or through sudo.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libeigen3-dev libspdlog-dev libfmt-dev libasio-dev zlib1g-dev
  libprotobuf-dev protobuf-compiler libgrpc++-dev protobuf-compiler-grpc
  liburdfdom-dev liburdfdom-headers-dev libtinyxml-dev libconsole-bridge-dev libyaml-cpp-dev
  libmujoco-dev
  # The simulated cameras: MuJoCo's renderer on Mesa's headless EGL (software rasteriser
  # without a GPU), AprilTag detection.
  libegl-dev libegl-mesa0 libgl1-mesa-dri libapriltag-dev
  libvpx-dev  # the cameras' VP9 video
  libcli11-dev libcairo2-dev libpng-dev fonts-dejavu-core
  libqhull-dev
  libgtest-dev libgmock-dev libbenchmark-dev rt-tests
  liborocos-kdl-dev
  libssl-dev openssl nlohmann-json3-dev
  libboost-dev
  libzstd-dev liblz4-dev  # MCAP recordings' chunk compression (common/mcap)
  iproute2  # network namespaces for the packet-level link (deploy/lib/netns-link.sh)
  clang libclang-rt-14-dev
  help2man python3  # man pages from the programs' --help; the docs' command check
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "deploy/install-deps.sh: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "deploy/install-deps.sh: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

echo "deploy/install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
