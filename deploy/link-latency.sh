#!/usr/bin/env bash
# The link's latency figure, on loopback with real processes, mutual TLS and plaintext side
# by side: tether-remote --serve with the embedded MuJoCo door, tether-ground streaming
# scripted hand-controller increments at 1 kHz (local_site/scripts/door_swing.hcscript, the
# door swung back and forth in shared control). Each increment is timed from the moment it
# was sampled to the first force-reflection sample that reports it applied by the executor.
# Runs RUNS sessions of SECONDS each way, alternating, and reports each way's median run
# (by p99) and the TLS/plaintext ratio of p50 and p99.
# Exit 1 if the TLS median p99 > 2 ms, or any increment was lost or applied twice.
# Usage: deploy/link-latency.sh [BUILD_DIR] [SECONDS] [RUNS] [--write-docs]
#   --write-docs  also write the two median runs as docs/performance.md's table
#                 (deploy/lib/doc-table.sh, marker deploy/link-latency.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/lib/doc-table.sh
doc_table_take_flag "$@"
set -- "${doc_table_args[@]}"
build=${1:-build/release}
seconds=${2:-30}
runs=${3:-3}
work=$(mktemp -d)
remote_pid=""
trap '[ -n "$remote_pid" ] && kill $remote_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
bash deploy/make-pki.sh init "$work/pki" --person latency=operator >/dev/null

# session MODE N: one run; its report in $work/MODE.N
session() {
  local mode=$1 n=$2 security
  if [ "$mode" = tls ]; then
    security=(--config "$work/pki/sites/remote.conf")
    client=(--config "$work/pki/people/latency.conf")
  else
    security=(--insecure)
    client=(--insecure --operator latency)
  fi
  rm -f "$work/port"
  "$build/remote_site/apps/tether-remote" --serve 127.0.0.1:0 --scene door \
    --port-file "$work/port" "${security[@]}" >"$work/remote.log" 2>&1 &
  remote_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || { cat "$work/remote.log"; exit 1; }
  addr=127.0.0.1:$(cat "$work/port")
  "$build/local_site/apps/tether" --remote "$addr" "${client[@]}" upload \
    "$work/door_shared.textproto" --no-preview >"$work/session.log" 2>&1 ||
    { echo "link latency: upload failed ($mode run $n)"; cat "$work/session.log"; exit 1; }
  "$build/local_site/apps/tether-ground" --site remote="$addr" "${client[@]}" \
    --start door_shared --device script:local_site/scripts/door_swing.hcscript \
    --duration "$seconds" --report "$work/$mode.$n" >"$work/session.log" 2>&1 ||
    { echo "link latency: the session failed ($mode run $n)"; cat "$work/session.log"; exit 1; }
  kill -TERM "$remote_pid"
  wait "$remote_pid" || true
  remote_pid=""
}

# The shipped task, with a 1 s stall guard instead of 100 ms: this figure is the link's
# latency, and a shared CI VM now and then freezes every process for over 100 ms, which the
# shipped guard rightly calls a stall and ends the session on (the stall guard has its own
# tests). Such a freeze still shows in the reported p99 and max.
sed 's/^  stall_timeout_s: .*/  stall_timeout_s: 1.0/' remote_site/tasks/door_shared.textproto \
  >"$work/door_shared.textproto"
grep -q '^  stall_timeout_s: 1.0$' "$work/door_shared.textproto"

field() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
for n in $(seq "$runs"); do
  session tls "$n"
  session plain "$n"
done

# The median run of a mode by p99: its report file.
median() {
  for f in "$work/$1".*; do echo "$(field "$f" latency_p99_ms) $f"; done | sort -n |
    awk -v m=$(( (runs + 1) / 2 )) 'NR == m { print $2 }'
}
tls=$(median tls)
plain=$(median plain)
echo "link latency (sample -> applied -> reflected), ${seconds} s at 1 kHz on loopback,"
echo "median of $runs runs each (by p99):"
status=0
for mode in tls plain; do
  f=$tls
  [ "$mode" = plain ] && f=$plain
  printf '  %-9s p50 %s ms   p99 %s ms   max %s ms   %s sent, %s applied, %s before the start, %s lost, %s duplicated\n' \
    "$([ $mode = tls ] && echo 'mTLS' || echo 'plaintext')" \
    "$(field "$f" latency_p50_ms)" "$(field "$f" latency_p99_ms)" "$(field "$f" latency_max_ms)" \
    "$(field "$f" sent)" "$(field "$f" applied)" "$(field "$f" stale)" "$(field "$f" lost)" \
    "$(field "$f" duplicates)"
done
# Every increment is accounted for: applied once, or sent before the task started (the
# remote drops those at the start). The script holds the deadman throughout, so none is
# discarded on a release.
for f in "$work"/tls.* "$work"/plain.*; do
  [ "$(field "$f" lost)" = 0 ] && [ "$(field "$f" duplicates)" = 0 ] ||
    { echo "link latency: increments lost or duplicated in $(basename "$f")"; status=1; }
  unaccounted=$(( $(field "$f" sent) - $(field "$f" applied) - $(field "$f" stale) ))
  [ "$unaccounted" = 0 ] ||
    { echo "link latency: $unaccounted increments neither applied nor stale in $(basename "$f")"
      status=1; }
done
awk -v a="$(field "$tls" latency_p50_ms)" -v b="$(field "$plain" latency_p50_ms)" \
    -v c="$(field "$tls" latency_p99_ms)" -v d="$(field "$plain" latency_p99_ms)" \
    'BEGIN { printf "  mTLS / plaintext: p50 %.2f, p99 %.2f\n", a / b, c / d }'
awk -v p="$(field "$tls" latency_p99_ms)" 'BEGIN { exit !(p <= 2.0) }' ||
  { echo "link latency: mTLS p99 above the 2 ms target"; status=1; }
if [ "$write_docs" = 1 ]; then
  # The page's table: each way's median run, lost of sent, and the ratios of p50 and p99.
  for f in "$tls" "$plain"; do
    echo "$(field "$f" latency_p50_ms) $(field "$f" latency_p99_ms) $(field "$f" latency_max_ms)" \
      "$(field "$f" lost) $(field "$f" sent) $(field "$f" duplicates)"
  done | awk 'function group(n,  s, out) {
        s = sprintf("%d", n)
        while (length(s) > 3) { out = " " substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
        return s out }
      { p50[NR] = $1; p99[NR] = $2
        row[NR] = sprintf("%.2f ms | %.2f ms | %.1f ms | %d of %s | %d", $1, $2, $3, $4, group($5), $6) }
      END { print "| link | p50 | p99 | max | lost | duplicated |"
            print "|---|---|---|---|---|---|"
            print "| mutual TLS | " row[1] " |"
            print "| plaintext | " row[2] " |"
            printf "| mTLS / plaintext | %.2f | %.2f | | | |\n", p50[1] / p50[2], p99[1] / p99[2] }' |
    doc_table_write deploy/link-latency.sh || status=1
fi
exit $status
