#!/usr/bin/env bash
# Teleoperation across a delayed link, swept with real processes: the seed's shared-control
# door (remote_site/tasks/door_shared.textproto) on tether-remote's embedded MuJoCo door,
# the simulated 6R hand controller turning the handle 45° (local_site/scripts/
# rotate_door.hcscript) in tether-ground, over mutual TLS through tether-linkem at each
# one-way delay with ±10 % uniform jitter, for each force-reflection channel:
#   none       the remote's measured wrench as it arrives (the direct channel)
#   passivity  time-domain passivity on both ports with drift compensation; the hand feels
#              the local model's wrench (--predict iiwa7:door --reflect-from model)
#   wave       wave variables (b = 350 N·s/m, 80 N·m·s/rad)
# and each rendered torque scale (the default 0.01, and 0.05, unstable without a channel).
#
# Writes OUT/door_METHOD_SCALE_DELAYms.png (door angle, reflected torque and both ports'
# energies against time) and .report per run, and OUT/table.md; prints the table.
# Targets, checked for the passivity rows: no bound breach, both ports passive (least
# observed energy ≥ −0.01 J), the door within ±3° of 45°, and the peak interaction torque
# at 500 ms at most 1.5× that at 0 ms. Exit 1 if any is missed.
#
# Usage: deploy/delay-scenarios.sh [BUILD_DIR] [OUT_DIR] ["DELAYS_MS"] ["METHODS"] ["SCALES"]
#   defaults: build/release build/delay "0 50 150 250 500 1000" "none passivity wave"
#   "0.01 0.05"
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
out=${2:-build/delay}
delays=${3:-0 50 150 250 500 1000}
methods=${4:-none passivity wave}
scales=${5:-0.01 0.05}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
remote_pid="" linkem_pid=""
cleanup() {
  [ -n "$linkem_pid" ] && kill "$linkem_pid" 2>/dev/null
  [ -n "$remote_pid" ] && kill "$remote_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
bash deploy/make-pki.sh init "$work/pki" >/dev/null
export TETHER_DATA_DIR="$PWD/common"

field() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }

# run METHOD SCALE DELAY_MS: one session; its report in $out/door_METHOD_SCALE_DELAYms.report
run() {
  local method=$1 scale=$2 delay=$3 name
  name=door_${method}_${scale}_${delay}ms
  local upper
  upper=$(echo "$method" | tr a-z A-Z)
  sed "s/^  stall_timeout_s: \(.*\)/  stall_timeout_s: \1\n  reflection { method: REFLECTION_METHOD_$upper wave_impedance_translation: 350 wave_impedance_rotation: 80 }/" \
    remote_site/tasks/door_shared.textproto >"$work/door_shared.textproto"
  rm -f "$work/port" "$work/lport"
  "$build/remote_site/apps/tether-remote" --serve 127.0.0.1:0 --scene door \
    --port-file "$work/port" --config "$work/pki/sites/remote.conf" >"$work/remote.log" 2>&1 &
  remote_pid=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  [ -s "$work/port" ] || { cat "$work/remote.log"; exit 1; }
  local jitter
  jitter=$(awk -v d="$delay" 'BEGIN { print d * 0.1 }')
  "$build/common/tether-linkem" --listen 127.0.0.1:0 --target "127.0.0.1:$(cat "$work/port")" \
    --delay "${delay}ms" --jitter "${jitter}ms" --port-file "$work/lport" \
    >"$work/linkem.log" 2>&1 &
  linkem_pid=$!
  for _ in $(seq 100); do [ -s "$work/lport" ] && break; sleep 0.1; done
  local addr=127.0.0.1:$(cat "$work/lport")
  # Three round trips (TLS, HTTP/2, the call) before a first reply: 6 s at 1 s one way.
  local client=(--config "$work/pki/people/operator.conf" --server-name localhost --timeout 20s)
  "$build/local_site/apps/tether" --remote "$addr" "${client[@]}" upload \
    "$work/door_shared.textproto" --no-preview >"$work/session.log" 2>&1 ||
    { echo "delay scenarios: upload failed ($name)"; cat "$work/session.log"; exit 1; }
  local extra=()
  [ "$method" = passivity ] && extra=(--predict iiwa7:door --reflect-from model)
  "$build/local_site/apps/tether-ground" --site remote="$addr" "${client[@]}" \
    --start door_shared --device sim:local_site/scripts/rotate_door.hcscript \
    --torque-scale "$scale" "${extra[@]}" --report "$out/$name.report" \
    --plot "$out/$name.png" >"$work/session.log" 2>&1 || true
  [ -s "$out/$name.report" ] ||
    { echo "delay scenarios: no report ($name)"; cat "$work/session.log"; exit 1; }
  grep -o "exceeds the bound.*\|stalled.*" "$work/session.log" | head -1 >"$out/$name.end" || true
  kill "$linkem_pid" 2>/dev/null || true
  kill -TERM "$remote_pid" 2>/dev/null || true
  wait "$remote_pid" 2>/dev/null || true
  wait "$linkem_pid" 2>/dev/null || true
  remote_pid="" linkem_pid=""
}

for scale in $scales; do
  for method in $methods; do
    for delay in $delays; do
      run "$method" "$scale" "$delay"
    done
  done
done

status=0
{
  echo "| one-way delay | reflection | torque scale | door angle (hand turns 45°) | peak interaction torque | least observed energy ground / remote | end |"
  echo "|---|---|---|---|---|---|---|"
  for scale in $scales; do
    for method in $methods; do
      for delay in $delays; do
        f=$out/door_${method}_${scale}_${delay}ms.report
        end=clean
        [ "$(field "$f" breached)" = 1 ] && end="breach: $(cat "${f%.report}.end")"
        printf '| %s ms | %s | %s | %.1f° | %.1f N·m | %.3f / %.3f J | %s |\n' "$delay" "$method" \
          "$scale" "$(field "$f" aux0_deg)" "$(field "$f" peak_torque_nm)" \
          "$(field "$f" min_master_observed_j)" "$(field "$f" min_slave_observed_j)" "$end"
      done
    done
  done
} | tee "$out/table.md"

# The targets, for the passivity channel.
if [[ " $methods " == *" passivity "* ]]; then
  for scale in $scales; do
    for delay in $delays; do
      f=$out/door_passivity_${scale}_${delay}ms.report
      awk -v d="$delay" -v s="$scale" -v file="$f" '
        $1 == "breached" { b = $2 } $1 == "aux0_deg" { a = $2 }
        $1 == "min_master_observed_j" { m = $2 } $1 == "min_slave_observed_j" { r = $2 }
        END {
          bad = ""
          if (b != 0) bad = bad " a bound breach;"
          if (m < -0.01 || r < -0.01) bad = bad " a port not passive;"
          if (a < 42 || a > 48) bad = bad sprintf(" door %.1f° not within 45 ± 3°;", a)
          if (bad != "") { printf "TARGET MISSED (passivity, %s ms, scale %s):%s\n", d, s, bad; exit 1 }
        }' "$f" || status=1
    done
    if [[ " $delays " == *" 0 "* && " $delays " == *" 500 "* ]]; then
      t0=$(field "$out/door_passivity_${scale}_0ms.report" peak_torque_nm)
      t500=$(field "$out/door_passivity_${scale}_500ms.report" peak_torque_nm)
      awk -v a="$t0" -v b="$t500" -v s="$scale" 'BEGIN {
        printf "passivity, scale %s: peak torque at 500 ms / at 0 ms = %.2f (target ≤ 1.5)\n", s, b / a
        exit (b <= 1.5 * a) ? 0 : 1 }' || status=1
    fi
  done
fi
echo "figures and reports: $out"
exit $status
