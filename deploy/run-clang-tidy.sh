#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy's check set, warnings are errors) over tether's own sources
# with the CI build's compile commands. Exit code 1 on any finding.
#
#   bash deploy/run-clang-tidy.sh            # every source file
#   bash deploy/run-clang-tidy.sh FILE...    # just these (CI's smoke)
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh
cmake --preset ci >/dev/null
# Generated protobuf headers must exist for the files that include them.
cmake --build --preset ci --target tether_proto >/dev/null

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.cc' | grep -v '^tests/install/consumer/')
fi
jobs=$(nproc)
printf '%s\n' "${files[@]}" |
  # GCC-only warning flags in the compile commands are not clang-tidy's business.
  xargs -P "$jobs" -n 4 clang-tidy -p build/ci --quiet --extra-arg=-Wno-unknown-warning-option 2>&1 |
  grep -v '^[0-9]* warnings\? generated\.$' | tee build/ci/clang-tidy.log || true
if grep -q 'error:\|warning:' build/ci/clang-tidy.log; then
  echo "clang-tidy: findings above (build/ci/clang-tidy.log)"
  exit 1
fi
echo "clang-tidy: ${#files[@]} files clean"
