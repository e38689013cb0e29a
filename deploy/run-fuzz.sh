#!/usr/bin/env bash
# Runs tether's libFuzzer targets (tests/fuzz/, preset fuzz: clang, ASan + UBSan), each for
# SECONDS, starting from its corpus in tests/fuzz/corpus/<target>/ and merging what it found
# back into it, so the corpora grow from run to run. Prints executions per target and adds
# them to tests/fuzz/executions.txt (the running total). Exit 1 on any crash, leak, timeout
# or sanitizer report; the input that caused it is kept in build/fuzz/artifacts/.
#
#   deploy/run-fuzz.sh [SECONDS] [TARGET...]     (default 30 s each, every target)
#
# CI runs each target for 30 s; longer campaigns: deploy/run-fuzz.sh 3600.
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
status=0
printf '%-24s %14s %10s %s\n' target executions exec/s "corpus (files)"
for target in "${targets[@]}"; do
  corpus=tests/fuzz/corpus/$target
  found=build/fuzz/found/$target
  mkdir -p "$corpus" "$found"
  log=build/fuzz/$target.log
  # New inputs go to $found; the repository's corpus is read only during the run.
  if ! "build/fuzz/tests/fuzz/$target" "$found" "$corpus" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="build/fuzz/artifacts/$target-" >"$log" 2>&1; then
    echo "$target: FAILED (see $log and build/fuzz/artifacts/)"
    # (head closing the pipe early must not end the script under pipefail)
    grep -E "deadly|SUMMARY|Test unit written|ERROR: [A-Z]" "$log" | head -5 || true
    status=1
  fi
  executions=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec/ { print $2 }' "$log" | tail -1)
  # Keep the inputs that add coverage: the corpus grows, minimised, across runs.
  "build/fuzz/tests/fuzz/$target" -merge=1 "$corpus" "$found" >/dev/null 2>&1 || true
  rm -rf "$found"
  previous=$(awk -v t="$target" '$1 == t { print $2 }' "$tally")
  total=$(( ${previous:-0} + ${executions:-0} ))
  grep -v "^$target " "$tally" >"$tally.new" || true
  echo "$target $total" >>"$tally.new"
  sort "$tally.new" >"$tally"
  rm -f "$tally.new"
  printf '%-24s %14s %10s %s (total %s)\n' "$target" "${executions:-?}" "${rate:-?}" \
    "$(find "$corpus" -type f | wc -l)" "$total"
done
exit $status
