#!/usr/bin/env bash
# The main job: installs what is missing, builds tether (Release) and runs the ground/remote
# pair on loopback against the embedded MuJoCo-simulated arm, over mutual TLS:
#   0. credentials (deploy/make-pki.sh, once, in build/demo/pki): a CA, a certificate per
#      site, and the person "demo" with the operator role;
#   1. two remote sites, tether-remote --serve, each with its own door (1 kHz real-time loops);
#   2. the console uploads the seed's door task to the first (validated and previewed locally
#      first), starts it, records every cycle for 5 s as MCAP, stops it, exports and plots the
#      run, replays it offline against the recording, and shows the site's audit trail;
#   3. tether-ground connects to both sites, watches them, and teleoperates the second door in
#      shared control with a scripted hand controller and force reflection, reporting the
#      link's round-trip latency; it serves the browser operator console meanwhile (--web,
#      printing "console: http://127.0.0.1:8080/"); it records the session as MCAP, which is
#      replayed; the first site's black box is listed and fetched (docs/recordings.md);
#   3b. the same across a WAN-like link: tether-linkem delays the second site by 250 ms one
#      way (±25 ms), the task uses the passivity channel and the hand feels the ground's local
#      model; the summary gives the door against the model's prediction, both ports' least
#      observed energy and the estimated delay, and the session's figure is written;
#   4. the door experiment's three variants with their plots (deploy/door-plots.sh);
#   5. with --console: the pair stays up with the browser console at http://127.0.0.1:8080/
#      (door-b teleoperated from the browser's gamepad) until Ctrl-C.
# Usage: deploy/run-demo.sh [--console]
set -euo pipefail
cd "$(dirname "$0")/.."
hold_console=0
case "${1:-}" in
  --console) hold_console=1 ;;
  "") ;;
  *) echo "usage: deploy/run-demo.sh [--console]" >&2; exit 2 ;;
esac

bash deploy/install-deps.sh
bash deploy/build-web.sh  # the browser operator console (tether-ground --web)
cmake --preset release >/dev/null
cmake --build --preset release --target tether-remote tether tether-ground tether-arm tether-linkem
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
    --config "$pki/sites/$1.conf" --audit "$out/audit-$1.jsonl" --black-box "$out/black-box-$1" \
    >"$out/remote-$1.log" 2>&1 &
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
# Every cycle as MCAP (open it in Foxglove: docs/recordings.md); CSV for the plot from it.
tether record "$out/door_force.mcap" --duration 5s &
record_pid=$!
sleep 0.3
tether start door_force
wait $record_pid
tether stop
tether status
tether export "$out/door_force.mcap" --csv "$out/door_force.csv" --decimation 10
tether plot "$out/door_force.csv" "$out/door_force.png" --title "door opening by force control"
echo "-- the recording replayed offline through the executor on the simulated arm:"
tether replay "$out/door_force.mcap"
door=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "aux0") c = i; next }
                { last = $c } END { printf "%.1f", last * 180 / 3.14159265 }' "$out/door_force.csv")
echo "door opened to $door deg in 5 s; plot: $PWD/$out/door_force.png"
tether reset
echo "-- the site's audit trail:"
tether audit

echo
echo "== tether-ground: both sites watched, door-b in shared control with force reflection =="
"$bin_console" --remote "$addr_b" --config "$pki/people/demo.conf" upload remote_site/tasks/door_shared.textproto --no-preview
# --web: the browser operator console on loopback while the session runs; the ground prints
# its address ("console: http://127.0.0.1:8080/").
"$bin_ground" --site door-a="$addr" --site door-b="$addr_b" --teleop door-b --config "$pki/people/demo.conf" \
  --start door_shared --device script:local_site/scripts/rotate_door.hcscript \
  --web 127.0.0.1:8080 --report "$out/door_shared_ground.txt" --record "$out/door_shared.mcap"
echo "-- the session's recording replayed:"
"$bin_console" replay "$out/door_shared.mcap"
echo "-- door-a's black box (the last minutes of every cycle), fetched whole:"
tether blackbox list
rm -rf "$out/black-box-door-a-fetched"
tether blackbox fetch --all --out "$out/black-box-door-a-fetched"

echo
echo "== the same door across a 250 ms (±25 ms) link: passivity channel, local model =="
# A fresh door-b, its door closed again: the ground's local model starts from the scene's
# initial configuration, as the remote does.
kill "${pids[1]}"
wait "${pids[1]}" 2>/dev/null || true
rm -f "$work/door-b.port"
serve door-b
addr_b=127.0.0.1:$(cat "$work/door-b.port")
build/release/common/tether-linkem --listen 127.0.0.1:0 --target "$addr_b" --delay 250ms \
  --jitter 25ms --port-file "$work/linkem.port" >"$out/linkem.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/linkem.port" ] && break; sleep 0.1; done
far=127.0.0.1:$(cat "$work/linkem.port")
"$bin_console" --remote "$addr_b" --config "$pki/people/demo.conf" upload \
  remote_site/tasks/door_shared_delayed.textproto --no-preview
# A TCP proxy delays the stream only, so this leg keeps to it (--data-plane stream); the
# datagram plane across a real delayed and lossy path is deploy/link-table.sh's (root).
"$bin_ground" --site door-b="$far" --server-name localhost --config "$pki/people/demo.conf" \
  --data-plane stream --start door_shared_delayed --device sim:local_site/scripts/rotate_door.hcscript \
  --predict iiwa7:door --reflect-from model --report "$out/door_shared_delayed_ground.txt" \
  --plot "$out/door_shared_delayed.png" --web 127.0.0.1:8080  # the console shows both arms

echo
echo "== the door experiment's three variants, with plots =="
bash deploy/door-plots.sh

if [ "$hold_console" = 1 ]; then
  echo
  echo "== the operator console stays up (both sites watched, door-b teleoperated from the browser's gamepad); Ctrl-C ends =="
  "$bin_ground" --site door-a="$addr" --site door-b="$addr_b" --teleop door-b \
    --config "$pki/people/demo.conf" --device web --web 127.0.0.1:8080
fi
