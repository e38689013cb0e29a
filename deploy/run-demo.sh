#!/usr/bin/env bash
# The main job: installs what is missing, builds tether (Release) and runs the ground/remote
# pair on loopback against the embedded MuJoCo-simulated arm, over mutual TLS:
#   0. credentials (deploy/make-pki.sh, once, in build/demo/pki): a CA, a certificate per
#      site, and the person "demo" with the operator role;
#   1. two remote sites, tether-remote --serve, each with its own door (1 kHz real-time loops);
#   2. the console uploads the seed's door task to the first (validated and previewed locally
#      first), starts it, records the telemetry for 5 s, stops it and plots the run, and
#      shows the site's audit trail;
#   3. tether-ground connects to both sites, watches them, and teleoperates the second door in
#      shared control with a scripted hand controller and force reflection, reporting the
#      link's round-trip latency;
#   4. the door experiment's three variants with their plots (deploy/door-plots.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

bash deploy/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target tether-remote tether tether-ground tether-arm
export TETHER_DATA_DIR="$PWD/common"
bin_remote=build/release/remote_site/apps/tether-remote
bin_console=build/release/local_site/apps/tether
bin_ground=build/release/local_site/apps/tether-ground
out=build/demo
mkdir -p "$out"
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

echo "== credentials: a CA, the sites' and the operator's certificates (deploy/make-pki.sh) =="
pki=$out/pki
bash deploy/make-pki.sh init "$pki" --site door-a --site door-b --person demo=operator

serve() {  # serve NAME: a remote site on a free port, written to $work/NAME.port
  "$bin_remote" --serve 127.0.0.1:0 --site "$1" --scene door --port-file "$work/$1.port" \
    --config "$pki/sites/$1.conf" --audit "$out/audit-$1.jsonl" >"$out/remote-$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$work/$1.port" ] && break; sleep 0.1; done
  [ -s "$work/$1.port" ] || { cat "$out/remote-$1.log" >&2; exit 1; }
}
echo "== remote sites: tether-remote --serve, embedded MuJoCo arm, door scene =="
serve door-a
serve door-b
addr=127.0.0.1:$(cat "$work/door-a.port")
addr_b=127.0.0.1:$(cat "$work/door-b.port")
tether() { "$bin_console" --remote "$addr" --config "$pki/people/demo.conf" "$@"; }
tether status

echo
echo "== console: upload the door task (force control, 18 N·m about the hinge) and run it =="
tether upload remote_site/tasks/door_force.textproto --scene door
tether list
tether record "$out/door_force.csv" --duration 5s --decimation 10 &
record_pid=$!
sleep 0.3
tether start door_force
wait $record_pid
tether stop
tether status
tether plot "$out/door_force.csv" "$out/door_force.png" --title "door opening by force control"
door=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "aux0") c = i; next }
                { last = $c } END { printf "%.1f", last * 180 / 3.14159265 }' "$out/door_force.csv")
echo "door opened to $door deg in 5 s; plot: $PWD/$out/door_force.png"
tether reset
echo "-- the site's audit trail:"
tether audit

echo
echo "== tether-ground: both sites watched, door-b in shared control with force reflection =="
"$bin_console" --remote "$addr_b" --config "$pki/people/demo.conf" upload remote_site/tasks/door_shared.textproto --no-preview
"$bin_ground" --site door-a="$addr" --site door-b="$addr_b" --teleop door-b --config "$pki/people/demo.conf" \
  --start door_shared --device script:local_site/scripts/rotate_door.hcscript \
  --report "$out/door_shared_ground.txt"

echo
echo "== the door experiment's three variants, with plots =="
bash deploy/door-plots.sh
