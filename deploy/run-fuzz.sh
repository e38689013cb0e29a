#!/usr/bin/env bash
# Runs tether's libFuzzer targets (tests/fuzz/, preset fuzz: clang, ASan + UBSan), each for
# SECONDS (one target per core at a time; TETHER_FUZZ_JOBS sets another count), starting
# from its corpus in tests/fuzz/corpus/<target>/ and merging what it found
# back into it, so the corpora grow from run to run. Prints executions per target and adds
# them to tests/fuzz/executions.txt (the running total). Exit 1 on any crash, leak, timeout
# or sanitizer report; the input that caused it is kept in build/fuzz/artifacts/.
#
#   deploy/run-fuzz.sh [SECONDS] [TARGET...]     (default 30 s each, every target)
#
# CI runs each target for 10 s; longer campaigns: deploy/run-fuzz.sh 3600.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift $(( $# > 0 ? 1 : 0 ))
all=(task_file_fuzz set_parameter_fuzz arm_link_fuzz hand_script_fuzz teleop_increment_fuzz
     roles_file_fuzz link_script_fuzz arm_yaml_fuzz web_users_fuzz site_messages_fuzz
     teleop_datagram_fuzz mcap_reader_fuzz video_datagram_fuzz camera_link_fuzz)
targets=("${@:-${all[@]}}")

bash deploy/install-deps.sh >/dev/null
cmake --preset fuzz >/dev/null
cmake --build build/fuzz --target "${targets[@]}"
export TETHER_DATA_DIR="$PWD/common"
mkdir -p build/fuzz/artifacts
tally=tests/fuzz/executions.txt
touch "$tally"
# One target per core at a time: libFuzzer runs on one thread, and CI's smoke is then
# SECONDS × targets / cores long.
jobs=${TETHER_FUZZ_JOBS:-$(nproc)}
results=build/fuzz/results
rm -rf "$results"
mkdir -p "$results"

# fuzz_one TARGET: runs it, merges what it found into its corpus, and writes
# "status executions rate" to $results/TARGET.
fuzz_one() {
  local target=$1 corpus=tests/fuzz/corpus/$1 found=build/fuzz/found/$1 log=build/fuzz/$1.log
  local ok=0
  mkdir -p "$corpus" "$found"
  # New inputs go to $found; the repository's corpus is read only during the run.
  "build/fuzz/tests/fuzz/$target" "$found" "$corpus" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="build/fuzz/artifacts/$target-" >"$log" 2>&1 || ok=1
  # Keep the inputs that add coverage: the corpus grows, minimised, across runs.
  "build/fuzz/tests/fuzz/$target" -merge=1 "$corpus" "$found" >/dev/null 2>&1 || true
  rm -rf "$found"
  echo "$ok $(awk '/stat::number_of_executed_units/ { print $2 }' "$log" | tail -1)" \
    "$(awk '/stat::average_exec_per_sec/ { print $2 }' "$log" | tail -1)" >"$results/$target"
}
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait || true

status=0
printf '%-24s %14s %10s %s\n' target executions exec/s "corpus (files)"
for target in "${targets[@]}"; do
  log=build/fuzz/$target.log
  failed=1 executions="" rate=""
  [ -s "$results/$target" ] && read -r failed executions rate <"$results/$target"
  if [ "$failed" != 0 ]; then
    echo "$target: FAILED (see $log and build/fuzz/artifacts/)"
    # (head closing the pipe early must not end the script under pipefail)
    grep -E "deadly|SUMMARY|Test unit written|ERROR: [A-Z]" "$log" | head -5 || true
    status=1
  fi
  previous=$(awk -v t="$target" '$1 == t { print $2 }' "$tally")
  total=$(( ${previous:-0} + ${executions:-0} ))
  grep -v "^$target " "$tally" >"$tally.new" || true
  echo "$target $total" >>"$tally.new"
  sort "$tally.new" >"$tally"
  rm -f "$tally.new"
  printf '%-24s %14s %10s %s (total %s)\n' "$target" "${executions:-?}" "${rate:-?}" \
    "$(find "tests/fuzz/corpus/$target" -type f | wc -l)" "$total"
done
exit $status
