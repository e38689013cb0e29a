#!/usr/bin/env bash
# Browser tests of the operator console against the real pair on loopback.
# Usage: tests/browser/run.sh BUILD_DIR
#   BUILD_DIR holds remote_site/apps/tether-remote, local_site/apps/tether and
#   local_site/apps/tether-ground (built with --web support), e.g. build/ci.
# Installs the pinned npm packages (npm ci), builds the front end (local_site/web/dist),
# makes test credentials, starts two remote sites (tether-remote --serve: 'left' in the door
# scene, 'right' in the free scene for the walk-through's limit stop and recovery), stores
# the teleoperation task on the first, starts tether-ground --web on a free loopback port
# with the browser's gamepad as its hand controller and a second one with logins over HTTPS
# (--web-tls, --web-users: bob), runs the tests in headless chromium
# (puppeteer-core) and stops everything on exit. Screenshots: build/browser-artifacts/.
set -euo pipefail
build=$(realpath "${1:?usage: tests/browser/run.sh BUILD_DIR}")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
artifacts=$src/build/browser-artifacts
bin_remote=$build/remote_site/apps/tether-remote
bin_console=$build/local_site/apps/tether
bin_ground=$build/local_site/apps/tether-ground
for b in "$bin_remote" "$bin_console" "$bin_ground"; do
  [ -x "$b" ] || { echo "run.sh: $b is missing (build it first)" >&2; exit 1; }
done
# (grep reads the whole help: with -q it would close the pipe early and, under pipefail,
# fail the check through the writer's SIGPIPE.)
"$bin_ground" --help | grep -- --web >/dev/null || { echo "run.sh: $bin_ground has no --web" >&2; exit 1; }
command -v node >/dev/null && command -v npm >/dev/null \
  || { echo "run.sh: node and npm are needed: bash deploy/install-web-deps.sh" >&2; exit 1; }
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] \
  || { echo "run.sh: chromium is needed: bash deploy/install-web-deps.sh" >&2; exit 1; }

work=$(mktemp -d)
pids=()
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  if [ "$rc" != 0 ]; then
    for f in "$work"/*.log; do [ -f "$f" ] && { echo "--- $(basename "$f")"; tail -40 "$f"; }; done
  fi
  # The logs stay with the screenshots.
  cp "$work"/*.log "$artifacts/" 2>/dev/null || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
mkdir -p "$artifacts"
rm -f "$artifacts"/*.png

npm_ci() { (cd "$1" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error); }
echo "== front end: npm ci and build (deploy/build-web.sh) =="
bash "$src/deploy/build-web.sh"
echo "== test driver: npm ci (tests/browser) =="
npm_ci "$here"

echo "== credentials and two remote sites (door scene) =="
export TETHER_DATA_DIR="$src/common"
pki=$work/pki
bash "$src/deploy/make-pki.sh" init "$pki" --site left --site right --person alice=operator \
  --person bob=operator >/dev/null
serve() {  # serve NAME SCENE: a remote site on a free loopback port, written to $work/NAME.port
  "$bin_remote" --serve 127.0.0.1:0 --site "$1" --scene "$2" --port-file "$work/$1.port" \
    --config "$pki/sites/$1.conf" --audit "$work/audit-$1.jsonl" >"$work/remote-$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 150); do [ -s "$work/$1.port" ] && break; sleep 0.1; done
  [ -s "$work/$1.port" ] || { echo "run.sh: tether-remote $1 did not report its port" >&2; exit 1; }
}
serve left door
serve right free
right_pid=${pids[-1]}
left=127.0.0.1:$(cat "$work/left.port")
right=127.0.0.1:$(cat "$work/right.port")

# The teleoperation task: the door in shared control. The subject here is the console, not
# the grasp or the stall bound: the torque bound is widened (as in the pair's integration
# test) and the stall bound lengthened, since two cores also run chromium's software GL.
sed -e 's/max_torque_nm: 60/max_torque_nm: 200/' -e 's/stall_timeout_s: [0-9.]*/stall_timeout_s: 0.5/' \
  -e 's/max_consecutive_overruns: [0-9]*/max_consecutive_overruns: 1000/' \
  "$src/remote_site/tasks/door_shared.textproto" >"$work/door_shared.textproto"
"$bin_console" --remote "$left" --config "$pki/people/alice.conf" \
  upload "$work/door_shared.textproto" --no-preview >/dev/null
# The STOP test's task: the door opened by force control, moving the arm by itself.
"$bin_console" --remote "$left" --config "$pki/people/alice.conf" \
  upload "$src/remote_site/tasks/door_force.textproto" --no-preview >/dev/null

# console_url LOG: the console address the last started tether-ground prints in LOG.
console_url() {
  local found=""
  for _ in $(seq 200); do
    found=$(grep -oE 'https?://(127\.0\.0\.1|localhost|\[::1\]):[0-9]+' "$1" | head -1 || true)
    [ -n "$found" ] && break
    kill -0 "${pids[-1]}" 2>/dev/null || { echo "run.sh: tether-ground exited ($1)" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$found" ] || { echo "run.sh: tether-ground printed no console URL ($1)" >&2; exit 1; }
  echo "$found"
}

echo "== tether-ground --web (the browser's gamepad teleoperates 'left') =="
"$bin_ground" --site left="$left" --site right="$right" --config "$pki/people/alice.conf" \
  --teleop left --device web --web 127.0.0.1:0 --web-root "$src/local_site/web/dist" \
  >"$work/ground.log" 2>&1 &
pids+=($!)
url=$(console_url "$work/ground.log")
for _ in $(seq 100); do curl -fsS "$url/api/health" >/dev/null 2>&1 && break; sleep 0.1; done
echo "console at $url"

echo "== a second tether-ground --web with logins over HTTPS (bob may log in) =="
password="bob's passphrase $RANDOM"
echo "bob $("$bin_ground" --hash-password <<<"$password") people/bob.pem people/bob.key" \
  >"$pki/web-users.txt"
"$bin_ground" --site left="$left" --site right="$right" --config "$pki/people/alice.conf" \
  --device none --web 127.0.0.1:0 --web-root "$src/local_site/web/dist" \
  --web-tls "$pki/sites/left.pem,$pki/sites/left.key" --web-users "$pki/web-users.txt" \
  >"$work/ground-logins.log" 2>&1 &
pids+=($!)
login_url=$(console_url "$work/ground-logins.log")
echo "console with logins at $login_url"

echo "== browser tests (headless chromium, puppeteer-core) =="
cd "$here"
# The plots' scales and labels, the readouts' values and the rendering budget as pure
# functions (node alone, transpiled with the front end's TypeScript).
node --test plot_ticks.test.mjs
export TETHER_CONSOLE_URL=$url/ TETHER_ARTIFACTS=$artifacts
# A rate measured over seconds on a shared 2-core machine is a figure, not a pass mark: the
# 25 Hz target is held by the benchmark, render-rate.sh (medians over alternating runs). Here
# the rates are printed and the plots must keep drawing: at least 15 Hz, under the 18-35 Hz
# the headless configurations measured beside ctest's other jobs and far above a page that
# stalls.
export TETHER_MIN_PLOT_HZ=${TETHER_MIN_PLOT_HZ:-15}
TETHER_LOGIN_URL=$login_url/ TETHER_LOGIN_PASSWORD=$password TETHER_TEST_TASK=door_shared \
  TETHER_STOP_SITE=left TETHER_STOP_TASK=door_force \
  node --test console.test.mjs
# The operator's walk-through (issue 32): one file after the other, never side by side (the
# walk-through freezes 'right' for a while).
# Rendering that holds (issue 32): the plots' redraw rate in the browser configurations an
# operator may land in (only --no-sandbox; SwiftShader forced; WebGL disabled or failing),
# and the plots and readouts going grey when the telemetry stops. The full load (teleoperation,
# the predicted arm, headed under Xvfb) is deploy's benchmark: tests/browser/render-rate.sh.
echo "== rendering in the browser configurations an operator may land in =="
node --test rendering.test.mjs
echo "== the operator's walk-through (1280×800) =="
TETHER_WALK_SITE=right TETHER_WALK_PID=$right_pid TETHER_TELEOP_SITE=left \
  node --test walkthrough.test.mjs
echo "screenshots: $artifacts"
