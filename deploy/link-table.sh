#!/usr/bin/env bash
# Teleoperation across a real IP path: the seed's shared-control door (the delayed-link
# set-up, remote_site/tasks/door_shared_delayed.textproto: passivity channel; the hand feels
# the local model, --predict iiwa7:door --reflect-from model; the simulated 6R hand turning
# the handle 45°, local_site/scripts/rotate_door.hcscript) between a remote site and a ground
# station in two network namespaces, the IP packets between them delayed (±10 % jitter, order
# kept) and dropped by tether-linkem's packet mode (deploy/lib/netns-link.sh), over mutual
# TLS with deploy/make-pki.sh's identities; the datagram plane beside the gRPC stream.
#
# Cells: one-way DELAYS (ms) × LOSSES (percent; "2b4" is 2 % in Gilbert-Elliott bursts of
# mean length 4) × PLANES, REPEATS runs each; the baseline is the same set-up on loopback
# without namespaces (datagram plane), REPEATS runs, in the same run. With BOTTLENECK=1 also a
# 2 Mbit/s limit each way (64 kB queue) at 50 ms shared with full-rate telemetry (`tether
# record --decimation 1` beside the session); with OUTAGE=1 a 2 s outage mid-task at 50 ms
# (local_site/scripts/outage_recovery.hcscript): the site stops on the stall, the harness
# resets it and starts the task again, the operator enables again, all without restarting
# a program.
#
# Columns (medians of the repeats; each run's figures in OUT/NAME.report and .stats): door
# angle, peak interaction torque, least observed energy of each port, increments applied /
# concealed / lost, round trip p50 / p99 (sample -> applied -> reflected), the link's
# bandwidth each way (every packet the emulator forwarded, kbit/s over the session), end.
# Targets for the datagram plane up to 5 % loss: no breach, both ports passive (least
# observed energy >= -0.01 J), the door within ±3° of the baseline, peak torque at most
# 1.5× the baseline's, and at 0 ms a round trip p99 within 2 ms of the stream's. Exit 1 if
# one is missed. Writes OUT/table.md and prints it.
#
# Usage: deploy/link-table.sh [BUILD_DIR] [OUT_DIR] [--write-docs]   (root; about 30 min with defaults)
#   DELAYS="0 50 250 1000" LOSSES="0 1 5 2b4" PLANES="datagram stream" REPEATS=3
#   BOTTLENECK=1 OUTAGE=1; SMOKE=1 runs one cell (50 ms, 2 % in bursts, datagram, once),
#   the baseline once and the outage row: what CI runs.
#   --write-docs  also writes the table (OUT/table.md's Markdown rows, not the outage log)
#                 into docs/performance.md (deploy/lib/doc-table.sh, marker deploy/link-table.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/lib/netns-link.sh
source deploy/lib/doc-table.sh
doc_table_take_flag "$@"
set -- "${doc_table_args[@]}"
build=${1:-build/release}
out=${2:-build/link-table}
if [ "${SMOKE:-0}" = 1 ]; then
  DELAYS=${DELAYS:-50} LOSSES=${LOSSES:-2b4} PLANES=${PLANES:-datagram} REPEATS=${REPEATS:-1}
  BOTTLENECK=${BOTTLENECK:-0} OUTAGE=${OUTAGE:-1}
fi
delays=${DELAYS:-0 50 250 1000}
losses=${LOSSES:-0 1 5 2b4}
planes=${PLANES:-datagram stream}
repeats=${REPEATS:-3}
netns_need_root || exit 77
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
remote_pid=""
stop_remote() {
  if [ -n "$remote_pid" ]; then
    kill -TERM "$remote_pid" 2>/dev/null || true
    wait "$remote_pid" 2>/dev/null || true
    remote_pid=""
  fi
}
cleanup() {
  stop_remote
  netns_teardown
  rm -rf "$work"
}
trap cleanup EXIT
netns_setup "tl$$"
bash deploy/make-pki.sh init "$work/pki" >/dev/null
export TETHER_DATA_DIR="$PWD/common"
task=door_shared_delayed
client=(--config "$work/pki/people/operator.conf" --server-name localhost)

field() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# session NAME WHERE ADDR [ground options...]: the remote site, the task uploaded and one
# ground session; WHERE is "netns" or "loopback". Report in $out/NAME.report.
session() {
  local name=$1 where=$2 addr=$3
  shift 3
  local run_remote=() run_ground=()
  if [ "$where" = netns ]; then
    run_remote=(ip netns exec "$NETNS_R")
    run_ground=(ip netns exec "$NETNS_G")
  fi
  rm -f "$work/port"
  "${run_remote[@]}" "$build/remote_site/apps/tether-remote" --serve "$addr" --scene door \
    --port-file "$work/port" --config "$work/pki/sites/remote.conf" >"$out/$name.remote.log" 2>&1 &
  remote_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || { cat "$out/$name.remote.log"; stop_remote; return 0; }
  addr=${addr%:*}:$(cat "$work/port")
  # A lossy path can take a call past its deadline (TCP's retransmission timeouts double):
  # the upload is tried three times, as an operator would, and a cell that cannot even
  # upload has no report, which its row shows.
  local tries=0
  until "${run_ground[@]}" "$build/local_site/apps/tether" --remote "$addr" "${client[@]}" \
    upload "remote_site/tasks/$task.textproto" --no-preview --replace >>"$out/$name.upload.log" 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 3 ]; then
      echo "link table: upload failed ($name)"
      tail -1 "$out/$name.upload.log"
      stop_remote
      return 0
    fi
  done
  local begin end
  begin=$(date +%s.%N)
  timeout 300 "${run_ground[@]}" "$build/local_site/apps/tether-ground" --site remote="$addr" \
    "${client[@]}" --start "$task" --predict iiwa7:door --reflect-from model \
    --report "$out/$name.report" "$@" >"$out/$name.log" 2>&1 || true
  end=$(date +%s.%N)
  echo "$begin $end" >"$out/$name.time"
  stop_remote
  if [ -s "$out/$name.report" ]; then
    awk '$1 == "datagrams_sent" { ns = $2 } $1 == "datagram_bytes_sent" { bs = $2 }
         $1 == "datagrams_received" { nr = $2 } $1 == "datagram_bytes_received" { br = $2 }
         END { if (ns > 0) printf "datagram_up_kbit_s %.0f\n", (bs / ns + 28) * 8
               if (nr > 0) printf "datagram_down_kbit_s %.0f\n", (br / nr + 28) * 8 }' \
      "$out/$name.report" >>"$out/$name.report"
  else
    echo "link table: no report ($name)"
    tail -5 "$out/$name.log"
  fi
  return 0
}

# bandwidth NAME DIRECTION: kbit/s the emulator forwarded that way while the session
# teleoperated (its increments at 1 kHz: `sent` ms), connection and upload included.
bandwidth() {
  local stats=$out/$1.stats report=$out/$1.report
  [ -s "$stats" ] && [ -s "$report" ] || { echo "-"; return; }
  local seconds
  seconds=$(awk '$1 == "sent" { print $2 / 1000 }' "$report")
  # Lines "up (A->B): ... bytes_forwarded=N ...": IP packets as the emulator forwarded them.
  awk -v dir="$2" -v t="$seconds" '
    $1 == dir { for (i = 2; i <= NF; ++i) if ($i ~ /^bytes_forwarded=/) {
      split($i, kv, "="); printf "%.0f", kv[2] * 8 / t / 1000 } }' "$stats"
}

# cell NAME DELAY LOSS PLANE [RATE] [SCRIPT] [extra ground options]
cell() {
  local name=$1 delay=$2 loss=$3 plane=$4 rate=${5:-} script=${6:-}
  shift 6 || shift $#
  local pct=$loss burst=1
  if [[ $loss == *b* ]]; then pct=${loss%b*} burst=${loss#*b}; fi
  LINK_SEED=$((RANDOM + 1)) link_up "$build" "$out/$name" "$delay" "$pct" "$burst" "$rate" "$script"
  session "$name" netns "$REMOTE_IP:50051" --data-plane "$plane" "$@"
  link_down
}

# The baseline: loopback, no namespaces (BASELINE=0 keeps OUT's, when cells are rerun into
# it; the table is then written from every report in OUT).
[ "${BASELINE:-1}" = 1 ] && for r in $(seq "$repeats"); do
  session "baseline_r$r" loopback 127.0.0.1:0 --device sim:local_site/scripts/rotate_door.hcscript
done
for delay in $delays; do
  for loss in $losses; do
    for plane in $planes; do
      for r in $(seq "$repeats"); do
        cell "${plane}_${delay}ms_${loss}_r$r" "$delay" "$loss" "$plane" "" "" \
          --device sim:local_site/scripts/rotate_door.hcscript
      done
    done
  done
done
if [ "${BOTTLENECK:-1}" = 1 ]; then
  for plane in $planes; do
    for r in $(seq "$repeats"); do
      name="${plane}_50ms_0_2Mbit_r$r"
      LINK_SEED=$r link_up "$build" "$out/$name" 50 0 1 2Mbit/s ""
      # Full-rate telemetry beside the session, on the same path: it starts once the site
      # serves and ends with it.
      (
        for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
        sleep 1
        in_ground "$build/local_site/apps/tether" --remote "$REMOTE_IP:50051" "${client[@]}" \
          record "$work/telemetry.csv" --duration 8 --decimation 1 >"$out/$name.record.log" 2>&1 || true
      ) &
      local_record=$!
      session "$name" netns "$REMOTE_IP:50051" --data-plane "$plane" \
        --device sim:local_site/scripts/rotate_door.hcscript
      wait "$local_record" 2>/dev/null || true
      echo "telemetry_rows $(($(wc -l <"$work/telemetry.csv" 2>/dev/null || echo 1) - 1))" \
        >>"$out/$name.report"
      link_down
    done
  done
fi
if [ "${OUTAGE:-1}" = 1 ]; then
  # The path goes silent from 3 s to 5 s of the emulator's clock (the session starts within
  # a few hundred ms of it); at 6.5 s the harness resets the site and starts the task again.
  printf 'at 3s both outage 2s\n' >"$work/outage.script"
  name=datagram_50ms_outage
  link_up "$build" "$out/$name" 50 0 1 "" "$work/outage.script"
  (
    sleep 6.5
    in_ground "$build/local_site/apps/tether" --remote "$REMOTE_IP:50051" "${client[@]}" \
      reset >"$out/$name.reset.log" 2>&1 || true
    in_ground "$build/local_site/apps/tether" --remote "$REMOTE_IP:50051" "${client[@]}" \
      start "$task" >>"$out/$name.reset.log" 2>&1 || true
  ) &
  helper=$!
  session "$name" netns "$REMOTE_IP:50051" --data-plane datagram \
    --device sim:local_site/scripts/outage_recovery.hcscript
  wait "$helper" 2>/dev/null || true
  link_down
fi

# ---- the table ----
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# stat PREFIX KEY: the median of KEY over PREFIX_r*.report
stat() {
  local f
  for f in "$out/$1"_r*.report; do if [ -s "$f" ]; then field "$f" "$2"; fi; done | median
}
ends() {
  local f e
  for f in "$out/$1"_r*.report; do
    if [ ! -s "$f" ]; then e="no report"
    elif [ "$(field "$f" breached)" = 1 ]; then
      e="breach: $(grep -o 'stopping, task [^:]*: .*' "${f%.report}.log" | head -1 | sed 's/^[^:]*: //')"
    else e=clean; fi
    echo "$e"
  done | sort | uniq -c | awk '{ c = $1; $1 = ""; printf "%s%s%s", (NR > 1 ? "; " : ""), (c > 1 ? c "× " : ""), substr($0, 2) }'
}
base_door=$(stat baseline aux0_deg)
base_torque=$(stat baseline peak_torque_nm)
status=0
row() {
  local label=$1 prefix=$2 plane=$3 loss=$4 delay=$5
  local door torque gm rm applied concealed lost p50 p99 up down
  door=$(stat "$prefix" aux0_deg)
  torque=$(stat "$prefix" peak_torque_nm)
  gm=$(stat "$prefix" min_master_observed_j)
  rm=$(stat "$prefix" min_slave_observed_j)
  applied=$(stat "$prefix" applied)
  concealed=$(stat "$prefix" concealed)
  lost=$(stat "$prefix" lost)
  p50=$(stat "$prefix" latency_p50_ms)
  p99=$(stat "$prefix" latency_p99_ms)
  up=$(for f in "$out/$prefix"_r*.stats; do
    if [ -s "$f" ]; then bandwidth "$(basename "${f%.stats}")" up; echo; fi
  done | median)
  down=$(for f in "$out/$prefix"_r*.stats; do
    if [ -s "$f" ]; then bandwidth "$(basename "${f%.stats}")" down; echo; fi
  done | median)
  # The datagram plane's own rate at 1 kHz: its mean datagram with IPv4 and UDP headers.
  local dup ddown
  dup=$(stat "$prefix" datagram_up_kbit_s)
  ddown=$(stat "$prefix" datagram_down_kbit_s)
  [ "$up" = nan ] && up="-"
  [ "$down" = nan ] && down="-"
  if [ "$plane" = datagram ]; then up="$up ($dup)" down="$down ($ddown)"; fi
  local end
  end=$(ends "$prefix")
  local verdict=""
  if [ "$plane" = datagram ] && [ "$loss" != outage ]; then
    local pct=${loss%b*}
    if awk -v p="$pct" 'BEGIN { exit !(p <= 5) }'; then
      local ok
      ok=$(awk -v d="$door" -v bd="$base_door" -v t="$torque" -v bt="$base_torque" -v g="$gm" -v r="$rm" \
        'BEGIN { print (d - bd <= 3 && bd - d <= 3 && t <= 1.5 * bt && g >= -0.01 && r >= -0.01) ? 1 : 0 }')
      [[ $end =~ ^([0-9]+×\ )?clean$ ]] || ok=0
      if [ "$ok" = 1 ]; then verdict=" ✓"; else verdict=" ✗"; status=1; fi
    fi
  fi
  printf '| %s | %s | %.1f° | %.1f N·m | %.3f / %.3f J | %.0f / %.0f / %.0f | %.2f / %.2f ms | %s / %s | %s%s |\n' \
    "$label" "$plane" "$door" "$torque" "$gm" "$rm" "$applied" "$concealed" "$lost" "$p50" "$p99" \
    "$up" "$down" "$end" "$verdict"
}
{
  echo "| one-way delay, loss | plane | door (hand turns 45°) | peak torque | least energy ground / remote | increments applied / concealed / lost | round trip p50 / p99 | kbit/s up / down: the link (datagrams at 1 kHz) | end |"
  echo "|---|---|---|---|---|---|---|---|---|"
  row "loopback, no namespaces (baseline)" baseline datagram baseline 0
  for delay in $delays; do
    for loss in $losses; do
      label="$delay ms, $loss %"
      [[ $loss == *b* ]] && label="$delay ms, ${loss%b*} % in bursts of ${loss#*b}"
      for plane in $planes; do
        row "$label" "${plane}_${delay}ms_${loss}" "$plane" "$loss" "$delay"
      done
    done
  done
  if [ "${BOTTLENECK:-1}" = 1 ]; then
    for plane in $planes; do
      row "50 ms, 2 Mbit/s each way + full-rate telemetry ($(stat "${plane}_50ms_0_2Mbit" telemetry_rows) rows)" \
        "${plane}_50ms_0_2Mbit" "$plane" 0 50
    done
  fi
} >"$out/table.md"
# The 0 ms cells: the datagram plane's round trip p99 within 2 ms of the stream's.
if [[ " $delays " == *" 0 "* && " $planes " == *" stream "* && " $planes " == *" datagram "* ]]; then
  for loss in $losses; do
    d=$(stat "datagram_0ms_$loss" latency_p99_ms)
    s=$(stat "stream_0ms_$loss" latency_p99_ms)
    if ! awk -v d="$d" -v s="$s" 'BEGIN { exit !(d <= s + 2) }'; then
      echo "0 ms, $loss %: datagram round trip p99 $d ms is more than 2 ms above the stream's $s ms" |
        tee -a "$out/table.md"
      status=1
    fi
  done
fi
if [ "${OUTAGE:-1}" = 1 ]; then
  f=$out/datagram_50ms_outage
  {
    echo
    echo "Outage (50 ms one way, 2 s of 100 % loss from 3 s, datagram plane; outage_recovery.hcscript):"
    grep -E "link silent|link back|stopping, task|running, task" "$f.log" | sed 's/^/    /' || true
    sed 's/^/    harness: /' "$f.reset.log" 2>/dev/null || true
    echo "    door $(field "$f.report" aux0_deg)°, $(field "$f.report" applied) increments applied, $(field "$f.report" duplicates) duplicates, $(field "$f.report" discarded) discarded while stopped, final state $(field "$f.report" final_state)"
  } >>"$out/table.md"
  # The way back: the stall stopped the site, one reset was enough, and motion resumed.
  if ! grep -q "teleoperation stalled\|stalled" "$f.log" || ! grep -q "reset accepted" "$f.reset.log" ||
    ! grep -q "link back" "$f.log" || [ "$(field "$f.report" duplicates)" != 0 ] ||
    [ "$(field "$f.report" final_state)" != running ]; then
    echo "outage: the site did not stop on the stall, or did not come back with one reset" |
      tee -a "$out/table.md"
    status=1
  fi
fi
echo "machine: $(nproc) cores, $(uname -r), $(date -u +%Y-%m-%d)" >>"$out/table.md"
cat "$out/table.md"
if [ "$write_docs" = 1 ]; then
  awk '/^\|/ { print; next } { exit }' "$out/table.md" | doc_table_write deploy/link-table.sh || status=1
fi
exit $status
