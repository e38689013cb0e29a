#!/usr/bin/env bash
# Builds tether under AddressSanitizer + UndefinedBehaviorSanitizer (preset asan) and/or
# ThreadSanitizer (preset tsan) and runs the tests under them. Any finding fails the run.
#
#   bash deploy/run-sanitizers.sh [asan|tsan|all] [--smoke]
#
# Full runs build everything and run the whole CTest suite (the malloc-counting
# *Allocation tests excepted: the sanitizer owns malloc there), the teleoperation pair's
# real processes included. --smoke (CI) builds and runs the units where a finding is most
# likely (the lists below). Debian's gRPC, protobuf and abseil are not instrumented: TSan
# runs with ignore_noninstrumented_modules=1, tether's reactors state gRPC's callback
# ordering to TSan (remote_site/server/src/callback_order.h), and tests/sanitizers/tsan.supp
# suppresses only races inside gRPC's own operations (each entry says why). fontconfig
# (under Cairo's plots) keeps its cache until exit: tests/sanitizers/lsan.supp.
set -euo pipefail
cd "$(dirname "$0")/.."

which=${1:-all}
smoke=0
[ "${2:-}" = "--smoke" ] && smoke=1
case "$which" in asan | tsan) presets=("$which") ;; all) presets=(asan tsan) ;; *)
  echo "usage: $0 [asan|tsan|all] [--smoke]" >&2
  exit 2
  ;;
esac

bash deploy/install-deps.sh

# Smoke sets: small enough for CI, each over code that hands data between threads or
# parses input. ASan/UBSan: task files, packets, validation, the executor and its loop, the
# MCAP reader and writer.
# TSan: the loop's lock-free hand-offs, the executor across threads, the control lease, the
# arm link's sockets and threads (UdpArm, the simulated-arm server), the gRPC server with
# its teleoperation and telemetry streams against a real-time loop, and the black box's
# recorder thread beside it.
asan_smoke=(task_validation_test task_io_test arm_link_protocol_test bounds_monitor_test teleop_channel_test
  executor_test lock_free_test mcap_test)
tsan_smoke=(lock_free_test executor_test control_lease_test simarm_server_test udp_arm_test
  remote_site_server_test black_box_test)

status=0
for preset in "${presets[@]}"; do
  echo "== $preset =="
  # The ASan/UBSan smoke builds in the fuzz preset's tree (clang, ASan + UBSan, the same
  # checks): CI builds the libraries under ASan once, for these tests and then the fuzzers.
  # The full run keeps GCC's asan tree.
  tree=$preset
  [ "$smoke" = 1 ] && [ "$preset" = asan ] && tree=fuzz
  cmake --preset "$tree" >/dev/null
  if [ "$smoke" = 1 ]; then
    if [ "$preset" = asan ]; then targets=("${asan_smoke[@]}"); else targets=("${tsan_smoke[@]}"); fi
    cmake --build "build/$tree" --target "${targets[@]}"
    # The environment of the test preset, for running the executables directly.
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
    export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp"
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$PWD/tests/sanitizers/tsan.supp"
    export TETHER_DATA_DIR=$PWD/common
    export TETHER_SANITIZER=$preset
    passed=0 failed=0
    for t in "${targets[@]}"; do
      exe=$(find "build/$tree/tests" -type f -name "$t" -perm -u+x | head -n 1)
      if "$exe" --gtest_brief=1 --gtest_filter='-*Allocation*'; then
        passed=$((passed + 1))
      else
        echo "$preset: $t FAILED"
        failed=$((failed + 1))
      fi
    done
    echo "$preset smoke: $passed passed, $failed failed"
    [ "$failed" = 0 ] || status=1
  else
    cmake --build --preset "$preset"
    ctest --preset "$preset" --parallel 2 || status=1
  fi
done
exit $status
